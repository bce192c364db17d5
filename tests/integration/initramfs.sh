# initramfs kind "initramfs" against a fake kernel (tests/fixtures/
# initramfs-kernel: modules.dep, modules.builtin, module files that are only
# text) and a stand-in static busybox (an ELF header and a banner): the newc
# cpio lists in sorted order, init is executable, dev/console is char 5,1 and
# dev/null char 1,3 (owners 0:0, no root needed), every mtime is
# source_date_epoch, the modules and their dependencies are in, in load
# order, with a trimmed modules.dep; the manifest names busybox's version and
# the built-in ext4; a fresh cache, and a build as uid 65534, give a
# byte-identical initrd.img; zstd works; the init and overlay settings land
# in the archive; an unknown module, a busybox for another machine and a
# dynamically linked one fail naming the setting, with exit 1. On ia64
# busybox must be given (recipe error otherwise) and be an ia64 binary.
. "$TOP/tests/lib.sh"
need cpio gzip zstd python3
export TRILLIAN_DATA=$TOP
R=$TOP/tests/fixtures/initramfs-recipe.cfg
SDE=1700000000
REL=6.1.0-trillian-fixture

# A stand-in busybox: ELF64 header for MACHINE (62 x86-64, 50 ia64) with
# PHNUM program headers, the first of type TYPE (3 = PT_INTERP: dynamic).
fake_busybox() { # out machine phnum type
    python3 - "$@" <<'PY'
import struct, sys
out, machine, phnum, ptype = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
hdr = b"\x7fELF" + bytes([2, 1, 1]) + bytes(9)
hdr += struct.pack("<HHIQQQIHHHHHH", 2, machine, 1, 0, 64 if phnum else 0, 0, 0, 64, 56,
                   phnum, 64, 0, 0)
ph = b"".join(struct.pack("<IIQQQQQQ", ptype if i == 0 else 1, 5, 0, 0, 0, 0, 0, 8)
              for i in range(phnum))
with open(out, "wb") as f:
    f.write(hdr + ph + b"BusyBox v9.9.9-fixture (Trillian test)\0padding")
PY
    chmod 755 "$1"
}
fake_busybox "$TMP/busybox" 62 1 1

build() { # out cache [extra args]
    local o=$1 c=$2
    shift 2
    trl build "$R" --cache "$c" -o "$o" --set initramfs.busybox="$TMP/busybox" \
        --set bootloader.loader="$TOP/tests/fixtures/esp-fake-loader.efi" "$@"
}

build "$TMP/o1" "$TMP/c1"
expect_rc 0
IMG=$TMP/o1/initramfs/initrd.img
[ -f "$IMG" ] || fail "no initrd.img"
[ "$(head -c 2 "$IMG" | od -An -tx1 | tr -d ' ')" = 1f8b ] || fail "initrd.img is not gzip"
ok "initrd.img written, gzip"

# --- the archive, listed by cpio and read field by field --------------------
zcat "$IMG" > "$TMP/i.cpio"
cpio -it < "$TMP/i.cpio" > "$TMP/list.txt" 2>/dev/null || fail "cpio cannot list initrd.img"
LC_ALL=C sort -c "$TMP/list.txt" || fail "entries are not sorted: $(cat "$TMP/list.txt")"
ok "cpio -it lists $(wc -l < "$TMP/list.txt") entries in sorted order"
cpio -itv --numeric-uid-gid < "$TMP/i.cpio" > "$TMP/listv.txt" 2>/dev/null
grep -qE '^-rwxr-xr-x +1 0 +0 .* init$' "$TMP/listv.txt" || fail "init is not an executable file: $(grep ' init$' "$TMP/listv.txt")"
grep -qE '^crw------- +1 0 +0 +5, +1 .* dev/console$' "$TMP/listv.txt" || fail "dev/console is not char 5,1: $(grep console "$TMP/listv.txt")"
grep -qE '^crw-rw-rw- +1 0 +0 +1, +3 .* dev/null$' "$TMP/listv.txt" || fail "dev/null is not char 1,3"
grep -qE '^lrwxrwxrwx .* bin/sh -> busybox$' "$TMP/listv.txt" || fail "bin/sh is not a link to busybox"
ok "init executable, dev/console char 5,1 and dev/null char 1,3 owned 0:0, bin/sh -> busybox"

python3 - "$TMP/i.cpio" "$SDE" <<'PY' || fail "newc headers are wrong"
import sys
data, sde = open(sys.argv[1], "rb").read(), int(sys.argv[2])
off, n = 0, 0
while True:
    h = data[off:off + 110]
    assert h[:6] == b"070701", ("not newc", off, h[:6])
    f = [int(h[6 + 8 * i:14 + 8 * i], 16) for i in range(13)]
    mode, uid, gid, mtime, size, namesize = f[1], f[2], f[3], f[5], f[6], f[11]
    name = data[off + 110:off + 110 + namesize - 1].decode()
    if name == "TRAILER!!!":
        break
    assert mtime == sde, (name, mtime)
    assert uid == 0 and gid == 0, (name, uid, gid)
    off = (off + 110 + namesize + 3) & ~3
    off = (off + size + 3) & ~3
    n += 1
