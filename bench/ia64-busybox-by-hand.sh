#!/bin/sh
# Baseline for the busybox stage (builder/stages/busybox.c): build Debian's
# busybox for ia64 by hand the way the stage does (dpkg-source -x, make
# defconfig, Trillian's config fragment and the sysroot, make oldconfig, make
# busybox busybox.links with the stage-2 gcc), print the wall time of every
# step and the total in seconds. Target: the stage <= 1.05 x this; its log has
# the same step names and times.
#
# usage: bench/ia64-busybox-by-hand.sh GCC SYSROOT DSC [BUILD_DIR]
#   GCC      the gcc (stage 2) stage's output (bin/ia64-linux-gnu-gcc)
#   SYSROOT  the glibc stage's sysroot/
#   DSC      busybox's .dsc (the stage keeps it in CACHE/downloads/sources/)
#   BUILD_DIR  scratch directory, default $(mktemp -d); removed only if we made it
# env: JOBS (default 2), TARGET (default ia64-linux-gnu)
set -eu
GCC=${1:?usage: $0 GCC SYSROOT DSC [BUILD_DIR]}
SYSROOT=${2:?usage: $0 GCC SYSROOT DSC [BUILD_DIR]}
DSC=${3:?usage: $0 GCC SYSROOT DSC [BUILD_DIR]}
TARGET=${TARGET:-ia64-linux-gnu}
JOBS=${JOBS:-2}
if [ -n "${4:-}" ]; then BUILD=$4; mkdir -p "$BUILD"; OWN_BUILD=0
else BUILD=$(mktemp -d); OWN_BUILD=1; fi
[ -x "$GCC/bin/$TARGET-gcc" ] || { echo "error: no $GCC/bin/$TARGET-gcc" >&2; exit 1; }
[ -d "$SYSROOT/usr/include" ] || { echo "error: $SYSROOT is not a sysroot" >&2; exit 1; }
FRAG=$(cd "$(dirname "$0")/.." && pwd)/firmware/busybox/trillian.config
. "$(dirname "$0")/lib.sh"
T0=$(date +%s.%N)
export PATH="$GCC/bin:$PATH" SOURCE_DATE_EPOCH=1700000000 KCONFIG_NOTIMESTAMP=1 LC_ALL=C
SRC=$BUILD/busybox
step unpack dpkg-source --no-copy -x "$DSC" "$SRC"
ln -s "$SYSROOT" "$SRC/.trillian-sysroot"
cd "$SRC"
step defconfig make -j"$JOBS" defconfig
# the fragment and the sysroot after defconfig's lines: the later wins
{ cat "$FRAG"; echo 'CONFIG_SYSROOT=".trillian-sysroot"'; } >> .config
step oldconfig sh -c 'yes "" | make -j'"$JOBS"' oldconfig >/dev/null'
step make make -j"$JOBS" CROSS_COMPILE="$TARGET-" busybox busybox.links
T1=$(date +%s.%N)
echo "== times"
cat "$TIMES"
printf 'total %.1f seconds\n' "$(echo "$T1 - $T0" | bc)"
file busybox | cut -c1-100
[ "$OWN_BUILD" = 1 ] && cd / && rm -rf "$BUILD"
exit 0
