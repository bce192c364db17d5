# The three firmware boot paths of the qemu-x86_64 row under TCG + OVMF, with
# GRUB as the payload: an ISO (-cdrom path), the same hybrid ISO attached as a
# virtio disk in snapshot mode (disk path, private OVMF_VARS copy each), and a
# netboot tree (qemu user-net TFTP + OVMF PXE loading grubnetx64.efi). The
# ISO's grub.cfg prints a marker; the netboot GRUB stops at its prompt. The
# three checks run in parallel. Also checks the cached ISO is unchanged.
. "$TOP/tests/lib.sh"
need qemu-system-x86_64 grub-mkrescue xorriso mformat
[ -r /usr/share/OVMF/OVMF_CODE.fd ] || skip "no OVMF (apt-get install ovmf)"
[ -d /usr/lib/grub/x86_64-efi ] || skip "no GRUB EFI modules (apt-get install grub-efi-amd64-bin)"
NET=/usr/lib/grub/x86_64-efi-signed/grubnetx64.efi.signed
[ -r "$NET" ] || skip "no $NET (apt-get install grub-efi-amd64-signed)"
unset TRILLIAN_QEMU_X86_64 TRILLIAN_OVMF_CODE FAKE_EMU_MODE

mkdir -p "$TMP/isoroot/boot/grub"
echo 'echo TRILLIAN-ISO-OK' > "$TMP/isoroot/boot/grub/grub.cfg"
grub-mkrescue -o "$TMP/grub.iso" --directory /usr/lib/grub/x86_64-efi "$TMP/isoroot" \
    >"$TMP/mkrescue.log" 2>&1 || { cat "$TMP/mkrescue.log"; fail "grub-mkrescue"; }

cat > "$TMP/fw.cfg" <<CFG
name = "fw";
arch = "amd64";
stages = (
  { name = "iso"; kind = "command"; argv = ["cp", "$TMP/grub.iso", "\${out}/iso.iso"];
    inputs = ["$TMP/grub.iso"]; outputs = ["iso.iso"]; },
  { name = "tftp"; kind = "command"; argv = ["cp", "$NET", "\${out}/bootx64.efi"];
    outputs = ["bootx64.efi"]; }
);
bootcheck = (
  { kind = "boot"; name = "boot-iso"; image = "iso"; boot = "iso"; profile = "marker";
    marker = "TRILLIAN-ISO-OK"; boot_timeout = 600; exit_timeout = 1; },
  { kind = "boot"; name = "boot-disk"; image = "iso"; boot = "disk"; file = "iso.iso";
    profile = "marker";
    marker = "TRILLIAN-ISO-OK"; boot_timeout = 600; exit_timeout = 1; },
  { kind = "boot"; name = "boot-net"; image = "tftp"; boot = "netboot"; profile = "marker";
    marker = "grub>"; boot_timeout = 600; exit_timeout = 1; }
);
CFG
trl build "$TMP/fw.cfg" --cache "$TMP/cache" -o "$TMP/out" -j2
expect_rc 0
for b in boot-iso boot-disk boot-net; do
    grep -q 'failures="0"' "$TMP/out/$b/$b.junit.xml" || fail "$b: JUnit"
    echo "  $(grep "$b: PASS" "$TMP/out/logs/$b.log")"
done
grep -q "tftp://10.0.2.2/bootx64.efi... ok" "$TMP/out/boot-net/boot-net.log" || fail "no TFTP load"
grep -qF "snapshot=on" "$TMP/out/logs/boot-disk.log" || fail "disk not in snapshot mode"
cmp -s "$TMP/grub.iso" "$TMP/out/iso/iso.iso" || fail "the cached image was changed"
ok "OVMF: ISO, disk (snapshot) and netboot (TFTP) boots"
