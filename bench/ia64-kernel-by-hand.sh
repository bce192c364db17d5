#!/bin/sh
# Baseline for the kernel stage: an ia64 kernel built by hand from the same
# tarball, patches, defconfig and fragments, printing the wall time of every
# step. The kernel stage (builder/stages/kernel_source.c) is benchmarked
# against these numbers (target: the stage within 1.05 x of this).
#
# usage: bench/ia64-kernel-by-hand.sh TOOLCHAIN TARBALL DEFCONFIG [FRAGMENT...]
#   TOOLCHAIN  a toolchain stage's output (TOOLCHAIN/bin/ia64-linux-gnu-gcc),
#              e.g. out/ia64-minimal/toolchain
#   TARBALL    the kernel source tarball (/usr/src/linux-source-6.1.tar.xz,
#              or Debian's linux_6.12.N.orig.tar.xz)
#   DEFCONFIG  generic_defconfig, sim_defconfig, ...
#   FRAGMENT   names in kernel-config/ (ia64-generic, serial-console, ...)
# env: PATCHES (patch files applied in order with patch -p1), JOBS (default 2),
#      BUILD (scratch directory, default a new temporary one, removed after).
set -eu
TOP=$(cd "$(dirname "$0")/.." && pwd)
TC=${1:?usage: $0 TOOLCHAIN TARBALL DEFCONFIG [FRAGMENT...]}
TARBALL=${2:?tarball}
DEFCONFIG=${3:?defconfig}
shift 3
JOBS=${JOBS:-2}
OWN_BUILD=0
if [ -z "${BUILD:-}" ]; then BUILD=$(mktemp -d /var/tmp/kernel-by-hand.XXXXXX); OWN_BUILD=1; fi
mkdir -p "$BUILD"
[ -x "$TC/bin/ia64-linux-gnu-gcc" ] || { echo "error: no $TC/bin/ia64-linux-gnu-gcc" >&2; exit 1; }
PATH=$TC/bin:$PATH
export PATH

STEP_WIDTH=14
. "$TOP/bench/lib.sh"
cd "$BUILD"
step extract tar -xf "$TARBALL"
SRC=$(find "$BUILD" -mindepth 1 -maxdepth 1 -type d ! -name obj | head -n1)
for p in ${PATCHES:-}; do
    step "patch" patch -d "$SRC" -p1 --forward --batch --no-backup-if-mismatch -s -i "$p"
done
K="make -C $SRC O=$BUILD/obj ARCH=ia64 CROSS_COMPILE=ia64-linux-gnu-"
step defconfig $K "$DEFCONFIG"
frags=
for f in "$@"; do frags="$frags $TOP/kernel-config/$f.config"; done
if [ -n "$frags" ]; then
    # shellcheck disable=SC2086
    step fragments env ARCH=ia64 "$SRC/scripts/kconfig/merge_config.sh" -m -O "$BUILD/obj" \
        "$BUILD/obj/.config" $frags
    step olddefconfig $K olddefconfig
fi
mods=
grep -q '^CONFIG_MODULES=y' "$BUILD/obj/.config" && mods=modules
step build $K -j"$JOBS" vmlinux vmlinux.gz $mods

echo "== times"
cat "$TIMES"
echo "release $($K -s kernelrelease)"
[ "$OWN_BUILD" = 1 ] && { cd /; rm -rf "$BUILD"; }
exit 0
