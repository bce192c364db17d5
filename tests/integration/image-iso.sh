# images kind "iso" on small fake inputs: xorriso reports an El Torito
# catalog with a UEFI boot image /boot/efi.img; that FAT image holds
# EFI/BOOT/BOOTX64.EFI (GRUB); the ISO has /boot/vmlinuz, /boot/initrd.img,
# /boot/grub/grub.cfg with root=squashfs:/root.squashfs and the marker file
# GRUB searches for; the live root in the initrd carries trillian-install,
# install.conf (root_uuid), the ESP image, an /etc/fstab without a / line
# and the userland's fstab kept for the installer; two builds are byte-identical;
# a root without sfdisk fails naming the package to add; on ia64 efi.img
# holds elilo, elilo.conf, kernel and initrd (layout only, not booted).
. "$TOP/tests/lib.sh"
. "$TOP/tests/fixtures/image-lib.sh"
need xorriso gensquashfs unsquashfs grub-mkimage mkfs.vfat mcopy mdir python3
[ -d /usr/lib/grub/x86_64-efi ] || skip "grub-efi-amd64-bin is not installed"
image_inputs 200000
image_recipe live "{ kind = \"iso\"; name = \"live\"; volume_id = \"TRILLIAN_TEST\"; squashfs_comp = \"gzip\"; }"
trl build "$TMP/live.cfg" --cache "$TMP/cache" -o "$TMP/out"
expect_rc 0
ISO=$TMP/out/live/live.iso
[ -s "$ISO" ] || fail "no live.iso"

xorriso -indev "$ISO" -report_el_torito plain > "$TMP/et.txt" 2>&1 || { cat "$TMP/et.txt"; fail "xorriso cannot read the ISO"; }
grep -Eq "^El Torito boot img : +1 +UEFI +y +none" "$TMP/et.txt" || { cat "$TMP/et.txt"; fail "no UEFI El Torito boot image"; }
grep -Eq "^El Torito img path : +1 +/boot/efi.img" "$TMP/et.txt" || fail "boot image is not /boot/efi.img"
grep -q "^Volume id *: 'TRILLIAN_TEST'" "$TMP/et.txt" || fail "volume id is not volume_id"
ok "El Torito: UEFI boot image /boot/efi.img, volume id TRILLIAN_TEST"

x() { xorriso -osirrox on -indev "$ISO" -extract "$1" "$2" >/dev/null 2>&1 || fail "cannot extract $1"; }
x /boot/efi.img "$TMP/efi.img"
x /boot/grub/grub.cfg "$TMP/grub.cfg"
x /boot/initrd.img "$TMP/initrd.img"
x /boot/vmlinuz "$TMP/vmlinuz"
x /trillian.id "$TMP/trillian.id"
MTOOLS_SKIP_CHECK=1 mcopy -i "$TMP/efi.img" ::/EFI/BOOT/BOOTX64.EFI "$TMP/boot.efi" || fail "efi.img has no EFI/BOOT/BOOTX64.EFI"
[ "$(head -c 2 "$TMP/boot.efi")" = "MZ" ] || fail "BOOTX64.EFI is not a PE binary"
grep -a -q "trillian.id" "$TMP/boot.efi" || fail "the GRUB image has no embedded search for /trillian.id"
cmp "$TMP/vmlinuz" "$TMP/in/vmlinuz" || fail "/boot/vmlinuz is not the kernel"
grep -q "linux /boot/vmlinuz .*root=squashfs:/root.squashfs" "$TMP/grub.cfg" || fail "grub.cfg kernel line"
grep -q "initrd /boot/initrd.img" "$TMP/grub.cfg" || fail "grub.cfg initrd line"
ok "efi.img holds GRUB (searching /trillian.id); /boot has vmlinuz, initrd.img, grub/grub.cfg"

