# bootloader kind "systemd-boot" from a fake kernel, a fake 3 MiB initramfs,
# a stand-in loader and a userland stage's cmdline-extra
# (tests/fixtures/esp-recipe.cfg): fsck.fat -n passes on esp.img; mdir shows
# EFI/BOOT/BOOTX64.EFI and the loader's own path, and the volume serial from
# volume_id; the entry file has title, kernel, initramfs and the full command
# line (root=UUID from root_uuid, cmdline, console, cmdline-extra), which is
# also the `cmdline` output; files read back from the image are the inputs;
# the loose esp/ tree matches; auto size is FAT16, size_mib = 80 is FAT32; a
# fresh cache, and a build as uid 65534, give a byte-identical image; a too-small size_mib fails with
# exit 1 naming bootloader.size_mib and leaves no esp.img, and the minimum it
# names is enough; root= twice is a
# recipe error (exit 2). kind = "grub" writes EFI/BOOT/grub.cfg, and with GRUB
# installed makes a reproducible grub-mkimage BOOTX64.EFI. On ia64, systemd-boot
# is refused; elilo puts elilo.efi, elilo.conf, kernel and initramfs in
# EFI/trillian/ (distro_dir) and the fallback BOOTIA64.EFI with an elilo.conf
# naming those files by absolute path in EFI/BOOT/.
. "$TOP/tests/lib.sh"
need mkfs.vfat mmd mcopy mdir mtype fsck.fat python3
export TRILLIAN_DATA=$TOP MTOOLS_SKIP_CHECK=1 TZ=UTC
PATH=$PATH:/usr/sbin:/sbin
R=$TOP/tests/fixtures/esp-recipe.cfg
UUID=0b9c9a52-6a2a-4c4e-9d77-3c4f1b1e7a11
WANT="root=UUID=$UUID rw quiet console=ttyS0,115200 trillian.firstboot=foreign"

trl build "$R" --cache "$TMP/c1" -o "$TMP/o1"
expect_rc 0
B=$TMP/o1/bootloader
IMG=$B/esp.img
[ -f "$IMG" ] || fail "no esp.img"
fsck.fat -n "$IMG" > "$TMP/fsck.txt" 2>&1 || { cat "$TMP/fsck.txt"; fail "fsck.fat -n finds errors"; }
ok "fsck.fat -n is clean: $(tail -n 1 "$TMP/fsck.txt")"

mdir -i "$IMG" ::/EFI/BOOT > "$TMP/mdir.txt" || fail "mdir cannot read EFI/BOOT"
grep -qE '^BOOTX64 +EFI ' "$TMP/mdir.txt" || { cat "$TMP/mdir.txt"; fail "no EFI/BOOT/BOOTX64.EFI"; }
grep -q "Volume Serial Number is 7A3C-09E1" "$TMP/mdir.txt" || { cat "$TMP/mdir.txt"; fail "volume serial is not volume_id"; }
mdir -i "$IMG" ::/EFI/systemd/systemd-bootx64.efi > /dev/null || fail "no EFI/systemd/systemd-bootx64.efi"
ok "mdir: EFI/BOOT/BOOTX64.EFI, EFI/systemd/systemd-bootx64.efi, serial 7A3C-09E1"

mtype -i "$IMG" ::/loader/entries/trillian.conf > "$TMP/entry.conf" || fail "no loader/entries/trillian.conf"
cat > "$TMP/want.conf" <<EOF
title Trillian fixture
linux /trillian/vmlinuz
initrd /trillian/initrd.img
options $WANT
EOF
diff "$TMP/want.conf" "$TMP/entry.conf" || fail "the entry file is not as expected"
mtype -i "$IMG" ::/loader/loader.conf > "$TMP/loader.conf"
grep -qx "default trillian.conf" "$TMP/loader.conf" && grep -qx "timeout 2" "$TMP/loader.conf" ||
    { cat "$TMP/loader.conf"; fail "loader.conf lacks default/timeout"; }
[ "$(cat "$B/cmdline")" = "$WANT" ] || fail "cmdline output is '$(cat "$B/cmdline")'"
ok "entry: title, kernel, initramfs, options '$WANT' (also the cmdline output); loader.conf default and timeout"

for f in trillian/vmlinuz:"$TOP/tests/fixtures/initramfs-kernel/vmlinuz" \
    EFI/BOOT/BOOTX64.EFI:"$TOP/tests/fixtures/esp-fake-loader.efi"; do
    mcopy -n -i "$IMG" "::/${f%%:*}" "$TMP/got" || fail "cannot read ${f%%:*} back"
    cmp -s "$TMP/got" "${f#*:}" || fail "${f%%:*} in the image differs from its source"
    rm -f "$TMP/got"
