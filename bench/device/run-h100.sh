#!/usr/bin/env bash
# Device side of `make bench-gpu` (and the Chromium transfer page) on the device machine (NVIDIA H100).
# Run from the repository root there, as the `run` tool's command:
#   bash bench/device/run-h100.sh node       carry: .gl .h5dev     → tests/gpu-node on the H100 ($OUT/gpu-node-tests.log), then
#                                            bench/gpu/node.mjs → $OUT/results-gpu-<adapter>.json/.md, $OUT/node.log
#   bash bench/device/run-h100.sh chr-unpack carry: .chr/p1        (first of two back-to-back calls) the Chromium binary → /opt/chr
#   bash bench/device/run-h100.sh chromium   carry: .chr/p2 .gl .h5dev (second call, same warm machine)
#        → $OUT/bench-h100.json (window.__result of bench/gpu/transfers.html on the H100), stderr, log
# Chromium staging (made here by bench/device/stage-chromium.sh): .chr/p1/headless_shell.xz, .chr/p2/rest.tar.xz;
# .h5dev/chr-tools/cdp.py is ../shared/tools/chromium-on-gpu/cdp.py (drives Chromium over DevTools, stdlib only).
# What the carried folders hold (made here by bench/device/stage-node.sh; git-ignored through .git/info/exclude):
#   .gl/     the Vulkan loader + glvnd debs of the device README (apt-get download …), unpacked into / each run
#   .h5dev/  node.xz (this machine's /usr/bin/node v20), dawn.node.xz (npm webgpu's linux-x64 build),
#            webgpu.tar (the package's index.js + package.json), dist.tar.xz (the built js/dist)
# Back here: copy $OUT/results-gpu-*.json/.md into bench/ and run `.venv/bin/python bench/gpu/plot.py <json>`;
# for Chromium `node bench/gpu/chromium.mjs --from <files_at>/bench-h100.json --machine <files_at>/machine.json`
# writes bench/results-gpu-chromium-<adapter>.json/.md/.png.
set -uo pipefail
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
T0=$(date +%s)
stamp() { echo "=== $(( $(date +%s) - T0 )) s: $*"; }
WHAT=${1:-node}
shift || true

CHR=/opt/chr
if [ "$WHAT" = chr-unpack ]; then
  stamp "unpack the headless shell"
  mkdir -p $CHR/chr && xz -dc .chr/p1/headless_shell.xz > $CHR/chr/chromium-headless-shell && chmod +x $CHR/chr/chromium-headless-shell
  ls -la $CHR/chr; stamp "done"; exit 0
fi

