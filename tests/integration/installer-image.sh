# trillian-install's image mode (the iso stage's installer_root = "image",
# what the ia64 install ISOs use) run by busybox alone, as on the default's
# from-source root: PATH holds only busybox's applets. It writes a GPT
# by hand (checked by sfdisk and, if installed, sgdisk -v), the ESP image as
# is, the gzipped root image after it, with the partition GUIDs of
# install.conf (ROOT_PARTUUID: what the ESP's root=PARTUUID= names). Bad
# input, each with a clear message, a non-zero exit and the target
# untouched (its sha256 before and after): a target that does not exist, a
# target too small for the root image, the medium it booted from (a disk
# holding the ISO's own ISO 9660 volume), no confirmation. --from-cmdline:
# nothing without trillian.install=, the install with it, the failure
# reported (exit 1) when its disk does not exist.
. "$TOP/tests/lib.sh"
need busybox sfdisk mke2fs dumpe2fs mkfs.vfat xorriso gzip
INST=$TOP/firmware/installer/trillian-install
mkdir -p "$TMP/bb" "$TMP/in/r/etc"
for a in $(busybox --list); do ln -s "$(command -v busybox)" "$TMP/bb/$a"; done
BB="env -i PATH=$TMP/bb TMPDIR=$TMP TRILLIAN_INSTALL_CONF=$TMP/install.conf"
ROOT_UUID=7c1e3b52-9d4a-4f60-8e21-5a3b9c0d7e14 PART=0b6f2c9e-41d7-4a85-b3e6-2f8d1c7a9e50
truncate -s 8M "$TMP/in/esp.img"
mkfs.vfat -n TESTESP "$TMP/in/esp.img" >/dev/null
echo installed > "$TMP/in/r/etc/hostname"
mke2fs -q -t ext4 -U "$ROOT_UUID" -L root -d "$TMP/in/r" "$TMP/in/root.img" 24M
gzip -9n "$TMP/in/root.img"
cat > "$TMP/install.conf" <<CONF
ESP_IMAGE=$TMP/in/esp.img
ROOT_UUID=$ROOT_UUID
EFI_LOADER='\\EFI\\BOOT\\BOOTIA64.EFI'
ARCH=ia64
VOLUME_ID='TRILLIAN_T'
ROOT_PARTUUID=$PART
ROOT_IMAGE=$TMP/in/root.img.gz
ROOT_IMAGE_MIB=24
DISK_GUID=5d0c3a9e-8f1b-4c2d-9e7a-1b2c3d4e5f60
ESP_PARTUUID=6e1d4b0f-902c-4d3e-8f8b-2c3d4e5f6071
CONF

truncate -s 200M "$TMP/disk.img"
$BB sh "$INST" -y "$TMP/disk.img" > "$TMP/i1.txt" 2>&1 || { cat "$TMP/i1.txt"; fail "image-mode install failed"; }
sfdisk --verify "$TMP/disk.img" > "$TMP/verify.txt" 2>&1 || { cat "$TMP/verify.txt"; fail "sfdisk --verify"; }
if command -v sgdisk >/dev/null; then
    sgdisk -v "$TMP/disk.img" | grep -q "No problems found" || { sgdisk -v "$TMP/disk.img"; fail "sgdisk -v found problems"; }
fi
sfdisk --json "$TMP/disk.img" | python3 -c '
import json, sys
t = json.load(sys.stdin)["partitiontable"]
assert t["label"] == "gpt" and t["id"].lower() == "5d0c3a9e-8f1b-4c2d-9e7a-1b2c3d4e5f60", t
p = t["partitions"]
assert len(p) == 2, p
assert p[0]["type"].upper() == "C12A7328-F81F-11D2-BA4B-00A0C93EC93B" and p[0]["start"] == 2048 and p[0]["size"] == 8 * 2048, p[0]
assert p[0]["uuid"].lower() == "6e1d4b0f-902c-4d3e-8f8b-2c3d4e5f6071" and p[0]["name"] == "ESP", p[0]
assert p[1]["type"].upper() == "0FC63DAF-8483-4772-8E79-3D69D8477DE4" and p[1]["start"] == 9 * 2048, p[1]
assert p[1]["uuid"].lower() == "0b6f2c9e-41d7-4a85-b3e6-2f8d1c7a9e50" and p[1]["name"] == "root", p[1]
assert p[1]["start"] + p[1]["size"] - 1 == t["lastlba"] == 200 * 2048 - 34, (p[1], t)
' || fail "the installed GPT is wrong"
dd if="$TMP/disk.img" of="$TMP/esp.part" bs=1M skip=1 count=8 status=none
cmp "$TMP/esp.part" "$TMP/in/esp.img" || fail "partition 1 is not the ESP image"
dd if="$TMP/disk.img" of="$TMP/root.part" bs=1M skip=9 count=24 status=none
gzip -dc "$TMP/in/root.img.gz" | cmp - "$TMP/root.part" || fail "partition 2 does not start with the root image"
dumpe2fs -h "$TMP/root.part" 2>/dev/null | grep -q "^Filesystem UUID: *$ROOT_UUID$" || fail "root UUID"
ok "busybox alone wrote a valid GPT (disk and partition GUIDs from install.conf), the ESP and the root image"

