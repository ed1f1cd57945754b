#!/usr/bin/env bash
# Install the system packages webdlpack needs, from Debian only, when missing:
# make, gcc, python3-venv, Node.js + npm, Chromium (WebGPU via SwiftShader), emscripten.
# Everything else (npm lockfile, Python venv) is installed by `make setup`.
set -euo pipefail
need=()
have() { command -v "$1" >/dev/null 2>&1; }
have make || need+=(make)
have gcc || need+=(gcc libc6-dev)
have git || need+=(git)
have node || need+=(nodejs)
have npm || need+=(npm)
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
