#!/bin/sh
# Baseline for the toolchain stage: build the ia64-linux-gnu gcc 12.2 stage 1
# (C only, no libc) by hand, the way environment.md describes, and print the
# wall time of every step. The toolchain stage (builder/stages/toolchain.c) is
# benchmarked against these numbers.
#
# usage: bench/ia64-toolchain-by-hand.sh PREFIX [GCC_TARBALL] [BUILD_DIR]
#   PREFIX       where the compiler is installed (created; must be empty or absent)
#   GCC_TARBALL  default /usr/src/gcc-12/gcc-12.2.0-dfsg.tar.xz (package gcc-12-source)
#   BUILD_DIR    scratch directory, default $(mktemp -d); removed only if we made it
# env: JOBS (default 2), TARGET (default ia64-linux-gnu).
# Needs Debian's binutils-ia64-linux-gnu (as, ld, ...), which are symlinked into
# PREFIX so the compiler finds them under its own prefix.
set -eu

PREFIX=${1:?usage: $0 PREFIX [GCC_TARBALL] [BUILD_DIR]}
TARBALL=${2:-/usr/src/gcc-12/gcc-12.2.0-dfsg.tar.xz}
TARGET=${TARGET:-ia64-linux-gnu}
JOBS=${JOBS:-2}
if [ -n "${3:-}" ]; then BUILD=$3; mkdir -p "$BUILD"; OWN_BUILD=0
else BUILD=$(mktemp -d); OWN_BUILD=1; fi

[ -r "$TARBALL" ] || { echo "error: gcc tarball $TARBALL not readable (install gcc-12-source)" >&2; exit 1; }
command -v "$TARGET-as" >/dev/null || { echo "error: $TARGET-as not found (install binutils-$TARGET)" >&2; exit 1; }
case $PREFIX in /*) ;; *) PREFIX=$(pwd)/$PREFIX ;; esac

STEP_WIDTH=22
. "$(dirname "$0")/lib.sh"

# binutils: Debian's, reachable under PREFIX both as $TARGET-X and as
# PREFIX/$TARGET/bin/X (where gcc's driver looks for as and ld).
mkdir -p "$PREFIX/bin" "$PREFIX/$TARGET/bin"
for t in addr2line ar as c++filt elfedit gprof ld ld.bfd nm objcopy objdump ranlib readelf size strings strip; do
    p=$(command -v "$TARGET-$t" || true)
    [ -n "$p" ] || continue
    ln -sf "$p" "$PREFIX/bin/$TARGET-$t"
    ln -sf "$p" "$PREFIX/$TARGET/bin/$t"
done
PATH=$PREFIX/bin:$PATH
export PATH

cd "$BUILD"
step extract tar -xf "$TARBALL"
SRC=$(ls -d "$BUILD"/gcc-*/ | head -n1)
mkdir -p obj
cd obj
# the stage's flags: host objects without debug info (-O2, stripped at
# install anyway) and the glibc version the root builds against
export CFLAGS=-O2 CXXFLAGS=-O2
step configure "${SRC}configure" --prefix="$PREFIX" --target="$TARGET" \
    --enable-languages=c --without-headers --with-newlib \
    --disable-shared --disable-threads --disable-multilib --disable-bootstrap \
    --disable-nls --disable-libssp --disable-libquadmath --disable-libgomp \
    --disable-libatomic --disable-libitm --disable-libvtv --disable-libsanitizer \
    --disable-libstdcxx --disable-lto --with-glibc-version=2.36
step make-all-gcc nice make -j"$JOBS" all-gcc MAKEINFO=true
step make-all-target-libgcc nice make -j"$JOBS" all-target-libgcc MAKEINFO=true
# The dfsg tarball has no generated docs; installing would regenerate tm.texi
# and fail (s-tm-texi). The stamp says it is up to date.
touch gcc/s-tm-texi
# install-strip-gcc: the host programs (cc1, cpp, collect2) stripped, about a
# tenth of their unstripped size.
step install nice make install-strip-gcc install-target-libgcc MAKEINFO=true

echo "== times"
cat "$TIMES"
"$PREFIX/bin/$TARGET-gcc" --version | head -n1
[ "$OWN_BUILD" = 1 ] && { cd /; rm -rf "$BUILD"; }
exit 0
