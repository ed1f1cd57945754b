#!/usr/bin/env bash
# Here (no GPU): stage what bench/device/run-h100.sh needs on the device machine (no Node, no Vulkan loader there).
# Writes, git-ignored (.git/info/exclude):
#   .gl/     the Vulkan loader + glvnd debs for amd64 (the device README's apt-get download line)
#   .h5dev/  node.xz (this machine's node, v20, runs there), dawn.node.xz + webgpu.tar (npm webgpu's linux-x64 build and
#            its index.js/package.json), dist.tar.xz (the built js/dist: run `make js` first), vk-swiftshader/ (Chromium's
#            SwiftShader Vulkan driver + loader + ICD, for the SwiftShader rows on the device host's CPUs),
#            chr-tools/cdp.py (../shared/tools/chromium-on-gpu/cdp.py: drives Chromium over DevTools, stdlib only)
# Together with .chr/ (stage-chromium.sh) the calls stay under the device tool's 64 MiB: node 24 MiB + dawn.node 5 MiB
# + the rest < 1 MiB per call, .chr/p1 54 MiB alone, .chr/p2 19 MiB.
set -euo pipefail
cd "$(dirname "$0")/../.."
EX=$(git rev-parse --git-common-dir)/info/exclude; mkdir -p "$(dirname "$EX")"
for d in /.gl/ /.h5dev/ /.chr/; do grep -qx "$d" "$EX" 2>/dev/null || echo "$d" >> "$EX"; done
mkdir -p .gl .h5dev/chr-tools /tmp/amd64/partial
o='-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=/tmp/amd64'
if ! ls .gl/libvulkan1_*.deb >/dev/null 2>&1; then
  [ -d /tmp/amd64/lists ] || apt-get $o update >/dev/null
  (cd .gl && apt-get $o download libvulkan1 libegl1 libglvnd0 libopengl0 libgl1 libglx0 libgles2)
fi
[ -f .h5dev/node.xz ] || xz -T2 -6 -c "$(command -v node)" > .h5dev/node.xz
[ -f .h5dev/dawn.node.xz ] || xz -T2 -6 -c node_modules/webgpu/dist/linux-x64/dawn.node > .h5dev/dawn.node.xz
tar -cf .h5dev/webgpu.tar -C node_modules webgpu/index.js webgpu/package.json
[ -f js/dist/index.js ] || { echo "js/dist is missing: run make js first" >&2; exit 2; }
tar -cf - --exclude='*.map' --exclude='js/dist/python' --exclude='js/dist/wasm' js/dist | xz -T2 -6 > .h5dev/dist.tar.xz
bash scripts/vk-env.sh true   # makes build/vk-swiftshader
rm -rf .h5dev/vk-swiftshader && cp -r build/vk-swiftshader .h5dev/vk-swiftshader
cp ../shared/tools/chromium-on-gpu/cdp.py .h5dev/chr-tools/ 2>/dev/null || cp /work/shared/tools/chromium-on-gpu/cdp.py .h5dev/chr-tools/
du -sh .gl .h5dev
