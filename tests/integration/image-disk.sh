# images kind "disk" on small fake inputs (a rootfs tar with files owned by
# uid 0 and uid 1000, device nodes, setuid, hard and symbolic links; an 8 MiB
# FAT ESP): the GPT read back with sfdisk has the ESP, root and swap types,
# sizes and the recipe's GUIDs; the ext4 root has root_uuid and hash_seed
# and keeps owners, modes and device numbers from the tar (debugfs); e2fsck
# is clean; the ESP is copied in byte for byte; a fresh cache gives a
# byte-identical image, and so does a build as an unprivileged user; a
# too-small size_mib fails naming the setting and the minimum, leaving no
# image, and that minimum is enough; the squashfs root keeps owners; qcow2
# and zstd outputs are valid; a root_uuid that the bootloader's command line
# or the rootfs's /etc/fstab does not use is refused.
. "$TOP/tests/lib.sh"
. "$TOP/tests/fixtures/image-lib.sh"
need sfdisk debugfs dumpe2fs e2fsck mke2fs gensquashfs unsquashfs python3
image_inputs

DISK_GUID=11111111-2222-4333-8444-555555555555
ESP_GUID=22222222-3333-4444-8555-666666666666
ROOT_GUID=33333333-4444-4555-8666-777777777777
SWAP_GUID=44444444-5555-4666-8777-888888888888
SEED=55555555-6666-4777-8888-999999999999
image_recipe disk "{ kind = \"disk\"; name = \"disk\"; size_mib = 64; swap_mib = 4;
    disk_guid = \"$DISK_GUID\"; esp_guid = \"$ESP_GUID\"; root_guid = \"$ROOT_GUID\";
    swap_guid = \"$SWAP_GUID\"; hash_seed = \"$SEED\"; }"
R=$TMP/disk.cfg O=$TMP/out
trl build "$R" --cache "$TMP/cache" -o "$O"
expect_rc 0
IMG=$O/disk/disk.img
[ -f "$IMG" ] || fail "no disk.img"
[ "$(stat -c %s "$IMG")" -eq $((64 * 1048576)) ] || fail "disk.img is not 64 MiB"

# --- the partition table, read back by sfdisk -------------------------------
sfdisk --json "$IMG" > "$TMP/pt.json" || fail "sfdisk cannot read the GPT"
python3 - "$TMP/pt.json" "$DISK_GUID" "$ESP_GUID" "$ROOT_GUID" "$SWAP_GUID" <<'PY' || fail "partition table is wrong"
import json, sys
pt = json.load(open(sys.argv[1]))["partitiontable"]
disk, esp, root, swap = (g.upper() for g in sys.argv[2:6])
assert pt["label"] == "gpt", pt["label"]
assert pt["id"].upper() == disk, pt["id"]
p = pt["partitions"]
assert len(p) == 3, p
want = [  # start, size (sectors), type, uuid, name
    (2048, 16384, "C12A7328-F81F-11D2-BA4B-00A0C93EC93B", esp, "ESP"),
    (18432, 102400, "0FC63DAF-8483-4772-8E79-3D69D8477DE4", root, "root"),
    (120832, 8192, "0657FD6D-A4AB-43C4-84E5-0933C84B4F4F", swap, "swap"),
]
for got, (start, size, typ, uuid, name) in zip(p, want):
    assert got["start"] == start and got["size"] == size, got
    assert got["type"].upper() == typ, got
    assert got["uuid"].upper() == uuid, got
    assert got["name"] == name, got
print("partitions ok")
PY
ok "GPT: disk GUID, ESP/root/swap types, starts, sizes, GUIDs and names as asked"

if command -v sgdisk >/dev/null 2>&1; then
    sgdisk -v "$IMG" > "$TMP/sgdisk.txt" 2>&1 || { cat "$TMP/sgdisk.txt"; fail "sgdisk -v finds problems"; }
    grep -q "No problems found" "$TMP/sgdisk.txt" || { cat "$TMP/sgdisk.txt"; fail "sgdisk -v is not happy"; }
    ok "sgdisk -v: primary and backup GPT and CRCs consistent"
fi

# --- the ESP is the bootloader stage's image --------------------------------
dd if="$IMG" of="$TMP/esp.part" bs=1M skip=1 count=8 status=none
cmp "$TMP/esp.part" "$TMP/in/esp.img" || fail "partition 1 is not the ESP image"
ok "partition 1 holds esp.img byte for byte"

# --- the ext4 root -------------------------------------------------------------
dd if="$IMG" of="$TMP/root.ext4" bs=1M skip=9 count=50 status=none
dumpe2fs -h "$TMP/root.ext4" > "$TMP/sb.txt" 2>/dev/null || fail "partition 2 is not ext2/3/4"
grep -q "^Filesystem UUID: *$ROOT_UUID$" "$TMP/sb.txt" || fail "root UUID is not root_uuid"
grep -q "^Directory Hash Seed: *$SEED$" "$TMP/sb.txt" || fail "hash seed is not hash_seed"
grep -q "^Filesystem features:.*extent" "$TMP/sb.txt" || fail "not ext4 (no extent feature)"
e2fsck -fn "$TMP/root.ext4" > "$TMP/fsck.txt" 2>&1 || { cat "$TMP/fsck.txt"; fail "e2fsck finds errors"; }
ok "ext4 root: UUID = root_uuid, hash seed = hash_seed, e2fsck clean"

