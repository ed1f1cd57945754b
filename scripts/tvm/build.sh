#!/usr/bin/env bash
# Build TVM's web runtime (tvmjs) and the TVM test models for WebGPU, offline after the downloads, from:
#   - PyPI apache-tvm (the compiler, its LLVM with the WebAssembly backend, and tvmjs's C++ sources),
#     apache-tvm-ffi (tvm-ffi's sources and headers, DLPack), apache-tvm-tirx (three support headers);
#   - scripts/tvm/include/: small headers of our own for what the wheel lacks (see its README);
#   - Debian's emcc (3.1.6).
# Nothing of TVM is committed: everything lands under $WEBDLPACK_TVM_CACHE (default build/tvm),
# in a folder named by the apache-tvm version, and build/tvm/models (what the tests load) points at its models:
#   venv/                  Python with apache-tvm (~320 MB; a separate venv, not the dev one)
#   include/tvm/support/   the tirx headers
#   root/                  TVM's source layout made of links (the wheel's files, our headers)
#   runtime/*.o            tvmjs's runtime as wasm objects (wasm_runtime, webgpu_runtime, tvmjs_support)
#   models/test_models.wasm + test_models.json   the test models and their NumPy reference (make_models.py)
#   inplace/inplace_model.wasm                   the in-place model (make_inplace_model.py), built apart
# Each step runs only when its inputs changed (a key file holds their hash). CPU heavy: runs under nice
# (WEBDLPACK_TVM_NICE, default 10).
set -euo pipefail
cd "$(dirname "$0")/../.."
REPO=$PWD
TVM_VERSION=0.27.0.post1
TVM_FFI_VERSION=0.1.15.post2
TIRX_VERSION=0.1.0a4
CACHE_ROOT=${WEBDLPACK_TVM_CACHE:-$REPO/build/tvm}
CACHE=$CACHE_ROOT/apache-tvm-$TVM_VERSION
export NODE_PATH=${NODE_PATH:-/usr/share/nodejs}  # Debian emcc's JS optimizer needs acorn from there
NICE="nice -n ${WEBDLPACK_TVM_NICE:-10}"  # run-tests.sh sets 0: the browser suite waits for this build
mkdir -p "$CACHE"
log() { echo "tvm: $*"; }
started=$(date +%s)

# A step's key: the hash of its input files and of this script's settings.
key_of() { { echo "$TVM_VERSION $TVM_FFI_VERSION $TIRX_VERSION $(emcc --version 2>/dev/null | sed -n 1p)"; cat "$@"; } | sha256sum | cut -c1-16; }
fresh() { [ -f "$1" ] && [ "$(cat "$1")" = "$2" ]; }

# 1. Python with apache-tvm, in its own venv.
VENV=$CACHE/venv
if ! fresh "$VENV/.key" "$TVM_VERSION"; then
  t=$(date +%s)
  rm -rf "$VENV"
  python3 -m venv "$VENV"
  $NICE "$VENV/bin/python" -m pip install -q --disable-pip-version-check \
    "apache-tvm==$TVM_VERSION" "apache-tvm-ffi==$TVM_FFI_VERSION"
  echo "$TVM_VERSION" > "$VENV/.key"
  log "venv with apache-tvm $TVM_VERSION in $(( $(date +%s) - t )) s"
fi
SITE=$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
TVM=$SITE/tvm
FFI=$SITE/tvm_ffi

