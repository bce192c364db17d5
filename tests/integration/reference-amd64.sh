# The reference pipeline end to end: recipes/reference-amd64.cfg builds a
# Debian bookworm root, kernel, initramfs, ESP, disk image, netboot tree and
# ISO, and boots each in qemu-system-x86_64 + OVMF (TCG), logging in on the
# serial console. Then a warm rebuild must reuse every stage.
. "$TOP/tests/lib.sh"
need qemu-system-x86_64 debootstrap
[ -r /usr/share/OVMF/OVMF_CODE.fd ] || skip "OVMF is not installed (package ovmf)"
C=$TRILLIAN_TEST_CACHE O=$TMP/out

trl build reference-amd64 --cache "$C" -o "$O"
cat "$TMP/out.txt"
expect_rc 0
for img in disk/disk.img iso/iso.iso netboot/dnsmasq.conf userland/rootfs.tar bootloader/esp.img; do
    [ -s "$O/$img" ] || fail "missing $img"
done
for b in boot-disk boot-netboot boot-iso; do
    log=$O/$b/$b.log
    [ -s "$log" ] || fail "no transcript $log"
    clean_console "$log" | grep -qx 'x86_64' || fail "$b: uname -m never answered x86_64"
    grep -q 'bookworm' "$log" || fail "$b: os-release does not name bookworm"
    grep -q '<testsuite' "$O/$b/$b.junit.xml" || fail "$b: no JUnit report"
    ! grep -q '<failure' "$O/$b/$b.junit.xml" || fail "$b: JUnit has failures"
done
grep -q '"path": "disk/disk.img"' "$O/manifest.json" || fail "manifest lacks the disk image"
ok "disk, netboot and ISO images built and booted to a login shell"

# A wrong expectation's exit 3 is bootcheck-qemu-kernel's (the same
# qemu-system-x86_64 under TCG, on a kernel and busybox initramfs that boot in
# seconds) and bootcheck-fake's (`trillian check`, JUnit): not a fourth OVMF
# boot of this disk (about a minute of TCG, cold).

# Warm: every stage, the passing boot checks too, comes from the cache.
trl build reference-amd64 --cache "$C" -o "$O"
expect_rc 0
[ "$(grep -c ': cached$' "$TMP/out.txt")" -eq 11 ] || { cat "$TMP/out.txt"; fail "warm rebuild is not all cached"; }
ok "warm rebuild: all 11 stages cached (userland-base too)"
