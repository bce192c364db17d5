# The ia64 chain through the cache: recipes/ia64-minimal.cfg builds the
# ia64-linux-gnu gcc from Debian's gcc-12-source with Debian's ia64
# binutils, Linux 7.1 (Debian's orig tarball with T2 SDE's ia64 patches from
# the mirror) for HP Integrity with it, and the payload initramfs
# (its from-source root is left to the slow tier, see below).
# Cold this takes 20-40 minutes on 2 cores; the shared test cache makes
# later runs (CI on the same machine) a cache hit.
. "$TOP/tests/lib.sh"
need ia64-linux-gnu-as ia64-linux-gnu-readelf make gcc g++ flex bison bc file
[ -r /usr/src/gcc-12/gcc-12.2.0-dfsg.tar.xz ] || skip "gcc-12-source is not installed"
need_mirror
C=$TRILLIAN_TEST_CACHE O=$TMP/out
# The default recipe's toolchain and kernel (the same stage names and
# settings, so the same cache keys) with the payload initramfs; its root
# (glibc, gcc stage 2, busybox, ~25 minutes), GRUB and the disk are left to
# the slow tier (slow/ia64-minimal-root.sh).
ia64_test_recipes "$TMP/t" || skip "the ia64 inputs are missing (tools/install-deps, ../shared/mirror)"
R=$TMP/t/r/kernel.cfg
grep -q 'generic_defconfig' "$R" || fail "recipe copy has no kernel"

t0=$SECONDS
trl build "$R" --cache "$C" -o "$O" -j2
grep -v '^  |' "$TMP/out.txt" | tail -n 12
expect_rc 0
ok "ia64-minimal built (or found cached) in $((SECONDS - t0)) s"

# the compiler the toolchain stage built and checked
[ "$(cat "$O/toolchain/target")" = ia64-linux-gnu ] || fail "toolchain target"
"$O/toolchain/bin/ia64-linux-gnu-gcc" --version | head -n1 | grep -q '12\.2' || fail "not gcc 12.2"

K=$O/kernel
file "$K/vmlinux" | grep -q 'ELF 64-bit LSB executable, IA-64' || fail "vmlinux: $(file "$K/vmlinux")"
gzip -dc "$K/vmlinuz" | head -c 20 > "$TMP/hdr" || fail "vmlinuz is not gzip"
file "$TMP/hdr" | grep -q 'IA-64' || fail "vmlinuz does not hold an IA-64 ELF"
rel=$(cat "$K/release")
case $rel in 7.1.*) ;; *) fail "release '$rel' is not 7.1.x" ;; esac
strings "$K/vmlinux" | grep -q "^Linux version $rel " || fail "vmlinux does not say release $rel"
[ -f "$K/modules/lib/modules/$rel/modules.dep" ] || fail "no modules.dep for $rel"
grep -q '^CONFIG_IA64_GENERIC=y\|^CONFIG_IA64=y' "$K/config" || fail "config is not ia64"
grep -q '^CONFIG_FUSION_SPI=y' "$K/config" || fail "ia64-generic fragment missing (FUSION_SPI)"
grep -qx '# CONFIG_DRM is not set' "$K/config" || fail "ia64-lean fragment missing (DRM still set)"
grep -qx '# CONFIG_MODVERSIONS is not set' "$K/config" || fail "ia64-lean: MODVERSIONS still set"
grep -qx '# CONFIG_NETWORK_FILESYSTEMS is not set' "$K/config" ||
    fail "ia64-local-disk fragment missing (network file systems still set)"
! find "$K/modules" -name 'nfs.ko*' | grep -q . || fail "ia64-local-disk: nfs.ko still built"
ok "vmlinux and vmlinuz are IA-64, release $rel matches, fragments applied"

zcat "$O/initramfs/initrd.img" | cpio -it 2>/dev/null | grep -qx init || fail "payload initramfs has no /init"
ia64-linux-gnu-readelf -h "$O/initramfs/init" | grep -q 'Intel IA-64' || fail "payload is not IA-64"
ok "payload initramfs"

trl build "$R" --cache "$C" -o "$O" -j2
expect_rc 0
[ "$(grep -c ': cached$' "$TMP/out.txt")" -eq 3 ] || { cat "$TMP/out.txt"; fail "second build not all cached"; }
ok "second build: all stages cached"
