#!/usr/bin/env bash
# Here (no GPU): stage Debian's chromium-headless-shell for the device machine, after
# ../shared/tools/chromium-on-gpu/stage.sh (the reference), without the demo's files (the transfer page and
# js/dist travel with the checkout and .h5dev). Writes, git-ignored:
#   .chr/p1/headless_shell.xz   the binary (xz)                          — first device call
#   .chr/p2/rest.tar.xz         chr/ resources + lib/ the Debian libs    — second device call, with .gl and .h5dev
set -euo pipefail
cd "$(dirname "$0")/../.."
VER=${CHROMIUM_VERSION:-$(dpkg-query -W -f '${Version}' chromium 2>/dev/null || echo 156.0.8078.108-1~deb12u1)}
EX=$(git rev-parse --git-common-dir)/info/exclude; mkdir -p "$(dirname "$EX")"; grep -qx '/.chr/' "$EX" 2>/dev/null || echo /.chr/ >> "$EX"
mkdir -p .chr/p1 .chr/p2 /tmp/chrdl /tmp/amd64/partial
o='-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=/tmp/amd64'
if ! ls /tmp/chrdl/chromium-headless-shell_*.deb >/dev/null 2>&1; then
  [ -d /tmp/amd64/lists ] || apt-get $o update >/dev/null
  (cd /tmp/chrdl && apt-get $o download "chromium-headless-shell=$VER" "chromium-common=$VER")
fi
X=/tmp/chrdl/x; S=$X/usr/lib/chromium
[ -x $S/chromium-headless-shell ] || { rm -rf $X; mkdir -p $X; for d in /tmp/chrdl/*.deb; do dpkg -x "$d" $X; done; }
[ -f .chr/p1/headless_shell.xz ] || xz -T2 -9 -c $S/chromium-headless-shell > .chr/p1/headless_shell.xz
R=/tmp/chrrest; rm -rf $R; mkdir -p $R/chr $R/lib
cp $S/headless_lib_data.pak $S/headless_lib_strings.pak $S/headless_command_resources.pak $S/icudtl.dat \
   $S/v8_context_snapshot.bin $S/snapshot_blob.bin $S/libvulkan.so.1 $S/libvk_swiftshader.so $S/vk_swiftshader_icd.json $R/chr/
for l in $(ldd $S/chromium-headless-shell | awk '/=>/{print $3}' | sort -u); do
  case $(basename "$l") in libc.so.6|libm.so.6|libpthread.so.0|libdl.so.2|librt.so.1|libstdc++.so.6|libgcc_s.so.1|ld-linux*) ;; *) cp -L "$l" $R/lib/ ;; esac
done
(cd $R && tar -cf - chr lib | xz -T2 -9 > "$OLDPWD/.chr/p2/rest.tar.xz")
ls -la .chr/p1 .chr/p2