python3 - "$TMP/initrd.img" "$TMP/root.squashfs" <<'PY' || fail "no root.squashfs in the initrd"
import sys
d = open(sys.argv[1], "rb").read()
i = d.find(b"070701" + b"0" * 7 + b"1")
assert i >= 0 and i % 4 == 0, "no aligned cpio"
h = d[i:i + 110]
size, namesize = int(h[54:62], 16), int(h[94:102], 16)
assert d[i + 110:i + 110 + namesize - 1] == b"root.squashfs"
data = (i + 110 + namesize + 3) & ~3
open(sys.argv[2], "wb").write(d[data:data + size])
PY
unsquashfs -lln "$TMP/root.squashfs" > "$TMP/sq.txt" || fail "root.squashfs is not squashfs"
grep -q -- "-rwxr-xr-x 0/0 .*usr/sbin/trillian-install$" "$TMP/sq.txt" || fail "no trillian-install in the live root"
grep -q -- "usr/share/trillian/esp.img$" "$TMP/sq.txt" || fail "no ESP image in the live root"
unsquashfs -cat "$TMP/root.squashfs" usr/share/trillian/install.conf > "$TMP/install.conf" || fail "no install.conf"
grep -qx "ROOT_UUID=$ROOT_UUID" "$TMP/install.conf" || fail "install.conf has the wrong ROOT_UUID"
unsquashfs -cat "$TMP/root.squashfs" usr/share/trillian/esp.img | cmp - "$TMP/in/esp.img" || fail "the live root's esp.img is not the ESP"
unsquashfs -cat "$TMP/root.squashfs" etc/fstab > "$TMP/live.fstab" || fail "no /etc/fstab in the live root"
grep -q "^[^#].* / " "$TMP/live.fstab" && fail "the live /etc/fstab still mounts /"
unsquashfs -cat "$TMP/root.squashfs" usr/share/trillian/fstab.installed | grep -qx "UUID=$ROOT_UUID / ext4 defaults 0 1" ||
    fail "fstab.installed is not the userland's /etc/fstab"
ok "live root: trillian-install, install.conf with root_uuid, the ESP image, live fstab, fstab.installed"

trl build "$TMP/live.cfg" --cache "$TMP/cache2" -o "$TMP/out2"
expect_rc 0
cmp "$ISO" "$TMP/out2/live/live.iso" || fail "two builds of live.iso differ"
ok "a fresh cache gives a byte-identical ISO"

trl build "$TMP/live.cfg" --cache "$TMP/cache" -o "$TMP/bad" --set 'images.live.volume_id="lower case"'
[ "$rc" -ne 0 ] || fail "a bad volume_id was accepted"
expect_out "images.live.volume_id"
ok "a bad volume_id is a recipe error naming it"

python3 "$TOP/tests/fixtures/image-rootfs.py" "$TMP/in/rootfs.tar" 1000 notools || fail "cannot make a rootfs without tools"
trl build "$TMP/live.cfg" --cache "$TMP/cache" -o "$TMP/notools"
[ "$rc" -ne 0 ] || fail "an installer ISO was built from a root without sfdisk"
expect_out "images.live.installer: the root filesystem has no sfdisk"
expect_out "add the Debian package fdisk"
ok "installer = true with a root lacking sfdisk fails, naming the package to add"

# ia64: elilo, kernel, initrd and elilo.conf all inside the El Torito FAT image.
python3 "$TOP/tests/fixtures/image-rootfs.py" "$TMP/in/rootfs.tar" 1000 || fail "cannot remake rootfs.tar"
IMAGE_ARCH=ia64 image_recipe live64 "{ kind = \"iso\"; name = \"live\"; squashfs_comp = \"gzip\"; }"
trl build "$TMP/live64.cfg" --cache "$TMP/cache" -o "$TMP/out64"
expect_rc 0
ISO=$TMP/out64/live/live.iso
xorriso -indev "$ISO" -report_el_torito plain 2>&1 | grep -Eq "^El Torito boot img : +1 +UEFI" || fail "ia64 ISO has no UEFI boot image"
rm -f "$TMP/efi64.img"
xorriso -osirrox on -indev "$ISO" -extract /boot/efi.img "$TMP/efi64.img" >/dev/null 2>&1 || fail "no /boot/efi.img"
MTOOLS_SKIP_CHECK=1 mdir -b -i "$TMP/efi64.img" ::/EFI/BOOT > "$TMP/efi64.txt" 2>&1 || fail "efi.img has no EFI/BOOT"
for f in BOOTIA64.EFI elilo.conf vmlinuz initrd.img; do
    grep -qi "/$f\$" "$TMP/efi64.txt" || { cat "$TMP/efi64.txt"; fail "efi.img lacks EFI/BOOT/$f"; }
