#!/usr/bin/env bash
# Here (no GPU): stage Debian's chromium-headless-shell for the device machine, after
# ../shared/tools/chromium-on-gpu/stage.sh (the reference). gzip, not xz: xz -9 of the 223 MB binary takes this shared
# 2-core machine most of an hour. Writes, git-ignored:
#   .chr/pa/shell.gz.part, .chr/pb/shell.gz.part   the binary (gzip -1, ~87 MiB) in two halves — one device call each
#   .chr/p2/rest.tar.gz      chr/ resources + lib/ the Debian libs it links; tools/ cdp.py and serve.py
#                            (../shared/tools/chromium-on-gpu: drive Chromium over DevTools, serve with COOP/COEP);
#                            dist.tar.gz the built js/dist (run `make js` first)          — the Chromium call, with .gl
set -euo pipefail
cd "$(dirname "$0")/../.."
VER=${CHROMIUM_VERSION:-$(dpkg-query -W -f '${Version}' chromium 2>/dev/null || echo 156.0.8078.108-1~deb12u1)}
EX=$(git rev-parse --git-common-dir)/info/exclude; mkdir -p "$(dirname "$EX")"; grep -qx '/.chr/' "$EX" 2>/dev/null || echo /.chr/ >> "$EX"
rm -rf .chr; mkdir -p .chr/pa .chr/pb .chr/p2/tools /tmp/chrdl /tmp/amd64/partial
o='-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=/tmp/amd64'
if ! ls /tmp/chrdl/chromium-headless-shell_*.deb >/dev/null 2>&1; then
  [ -d /tmp/amd64/lists ] || apt-get $o update >/dev/null
  (cd /tmp/chrdl && apt-get $o download "chromium-headless-shell=$VER" "chromium-common=$VER")
fi
X=/tmp/chrdl/x; S=$X/usr/lib/chromium
[ -x $S/chromium-headless-shell ] || { rm -rf $X; mkdir -p $X; for d in /tmp/chrdl/*.deb; do dpkg -x "$d" $X; done; }
gzip -1 -c $S/chromium-headless-shell > /tmp/chr-shell.gz
HALF=$(( ($(stat -c %s /tmp/chr-shell.gz) + 1) / 2 ))
head -c $HALF /tmp/chr-shell.gz > .chr/pa/shell.gz.part
tail -c +$((HALF + 1)) /tmp/chr-shell.gz > .chr/pb/shell.gz.part
R=/tmp/chrrest; rm -rf $R; mkdir -p $R/chr $R/lib
cp $S/headless_lib_data.pak $S/headless_lib_strings.pak $S/headless_command_resources.pak $S/icudtl.dat \
   $S/v8_context_snapshot.bin $S/snapshot_blob.bin $S/libvulkan.so.1 $S/libvk_swiftshader.so $S/vk_swiftshader_icd.json $R/chr/
for l in $(ldd $S/chromium-headless-shell | awk '/=>/{print $3}' | sort -u); do
  case $(basename "$l") in libc.so.6|libm.so.6|libpthread.so.0|libdl.so.2|librt.so.1|libstdc++.so.6|libgcc_s.so.1|ld-linux*) ;; *) cp -L "$l" $R/lib/ ;; esac
done
(cd $R && tar -cf - chr lib | gzip -6 > "$OLDPWD/.chr/p2/rest.tar.gz")
T=/work/shared/tools/chromium-on-gpu; [ -d ../shared/tools/chromium-on-gpu ] && T=../shared/tools/chromium-on-gpu
cp $T/cdp.py $T/serve.py .chr/p2/tools/
[ -f js/dist/webdlpack.bundle.js ] || { echo "js/dist is missing: run make js first" >&2; exit 2; }
tar -cf - --exclude='*.map' --exclude='js/dist/python' --exclude='js/dist/wasm' js/dist | gzip -6 > .chr/p2/dist.tar.gz
du -sh .chr/*
