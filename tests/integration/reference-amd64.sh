# The reference pipeline end to end: recipes/reference-amd64.cfg builds a
# Debian bookworm root, kernel, initramfs, ESP, disk image, netboot tree and
# ISO, and boots each in qemu-system-x86_64 + OVMF (TCG), logging in on the
# serial console. Then a wrong expectation must fail with exit status 3, and
# a warm rebuild must reuse every stage.
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

# A wrong expectation fails the check with exit 3 and says what it expected.
trl check reference-amd64 --cache "$C" -o "$TMP/out-bad" \
    --set bootcheck.boot-disk.machine=aarch64 --set bootcheck.boot-disk.command_timeout=20
expect_rc 3
expect_out "aarch64"
grep -q '<failure' "$TMP/out-bad/boot-disk/boot-disk.junit.xml" || fail "no JUnit failure recorded"
ok "uname -m expected to be aarch64: exit 3"

# Warm: every stage, the passing boot checks too, comes from the cache.
trl build reference-amd64 --cache "$C" -o "$O"
expect_rc 0
[ "$(grep -c ': cached$' "$TMP/out.txt")" -eq 11 ] || { cat "$TMP/out.txt"; fail "warm rebuild is not all cached"; }
ok "warm rebuild: all 11 stages cached (userland-base too)"
