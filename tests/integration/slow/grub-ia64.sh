# Slow tier: GRUB for ia64-efi built from Debian's grub2 source package with
# the ia64 stage-1 gcc (packages kind grub), and an ESP made with it
# (bootloader kind grub). The toolchain settings are recipes/include/
# ia64-toolchain.cfg's, so the toolchain comes from the shared test cache;
# the kernel (a tiny IA-64 ELF) and initramfs are stand-ins. GRUB
# takes ~6 minutes the first time on 2 cores (bench/grub-ia64-by-hand.sh is
# the by-hand baseline), later runs are cache hits. Needs Debian's archive
# (deb.debian.org) for the source package the first time.
# Checks: grubia64.efi is a PE32+ EFI application for IA-64 (machine 0x200,
# subsystem 10), no module carries the build's scratch path, the manifest
# names GRUB 2.06 and the Debian version, the stage's grub-mkimage and modules
# make another image (with an embedded config); the ESP holds that image at
# EFI/BOOT/BOOTIA64.EFI with EFI/BOOT/grub.cfg booting the kernel with the
# console, and fsck.fat -n passes; a second build is a cache hit.
. "$TOP/tests/lib.sh"
need ia64-linux-gnu-as ia64-linux-gnu-ld ia64-linux-gnu-readelf gzip make gcc g++ flex bison \
    python3 autoreconf autopoint dpkg-source apt-get curl mdir mcopy mtype fsck.fat od
[ -r /usr/src/gcc-12/gcc-12.2.0-dfsg.tar.xz ] || skip "no gcc-12-source (tools/install-deps)"
C=${TRILLIAN_TEST_CACHE:-$TMP/cache} O=$TMP/out
# the stand-in kernel: an IA-64 ELF, gzipped, as the ESP requires of vmlinuz
F=$TMP/kernel
mkdir -p "$F"
printf '.text\n.global _start\n_start:\n\tbr.ret.sptk.many b0\n' >"$TMP/k.s"
ia64-linux-gnu-as -o "$TMP/k.o" "$TMP/k.s" && ia64-linux-gnu-ld -o "$TMP/vmlinux" "$TMP/k.o" \
    && gzip -9n <"$TMP/vmlinux" >"$F/vmlinuz" || fail "cannot make the stand-in IA-64 kernel"
R=$TMP/grub-ia64.cfg
{
    echo 'name = "grub-ia64";'
    echo 'description = "GRUB ia64-efi from Debian source with the ia64 stage-1 gcc, and its ESP";'
    grep -v '^#' "$TOP/recipes/include/ia64-toolchain.cfg"
    cat <<EOF
root_uuid = "5d0c6b7e-2a41-4f0e-9b8d-3c1f7e6a2b94";
stages = (
  { name = "kernel"; kind = "command"; argv = ["cp", "-R", "$F/.", "\${out}/"];
    inputs = ["$F"]; outputs = ["vmlinuz"]; },
  { name = "initramfs"; kind = "command"; argv = ["truncate", "-s", "1M", "\${out}/initrd.img"];
    outputs = ["initrd.img"]; }
);
packages = ( { kind = "grub"; } );
bootloader = { kind = "grub"; console = "ttyS0,115200"; cmdline = "ro"; };
EOF
} >"$R"
grep -q 'kind = "build"' "$R" || fail "could not copy recipes/include/ia64-toolchain.cfg"

# the source package comes from Debian's archive when the stage runs
if ! curl -fsI --max-time 20 http://deb.debian.org/debian/dists/bookworm/InRelease >/dev/null; then
    trl plan "$R" --cache "$C" -o "$O"
    grep -qE '^grub +packages/grub +[0-9a-f]+ +cached' "$TMP/out.txt" \
        || skip "deb.debian.org is unreachable and the grub stage is not in the cache"
fi

t0=$SECONDS
trl build "$R" --cache "$C" -o "$O" -j2
grep -v '^  |' "$TMP/out.txt" | tail -n 8
expect_rc 0
ok "built (or found cached) in $((SECONDS - t0)) s: $(grep -oE 'grub: (done|cached)' "$TMP/out.txt" | head -n1)"
grep -E '^trillian: (unpack|fetch|autogen|configure|make|install|mkimage): [0-9.]+ s' "$O/logs/grub.log" || true

