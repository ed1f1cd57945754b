#!/usr/bin/env bash
# Device side of `make bench-gpu` (and the Chromium transfer page) on the device machine (NVIDIA H100).
# Run from the repository root there, as the `run` tool's command; the four calls back to back on one warm machine
# (/opt/chr lives outside the checkout: a fresh machine lacks it):
#   bash bench/device/run-h100.sh chr-part   carry: .chr/pa           first half of the Chromium binary → /opt/chr
#   bash bench/device/run-h100.sh chr-part   carry: .chr/pb           second half
#   bash bench/device/run-h100.sh chromium   carry: .chr/p2 .gl       bench/gpu/transfers.html on the H100, then on
#        SwiftShader (the device host's CPUs; SS=0 skips it) → $OUT/bench-h100.json, $OUT/bench-swiftshader.json, machine.json
#   bash bench/device/run-h100.sh node       carry: .gl .h5dev        tests/gpu-node on the H100 ($OUT/gpu-node-tests.log),
#        bench/gpu/node.mjs on the H100 → $OUT/results-gpu-<adapter>.json/.md, on SwiftShader → $OUT/ss/
# Staged here by bench/device/stage-chromium.sh (.chr) and stage-node.sh (.gl, .h5dev); both git-ignored.
# Back here: copy $OUT/results-gpu-*.json/.md into bench/ (SwiftShader ones as results-gpu-swiftshader-devicehost.*) and
# run `.venv/bin/python bench/gpu/plot.py <json>`; for Chromium `node bench/gpu/chromium.mjs --from <files_at>/bench-h100.json
# --machine <files_at>/machine.json` writes bench/results-gpu-chromium-<adapter>.json/.md/.png.
set -uo pipefail
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
T0=$(date +%s)
stamp() { echo "=== $(( $(date +%s) - T0 )) s: $*"; }
WHAT=${1:-node}
shift || true

CHR=/opt/chr
if [ "$WHAT" = chr-part ]; then
  mkdir -p $CHR
  for p in .chr/pa .chr/pb; do
    [ -f $p/shell.gz.part ] && { cat $p/shell.gz.part >> $CHR/shell.gz; stamp "appended $p ($(stat -c %s $CHR/shell.gz) bytes so far)"; }
  done
  exit 0
fi

stamp "Vulkan loader from .gl"
for f in .gl/*.deb; do dpkg -x "$f" /; done
ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
nvidia-smi --query-gpu=name,driver_version,memory.used,memory.total --format=csv,noheader

if [ "$WHAT" = node ]; then
  stamp "node, dawn.node, js/dist from .h5dev"
  B=/tmp/h5bin; mkdir -p $B node_modules
  [ -x $B/node ] || { gzip -dc .h5dev/node.gz > $B/node && chmod +x $B/node; }
  [ -f node_modules/webgpu/dist/linux-x64/dawn.node ] || {
    tar -xf .h5dev/webgpu.tar -C node_modules && mkdir -p node_modules/webgpu/dist/linux-x64 &&
    gzip -dc .h5dev/dawn.node.gz > node_modules/webgpu/dist/linux-x64/dawn.node; }
  tar -xzf .h5dev/dist.tar.gz
  export PATH=$B:$PATH
  node --version
fi

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
    [ -f $CHR/shell.gz ] || { echo "NO BINARY at $CHR/shell.gz: a fresh machine; run the two chr-part calls first"; exit 3; }
    stamp "unpack Chromium, its resources and libraries, js/dist"
    mkdir -p $CHR/chr && gzip -dc $CHR/shell.gz > $BIN && chmod +x $BIN
    tar -xzf .chr/p2/rest.tar.gz -C $CHR
    tar -xzf .chr/p2/dist.tar.gz
    LD_LIBRARY_PATH=$CHR/lib ldd $BIN | grep "not found" || echo "all libraries found"
    python3 .chr/p2/tools/serve.py . 8001 /tmp/serve.log --isolated & SRV=$!
    sleep 1
    FLAGS="--headless --no-sandbox --enable-unsafe-webgpu --ignore-gpu-blocklist --enable-features=Vulkan --use-angle=vulkan --use-vulkan=native --disable-vulkan-surface --enable-webgpu-developer-features --disable-background-networking --disable-component-update --disable-sync --no-first-run --enable-logging=stderr"
    SIZES=${SIZES:-1024,16384,262144,1048576,4194304,16777216,67108864,268435456}
    stamp "bench/gpu/transfers.html on the H100 (sizes $SIZES)"
    timeout 300 python3 .chr/p2/tools/cdp.py --env "LD_LIBRARY_PATH=$CHR/lib" --env "VK_DRIVER_FILES=$VK_DRIVER_FILES" \
      --env "VK_ICD_FILENAMES=$VK_DRIVER_FILES" --env "__EGL_VENDOR_LIBRARY_FILENAMES=$__EGL_VENDOR_LIBRARY_FILENAMES" \
      --chrome $BIN --tag bench-h100 --out "$OUT" --flags "$FLAGS" \
      --page "bench@http://127.0.0.1:8001/bench/gpu/transfers.html?sizes=$SIZES@@290" 2>&1 | grep -v samples | tail -8
    grep -iE "vulkan|webgpu|adapter" "$OUT/bench-h100.stderr.txt" | sort | uniq -c | sort -rn | head -8
    gzip -9 "$OUT/bench-h100.stderr.txt"
    if [ "${SS:-1}" = 1 ]; then # SS=0: the H100/H200 page only
    SS_FLAGS="--headless --no-sandbox --enable-unsafe-webgpu --enable-features=Vulkan --use-angle=swiftshader --use-webgpu-adapter=swiftshader --disable-background-networking --disable-component-update --disable-sync --no-first-run --enable-logging=stderr"
    stamp "bench/gpu/transfers.html on SwiftShader (this machine's CPUs)"
    timeout 200 python3 .chr/p2/tools/cdp.py --env "LD_LIBRARY_PATH=$CHR/lib" --chrome $BIN --tag bench-swiftshader --out "$OUT" \
      --flags "$SS_FLAGS" --page "bench@http://127.0.0.1:8001/bench/gpu/transfers.html?sizes=1024,16384,262144,1048576,4194304,16777216,67108864@@190" 2>&1 | grep -v samples | tail -5
    gzip -9 "$OUT/bench-swiftshader.stderr.txt"
    fi
    kill $SRV 2>/dev/null
    python3 -c "import os,json; print(json.dumps({'cpus': os.cpu_count(), 'cpu': [l.split(':',1)[1].strip() for l in open('/proc/cpuinfo') if l.startswith('model name')][0], 'platform': os.uname().sysname + ' ' + os.uname().release}))" > "$OUT/machine.json"
    ;;
  *) echo "unknown step $WHAT"; exit 2 ;;
esac
stamp "done"
ls -la "$OUT"
