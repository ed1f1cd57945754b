#!/usr/bin/env bash
# Run a command with a Vulkan driver for dawn.node (npm `webgpu`):
#   bash scripts/vk-env.sh node bench/gpu/node.mjs
# If VK_DRIVER_FILES is already set (a GPU's ICD, e.g. the device machine's NVIDIA one), it is used as is.
# Otherwise Chromium's own SwiftShader Vulkan driver and loader are copied into build/vk-swiftshader/ with an ICD
# file (platform notes: "WebGPU in Node (dawn.node)") and put on LD_LIBRARY_PATH / VK_DRIVER_FILES.
# CHROMIUM_LIB_DIR (default /usr/lib/chromium, Debian's chromium package) says where those two libraries are.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
if [ -z "${VK_DRIVER_FILES:-}" ]; then
  DIR="$ROOT/build/vk-swiftshader"
  SRC=${CHROMIUM_LIB_DIR:-/usr/lib/chromium}
  if [ ! -f "$DIR/icd.json" ]; then
    for f in libvulkan.so.1 libvk_swiftshader.so; do
      [ -f "$SRC/$f" ] || { echo "vk-env: $SRC/$f is missing (install Debian's chromium, or set CHROMIUM_LIB_DIR or VK_DRIVER_FILES)" >&2; exit 2; }
    done
    mkdir -p "$DIR"
    cp "$SRC/libvulkan.so.1" "$SRC/libvk_swiftshader.so" "$DIR/"
    echo '{"file_format_version": "1.0.0", "ICD": {"library_path": "./libvk_swiftshader.so", "api_version": "1.0.5"}}' > "$DIR/icd.json"
  fi
  export LD_LIBRARY_PATH="$DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  export VK_DRIVER_FILES="$DIR/icd.json"
fi
exec "$@"
