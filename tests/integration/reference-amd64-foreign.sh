# The first-boot path the ia64 images take, proven on amd64 in a VM:
# recipes/reference-amd64-foreign.cfg runs debootstrap --foreign on the host
# and the disk image's first boot runs the second stage
# (init=/sbin/trillian-firstboot), configures the system, adds the serial
# getty to sysvinit's /etc/inittab and hands over to sysvinit (the init of
# the ia64 roots); the boot check then logs in and checks uname, os-release
# and sysvinit's runlevel. The first boot runs dpkg under TCG: minutes.
. "$TOP/tests/lib.sh"
need qemu-system-x86_64 debootstrap
[ -r /usr/share/OVMF/OVMF_CODE.fd ] || skip "OVMF is not installed (package ovmf)"
C=$TRILLIAN_TEST_CACHE O=$TMP/out
t0=$SECONDS
trl build reference-amd64-foreign --cache "$C" -o "$O"
grep -v '^  |' "$TMP/out.txt" | tail -n 14
expect_rc 0
log=$O/boot-disk/boot-disk.log
tar -tf "$O/userland/rootfs.tar" | grep -qx 'debootstrap/debootstrap' || fail "not a foreign first stage"
grep -q 'init=/sbin/trillian-firstboot' "$O/bootloader/cmdline" || fail "first-boot init not on the command line"
grep -q 'trillian-firstboot: step 2: debootstrap --second-stage' "$log" || fail "the second stage did not run at first boot"
grep -q "trillian-firstboot: step [0-9]*: sysvinit: a getty on ttyS0 in /etc/inittab" "$log" ||
    fail "the first boot did not add the serial getty to /etc/inittab"
clean_console "$log" | grep -qx 'x86_64' || fail "no login shell after the first boot"
clean_console "$log" | grep -Eqx 'N [2-5]' || fail "sysvinit's runlevel not shown"
grep -q 'sysvinit runlevel: expect' "$O/boot-disk/boot-disk.junit.xml" || fail "no runlevel check"
! grep -q 'systemd state' "$O/boot-disk/boot-disk.junit.xml" || fail "a systemd check on a sysvinit root"
! grep -q '<failure' "$O/boot-disk/boot-disk.junit.xml" || fail "boot check failures"
ok "foreign first stage finished on the first boot and reached a login shell in $((SECONDS - t0)) s"