done
mcopy -n -i "$IMG" ::/trillian/initrd.img "$TMP/got"
[ "$(stat -c %s "$TMP/got")" -eq 3145728 ] || fail "initrd.img in the image is not 3 MiB"
(cd "$B/esp" && find . -type f | sed 's|^\./||' | LC_ALL=C sort) > "$TMP/tree.txt"
python3 - "$B/stage-manifest.json" "$TMP/tree.txt" <<'PY' || fail "stage-manifest.json or esp/ is wrong"
import json, sys
m = json.load(open(sys.argv[1]))
tree = open(sys.argv[2]).read().split()
assert m["files"] == tree, (m["files"], tree)
assert m["fat"] == 16 and m["size_mib"] == 8 and m["volume_id"] == "7a3c09e1", m
PY
cmp -s "$B/esp/loader/entries/trillian.conf" "$TMP/entry.conf" || fail "esp/ tree entry differs from the image's"
python3 - "$IMG" 16 <<'PY' || fail "boot sector does not say FAT16"
import sys
d = open(sys.argv[1], "rb").read(512)
want = b"FAT" + sys.argv[2].encode()
assert d[54:59] == want or d[82:87] == want, (d[54:62], d[82:90])
PY
ok "kernel, initramfs and loader read back byte for byte; esp/ tree = image = manifest; auto size 8 MiB FAT16"

# --- reproducible ------------------------------------------------------------
sleep 1
trl build "$R" --cache "$TMP/c2" -o "$TMP/o2"
expect_rc 0
cmp "$IMG" "$TMP/o2/bootloader/esp.img" || fail "a second build (fresh cache) differs"
ok "a fresh cache a second later gives a byte-identical esp.img"
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null 2>&1; then
    NR=$TMP/nobody
    chmod 0755 "$TMP" && mkdir -p "$NR" && chmod 0777 "$NR"
    if setpriv --reuid=65534 --regid=65534 --clear-groups test -r "$R" 2>/dev/null &&
        setpriv --reuid=65534 --regid=65534 --clear-groups test -w "$NR" 2>/dev/null; then
        # PATH without sbin, as a plain user has it: mkfs.vfat and fsck.fat are found anyway
        HOME=$NR PATH=/usr/bin:/bin setpriv --reuid=65534 --regid=65534 --clear-groups \
            "$TRILLIAN" build "$R" --cache "$NR/cache" -o "$NR/out" > "$TMP/nr.txt" 2>&1 ||
            { cat "$TMP/nr.txt"; fail "the build as uid 65534 failed"; }
        cmp "$IMG" "$NR/out/bootloader/esp.img" || fail "the build as uid 65534 differs from the build as root"
        ok "a build as uid 65534 (no root, no sbin on PATH) is byte-identical to the build as root"
    else
        echo "note: $TMP is not reachable for uid 65534; build without root not compared"
    fi
fi

trl build "$R" --cache "$TMP/c1" -o "$TMP/o3" --set bootloader.size_mib=80
expect_rc 0
fsck.fat -n "$TMP/o3/bootloader/esp.img" > /dev/null 2>&1 || fail "the 80 MiB ESP is not clean"
python3 - "$TMP/o3/bootloader/esp.img" 32 <<'PY' || fail "80 MiB is not FAT32"
import sys
d = open(sys.argv[1], "rb").read(512)
assert d[82:87] == b"FAT32", d[82:90]
PY
[ "$(stat -c %s "$TMP/o3/bootloader/esp.img")" -eq $((80 * 1048576)) ] || fail "esp.img is not 80 MiB"
ok "size_mib = 80: an 80 MiB FAT32 image, fsck clean"

# --- errors ------------------------------------------------------------------
trl build "$R" --cache "$TMP/c1" -o "$TMP/o4" --set bootloader.size_mib=2
expect_rc 1
expect_out "bootloader.size_mib"
expect_out "too small"
[ ! -e "$TMP/o4/bootloader/esp.img" ] && [ ! -e "$TMP/o4/bootloader/esp" ] ||
    fail "a failed build left esp.img or esp/ in the output"