untouched() { # FILE SHA256 WHAT
    [ "$(sha256sum < "$1")" = "$2" ] || fail "$3 changed the target"
}
# a target that does not exist
$BB sh "$INST" -y "$TMP/nonexistent.img" > "$TMP/i2.txt" 2>&1 && fail "installed onto a missing target"
grep -q "neither a block device nor an existing image file" "$TMP/i2.txt" || { cat "$TMP/i2.txt"; fail "no message for a missing target"; }
[ ! -e "$TMP/nonexistent.img" ] || fail "the missing target was created"
# too small for the ESP and the root image (8 + 2 + 24 MiB)
truncate -s 30M "$TMP/small.img"
s=$(sha256sum < "$TMP/small.img")
$BB sh "$INST" -y "$TMP/small.img" > "$TMP/i3.txt" 2>&1 && fail "installed onto a 30 MiB target"
grep -q "has 30 MiB; it needs at least 34 MiB (nothing was changed)" "$TMP/i3.txt" || { cat "$TMP/i3.txt"; fail "no size message"; }
untouched "$TMP/small.img" "$s" "a too-small target"
# the boot medium: a disk holding the installer's ISO 9660 volume
mkdir -p "$TMP/isotree" && echo x > "$TMP/isotree/trillian.id"
xorriso -as mkisofs -quiet -o "$TMP/medium.img" -V TRILLIAN_T "$TMP/isotree" 2>/dev/null
truncate -s 100M "$TMP/medium.img"
s=$(sha256sum < "$TMP/medium.img")
$BB sh "$INST" -y "$TMP/medium.img" > "$TMP/i4.txt" 2>&1 && fail "installed onto the boot medium"
grep -q "holds this installer's own ISO 9660 volume 'TRILLIAN_T'" "$TMP/i4.txt" || { cat "$TMP/i4.txt"; fail "no boot-medium message"; }
untouched "$TMP/medium.img" "$s" "the boot medium"
# another ISO's volume is not the boot medium
xorriso -as mkisofs -quiet -o "$TMP/other.img" -V OTHER "$TMP/isotree" 2>/dev/null
truncate -s 100M "$TMP/other.img"
$BB sh "$INST" -y "$TMP/other.img" > "$TMP/i5.txt" 2>&1 || { cat "$TMP/i5.txt"; fail "refused a disk holding another volume"; }
# no confirmation
truncate -s 100M "$TMP/noyes.img"
s=$(sha256sum < "$TMP/noyes.img")
echo no | $BB sh "$INST" "$TMP/noyes.img" > "$TMP/i6.txt" 2>&1 && fail "installed without confirmation"
grep -q "not confirmed; nothing was changed" "$TMP/i6.txt" || { cat "$TMP/i6.txt"; fail "no 'not confirmed'"; }
untouched "$TMP/noyes.img" "$s" "an unconfirmed install"
ok "a missing, too small or boot-medium target and no confirmation: refused, message, target untouched"

# --from-cmdline
truncate -s 100M "$TMP/auto.img"
s=$(sha256sum < "$TMP/auto.img")
echo "BOOT_IMAGE=/boot/vmlinuz rootwait console=ttyS0,115200" > "$TMP/cmdline"
$BB TRILLIAN_INSTALL_CMDLINE="$TMP/cmdline" sh "$INST" --from-cmdline > "$TMP/i7.txt" 2>&1 ||
    { cat "$TMP/i7.txt"; fail "--from-cmdline without trillian.install= failed"; }
[ ! -s "$TMP/i7.txt" ] || { cat "$TMP/i7.txt"; fail "--from-cmdline without trillian.install= said something"; }
untouched "$TMP/auto.img" "$s" "--from-cmdline without trillian.install="
echo "rootwait trillian.install=$TMP/auto.img console=ttyS0" > "$TMP/cmdline"
$BB TRILLIAN_INSTALL_CMDLINE="$TMP/cmdline" sh "$INST" --from-cmdline > "$TMP/i8.txt" 2>&1 ||
    { cat "$TMP/i8.txt"; fail "--from-cmdline install failed"; }
grep -q "unattended install finished" "$TMP/i8.txt" || { cat "$TMP/i8.txt"; fail "no 'finished'"; }
sfdisk --verify "$TMP/auto.img" >/dev/null 2>&1 || fail "the unattended install wrote no valid GPT"
echo "trillian.install=$TMP/gone.img trillian.install.after=poweroff" > "$TMP/cmdline"
$BB TRILLIAN_INSTALL_CMDLINE="$TMP/cmdline" sh "$INST" --from-cmdline > "$TMP/i9.txt" 2>&1 &&
    fail "--from-cmdline onto a missing disk succeeded"
grep -q "unattended install FAILED" "$TMP/i9.txt" || { cat "$TMP/i9.txt"; fail "no FAILED line"; }
! grep -q "powering off" "$TMP/i9.txt" || fail "powered off after a failed install"
ok "--from-cmdline: nothing without trillian.install=, installs with it, reports a failure without powering off"
