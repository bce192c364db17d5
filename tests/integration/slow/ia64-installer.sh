# Slow tier: the install media of the default recipe, built and used in
# qemu-system-ia64 by their own gating checks: recipes/ia64-installer.cfg
# (GRUB ia64-efi from the recipe's grub stage) and ia64-installer-elilo.cfg
# (elilo built from source). install-cd: the ISO as a CD (El Torito) with a
# blank 2 GiB disk, the live root (the default's from-source root, as the
# initrd), trillian-install unattended onto /dev/sda (busybox alone: the GPT,
# the ESP and the installed root's image), power-off; then that disk ALONE
# to the installed root's shell (the default's checks, the root's UUID).
# iso-as-disk: the same ISO file as a hard disk (the hybrid GPT), the live
# shell, and the install onto the boot medium refused. Then the matrix
# names each image kind. Cold: the default's toolchain, kernel, root, GRUB,
# elilo and qemu-ia64 from the shared test cache (the root is ~40 min cold).
. "$TOP/tests/lib.sh"
[ -r /usr/src/linux-source-6.1.tar.xz ] || skip "linux-source-6.1 is not installed"
need_mirror
need ia64-linux-gnu-as make gcc g++ ninja pkg-config flex bison bc gawk mkfs.fat mke2fs xorriso
[ -r /usr/src/gcc-12/gcc-12.2.0-dfsg.tar.xz ] || skip "gcc-12-source is not installed"
UUID=7c1e3b52-9d4a-4f60-8e21-5a3b9c0d7e14
for name in ia64-installer ia64-installer-elilo; do
    t0=$SECONDS O=$TMP/out-$name
    trl check "$TOP/recipes/$name.cfg" --cache "$TRILLIAN_TEST_CACHE" -o "$O" -j2
    grep -v '^  |' "$TMP/out.txt" | tail -n 6
    expect_rc 0
    expect_out "install-cd PASS"
    expect_out "iso-as-disk PASS"
    L=$O/install-cd/install-cd.log
    grep -q 'El Torito FAT image mapped' "$L" || fail "$name: the firmware did not map the CD's El Torito image"
    grep -q "trillian-install: done: /dev/sda holds the installed system (root UUID $UUID)" "$L" ||
        fail "$name: no finished install in the transcript"
    sed -n "/==== trillian: reboot: the disk 'target' alone/,\$p" "$L" > "$TMP/second.txt"
    [ -s "$TMP/second.txt" ] || fail "$name: no second boot in the transcript"
    grep -q "EXT4-fs (sda2): mounted filesystem $UUID" "$TMP/second.txt" || fail "$name: the installed root was not mounted"
    grep -q "UUID=\"$UUID\"" "$TMP/second.txt" || fail "$name: blkid did not show the installed root's UUID"
    ! grep -q 'CD-ROM' "$TMP/second.txt" || fail "$name: a CD was attached on the second boot"
    grep -q "holds this installer's own ISO 9660 volume" "$O/iso-as-disk/iso-as-disk.log" ||
        fail "$name: the install onto the boot medium was not refused"
    grep -q 'after reboot: the installed root' "$O/junit.xml" || fail "$name: junit.xml lacks the second boot"
    grep -q 'after reboot: the installed root' "$O/report.html" || fail "$name: report.html lacks the second boot"
    ok "$name: installed from the ISO as a CD, the installed disk booted alone, the ISO booted as a disk, in $((SECONDS - t0)) s"
done
trl report --matrix -o "$TMP/matrix.html" "$TMP/out-ia64-installer" "$TMP/out-ia64-installer-elilo"
expect_rc 0
for k in "ISO as CD" "ISO as disk" "installed disk"; do
    grep -q "<td>$k</td>" "$TMP/matrix.html" || fail "the matrix has no '$k' run"
done
ok "the matrix lists ISO as CD, ISO as disk and installed disk"