ok "size_mib = 2 for 3+ MiB of content: exit 1 naming bootloader.size_mib, no esp.img or esp/ left"
min=$(sed -n 's/.*set size_mib to at least \([0-9]*\).*/\1/p' "$TMP/out.txt" | head -n 1)
[ -n "$min" ] || fail "the message names no minimum size"
trl build "$R" --cache "$TMP/c1" -o "$TMP/o4" --set bootloader.size_mib="$min"
expect_rc 0
fsck.fat -n "$TMP/o4/bootloader/esp.img" > /dev/null 2>&1 || fail "the ESP at the suggested minimum is not clean"
ok "the suggested minimum ($min MiB) is enough: the build passes, fsck clean"

trl build "$R" --cache "$TMP/c1" -o "$TMP/o5" --set 'bootloader.cmdline=root=/dev/vda2 rw' \
    --set bootloader.root=UUID=$UUID
expect_rc 2
expect_out "bootloader.root"
ok "root and a cmdline with its own root= are a recipe error naming bootloader.root"

# --- kind = "grub": EFI/BOOT/grub.cfg; with GRUB installed, a real image ----
trl build "$R" --cache "$TMP/c1" -o "$TMP/o6" --set bootloader.kind=grub
expect_rc 0
G=$TMP/o6/bootloader/esp.img
fsck.fat -n "$G" > /dev/null 2>&1 || fail "the GRUB ESP is not clean"
mtype -i "$G" ::/EFI/BOOT/grub.cfg > "$TMP/grub.cfg" || fail "no EFI/BOOT/grub.cfg"
grep -qx "set timeout=2" "$TMP/grub.cfg" && grep -q '^menuentry "Trillian fixture"' "$TMP/grub.cfg" &&
    grep -qx "	linux /trillian/vmlinuz $WANT" "$TMP/grub.cfg" &&
    grep -qx "	initrd /trillian/initrd.img" "$TMP/grub.cfg" || { cat "$TMP/grub.cfg"; fail "grub.cfg is not as expected"; }
[ "$(cat "$TMP/o6/bootloader/cmdline")" = "$WANT" ] || fail "GRUB ESP cmdline output differs"
ok "kind = grub: fsck clean, EFI/BOOT/grub.cfg with timeout, title, kernel + command line, initramfs"
trl build "$R" --cache "$TMP/c1" -o "$TMP/o6b" --set bootloader.kind=grub --set 'bootloader.cmdline=rw x=$y'
expect_rc 2
expect_out "bootloader.cmdline"
ok "kind = grub refuses a command line with \$ (GRUB would expand it): recipe error naming bootloader.cmdline"

if command -v grub-mkimage >/dev/null 2>&1 && [ -d /usr/lib/grub/x86_64-efi ]; then
    # The same recipe without `loader`, so GRUB is made with grub-mkimage.
    cp -R "$TOP/tests/fixtures/initramfs-kernel" "$TMP/"
    grep -v '^ *loader = ' "$R" > "$TMP/grub.cfg.recipe"
    for i in 1 2; do
        trl build "$TMP/grub.cfg.recipe" --cache "$TMP/cg$i" -o "$TMP/og$i" --set bootloader.kind=grub
        expect_rc 0
    done
    mcopy -n -i "$TMP/og1/bootloader/esp.img" ::/EFI/BOOT/BOOTX64.EFI "$TMP/grubx64.efi"
    [ "$(head -c 2 "$TMP/grubx64.efi")" = MZ ] || fail "EFI/BOOT/BOOTX64.EFI is not a PE image"
    cmp "$TMP/og1/bootloader/esp.img" "$TMP/og2/bootloader/esp.img" || fail "two GRUB ESPs differ"
    ok "grub-mkimage: BOOTX64.EFI is a PE image ($(stat -c %s "$TMP/grubx64.efi") bytes); two fresh builds are byte-identical"
else
    echo "note: grub-mkimage or GRUB's x86_64-efi modules missing: GRUB image build not tested"
fi

# --- ia64: the same stage with the elilo row ---------------------------------
trl build "$R" --cache "$TMP/c1" -o "$TMP/o7" --set arch=ia64
expect_rc 2
expect_out "bootloader.kind"
expect_out '"elilo"'
ok "arch = ia64 with systemd-boot is a recipe error naming bootloader.kind and the ia64 kinds"
# an x86-64 loader is refused on ia64 (PE machine 0x8664, not 0x200)
trl build "$R" --cache "$TMP/c1" -o "$TMP/o8" --set arch=ia64 --set bootloader.kind=elilo
expect_rc 1
expect_out "bootloader.loader: $TOP/tests/fixtures/esp-fake-loader.efi is an EFI binary for x86-64 (machine 0x8664), not IA-64 (Itanium) (0x200)"
[ ! -e "$TMP/o8/bootloader" ] || fail "a refused loader left an ESP in the output"
ok "an x86-64 loader on an ia64 ESP is refused naming bootloader.loader"

