# Slow tier: recipes/ia64-debian-elilo.cfg, ia64-debian's Debian system
# loaded by elilo 3.16 instead of GRUB: elilo.conf's append carries the
# userland's init=/sbin/trillian-firstboot, so debootstrap's second stage
# runs on the first boot on the emulated Itanium; sysvinit, root's login,
# dpkg and apt-get installing hello from the archive in the root; then the
# same disk again through elilo, with no first-boot step. Cold: ia64-debian's
# whole archive (the same cache entries as slow/ia64-debian.sh) and elilo;
# on top of them the ESP, the disk and two boots (the first with the
# second stage under TCG, 5 to 8 minutes).
. "$TOP/tests/lib.sh"
[ -r /usr/src/linux-source-6.1.tar.xz ] || skip "linux-source-6.1 is not installed"
need debootstrap
boot_shipped_recipe ia64-debian-elilo 7.2.
L=$TMP/console.txt
clean_console "$O/boot-qemu/boot-qemu.log" >"$L"
find "$O/bootloader/esp" -name elilo.conf | grep -q . || fail "no elilo.conf on the ESP"
for c in $(find "$O/bootloader/esp" -name elilo.conf); do
    grep -q 'init=/sbin/trillian-firstboot' "$c" || fail "$c does not pass the first-boot init: $(cat "$c")"
done
grep -q 'ELILO boot:' "$L" || fail "the console never showed elilo's prompt"
grep -q '^trillian-firstboot: step 2: debootstrap --second-stage' "$L" || fail "the second stage did not run on ia64"
grep -q '^I: Base system installed successfully' "$L" || fail "the second stage did not finish"
grep -q 'login: root (automatic login)' "$L" || fail "the getty did not log root in"
grep -q '^Setting up hello (2\.12\.3-0trillian1)' "$L" && grep -q '^Hello, world!' "$L" ||
    fail "apt-get did not install hello, or it did not run"
R=$(sed -n "/^==== trillian: reboot: the image 'disk' again, as the first boot left it/,\$p" "$L")
[ -n "$R" ] || fail "no second boot of the image in the transcript"
printf '%s\n' "$R" | grep -q 'ELILO boot:' || fail "the second boot did not go through elilo"
! printf '%s\n' "$R" | grep -q 'trillian-firstboot: \|debootstrap --second-stage' ||
    fail "the first boot's script ran again on the second boot"
printf '%s\n' "$R" | grep -q '^Hello, world!' || fail "hello did not run on the second boot"
ok "ia64-debian-elilo: elilo passed the first-boot init, the second stage finished on ia64, apt-get installed hello; the second boot through elilo had no first-boot step"
