#!/bin/sh
# Baseline for the grub packages stage (builder/stages/grub_build.c): GRUB
# 2.06 for ia64-efi built by hand from Debian's grub2 source package with the
# stage-1 ia64 toolchain, then grubia64.efi made with the built grub-mkimage.
# Prints the wall time of every step and the total in seconds; the stage's
# log has the same step names ("trillian: make: 512.3 s (exit 0)").
#
# usage: bench/grub-ia64-by-hand.sh TOOLCHAIN DSC OUT [BUILD_DIR]
#   TOOLCHAIN  the toolchain stage's output (bin/ia64-linux-gnu-gcc, stage 1)
#   DSC        grub2_2.06-13+deb12u2.dsc with its files beside it; get them with
#              apt-get source --download-only grub2 (a deb-src line for bookworm)
#   OUT        where grubia64.efi, grub-mkimage and the modules go (created)
#   BUILD_DIR  scratch directory, default $(mktemp -d); removed only if we made it
# env: JOBS (default 2), TARGET (default: TOOLCHAIN/target, else ia64-linux-gnu).
set -eu

U="usage: $0 TOOLCHAIN DSC OUT [BUILD_DIR]"
TC=${1:?$U}; DSC=${2:?$U}; OUT=${3:?$U}
JOBS=${JOBS:-2}
abs() { case $1 in /*) echo "$1" ;; *) echo "$(pwd)/$1" ;; esac; }
TC=$(abs "$TC"); DSC=$(abs "$DSC"); OUT=$(abs "$OUT")
TARGET=${TARGET:-$(cat "$TC/target" 2>/dev/null || echo ia64-linux-gnu)}
if [ -n "${4:-}" ]; then BUILD=$(abs "$4"); mkdir -p "$BUILD"; OWN_BUILD=0
else BUILD=$(mktemp -d); OWN_BUILD=1; fi

[ -r "$DSC" ] || { echo "error: $DSC not readable" >&2; exit 1; }
[ -x "$TC/bin/$TARGET-gcc" ] || { echo "error: no $TC/bin/$TARGET-gcc" >&2; exit 1; }
for p in dpkg-source autoreconf autopoint python3 bison flex make; do
    command -v $p >/dev/null || { echo "error: $p not installed" >&2; exit 1; }
done

. "$(dirname "$0")/lib.sh"
T0=$(date +%s.%N)
cd "$BUILD"

# dpkg-source -x checks the .dsc's hashes of the orig and debian tarballs and
# applies Debian's whole quilt series (206 patches in 2.06-13+deb12u2: the
# CVE fixes for fonts, images, net and file systems, gcc 12 build fixes; the
# rest concern other platforms or grub-install and are inert for ia64-efi).
step unpack dpkg-source --no-copy -x "$DSC" src
# Some of the series changes configure.ac and Makefile.*.def: regenerate as
# Debian does (dh_autoreconf ./autogen.sh). GRUB_CONTRIB unset: Debian's
# grub-extras (915resolution, ntldr-img) are x86 BIOS only.
cd src
step autogen env PYTHON=python3 ./autogen.sh
mkdir -p ../obj
cd ../obj
# Host tools (grub-mkimage) with the host gcc; the platform's code with the
# stage-1 gcc, freestanding. Not needed: NLS, efiemu (i386 only), grub-mount
# (fuse), themes and fonts (no gfxterm on a serial console), device-mapper,
# ZFS, liblzma (xz-compressed images are for i386-pc). --disable-werror: gcc 12
# warns on some 2.06 code. --program-prefix=: a cross build would otherwise
# name its tools ia64-linux-gnu-grub-*. CFLAGS (empty by default; GRUB adds
# it to its -Os target flags too): __FILE__ would carry the build path.
step configure ../src/configure --prefix=/usr --libdir=/usr/lib \
    --target="$TARGET" --with-platform=efi --program-prefix= \
    --disable-werror --disable-nls --disable-efiemu --disable-grub-mount \
    --disable-grub-themes --disable-grub-mkfont --disable-device-mapper \
    --disable-libzfs --disable-liblzma \
    TARGET_CC="$TC/bin/$TARGET-gcc" \
    TARGET_OBJCOPY="$TC/bin/$TARGET-objcopy" TARGET_STRIP="$TC/bin/$TARGET-strip" \
    TARGET_NM="$TC/bin/$TARGET-nm" TARGET_RANLIB="$TC/bin/$TARGET-ranlib" \
    CFLAGS="-ffile-prefix-map=$BUILD=."
step make nice make -j"$JOBS"
step install make install DESTDIR="$BUILD/dest"

mkdir -p "$OUT"
cp "$BUILD/dest/usr/bin/grub-mkimage" "$OUT/grub-mkimage"
rm -rf "$OUT/ia64-efi"
cp -r "$BUILD/dest/usr/lib/grub/ia64-efi" "$OUT/ia64-efi"
MODULES="part_gpt part_msdos fat ext2 linux normal configfile echo test serial terminal \
search search_fs_uuid search_fs_file search_label ls cat reboot halt gzio"
# shellcheck disable=SC2086
step mkimage "$OUT/grub-mkimage" -d "$OUT/ia64-efi" -O ia64-efi -p /EFI/BOOT \
    -o "$OUT/grubia64.efi" $MODULES

# PE checks: "PE\0\0" at e_lfanew, Machine 0x200 (IA-64), optional header
# magic 0x20b (PE32+), Subsystem 10 (EFI application).
f=$OUT/grubia64.efi
u16() { od -An -tu2 -j "$1" -N2 "$f" | tr -d ' '; }
lfanew=$(od -An -tu4 -j 60 -N4 "$f" | tr -d ' ')
machine=$(printf '0x%x' "$(u16 $((lfanew + 4)))")
magic=$(printf '0x%x' "$(u16 $((lfanew + 24)))")
subsys=$(u16 $((lfanew + 24 + 68)))
echo "grubia64.efi: $(stat -c %s "$f") bytes, machine $machine, magic $magic, subsystem $subsys"
[ "$machine" = 0x200 ] && [ "$magic" = 0x20b ] && [ "$subsys" = 10 ] ||
    { echo "error: not an IA-64 PE32+ EFI application" >&2; exit 1; }

T1=$(date +%s.%N)
cat "$TIMES"
[ "$OWN_BUILD" = 1 ] && rm -rf "$BUILD"
printf 'total %.1f s\n' "$(echo "$T1 - $T0" | bc)"
