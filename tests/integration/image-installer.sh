# firmware/installer/trillian-install (the ISO's installer, POSIX sh) run
# with /bin/sh against an image file: a GPT with the ESP (type, content =
# the ESP image) and the root (ext4 with ROOT_UUID holding the source tree);
# /etc/fstab is the one kept for the installed system; it refuses without
# confirmation, refuses a too-small target, and refuses
# to run without install.conf.
. "$TOP/tests/lib.sh"
. "$TOP/tests/fixtures/image-lib.sh"
need sfdisk mke2fs debugfs dumpe2fs python3 mkfs.vfat mcopy
image_inputs 1000
INST=$TOP/firmware/installer/trillian-install
cat > "$TMP/install.conf" <<CONF
ESP_IMAGE=$TMP/in/esp.img
ROOT_UUID=$ROOT_UUID
EFI_LOADER='\\EFI\\BOOT\\BOOTX64.EFI'
BOOT_LABEL='Trillian test'
ARCH=amd64
CONF
mkdir -p "$TMP/src/etc" "$TMP/src/usr/bin" "$TMP/src/proc"
echo installed > "$TMP/src/etc/hostname"
echo '#!/bin/sh' > "$TMP/src/usr/bin/hello"
mkdir -p "$TMP/src/usr/share/trillian"
echo "# live fstab" > "$TMP/src/etc/fstab"
echo "UUID=$ROOT_UUID / ext4 defaults 0 1" > "$TMP/src/usr/share/trillian/fstab.installed"
export TRILLIAN_INSTALL_CONF=$TMP/install.conf TRILLIAN_INSTALL_SOURCE=$TMP/src

truncate -s 100M "$TMP/disk.img"
sh "$INST" -y "$TMP/disk.img" > "$TMP/inst.txt" 2>&1 || { cat "$TMP/inst.txt"; fail "installer failed"; }
sfdisk --json "$TMP/disk.img" | python3 -c '
import json, sys
p = json.load(sys.stdin)["partitiontable"]["partitions"]
assert len(p) == 2, p
assert p[0]["type"].upper() == "C12A7328-F81F-11D2-BA4B-00A0C93EC93B" and p[0]["start"] == 2048, p[0]
assert p[0]["size"] == 8 * 2048, p[0]
assert p[1]["type"].upper() == "0FC63DAF-8483-4772-8E79-3D69D8477DE4" and p[1]["start"] == 9 * 2048, p[1]
assert p[1]["size"] == (100 - 2 - 8) * 2048, p[1]
' || fail "installed partition table is wrong"
ok "installed GPT: ESP (8 MiB at 1 MiB) and root (rest)"
dd if="$TMP/disk.img" of="$TMP/esp.part" bs=1M skip=1 count=8 status=none
cmp "$TMP/esp.part" "$TMP/in/esp.img" || fail "partition 1 is not the ESP image"
dd if="$TMP/disk.img" of="$TMP/root.part" bs=1M skip=9 status=none
dumpe2fs -h "$TMP/root.part" 2>/dev/null | grep -q "^Filesystem UUID: *$ROOT_UUID$" || fail "root UUID is not ROOT_UUID"
[ "$(debugfs -R "cat /etc/hostname" "$TMP/root.part" 2>/dev/null)" = installed ] || fail "/etc/hostname not copied"
debugfs -R "stat /usr/bin/hello" "$TMP/root.part" 2>/dev/null | grep -q "Type: regular" || fail "/usr/bin/hello not copied"
debugfs -R "cat /etc/fstab" "$TMP/root.part" 2>/dev/null | grep -qx "UUID=$ROOT_UUID / ext4 defaults 0 1" ||
    fail "the installed /etc/fstab is not fstab.installed"
ok "ESP written as is; root ext4 with ROOT_UUID holds the source tree and the installed fstab"

truncate -s 100M "$TMP/disk2.img"
sh "$INST" "$TMP/disk2.img" < /dev/null > "$TMP/inst2.txt" 2>&1 && fail "installed without confirmation"
grep -q "not confirmed" "$TMP/inst2.txt" || { cat "$TMP/inst2.txt"; fail "no 'not confirmed' message"; }
[ -z "$(sfdisk --json "$TMP/disk2.img" 2>/dev/null)" ] || fail "the unconfirmed target was changed"
ok "without -y and no 'yes' nothing is changed"

truncate -s 20M "$TMP/small.img"
sh "$INST" -y "$TMP/small.img" > "$TMP/inst3.txt" 2>&1 && fail "installed onto a 20 MiB target"
grep -q "needs at least" "$TMP/inst3.txt" || { cat "$TMP/inst3.txt"; fail "no size message"; }
ok "a too-small target is refused with the size it needs"

TRILLIAN_INSTALL_CONF=$TMP/nonexistent sh "$INST" -y "$TMP/disk.img" > "$TMP/inst4.txt" 2>&1 && fail "ran without install.conf"
grep -q "not a Trillian live system" "$TMP/inst4.txt" || fail "no message about install.conf"
ok "without install.conf it refuses"
