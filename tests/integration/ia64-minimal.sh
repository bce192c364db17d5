# The ia64 chain through the cache: the bookworm chain's ia64-linux-gnu gcc
# (Debian's gcc-12-source with Debian's ia64 binutils) and Linux 7.1 (Debian's
# orig tarball with T2 SDE's ia64 patches from the mirror):
#  - the HP Integrity kernel of include/ia64-kernel-7.1.cfg configured only
#    (config_only): its fragments (ia64-generic, ia64-lean, ia64-local-disk)
#    survive olddefconfig. Compiling it is the slow tier's (ia64-bookworm-boot)
#  - the boot tests' kernel (same source and patches, the ia64-payload-test
#    fragment) compiled: IA-64 vmlinux and vmlinuz, its release, modules
#  - the payload initramfs
# The boot tests' stages are tests/prebuild's, so warm this is a cache hit.
. "$TOP/tests/lib.sh"
need ia64-linux-gnu-as ia64-linux-gnu-readelf make gcc g++ flex bison bc file
[ -r /usr/src/gcc-12/gcc-12.2.0-dfsg.tar.xz ] || skip "gcc-12-source is not installed"
need_mirror
C=$TRILLIAN_TEST_CACHE O=$TMP/out
# the recipes (tests/lib.sh): kernel.cfg's hardware kernel, qemu-disk.cfg's
# test kernel
ia64_test_recipes "$TMP/t" || skip "the ia64 inputs are missing (tools/install-deps, ../shared/mirror)"
R=$TMP/t/r/kernel.cfg
grep -q 'generic_defconfig' "$R" || fail "recipe copy has no kernel"

t0=$SECONDS
trl build "$R" --cache "$C" -o "$O" -j2
grep -v '^  |' "$TMP/out.txt" | tail -n 12
expect_rc 0
ok "the toolchain, the HP Integrity kernel's configuration and the payload built (or found cached) in $((SECONDS - t0)) s"

# the compiler the toolchain stage built and checked
[ "$(cat "$O/toolchain/target")" = ia64-linux-gnu ] || fail "toolchain target"
"$O/toolchain/bin/ia64-linux-gnu-gcc" --version | head -n1 | grep -q '12\.2' || fail "not gcc 12.2"

# the hardware kernel: configured, not compiled
K=$O/kernel
rel=$(cat "$K/release")
case $rel in 7.1.*) ;; *) fail "release '$rel' is not 7.1.x" ;; esac
[ ! -e "$K/vmlinux" ] || fail "config_only compiled a vmlinux"
grep -q '^CONFIG_IA64_GENERIC=y\|^CONFIG_IA64=y' "$K/config" || fail "config is not ia64"
grep -q '^CONFIG_FUSION_SPI=y' "$K/config" || fail "ia64-generic fragment missing (FUSION_SPI)"
grep -q '^CONFIG_TIGON3=y' "$K/config" || fail "ia64-generic fragment missing (TIGON3)"
grep -qx '# CONFIG_DRM is not set' "$K/config" || fail "ia64-lean fragment missing (DRM still set)"
grep -qx '# CONFIG_MODVERSIONS is not set' "$K/config" || fail "ia64-lean: MODVERSIONS still set"
grep -qx '# CONFIG_NETWORK_FILESYSTEMS is not set' "$K/config" ||
    fail "ia64-local-disk fragment missing (network file systems still set)"
# (with NETWORK_FILESYSTEMS off the NFS symbols are not written at all)
! grep -q '^CONFIG_NFS_FS=' "$K/config" || fail "ia64-local-disk: the NFS client still set"
ok "the HP Integrity kernel $rel: fragments applied"

# the boot tests' kernel, compiled (tests/prebuild builds it in the background)
QO=$TMP/out-qemu
trl build "$TMP/t/r/qemu-disk.cfg" --cache "$C" -o "$QO" -j2
grep -v '^  |' "$TMP/out.txt" | tail -n 12
expect_rc 0
K=$QO/kernel
file "$K/vmlinux" | grep -q 'ELF 64-bit LSB executable, IA-64' || fail "vmlinux: $(file "$K/vmlinux")"
gzip -dc "$K/vmlinuz" | head -c 20 > "$TMP/hdr" || fail "vmlinuz is not gzip"
file "$TMP/hdr" | grep -q 'IA-64' || fail "vmlinuz does not hold an IA-64 ELF"
[ "$(cat "$K/release")" = "$rel" ] || fail "the test kernel's release $(cat "$K/release") is not $rel"
strings "$K/vmlinux" | grep -q "^Linux version $rel " || fail "vmlinux does not say release $rel"
[ -f "$K/modules/lib/modules/$rel/modules.dep" ] || fail "no modules.dep for $rel"
grep -qx 'CONFIG_SERIAL_8250_CONSOLE=y' "$K/config" || fail "the test kernel has no serial console"
grep -qx '# CONFIG_BLOCK is not set' "$K/config" || fail "ia64-payload-test: the block layer still set"
ok "the test kernel: vmlinux and vmlinuz are IA-64, release $rel matches, modules, fragments applied"

zcat "$O/initramfs/initrd.img" | cpio -it 2>/dev/null | grep -qx init || fail "payload initramfs has no /init"
ia64-linux-gnu-readelf -h "$O/initramfs/init" | grep -q 'Intel IA-64' || fail "payload is not IA-64"
ok "payload initramfs"

trl build "$R" --cache "$C" -o "$O" -j2
expect_rc 0
[ "$(grep -c ': cached$' "$TMP/out.txt")" -eq 3 ] || { cat "$TMP/out.txt"; fail "second build not all cached"; }
ok "second build: all stages cached"