print(n, "entries: mtime", sde, "owner 0:0")
PY
ok "every entry's mtime is source_date_epoch $SDE, owners 0:0"

# --- modules -----------------------------------------------------------------
(cd "$TMP" && mkdir x && cd x && cpio -id < "$TMP/i.cpio" 2>/dev/null)
X=$TMP/x
cat > "$TMP/want-modules" <<EOF
/lib/modules/$REL/kernel/drivers/virtio/virtio_ring.ko
/lib/modules/$REL/kernel/drivers/virtio/virtio.ko
/lib/modules/$REL/kernel/drivers/virtio/virtio_pci.ko
/lib/modules/$REL/kernel/drivers/block/virtio_blk.ko
/lib/modules/$REL/kernel/drivers/scsi/scsi_mod.ko
/lib/modules/$REL/kernel/drivers/scsi/sd_mod.ko
EOF
diff "$TMP/want-modules" "$X/etc/trillian/modules" || fail "etc/trillian/modules is not the load order"
while read -r m; do
    cmp -s "$X$m" "$TOP/tests/fixtures/initramfs-kernel/modules$m" || fail "$m is not the kernel's"
done < "$TMP/want-modules"
[ ! -e "$X/lib/modules/$REL/kernel/fs/squashfs/squashfs.ko" ] || fail "squashfs.ko is in but was not asked for"
[ "$(wc -l < "$X/lib/modules/$REL/modules.dep")" -eq 6 ] || fail "modules.dep is not trimmed to the 6 shipped modules"
grep -qx "kernel/drivers/scsi/sd_mod.ko: kernel/drivers/scsi/scsi_mod.ko" "$X/lib/modules/$REL/modules.dep" || fail "modules.dep lost sd_mod's line"
[ "$(cat "$X/etc/trillian/kernel-release")" = "$REL" ] || fail "kernel-release is wrong"
cmp -s "$X/init" "$TOP/firmware/initramfs/init" || fail "init is not firmware/initramfs/init"
cmp -s "$X/bin/busybox" "$TMP/busybox" || fail "bin/busybox is not the given busybox"
ok "4 requested modules -> 6 files in dependency order (ext4 built in), trimmed modules.dep, init and busybox as given"

M=$TMP/o1/initramfs/stage-manifest.json
python3 - "$M" <<'PY' || fail "stage-manifest.json is wrong: $(cat "$M")"
import json, sys
m = json.load(open(sys.argv[1]))
assert m["busybox"]["version"] == "v9.9.9-fixture (Trillian test)", m["busybox"]
assert m["builtin"] == ["ext4"], m["builtin"]
assert m["modules"] == ["virtio_pci", "virtio-blk", "sd_mod", "ext4"], m["modules"]
assert len(m["module_files"]) == 6 and m["compression"] == "gzip", m
PY
ok "stage-manifest.json: busybox version, modules, module files, built-in ext4"

# --- reproducible ------------------------------------------------------------
sleep 1
build "$TMP/o2" "$TMP/c2"
expect_rc 0
cmp "$IMG" "$TMP/o2/initramfs/initrd.img" || fail "a second build (fresh cache) differs"
ok "a fresh cache a second later gives a byte-identical initrd.img ($(stat -c %s "$IMG") bytes)"
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null 2>&1; then
    NR=$TMP/nobody
    chmod 0755 "$TMP" && mkdir -p "$NR" && chmod 0777 "$NR"
    if setpriv --reuid=65534 --regid=65534 --clear-groups test -r "$TMP/busybox" 2>/dev/null &&
        setpriv --reuid=65534 --regid=65534 --clear-groups test -w "$NR" 2>/dev/null; then
        HOME=$NR setpriv --reuid=65534 --regid=65534 --clear-groups \
            "$TRILLIAN" build "$R" --cache "$NR/cache" -o "$NR/out" \
            --set initramfs.busybox="$TMP/busybox" --set bootloader.loader="$TOP/tests/fixtures/esp-fake-loader.efi" \
            > "$TMP/nr.txt" 2>&1 || { cat "$TMP/nr.txt"; fail "the build as uid 65534 failed"; }
        cmp "$IMG" "$NR/out/initramfs/initrd.img" || fail "the build as uid 65534 differs from the build as root"
        ok "a build as uid 65534 (no root, no mknod) is byte-identical to the build as root"
    else
        echo "note: $TMP is not reachable for uid 65534; build without root not compared"
    fi
fi

build "$TMP/o3" "$TMP/c1" --set initramfs.compression=zstd
expect_rc 0
Z=$TMP/o3/initramfs/initrd.img
[ "$(head -c 4 "$Z" | od -An -tx1 | tr -d ' ')" = 28b52ffd ] || fail "zstd initrd.img lacks the zstd magic"
zstd -dc "$Z" | cmp -s - "$TMP/i.cpio" || fail "the zstd archive holds another cpio than the gzip one"
ok "compression = zstd: same cpio, zstd framed"

