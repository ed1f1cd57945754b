#!/usr/bin/env bash
# Here (no GPU): stage what bench/device/run-h100.sh needs on the device machine (no Node, no Vulkan loader there).
# Writes, git-ignored (.git/info/exclude):
#   .gl/     the Vulkan loader + glvnd debs for amd64 (the device README's apt-get download line)
#   .h5dev/  node.gz (this machine's node, v20, runs there), dawn.node.gz + webgpu.tar (npm webgpu's linux-x64 build and
#            its index.js/package.json), dist.tar.gz (the built js/dist: run `make js` first), vk-swiftshader/ (Chromium's
#            SwiftShader Vulkan driver + loader + ICD, for the SwiftShader rows on the device host's CPUs)
# gzip, not xz: xz of these on this shared 2-core machine takes many minutes. The Node call carries .gl and .h5dev
# (under the device tool's 64 MiB); the Chromium calls carry .chr (stage-chromium.sh).
set -euo pipefail
cd "$(dirname "$0")/../.."
EX=$(git rev-parse --git-common-dir)/info/exclude; mkdir -p "$(dirname "$EX")"
for d in /.gl/ /.h5dev/ /.chr/; do grep -qx "$d" "$EX" 2>/dev/null || echo "$d" >> "$EX"; done
rm -rf .h5dev/chr-tools .h5dev/*.xz; mkdir -p .gl .h5dev /tmp/amd64/partial
o='-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=/tmp/amd64'
if ! ls .gl/libvulkan1_*.deb >/dev/null 2>&1; then
  [ -d /tmp/amd64/lists ] || apt-get $o update >/dev/null
  (cd .gl && apt-get $o download libvulkan1 libegl1 libglvnd0 libopengl0 libgl1 libglx0 libgles2)
fi
[ -f .h5dev/node.gz ] || gzip -6 -c "$(command -v node)" > .h5dev/node.gz
[ -f .h5dev/dawn.node.gz ] || gzip -6 -c node_modules/webgpu/dist/linux-x64/dawn.node > .h5dev/dawn.node.gz
tar -cf .h5dev/webgpu.tar -C node_modules webgpu/index.js webgpu/package.json
[ -f js/dist/index.js ] || { echo "js/dist is missing: run make js first" >&2; exit 2; }
tar -cf - --exclude='*.map' --exclude='js/dist/python' --exclude='js/dist/wasm' js/dist | gzip -6 > .h5dev/dist.tar.gz
bash scripts/vk-env.sh true   # makes build/vk-swiftshader
rm -rf .h5dev/vk-swiftshader && cp -r build/vk-swiftshader .h5dev/vk-swiftshader
du -sh .gl .h5dev