# 2. tvm/support/{io,serializer,bytes_io}.h from the apache-tvm-tirx wheel (downloaded, not installed).
INC=$CACHE/include
if ! fresh "$INC/.key" "$TIRX_VERSION"; then
  rm -rf "$INC" "$CACHE/tirx" && mkdir -p "$INC/tvm/support"
  "$VENV/bin/python" -m pip download -q --disable-pip-version-check --no-deps --only-binary=:all: \
    "apache-tvm-tirx==$TIRX_VERSION" -d "$CACHE/tirx"
  "$VENV/bin/python" - "$CACHE"/tirx/*.whl "$INC/tvm/support" <<'PY'
import sys, zipfile
from pathlib import Path
wheel, dest = sys.argv[1], Path(sys.argv[2])
with zipfile.ZipFile(wheel) as z:
    for name in ("io.h", "serializer.h", "bytes_io.h"):
        (dest / name).write_bytes(z.read(f"tvm_tirx/include/tvm/support/{name}"))
PY
  rm -rf "$CACHE/tirx"
  echo "$TIRX_VERSION" > "$INC/.key"
fi

# 3. TVM's source layout as real folders of file links (cp -s): the sources include each other by paths with
#    "..", which must resolve within this tree (through a linked folder they would leave it).
ROOT=$CACHE/root
rm -rf "$ROOT" && mkdir -p "$ROOT/src" "$ROOT/3rdparty" "$ROOT/web"
cp -rs "$TVM/include" "$ROOT/include"
cp -rs "$TVM/src/runtime" "$ROOT/src/runtime"
cp -rs "$REPO/scripts/tvm/include/support" "$ROOT/src/support"
cp -rs "$FFI" "$ROOT/3rdparty/tvm-ffi"
cp -rs "$REPO/scripts/tvm/include/compiler-rt" "$ROOT/3rdparty/compiler-rt"
cp -rs "$TVM/web/emcc" "$ROOT/web/emcc"
CFLAGS=(-O3 -std=c++17 -Wno-ignored-attributes -I"$ROOT" -I"$ROOT/include" -I"$INC" -I"$REPO/scripts/tvm/include"
  -I"$FFI/include" -I"$ROOT/3rdparty/compiler-rt")

# 4. The runtime as wasm objects (web/Makefile's flags), the three units at once; wasm_runtime.o is the slow one
#    (minutes). Objects, not web/Makefile's LLVM bitcode: a link of bitcode compiles the whole runtime again (LTO),
#    once per model file; a link of objects takes a second (make_models.py).
RT=$CACHE/runtime
rt_key=$(key_of scripts/tvm/build.sh scripts/tvm/include/*/*.h scripts/tvm/include/tvm/support/cuda/*.h "$INC"/tvm/support/*.h)
if ! fresh "$RT/.key" "$rt_key"; then
  rm -rf "$RT" && mkdir -p "$RT"
  pids=()
  for unit in webgpu_runtime tvmjs_support wasm_runtime; do
    (
      t=$(date +%s)
      $NICE emcc "${CFLAGS[@]}" -c -o "$RT/$unit.o" "$ROOT/web/emcc/$unit.cc"
      log "$unit.o $(du -k "$RT/$unit.o" | cut -f1) KiB in $(( $(date +%s) - t )) s"
    ) &
    pids+=($!)
  done
  for pid in "${pids[@]}"; do wait "$pid"; done  # set -e: a failed unit fails the build here
  echo "$rt_key" > "$RT/.key"
fi

# 5. The test models, linked with the runtime into one .wasm tvmjs loads, and their NumPy reference.
MODELS=$CACHE/models
models_key=$(key_of "$RT/.key" scripts/tvm/make_models.py tests/data/mlp_reference.json)
if ! fresh "$MODELS/.key" "$models_key"; then
  t=$(date +%s)
  rm -rf "$MODELS.new" && mkdir -p "$MODELS.new"
  $NICE "$VENV/bin/python" scripts/tvm/make_models.py --runtime "$RT" --out "$MODELS.new" \
    --reference tests/data/mlp_reference.json
  echo "$models_key" > "$MODELS.new/.key"
  rm -rf "$MODELS" && mv "$MODELS.new" "$MODELS"  # the old models stay usable until the new ones are whole
  log "models $(du -k "$MODELS/test_models.wasm" | cut -f1) KiB in $(( $(date +%s) - t )) s"
fi

# 6. The in-place model (make_inplace_model.py), in a .wasm of its own: adding or changing it relinks only this one.
INPLACE=$CACHE/inplace
inplace_key=$(key_of "$RT/.key" scripts/tvm/make_inplace_model.py scripts/tvm/make_models.py)
if ! fresh "$INPLACE/.key" "$inplace_key"; then
  t=$(date +%s)
  rm -rf "$INPLACE.new" && mkdir -p "$INPLACE.new"
  $NICE "$VENV/bin/python" scripts/tvm/make_inplace_model.py --runtime "$RT" --out "$INPLACE.new"
  echo "$inplace_key" > "$INPLACE.new/.key"
  rm -rf "$INPLACE" && mv "$INPLACE.new" "$INPLACE"
  log "in-place model $(du -k "$INPLACE/inplace_model.wasm" | cut -f1) KiB in $(( $(date +%s) - t )) s"
fi
mkdir -p build/tvm && ln -sfn "$MODELS" build/tvm/models && ln -sfn "$INPLACE" build/tvm/inplace
log "up to date: build/tvm/models -> $MODELS, build/tvm/inplace -> $INPLACE ($(( $(date +%s) - started )) s)"