# --- init and overlay settings -----------------------------------------------
mkdir -p "$TMP/ov/etc" "$TMP/ov/sbin"
printf 'hello from the overlay\n' > "$TMP/ov/etc/motd"
printf '#!/bin/sh\necho tool\n' > "$TMP/ov/sbin/tool" && chmod 755 "$TMP/ov/sbin/tool"
printf '#!/bin/sh\necho my own init\n' > "$TMP/my-init"
build "$TMP/o10" "$TMP/c1" --set initramfs.overlay="$TMP/ov" --set initramfs.init="$TMP/my-init"
expect_rc 0
zcat "$TMP/o10/initramfs/initrd.img" > "$TMP/ov.cpio"
mkdir "$TMP/xo" && (cd "$TMP/xo" && cpio -id < "$TMP/ov.cpio" 2>/dev/null)
cmp -s "$TMP/xo/init" "$TMP/my-init" || fail "init is not the init setting's file"
[ -x "$TMP/xo/init" ] || fail "the init from the setting is not executable"
cmp -s "$TMP/xo/etc/motd" "$TMP/ov/etc/motd" && [ -x "$TMP/xo/sbin/tool" ] || fail "the overlay is not in"
cpio -it < "$TMP/ov.cpio" 2>/dev/null | LC_ALL=C sort -c || fail "with the overlay, entries are not sorted"
ok "init = FILE replaces /init (executable); overlay adds etc/motd and an executable sbin/tool; still sorted"

# --- errors ------------------------------------------------------------------
build "$TMP/o4" "$TMP/c1" --set 'initramfs.modules=["virtio_blk", "no_such_mod"]'
expect_rc 1
expect_out "initramfs.modules"
expect_out "no_such_mod"
[ ! -e "$TMP/o4/initramfs/initrd.img" ] || fail "a failed build left initrd.img"
ok "an unknown module fails with exit 1 naming initramfs.modules and the module"

fake_busybox "$TMP/bb-ia64" 50 1 1
trl build "$R" --cache "$TMP/c1" -o "$TMP/o5" --set initramfs.busybox="$TMP/bb-ia64" \
    --set bootloader.loader="$TOP/tests/fixtures/esp-fake-loader.efi"
expect_rc 1
expect_out "initramfs.busybox"
expect_out "another machine"
ok "a busybox for another machine fails naming initramfs.busybox"

fake_busybox "$TMP/bb-dyn" 62 2 3
trl build "$R" --cache "$TMP/c1" -o "$TMP/o6" --set initramfs.busybox="$TMP/bb-dyn" \
    --set bootloader.loader="$TOP/tests/fixtures/esp-fake-loader.efi"
expect_rc 1
expect_out "dynamically linked"
ok "a dynamically linked busybox fails (the initramfs has no libc)"

# --- ia64: same stage, other settings ----------------------------------------
# The ESP refuses a kernel that is not an IA-64 ELF: a copy of the fixture
# whose vmlinuz is a gzipped IA-64 ELF header.
mkdir -p "$TMP/k64"
cp -R "$TOP/tests/fixtures/initramfs-kernel" "$TMP/k64/"
cp "$R" "$TMP/k64/initramfs-recipe.cfg"
python3 - "$TMP/k64/initramfs-kernel/vmlinuz" <<'PY'
import gzip, struct, sys
h = b"\x7fELF" + bytes([2, 1, 1]) + bytes(9) + struct.pack("<HHI", 2, 50, 1)
open(sys.argv[1], "wb").write(gzip.compress(h + bytes(4096 - len(h)), mtime=0))
PY
R=$TMP/k64/initramfs-recipe.cfg
trl build "$R" --cache "$TMP/c1" -o "$TMP/o7" --set arch=ia64 --set bootloader.kind=elilo
expect_rc 2
expect_out "initramfs.busybox"
ok "arch = ia64 without busybox: recipe error naming initramfs.busybox"
trl build "$R" --cache "$TMP/c1" -o "$TMP/o8" --set arch=ia64 --set bootloader.kind=elilo \
    --set initramfs.busybox="$TMP/bb-ia64" --set bootloader.loader="$TOP/tests/fixtures/esp-fake-loader-ia64.efi"
expect_rc 0
zcat "$TMP/o8/initramfs/initrd.img" | cpio -it 2>/dev/null | grep -qx bin/busybox || fail "no bin/busybox in the ia64 initramfs"
trl build "$R" --cache "$TMP/c1" -o "$TMP/o9" --set arch=ia64 --set bootloader.kind=elilo \
    --set initramfs.busybox="$TMP/busybox" --set bootloader.loader="$TOP/tests/fixtures/esp-fake-loader-ia64.efi"
expect_rc 1
expect_out "another machine"
ok "arch = ia64: an ia64 busybox is taken, an x86-64 one refused"
