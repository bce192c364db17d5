#!/bin/sh
# Baseline for the glibc stage (builder/stages/glibc.c): cross-build glibc
# 2.36 for ia64 by hand with the stage-1 toolchain against Linux UAPI headers,
# install it as a sysroot, print the wall time of every step and the total in
# seconds. The glibc stage is benchmarked against this (target: stage <= 1.05
# x by hand); its log has the same step names and times.
#
# usage: bench/ia64-glibc-by-hand.sh TOOLCHAIN HEADERS SYSROOT [TARBALL] [BUILD_DIR]
#   TOOLCHAIN  the toolchain stage's output (bin/ia64-linux-gnu-gcc, stage 1)
#   HEADERS    kernel UAPI headers: the kernel stage's headers/ (holding include/),
#              or `make ARCH=ia64 headers_install INSTALL_HDR_PATH=HEADERS`
#   SYSROOT    where glibc is installed (created; lib/, usr/lib, usr/include)
#   TARBALL    default /usr/src/glibc/glibc-2.36.tar.xz (package glibc-source)
#   BUILD_DIR  scratch directory, default $(mktemp -d); removed only if we made it
# env: JOBS (default 2), TARGET (default ia64-linux-gnu), ENABLE_KERNEL (default:
# glibc's own minimum for the arch, 3.2.18 on ia64).
set -eu

TC=${1:?usage: $0 TOOLCHAIN HEADERS SYSROOT [TARBALL] [BUILD_DIR]}
HEADERS=${2:?usage: $0 TOOLCHAIN HEADERS SYSROOT [TARBALL] [BUILD_DIR]}
SYSROOT=${3:?usage: $0 TOOLCHAIN HEADERS SYSROOT [TARBALL] [BUILD_DIR]}
TARBALL=${4:-/usr/src/glibc/glibc-2.36.tar.xz}
TARGET=${TARGET:-ia64-linux-gnu}
JOBS=${JOBS:-2}
if [ -n "${5:-}" ]; then BUILD=$5; mkdir -p "$BUILD"; OWN_BUILD=0
else BUILD=$(mktemp -d); OWN_BUILD=1; fi
abs() { case $1 in /*) echo "$1" ;; *) echo "$(pwd)/$1" ;; esac; }
TC=$(abs "$TC"); HEADERS=$(abs "$HEADERS"); SYSROOT=$(abs "$SYSROOT")

[ -r "$TARBALL" ] || { echo "error: $TARBALL not readable (install glibc-source)" >&2; exit 1; }
[ -x "$TC/bin/$TARGET-gcc" ] || { echo "error: no $TC/bin/$TARGET-gcc" >&2; exit 1; }
[ -d "$HEADERS/include/linux" ] || { echo "error: no $HEADERS/include/linux" >&2; exit 1; }

. "$(dirname "$0")/lib.sh"
T0=$(date +%s.%N)

# The stage-1 gcc has no shared libgcc: glibc links libc.so with -lgcc only,
# and its static programs (ldconfig, sln) take -lgcc too when glibc is built
# shared, so no libgcc_eh.a / libgcc_s is needed. PATH gives the toolchain's
# binutils (TARGET-ar, -ranlib, ...).
PATH=$TC/bin:$PATH
export PATH

cd "$BUILD"
step unpack tar -xf "$TARBALL"
SRC=$(ls -d "$BUILD"/glibc-*/ | head -n1)
mkdir -p obj
cd obj
# --disable-werror: gcc 12 warns where glibc 2.36's ia64 code predates it.
# CFLAGS: the stage's default (-O2, no -g); set CFLAGS to compare others.
# MAKEINFO=: skips the manual (no makeinfo needed, nothing to install).
KFLAG=
[ -n "${ENABLE_KERNEL:-}" ] && KFLAG=--enable-kernel=$ENABLE_KERNEL
# CXX: a target g++ that does not exist, else configure takes the host's g++
# for the target's C++ (tests only) and says "can link programs".
step configure env CC="$TARGET-gcc" CXX="$TARGET-g++" AR="$TARGET-ar" RANLIB="$TARGET-ranlib" MAKEINFO=: \
    "${SRC}configure" --prefix=/usr --host="$TARGET" --build="$("${SRC}scripts/config.guess")" \
    --with-headers="$HEADERS/include" --disable-werror $KFLAG CFLAGS="${CFLAGS:--O2}"
step make nice make -j"$JOBS"
step install nice make -j"$JOBS" install DESTDIR="$SYSROOT"
# the kernel's headers belong in the sysroot too (linux/, asm/, ...)
step headers cp -a "$HEADERS/include/." "$SYSROOT/usr/include/"

echo "== times"
cat "$TIMES"
ls -l "$SYSROOT/lib/ld-linux-ia64.so.2" "$SYSROOT/lib/libc.so.6.1"  # ia64 soname 6.1
T1=$(date +%s.%N)
[ "$OWN_BUILD" = 1 ] && { cd /; rm -rf "$BUILD"; }
printf 'total %.1f seconds\n' "$(echo "$T1 - $T0" | bc)"