stamp "Vulkan loader from .gl"
for f in .gl/*.deb; do dpkg -x "$f" /; done
ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
nvidia-smi --query-gpu=name,driver_version,memory.used,memory.total --format=csv,noheader

stamp "node, dawn.node, js/dist from .h5dev"
B=/tmp/h5bin; mkdir -p $B node_modules
[ -x $B/node ] || { xz -dc .h5dev/node.xz > $B/node && chmod +x $B/node; }
[ -f node_modules/webgpu/dist/linux-x64/dawn.node ] || {
  tar -xf .h5dev/webgpu.tar -C node_modules && mkdir -p node_modules/webgpu/dist/linux-x64 &&
  xz -dc .h5dev/dawn.node.xz > node_modules/webgpu/dist/linux-x64/dawn.node; }
[ -f .h5dev/dist.tar.xz ] && tar -xJf .h5dev/dist.tar.xz
export PATH=$B:$PATH
node --version

case "$WHAT" in
  node)
    stamp "tests/gpu-node on the H100"
    node --test --test-reporter=spec tests/gpu-node/ > "$OUT/gpu-node-tests.log" 2>&1; echo "tests exit $?"
    grep -E "^ℹ (tests|pass|fail)|✖" "$OUT/gpu-node-tests.log" | head -20
    stamp "bench/gpu/node.mjs on the H100 $*"
    node bench/gpu/node.mjs --out "$OUT" --no-plot "$@" > "$OUT/node.log" 2>&1; echo "bench exit $?"
    sed -n '/## webdlpack against/,/^## cold/p' "$OUT/node.log"
    if [ -f .h5dev/vk-swiftshader/icd.json ]; then
      stamp "bench/gpu/node.mjs on SwiftShader (this machine's CPUs), for the side-by-side table"
      mkdir -p "$OUT/ss"
      LD_LIBRARY_PATH=$PWD/.h5dev/vk-swiftshader VK_DRIVER_FILES=$PWD/.h5dev/vk-swiftshader/icd.json \
        node bench/gpu/node.mjs --out "$OUT/ss" --no-plot --sizes 1024,16384,262144,1048576,4194304,16777216,67108864 > "$OUT/ss/node.log" 2>&1; echo "bench exit $?"
      sed -n '/## webdlpack against/,/^## cold/p' "$OUT/ss/node.log"
    fi
    ;;
  chromium)
    BIN=$CHR/chr/chromium-headless-shell
    [ -x $BIN ] || { echo "NO BINARY at $BIN: a fresh machine; run the chr-unpack call first"; exit 3; }
    stamp "unpack Chromium's resources and libraries"
    tar -xJf .chr/p2/rest.tar.xz -C $CHR
    LD_LIBRARY_PATH=$CHR/lib ldd $BIN | grep "not found" || echo "all libraries found"
    node scripts/serve.mjs --port 8001 --isolated > /tmp/serve.log 2>&1 & SRV=$!
    sleep 1
    FLAGS="--headless --no-sandbox --enable-unsafe-webgpu --ignore-gpu-blocklist --enable-features=Vulkan --use-angle=vulkan --use-vulkan=native --disable-vulkan-surface --enable-webgpu-developer-features --disable-background-networking --disable-component-update --disable-sync --no-first-run --enable-logging=stderr"
    SIZES=${SIZES:-1024,16384,262144,1048576,4194304,16777216,67108864,268435456}
    stamp "bench/gpu/transfers.html on the H100 (sizes $SIZES)"
    timeout 300 python3 .h5dev/chr-tools/cdp.py --env "LD_LIBRARY_PATH=$CHR/lib" --env "VK_DRIVER_FILES=$VK_DRIVER_FILES" \
      --env "VK_ICD_FILENAMES=$VK_DRIVER_FILES" --env "__EGL_VENDOR_LIBRARY_FILENAMES=$__EGL_VENDOR_LIBRARY_FILENAMES" \
      --chrome $BIN --tag bench-h100 --out "$OUT" --flags "$FLAGS" \
      --page "bench@http://127.0.0.1:8001/bench/gpu/transfers.html?sizes=$SIZES@@290" 2>&1 | tail -20
    grep -iE "vulkan|webgpu|adapter" "$OUT/bench-h100.stderr.txt" | sort | uniq -c | sort -rn | head -8
    xz -9 "$OUT/bench-h100.stderr.txt"
    SS_FLAGS="--headless --no-sandbox --enable-unsafe-webgpu --enable-features=Vulkan --use-angle=swiftshader --use-webgpu-adapter=swiftshader --disable-background-networking --disable-component-update --disable-sync --no-first-run --enable-logging=stderr"
    stamp "bench/gpu/transfers.html on SwiftShader (this machine's CPUs)"
    timeout 200 python3 .h5dev/chr-tools/cdp.py --env "LD_LIBRARY_PATH=$CHR/lib" --chrome $BIN --tag bench-swiftshader --out "$OUT" \
      --flags "$SS_FLAGS" --page "bench@http://127.0.0.1:8001/bench/gpu/transfers.html?sizes=1024,16384,262144,1048576,4194304,16777216,67108864@@190" 2>&1 | grep -v samples | tail -5
    xz -9 "$OUT/bench-swiftshader.stderr.txt"
    kill $SRV 2>/dev/null
    python3 -c "import os,json; print(json.dumps({'cpus': os.cpu_count(), 'cpu': [l.split(':',1)[1].strip() for l in open('/proc/cpuinfo') if l.startswith('model name')][0], 'platform': os.uname().sysname + ' ' + os.uname().release}))" > "$OUT/machine.json"
    ;;
  *) echo "unknown step $WHAT"; exit 2 ;;
esac
stamp "done"
ls -la "$OUT"