# --- ia64: startup.nsh and the kernel's ELF machine ---------------------------
# elilo loads vmlinuz = gzip(vmlinux): the ESP unpacks its head and refuses a
# kernel that is not an IA-64 ELF. A stand-in: a 64-byte ELF64 header.
elf_kernel() { # FILE MACHINE: a gzipped ELF64 header with e_machine MACHINE
    python3 - "$1" "$2" <<'PY'
import gzip, struct, sys
h = b"\x7fELF" + bytes([2, 1, 1]) + bytes(9) + struct.pack("<HHI", 2, int(sys.argv[2]), 1)
h += bytes(64 - len(h))
open(sys.argv[1], "wb").write(gzip.compress(h + bytes(4096), mtime=0))
PY
}
mkdir -p "$TMP/k64"
cp "$TOP"/tests/fixtures/esp-fake-loader*.efi "$TMP/k64/"
cp -R "$TOP/tests/fixtures/initramfs-kernel" "$TMP/k64/"
cp "$R" "$TMP/k64/esp-recipe.cfg"
I64="--set arch=ia64 --set bootloader.kind=elilo --set bootloader.loader=esp-fake-loader-ia64.efi"
trl build "$TMP/k64/esp-recipe.cfg" --cache "$TMP/c1" -o "$TMP/o9" $I64
expect_rc 1
expect_out "/vmlinuz is not a (compressed) ELF kernel for ia64: no ELF header"
[ ! -e "$TMP/o9/bootloader" ] || fail "a refused kernel left an ESP in the output"
elf_kernel "$TMP/k64/initramfs-kernel/vmlinuz" 62
trl build "$TMP/k64/esp-recipe.cfg" --cache "$TMP/c1" -o "$TMP/o9" $I64
expect_rc 1
expect_out "is an ELF kernel for x86-64 (machine 62), not IA-64 (50); build the kernel for ia64"
[ ! -e "$TMP/o9/bootloader" ] || fail "a refused kernel left an ESP in the output"
ok "ia64 ESP: a text file and a gzipped x86-64 ELF as vmlinuz are refused, nothing left in the output"
elf_kernel "$TMP/k64/initramfs-kernel/vmlinuz" 50
trl build "$TMP/k64/esp-recipe.cfg" --cache "$TMP/c1" -o "$TMP/o8" $I64
expect_rc 0
E=$TMP/o8/bootloader/esp.img
fsck.fat -n "$E" > /dev/null 2>&1 || fail "the elilo ESP is not clean"
mdir -b -i "$E" ::/EFI/BOOT > "$TMP/mdir-ia64.txt"
mdir -b -i "$E" ::/EFI/trillian >> "$TMP/mdir-ia64.txt"
for f in BOOT/BOOTIA64.EFI BOOT/elilo.conf trillian/elilo.efi trillian/elilo.conf \
    trillian/vmlinuz trillian/initrd.img; do
    grep -qx "::/EFI/$f" "$TMP/mdir-ia64.txt" || { cat "$TMP/mdir-ia64.txt"; fail "the ESP lacks EFI/$f"; }
done
[ "$(grep -c vmlinuz "$TMP/mdir-ia64.txt")" -eq 1 ] || fail "the kernel is on the ESP more than once"
mcopy -n -i "$E" ::/EFI/trillian/elilo.efi "$TMP/own.efi" && mcopy -n -i "$E" ::/EFI/BOOT/BOOTIA64.EFI "$TMP/fb.efi" &&
    cmp -s "$TMP/own.efi" "$TMP/fb.efi" && cmp -s "$TMP/own.efi" "$TMP/k64/esp-fake-loader-ia64.efi" ||
    fail "EFI/trillian/elilo.efi and EFI/BOOT/BOOTIA64.EFI are not the loader"
mtype -i "$E" ::/EFI/trillian/elilo.conf > "$TMP/elilo.conf"
grep -qx "image=vmlinuz" "$TMP/elilo.conf" && grep -qx "	initrd=initrd.img" "$TMP/elilo.conf" &&
    grep -qx "	append=\"$WANT\"" "$TMP/elilo.conf" && grep -qx "timeout=20" "$TMP/elilo.conf" &&
    grep -qx "relocatable" "$TMP/elilo.conf" && grep -qx "prompt" "$TMP/elilo.conf" ||
    { cat "$TMP/elilo.conf"; fail "EFI/trillian/elilo.conf is not as expected"; }
