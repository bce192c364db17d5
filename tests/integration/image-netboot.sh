# images kind "netboot" on small fake inputs: the TFTP tree has the GRUB
# network loader (a PE/EFI binary), grub.cfg loading /vmlinuz and
# /initrd.img with root=squashfs:/root.squashfs and the bootloader's command
# line minus its root=, the kernel, and an initrd that is the initramfs
# followed (4-byte aligned) by a newc cpio holding root.squashfs, which keeps
# owners from the tar; dnsmasq.conf passes `dnsmasq --test` and serves the
# loader to x64 UEFI clients; two builds are byte-identical; on ia64 the
# tree has elilo from the ESP with elilo.conf (layout only, not booted).
. "$TOP/tests/lib.sh"
. "$TOP/tests/fixtures/image-lib.sh"
need gensquashfs unsquashfs grub-mkimage dnsmasq python3
[ -d /usr/lib/grub/x86_64-efi ] || skip "grub-efi-amd64-bin is not installed"
image_inputs 200000
image_recipe net "{ kind = \"netboot\"; name = \"net\"; squashfs_comp = \"gzip\"; dhcp_range = \"10.9.0.10,10.9.0.50,1h\"; }"
trl build "$TMP/net.cfg" --cache "$TMP/cache" -o "$TMP/out"
expect_rc 0
T=$TMP/out/net/tftp
for f in bootx64.efi grub/grub.cfg vmlinuz initrd.img; do
    [ -s "$T/$f" ] || fail "tftp/$f is missing"
done
[ "$(head -c 2 "$T/bootx64.efi")" = "MZ" ] || fail "bootx64.efi is not a PE binary"
cmp "$T/vmlinuz" "$TMP/in/vmlinuz" || fail "tftp/vmlinuz is not the kernel"
ok "tftp/ has bootx64.efi (PE), grub/grub.cfg, vmlinuz, initrd.img"

grep -q "linux /vmlinuz ro console=ttyS0,115200 root=squashfs:/root.squashfs$" "$T/grub/grub.cfg" ||
    { cat "$T/grub/grub.cfg"; fail "grub.cfg kernel line is wrong"; }
grep -q "initrd /initrd.img$" "$T/grub/grub.cfg" || fail "grub.cfg has no initrd line"
grep -q "root=UUID" "$T/grub/grub.cfg" && fail "grub.cfg kept the disk's root=UUID"
ok "grub.cfg: kernel, initrd, command line with root=squashfs:/root.squashfs"

# The initrd: the initramfs, zero padding to 4 bytes, a newc cpio with root.squashfs.
python3 - "$T/initrd.img" "$TMP/in/initrd.img" "$TMP/root.squashfs" <<'PY' || fail "initrd layout is wrong"
import sys
d = open(sys.argv[1], "rb").read()
first = open(sys.argv[2], "rb").read()
assert d.startswith(first), "initrd does not start with the initramfs"
off = (len(first) + 3) & ~3
assert d[len(first):off] == b"\0" * (off - len(first)), "padding is not zeros"
h = d[off:off + 110]
assert h[:6] == b"070701", "no newc cpio after the initramfs"
size, namesize = int(h[54:62], 16), int(h[94:102], 16)
name = d[off + 110:off + 110 + namesize - 1]
assert name == b"root.squashfs", name
data = (off + 110 + namesize + 3) & ~3
open(sys.argv[3], "wb").write(d[data:data + size])
assert b"TRAILER!!!" in d[data + size:], "no cpio trailer"
print("initrd ok")
PY
unsquashfs -lln "$TMP/root.squashfs" > "$TMP/sq.txt" || fail "root.squashfs is not squashfs"
grep -q -- "-rw------- 1000/1000 .*notes with space.txt" "$TMP/sq.txt" || fail "uid 1000 owner lost"
grep -q -- "-rw-r----- 0/42 .*etc/shadow" "$TMP/sq.txt" || fail "/etc/shadow group lost"
ok "initrd = initramfs + padding + cpio(root.squashfs); the squashfs keeps owners"

D=$TMP/out/net/dnsmasq.conf
dnsmasq --test --conf-file="$D" > "$TMP/dnsmasq.txt" 2>&1 || { cat "$TMP/dnsmasq.txt"; fail "dnsmasq --test rejects dnsmasq.conf"; }
grep -q "syntax check OK" "$TMP/dnsmasq.txt" || fail "dnsmasq did not say OK"
grep -qx "dhcp-range=10.9.0.10,10.9.0.50,1h" "$D" || fail "dhcp_range not used"
grep -qx "dhcp-boot=tag:trillian-efi,bootx64.efi" "$D" || fail "no dhcp-boot for the loader"
grep -qx "dhcp-match=set:trillian-efi,option:client-arch,7" "$D" || fail "x64 UEFI clients not matched"
grep -qx "enable-tftp" "$D" && grep -qx "tftp-root=/srv/tftp/net" "$D" || fail "tftp settings missing"
ok "dnsmasq.conf passes dnsmasq --test and serves bootx64.efi to x64 UEFI clients"