st() { debugfs -R "stat \"$1\"" "$TMP/root.ext4" 2>/dev/null; }
owner() { st "$1" | sed -n 's/^User: *\([0-9]*\) *Group: *\([0-9]*\).*/\1:\2/p'; }
mode() { st "$1" | sed -n 's/.*Mode: *\([0-7]*\).*/\1/p'; }
[ "$(owner "/home/user/notes with space.txt")" = "1000:1000" ] || fail "uid 1000 file lost its owner: $(owner "/home/user/notes with space.txt")"
[ "$(mode "/home/user/notes with space.txt")" = "0600" ] || fail "mode of the uid 1000 file"
[ "$(owner /home/user)" = "1000:1000" ] && [ "$(mode /home/user)" = "0700" ] || fail "/home/user owner/mode"
[ "$(owner /etc/hostname)" = "0:0" ] || fail "uid 0 file: $(owner /etc/hostname)"
[ "$(owner /etc/shadow)" = "0:42" ] && [ "$(mode /etc/shadow)" = "0640" ] || fail "/etc/shadow owner/mode"
[ "$(mode /usr/bin/su)" = "04755" ] || fail "setuid bit lost: $(mode /usr/bin/su)"
[ "$(mode /tmp)" = "01777" ] || fail "sticky /tmp: $(mode /tmp)"
[ "$(mode /secret)" = "0000" ] || fail "mode 0000 file: $(mode /secret)"
st /usr/bin/su | grep -q "Links: 2" || fail "hard link not kept"
st /sbin/init | grep -q "Type: symlink" || fail "/sbin/init is not a symlink"
debugfs -R "ls -l /dev" "$TMP/root.ext4" 2>/dev/null > "$TMP/dev.txt"
grep -Eq "20600 .* 0 +0 .*console" "$TMP/dev.txt" || { cat "$TMP/dev.txt"; fail "/dev/console is not a 0600 char device"; }
st /dev/console | grep -q "Device major/minor number: 05:01" || fail "/dev/console is not 5,1"
st /dev/sda | grep -q "Type: block special" || fail "/dev/sda is not a block device"
[ "$(owner /dev/sda)" = "0:6" ] || fail "/dev/sda group"
st /dev/initctl | grep -q "Type: FIFO" || fail "/dev/initctl is not a fifo"
st /etc/hostname | grep -q "mtime: 0x5f5e1000" || fail "mtime from the tar not kept"
ok "owners (uid 0, uid 1000, gid 42), modes (setuid, sticky, 0000), links, device nodes, fifo, mtimes kept"

python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); assert m["root_uuid"]==sys.argv[2] and len(m["partitions"])==3' \
    "$O/disk/stage-manifest.json" "$ROOT_UUID" || fail "stage-manifest.json is wrong"
ok "stage-manifest.json lists the layout"

# --- reproducible: fresh cache, and as an unprivileged user -----------------
trl build "$R" --cache "$TMP/cache2" -o "$TMP/out2"
expect_rc 0
cmp "$IMG" "$TMP/out2/disk/disk.img" || fail "two builds of disk.img differ"
ok "a fresh cache gives a byte-identical disk.img"
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null 2>&1; then
    NR=$TMP/nobody
    chmod 0755 "$TMP" && mkdir -p "$NR" && chmod 0777 "$NR"
    if setpriv --reuid=65534 --regid=65534 --clear-groups test -r "$R" 2>/dev/null &&
        setpriv --reuid=65534 --regid=65534 --clear-groups test -w "$NR" 2>/dev/null; then
        HOME=$NR setpriv --reuid=65534 --regid=65534 --clear-groups \
            "$TRILLIAN" build "$R" --cache "$NR/cache" -o "$NR/out" > "$TMP/nr.txt" 2>&1 ||
            { cat "$TMP/nr.txt"; fail "the build as uid 65534 failed"; }
        cmp "$IMG" "$NR/out/disk/disk.img" || fail "the build as uid 65534 differs from the build as root"
        ok "a build as uid 65534 (no root) is byte-identical to the build as root"
    else
        echo "note: $TMP is not reachable for uid 65534; build without root not compared"
    fi
fi

# --- too small -------------------------------------------------------------------
trl build "$R" --cache "$TMP/cache" -o "$TMP/small" --set images.disk.size_mib=16
[ "$rc" -ne 0 ] || fail "size_mib = 16 did not fail"
expect_out "images.disk.size_mib = 16 is too small"
[ ! -e "$TMP/small/disk/disk.img" ] || fail "a failed build left disk.img"
min=$(sed -n 's/.*needs at least \([0-9]*\) MiB.*/\1/p' "$TMP/out.txt" | head -n1)
[ -n "$min" ] && [ "$min" -gt 16 ] || fail "no minimum in the message"
ok "size_mib = 16 fails naming images.disk.size_mib and the minimum ($min MiB), no image left"
trl build "$R" --cache "$TMP/cache" -o "$TMP/min" --set images.disk.size_mib="$min"
expect_rc 0
ok "size_mib = $min (the stated minimum) builds"