done
MTOOLS_SKIP_CHECK=1 mtype -i "$TMP/efi64.img" ::/EFI/BOOT/elilo.conf | grep -q "root=squashfs:/root.squashfs" || fail "elilo.conf lacks the root"
ok "ia64: efi.img holds elilo, elilo.conf, vmlinuz and initrd.img (layout only, not booted)"
# The El Torito catalogue read from the ISO itself (ECMA-119 + El Torito):
# the boot record at sector 17 points at the catalogue; its validation entry
# or a section header says platform 0xEF (EFI); the default or section entry
# is bootable and its image, read from the ISO at its LBA, is /boot/efi.img,
# whose EFI/BOOT/BOOTIA64.EFI is the bootloader stage's elilo.
xorriso -indev "$ISO" -report_el_torito plain > "$TMP/et64.txt" 2>&1
grep -Eq "^El Torito boot img : +1 +UEFI +y " "$TMP/et64.txt" || { cat "$TMP/et64.txt"; fail "xorriso: no bootable UEFI image"; }
python3 - "$ISO" "$TMP/efi64.img" <<'PY' || fail "the El Torito catalogue is not an EFI one pointing at efi.img"
import struct, sys
iso = open(sys.argv[1], "rb").read()
brvd = iso[17 * 2048:18 * 2048]
assert brvd[0] == 0 and brvd[1:6] == b"CD001" and brvd[7:30].rstrip(b"\0") == b"EL TORITO SPECIFICATION", brvd[:40]
cat = struct.unpack_from("<I", brvd, 0x47)[0] * 2048
v = iso[cat:cat + 32]
assert v[0] == 1 and v[30:32] == b"\x55\xaa", "no validation entry"
platforms = [v[1]]
entries = []
off = cat + 32
entries.append(iso[off:off + 32])
off += 32
while iso[off] in (0x90, 0x91):  # section headers
    platforms.append(iso[off + 1])
    n = struct.unpack_from("<H", iso, off + 2)[0]
    for k in range(n):
        entries.append(iso[off + 32 * (k + 1):off + 32 * (k + 2)])
    last = iso[off] == 0x91
    off += 32 * (n + 1)
    if last:
        break
assert 0xEF in platforms, "platforms %s" % [hex(p) for p in platforms]
boot = [e for e in entries if e[0] == 0x88]
assert boot, "no bootable entry"
lba = struct.unpack_from("<I", boot[-1], 8)[0]
img = open(sys.argv[2], "rb").read()
assert iso[lba * 2048:lba * 2048 + len(img)] == img, "the boot entry's image is not /boot/efi.img"
print("platforms", [hex(p) for p in platforms], "image at LBA", lba, len(img), "bytes")
PY
MTOOLS_SKIP_CHECK=1 mcopy -n -i "$TMP/efi64.img" ::/EFI/BOOT/BOOTIA64.EFI "$TMP/elilo64.efi" || fail "no BOOTIA64.EFI"
cmp -s "$TMP/elilo64.efi" "$TMP/in/esp/EFI/BOOT/BOOTIA64.EFI" || fail "efi.img's BOOTIA64.EFI is not the ESP's elilo"
ok "ia64 El Torito catalogue read from the ISO: platform 0xEF, bootable entry = /boot/efi.img with EFI/BOOT/BOOTIA64.EFI = the ESP's elilo"
