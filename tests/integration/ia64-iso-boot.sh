# The ia64 live ISO boots in qemu-system-ia64, as a CD and as a disk: the
# iso stage makes its GRUB ia64-efi with the grub packages stage's
# grub-mkimage and modules (the ESP's GRUB; before, the stage wanted the
# host's /usr/lib/grub/ia64-efi and the recipe was refused at plan time),
# on the lean payload stages of ia64-qemu-boot.sh (same names and settings,
# so the same cache keys: warm, only the ISO and the boots run). iso-cd
# attaches the ISO as a CD: the firmware maps its El Torito image, GRUB
# from it loads Linux and the payload; iso-disk attaches the same file as
# a hard disk (a USB stick to the firmware): the hybrid GPT's EFI partition.
# Then the reboot feature of boot checks: a blank disk beside the CD, and a
# second boot from that disk alone must FAIL (nothing installed it), at the
# firmware, with both boots in the transcript and the JUnit report.
. "$TOP/tests/lib.sh"
need_mirror
need ia64-linux-gnu-as make gcc g++ ninja pkg-config flex bison bc mkfs.fat mke2fs xorriso gensquashfs
[ -r /usr/src/gcc-12/gcc-12.2.0-dfsg.tar.xz ] || skip "gcc-12-source is not installed"
C=$TRILLIAN_TEST_CACHE O=$TMP/out
ia64_test_recipes "$TMP/t" || skip "the ia64 inputs are missing (tools/install-deps, ../shared/mirror)"
R=$TMP/t/r/qemu-iso-check.cfg

trl plan "$R" --cache "$C"
expect_rc 0
expect_no_out "/usr/lib/grub/ia64-efi"
ok "an ia64 ISO with loader = grub plans (GRUB from the packages stage)"

t0=$SECONDS
trl check "$R" --cache "$C" -o "$O" -j2
grep -v '^  |' "$TMP/out.txt" | tail -n 12
expect_rc 0
expect_out "iso-cd PASS"
expect_out "iso-disk PASS"
grep -q 'grub/bin/grub-mkimage\|/out/bin/grub-mkimage' "$O/logs/iso.log" ||
    fail "the iso stage did not run the grub stage's grub-mkimage: $(grep -m1 'grub-mkimage' "$O/logs/iso.log")"
sfdisk --json "$O/iso/iso.iso" | grep -qi 'C12A7328-F81F-11D2-BA4B-00A0C93EC93B' ||
    fail "the ISO has no EFI system partition in a GPT (not hybrid)"
grep -q 'El Torito FAT image mapped' "$O/iso-cd/iso-cd.log" || fail "iso-cd: no El Torito in the transcript"
grep -q 'TRILLIAN-BOOT-OK release=[0-9.]* machine=ia64' "$O/iso-disk/iso-disk.log" || fail "iso-disk: no payload marker"
ok "the ISO booted as a CD and as a disk to the payload in $((SECONDS - t0)) s"

# A second boot from a blank disk that nothing wrote: it must fail, at the
# firmware (no loader on it), not boot the ISO again.
sed -n '1,/^bootcheck = (/p' "$R" | sed '$d' > "$TMP/t/r/reboot-blank.cfg"
cat >> "$TMP/t/r/reboot-blank.cfg" <<'CFG'
bootcheck = (
  { kind = "boot"; name = "iso-reboot"; emulator = "qemu-ia64"; image = "iso"; boot = "iso";
    disks = ["target:64"]; reboot_from = "target";
    steps = (
      { wait = "TRILLIAN-BOOT-OK release=[^ ]+ machine=ia64"; name = "the payload runs"; timeout = 300; },
      { exit = true; name = "qemu exits by itself"; timeout = 120; }
    );
    reboot_steps = (
      { wait = "qemu-system-ia64 Firmware"; name = "the firmware starts"; timeout = 120; },
      { wait = "Welcome to GRUB!"; name = "a loader starts"; fail = "No bootable image found";
        timeout = 120; }
    ); }
);
CFG
trl check "$TMP/t/r/reboot-blank.cfg" --cache "$C" -o "$TMP/out2" -j2
expect_rc 3
expect_out "iso-reboot FAIL at step 04 after reboot: a loader starts"
grep -q 'blank disk .target.' "$TMP/out2/logs/iso-reboot.log" || fail "no blank disk in the stage log"
L=$TMP/out2/iso-reboot/iso-reboot.log
grep -q 'TRILLIAN-BOOT-OK' "$L" || fail "the first boot is not in the transcript"
grep -q "==== trillian: reboot: the disk 'target' alone" "$L" || fail "no reboot line in the transcript"
sed -n "/==== trillian: reboot/,\$p" "$L" | grep -q 'No bootable image found\|BOOTIA64.EFI not found' ||
    fail "the second boot did not reach the firmware's 'nothing to boot'"
! sed -n "/==== trillian: reboot/,\$p" "$L" | grep -q 'Welcome to GRUB' || fail "the second boot found a loader"
grep -q 'after reboot: a loader starts' "$TMP/out2/junit.xml" || fail "junit.xml lacks the reboot's steps"
ok "a second boot from a blank disk alone fails at the firmware, both boots reported"