mtype -i "$E" ::/EFI/BOOT/elilo.conf > "$TMP/elilo-fb.conf"
sed 's|^image=vmlinuz$|image=/EFI/trillian/vmlinuz|; s|^	initrd=initrd.img$|	initrd=/EFI/trillian/initrd.img|' \
    "$TMP/elilo.conf" | diff - "$TMP/elilo-fb.conf" || fail "EFI/BOOT/elilo.conf is not the same entry by absolute paths"
ok "arch = ia64, kind = elilo: EFI/trillian/ has elilo.efi, elilo.conf, vmlinuz, initrd.img; EFI/BOOT/ the fallback BOOTIA64.EFI with elilo.conf naming /EFI/trillian/ files"
trl build "$TMP/k64/esp-recipe.cfg" --cache "$TMP/c1" -o "$TMP/o8d" $I64 --set bootloader.distro_dir=debian
expect_rc 0
mdir -b -i "$TMP/o8d/bootloader/esp.img" ::/EFI/debian | grep -qx "::/EFI/debian/elilo.efi" ||
    fail "distro_dir = debian did not make EFI/debian/elilo.efi"
mtype -i "$TMP/o8d/bootloader/esp.img" ::/EFI/BOOT/elilo.conf | grep -qx "image=/EFI/debian/vmlinuz" ||
    fail "EFI/BOOT/elilo.conf does not name /EFI/debian/vmlinuz"
for bad in boot a/b ''; do
    trl build "$TMP/k64/esp-recipe.cfg" --cache "$TMP/c1" -o "$TMP/o8e" $I64 --set "bootloader.distro_dir=$bad"
    expect_rc 2
    expect_out "bootloader.distro_dir"
done
ok "distro_dir = debian gives EFI/debian/; 'boot', 'a/b' and '' are recipe errors"
N=$E
mtype -i "$N" ::/startup.nsh > "$TMP/startup.nsh" || fail "the ia64 ESP has no startup.nsh at its root"
cmp -s "$TMP/startup.nsh" "$TMP/o8/bootloader/esp/startup.nsh" || fail "startup.nsh in the image differs from esp/"
grep -q $'\r$' "$TMP/startup.nsh" || fail "startup.nsh does not have CRLF line ends"
[ "$(grep -c '^if exist fs[0-9]*:' "$TMP/startup.nsh")" -eq 16 ] || fail "startup.nsh does not try fs0: to fs15:"
# Run it the way the EFI 1.10 shell would, on mappings where fs0: is another
# disk with a BOOTIA64.EFI but no elilo.conf (an install CD) and fs2: is ours.
python3 - "$TMP/startup.nsh" <<'PY' > "$TMP/nsh-run.txt" || fail "startup.nsh does not boot the right file system"
import sys
fs = {"fs0": {"\\EFI\\BOOT\\BOOTIA64.EFI"}, "fs1": set(),
      "fs2": {"\\EFI\\BOOT\\BOOTIA64.EFI", "\\EFI\\BOOT\\elilo.conf"}}
lines = [l.rstrip("\r\n").strip() for l in open(sys.argv[1], newline="")]
cwd, ran, i, skip = None, [], 0, 0
while i < len(lines):
    l = lines[i]; i += 1
    if not l or l.startswith("#") or l.startswith("@echo") or l.startswith("echo "):
        continue
    if skip:
        skip += l.startswith("if ") - (l == "endif")
        continue
    if l.startswith("if exist "):
        path = l[len("if exist "):-len(" then")]
        m, p = path.split(":", 1)
        if p not in fs.get(m, ()):
            skip = 1
    elif l == "endif":
        pass
    elif l.endswith(":") and l[:-1] in fs or l.startswith("fs") and l.endswith(":"):
        cwd = l[:-1]
    elif l.startswith("goto "):
        i = lines.index(":" + l[5:]) + 1
    elif l.startswith(":"):
        pass
    else:
        ran.append((cwd, l))
print(ran)
assert ran == [("fs2", "\\EFI\\BOOT\\BOOTIA64.EFI -C \\EFI\\BOOT\\elilo.conf")], ran
PY
ok "ia64 ESP: startup.nsh (CRLF, fs0: to fs15:) skips a disk without elilo.conf and runs \\EFI\\BOOT\\BOOTIA64.EFI -C \\EFI\\BOOT\\elilo.conf on fs2:"
mdir -i "$IMG" ::/startup.nsh > /dev/null 2>&1 && fail "the amd64 ESP has a startup.nsh"
ok "amd64 ESP: no startup.nsh"