# PE header: "PE\0\0" at e_lfanew, Machine, optional header magic, Subsystem
pe() { # FILE -> "MACHINE MAGIC SUBSYSTEM"
    lf=$(od -An -tu4 -j 60 -N4 "$1" | tr -d ' ')
    [ "$(od -An -c -j "$lf" -N2 "$1" | tr -d ' ')" = PE ] || { echo "not-PE"; return; }
    printf '0x%x 0x%x %d\n' "$(od -An -tu2 -j $((lf + 4)) -N2 "$1" | tr -d ' ')" \
        "$(od -An -tu2 -j $((lf + 24)) -N2 "$1" | tr -d ' ')" \
        "$(od -An -tu2 -j $((lf + 24 + 68)) -N2 "$1" | tr -d ' ')"
}
G=$O/grub
[ -f "$G/grubia64.efi" ] || fail "no grubia64.efi in the grub stage's output"
got=$(pe "$G/grubia64.efi")
[ "$got" = "0x200 0x20b 10" ] || fail "grubia64.efi: machine, magic, subsystem = $got (want 0x200 0x20b 10)"
ok "grubia64.efi: PE32+ EFI application for IA-64 ($(stat -c %s "$G/grubia64.efi") bytes)"
for k in '"grub": "2.06"' '"debian_version": "2.06-13+deb12u2"' '"platform": "ia64-efi"' \
         '"pe_machine": "0x200"' '"serial"'; do
    grep -qF "$k" "$O/manifest.json" || fail "manifest lacks $k"
done
# what grub-mkimage puts into images (modinfo.sh, kernel.exec and *.module
# are GDB's and record the build configuration)
! grep -lF "$C/tmp/" "$G"/lib/grub/ia64-efi/*.mod "$G/lib/grub/ia64-efi/kernel.img" \
    "$G/grubia64.efi" | head -n3 | grep . \
    || fail "the files above carry the stage's scratch path (not reproducible)"
ia64-linux-gnu-readelf -h "$G/lib/grub/ia64-efi/linux.mod" | grep -q 'Machine: *Intel IA-64' \
    || fail "lib/grub/ia64-efi/linux.mod is not an IA-64 module"
printf 'set root=(hd0,gpt1)\nconfigfile /EFI/BOOT/grub.cfg\n' >"$TMP/early.cfg"
"$G/bin/grub-mkimage" -d "$G/lib/grub/ia64-efi" -O ia64-efi -p /EFI/BOOT -c "$TMP/early.cfg" \
    -o "$TMP/embedded.efi" normal configfile part_gpt fat || fail "the stage's grub-mkimage failed"
[ "$(pe "$TMP/embedded.efi")" = "0x200 0x20b 10" ] || fail "re-made image: $(pe "$TMP/embedded.efi")"
ok "manifest: GRUB 2.06, Debian 2.06-13+deb12u2; the stage's grub-mkimage and modules make images"

E=$O/bootloader/esp.img
export MTOOLS_SKIP_CHECK=1
mdir -b -i "$E" ::/EFI/BOOT >"$TMP/dir.txt" || fail "cannot list the ESP"
grep -qi '/EFI/BOOT/BOOTIA64.EFI$' "$TMP/dir.txt" || { cat "$TMP/dir.txt"; fail "ESP lacks EFI/BOOT/BOOTIA64.EFI"; }
grep -qi '/EFI/BOOT/grub.cfg$' "$TMP/dir.txt" || { cat "$TMP/dir.txt"; fail "ESP lacks EFI/BOOT/grub.cfg"; }
mcopy -i "$E" ::/EFI/BOOT/BOOTIA64.EFI "$TMP/loader.efi" || fail "cannot read the loader"
cmp -s "$TMP/loader.efi" "$G/grubia64.efi" || fail "BOOTIA64.EFI is not the grub stage's image"
mtype -i "$E" ::/EFI/BOOT/grub.cfg >"$TMP/grub.cfg" || fail "cannot read grub.cfg"
kernel=$(awk '$1 == "linux" { print $2 }' "$TMP/grub.cfg")
[ -n "$kernel" ] || { cat "$TMP/grub.cfg"; fail "grub.cfg has no linux line"; }
mdir -i "$E" "::$kernel" >/dev/null 2>&1 || fail "grub.cfg's kernel $kernel is not on the ESP"
grep -q '^[[:space:]]*linux .* console=ttyS0,115200' "$TMP/grub.cfg" || { cat "$TMP/grub.cfg"; fail "no console= on the linux line"; }
grep -q '^[[:space:]]*initrd ' "$TMP/grub.cfg" || fail "grub.cfg has no initrd line"
PATH=$PATH:/usr/sbin:/sbin fsck.fat -n "$E" >"$TMP/fsck.txt" 2>&1 || { cat "$TMP/fsck.txt"; fail "fsck.fat -n failed"; }
ok "ESP: EFI/BOOT/BOOTIA64.EFI (the grub stage's image), grub.cfg booting $kernel with the console; fsck.fat clean"

trl build "$R" --cache "$C" -o "$O" -j2
expect_rc 0
expect_out "grub: cached"
ok "second build is a cache hit"
echo PASS