trl build "$TMP/net.cfg" --cache "$TMP/cache2" -o "$TMP/out2"
expect_rc 0
(cd "$TMP/out/net" && find . -type f | sort | xargs sha256sum) > "$TMP/a.sum"
(cd "$TMP/out2/net" && find . -type f | sort | xargs sha256sum) > "$TMP/b.sum"
cmp "$TMP/a.sum" "$TMP/b.sum" || { diff "$TMP/a.sum" "$TMP/b.sum"; fail "two builds differ"; }
ok "a fresh cache gives byte-identical outputs"

trl build "$TMP/net.cfg" --cache "$TMP/cache" -o "$TMP/bad" --set 'images.net.dhcp_range=a b'
[ "$rc" -ne 0 ] || fail "a dhcp_range with a blank was accepted"
expect_out "images.net.dhcp_range"
ok "a bad dhcp_range is a recipe error naming it"

# squashfs_level: passed to the compressor (recorded in the superblock's
# compressor options); out of range or on lz4 it is a recipe error.
trl build "$TMP/net.cfg" --cache "$TMP/cache" -o "$TMP/outz" --set images.net.squashfs_comp=zstd \
    --set images.net.squashfs_level=3
expect_rc 0
python3 - "$TMP/outz/net/tftp/initrd.img" "$TMP/in/initrd.img" "$TMP/rootz.squashfs" <<'PY' || fail "no squashfs in the zstd initrd"
import sys
d = open(sys.argv[1], "rb").read()
off = (len(open(sys.argv[2], "rb").read()) + 3) & ~3
h = d[off:off + 110]
size, namesize = int(h[54:62], 16), int(h[94:102], 16)
data = (off + 110 + namesize + 3) & ~3
open(sys.argv[3], "wb").write(d[data:data + size])
PY
unsquashfs -s "$TMP/rootz.squashfs" > "$TMP/sqz.txt" || fail "the zstd root is not squashfs"
grep -qx "Compression zstd" "$TMP/sqz.txt" && grep -q "compression-level 3" "$TMP/sqz.txt" ||
    { cat "$TMP/sqz.txt"; fail "squashfs_level = 3 did not reach the compressor"; }
trl build "$TMP/net.cfg" --cache "$TMP/cache" -o "$TMP/bad" --set images.net.squashfs_comp=zstd \
    --set images.net.squashfs_level=23
expect_rc 2
expect_out "images.net.squashfs_level: must be 0 (the default) or 1 to 22 for zstd (got 23)"
trl build "$TMP/net.cfg" --cache "$TMP/cache" -o "$TMP/bad" --set images.net.squashfs_comp=lz4 \
    --set images.net.squashfs_level=3
expect_rc 2
expect_out "lz4 takes no level"
ok "squashfs_level = 3 with zstd is in the superblock; 23 for zstd and any level for lz4 are recipe errors"

# ia64: elilo from the ESP tree, elilo.conf beside it, EFI Itanium clients.
IMAGE_ARCH=ia64 image_recipe net64 "{ kind = \"netboot\"; name = \"net\"; squashfs_comp = \"gzip\"; }"
trl build "$TMP/net64.cfg" --cache "$TMP/cache" -o "$TMP/out64"
expect_rc 0
T=$TMP/out64/net/tftp
cmp "$T/bootia64.efi" "$TMP/in/esp/EFI/BOOT/BOOTIA64.EFI" || fail "tftp/bootia64.efi is not the ESP's elilo"
grep -q '^image=vmlinuz$' "$T/elilo.conf" && grep -q 'initrd=initrd.img' "$T/elilo.conf" &&
    grep -qx 'relocatable' "$T/elilo.conf" || fail "elilo.conf lacks image/initrd/relocatable"
grep -q 'append="ro console=ttyS0,115200 root=squashfs:/root.squashfs"' "$T/elilo.conf" || { cat "$T/elilo.conf"; fail "elilo.conf append line"; }
grep -qx "dhcp-match=set:trillian-efi,option:client-arch,2" "$TMP/out64/net/dnsmasq.conf" || fail "no EFI Itanium client match"
grep -qx "dhcp-boot=tag:trillian-efi,bootia64.efi" "$TMP/out64/net/dnsmasq.conf" || fail "no dhcp-boot bootia64.efi"
dnsmasq --test --conf-file="$TMP/out64/net/dnsmasq.conf" >/dev/null 2>&1 || fail "dnsmasq rejects the ia64 config"
ok "ia64: elilo from the ESP tree, elilo.conf, dnsmasq for EFI Itanium clients (not booted here)"