# --- squashfs root, qcow2, zstd, xz -----------------------------------------
image_recipe sq "{ kind = \"disk\"; name = \"sq\"; size_mib = 32; fs = \"squashfs\";
    squashfs_comp = \"gzip\"; qcow2 = true; zstd = true; zstd_level = 3; xz = true; xz_level = 1; }"
trl build "$TMP/sq.cfg" --cache "$TMP/cache" -o "$TMP/sqout"
expect_rc 0
SQ=$TMP/sqout/sq/sq.img
sfdisk --json "$SQ" | python3 -c 'import json,sys; p=json.load(sys.stdin)["partitiontable"]["partitions"]; assert len(p)==2 and p[1]["uuid"].lower()==sys.argv[1], p' "$ROOT_UUID" ||
    fail "squashfs disk: partition 2 PARTUUID is not root_uuid"
dd if="$SQ" of="$TMP/root.sqfs" bs=1M skip=9 status=none
unsquashfs -lln "$TMP/root.sqfs" > "$TMP/sq.txt" 2>&1 || fail "partition 2 is not squashfs"
grep -q -- "-rw------- 1000/1000 .*notes with space.txt" "$TMP/sq.txt" || { cat "$TMP/sq.txt"; fail "squashfs lost the uid 1000 owner"; }
grep -q -- "crw------- 0/0 .*5, *1 .*dev/console" "$TMP/sq.txt" || fail "squashfs lacks /dev/console"
grep -q -- "-rwsr-xr-x 0/0 .*usr/bin/su$" "$TMP/sq.txt" || fail "squashfs lost setuid"
ok "squashfs root: PARTUUID = root_uuid, owners, device nodes, setuid kept"
if command -v qemu-img >/dev/null 2>&1; then
    qemu-img info "$TMP/sqout/sq/sq.qcow2" | grep -q "file format: qcow2" || fail "sq.qcow2 is not qcow2"
    qemu-img compare "$SQ" "$TMP/sqout/sq/sq.qcow2" >/dev/null || fail "sq.qcow2 differs from sq.img"
    ok "qcow2 output has the same content"
fi
zstd -dc "$TMP/sqout/sq/sq.img.zst" | cmp - "$SQ" || fail "sq.img.zst does not decompress to sq.img"
xz -dc "$TMP/sqout/sq/sq.img.xz" | cmp - "$SQ" || fail "sq.img.xz does not decompress to sq.img"
ok "zstd and xz outputs decompress to the image"
# xz's output must not depend on -j (its threaded format, -T+1 with one job)
trl build "$TMP/sq.cfg" --cache "$TMP/sqcache1" -o "$TMP/sqout1" -j1
expect_rc 0
cmp "$TMP/sqout/sq/sq.img.xz" "$TMP/sqout1/sq/sq.img.xz" || fail "sq.img.xz differs between -j1 and -j2"
cmp "$TMP/sqout/sq/sq.img.zst" "$TMP/sqout1/sq/sq.img.zst" || fail "sq.img.zst differs between -j1 and -j2"
trl build "$TMP/sq.cfg" --cache "$TMP/sqcache1" -o "$TMP/sqbad" --set images.sq.xz_level=10
expect_rc 2
expect_out "images.sq.xz_level: must be between 0 and 9 (got 10)"
ok "-j1 and -j2 give the same .img.xz and .img.zst; xz_level = 10 is a recipe error"

# --- recipe errors ------------------------------------------------------------
trl build "$R" --cache "$TMP/cache" -o "$TMP/bad" --set images.disk.disk_guid=nope
[ "$rc" -ne 0 ] || fail "a bad disk_guid was accepted"
expect_out "images.disk.disk_guid"
ok "a malformed GUID is a recipe error naming images.disk.disk_guid"

# --- the root UUID must agree with the kernel command line and /etc/fstab ---
OTHER=0f0f0f0f-1111-4222-8333-444444444444
trl build "$R" --cache "$TMP/cache" -o "$TMP/bad2" --set "root_uuid=$OTHER"
[ "$rc" -ne 0 ] || fail "a root_uuid differing from the bootloader's root=UUID was accepted"
expect_out "kernel command line says 'root=UUID=$ROOT_UUID"
echo "console=ttyS0" > "$TMP/in/cmdline"
trl build "$R" --cache "$TMP/cache" -o "$TMP/bad3" --set "root_uuid=$OTHER"
[ "$rc" -ne 0 ] || fail "a root_uuid differing from /etc/fstab was accepted"
expect_out "/etc/fstab mounts / from UUID=$ROOT_UUID"
[ ! -e "$TMP/bad3/disk/disk.img" ] || fail "the failed build left disk.img"
ok "a root_uuid that the kernel command line or /etc/fstab does not use fails, naming both"
