# bootloader kind "elilo" without `loader`: elilo.efi comes from the elilo
# package of a Debian-ports-style archive, fetched through a private apt
# that checks the archive's signature (debfetch). Offline: a tiny signed
# ia64 archive made here (tests/fixtures/ports-archive.sh's key, index and
# Release helpers) holding only an `elilo` .deb whose
# usr/lib/elilo/elilo.efi is a minimal PE image this test writes, served on
# 127.0.0.1. Checks:
#  - the ESP's EFI/BOOT/BOOTIA64.EFI is that elilo.efi, byte for byte, and
#    the log names the package version and its sha256
#  - an archive whose elilo.efi is x86-64 (PE machine 0x8664) is refused
#    naming bootloader.loader and the machine, nothing written
#  - a keyring that did not sign the archive fails naming bootloader.keyring
. "$TOP/tests/lib.sh"
. "$TOP/tests/fixtures/ports-archive.sh"
need gpg gpgv dpkg-deb dpkg-scanpackages apt-get python3 mkfs.vfat mmd mcopy mtype fsck.fat
PATH=$PATH:/usr/sbin:/sbin
export TRILLIAN_DATA=$TOP MTOOLS_SKIP_CHECK=1
ports_gnupg_dirs trl-elilo

pe() { # FILE MACHINE: a minimal PE image (MZ, e_lfanew, PE\0\0, Machine)
    python3 - "$1" "$2" <<'PY'
import struct, sys
d = bytearray(512)
d[0:2] = b"MZ"
struct.pack_into("<I", d, 0x3c, 0x80)
d[0x80:0x84] = b"PE\0\0"
struct.pack_into("<HH", d, 0x84, int(sys.argv[2], 16), 1)
d[0x100:0x120] = b"Trillian test elilo.efi\0".ljust(32, b"\0")
open(sys.argv[1], "wb").write(d)
PY
}
# archive ROOT VERSION MACHINE: a signed archive with one elilo .deb
archive() {
    local root=$1/debian-ports t=$1/build
    mkdir -p "$t/DEBIAN" "$t/usr/lib/elilo"
    printf 'Package: elilo\nVersion: %s\nArchitecture: ia64\nMaintainer: Trillian tests <test@trillian.invalid>\nPriority: optional\nSection: admin\nDescription: Linux boot loader for EFI-based systems\n test stand-in\n' "$2" > "$t/DEBIAN/control"
    pe "$t/usr/lib/elilo/elilo.efi" "$3"
    find "$t" -exec touch -h -d @1700000000 {} +
    mkdir -p "$root/pool/main/e/elilo"
    SOURCE_DATE_EPOCH=1700000000 dpkg-deb --root-owner-group -Zxz --build "$t" \
        "$root/pool/main/e/elilo/elilo_$2_ia64.deb" > /dev/null || return 1
    rm -rf "$t"
    ports_index "$root" unstable ia64 && ports_index "$root" unstable amd64 &&
        ports_release "$root" unstable sid "$gh/archive"
}
ports_key "$gh/archive" "$TMP/archive-keyring.gpg" "Trillian test ports archive" || fail "no key"
ports_key "$gh/wrong" "$TMP/wrong-keyring.gpg" "Trillian wrong key" || fail "no wrong key"
archive "$TMP/good" 3.16-9 0x200 || fail "could not make the archive"
archive "$TMP/bad" 3.16-9 0x8664 || fail "could not make the x86-64 archive"
pe "$TMP/want.efi" 0x200

serve_http "$TMP"
url=http://127.0.0.1:$http_port

# The ESP fixture on ia64 with a stand-in IA-64 kernel (a gzipped ELF header).
mkdir -p "$TMP/r"
cp -R "$TOP/tests/fixtures/initramfs-kernel" "$TMP/r/"
grep -v '^ *loader = ' "$TOP/tests/fixtures/esp-recipe.cfg" > "$TMP/r/r.cfg"
python3 - "$TMP/r/initramfs-kernel/vmlinuz" <<'PY'
import gzip, struct, sys
h = b"\x7fELF" + bytes([2, 1, 1]) + bytes(9) + struct.pack("<HHI", 2, 50, 1)
open(sys.argv[1], "wb").write(gzip.compress(h + bytes(4096 - len(h)), mtime=0))
PY
build() { # OUT CACHE ARCHIVE-DIR --set...
    local out=$1 cache=$2 dir=$3
    shift 3
    trl build "$TMP/r/r.cfg" --cache "$cache" -o "$out" --set arch=ia64 --set bootloader.kind=elilo \
        --set "bootloader.mirror=$url/$dir/debian-ports" --set bootloader.suite=unstable \
        --set "bootloader.keyring=$TMP/archive-keyring.gpg" "$@"
}

build "$TMP/o1" "$TMP/c1" good
expect_rc 0
mcopy -n -i "$TMP/o1/bootloader/esp.img" ::/EFI/BOOT/BOOTIA64.EFI "$TMP/got.efi" || fail "no BOOTIA64.EFI"
cmp "$TMP/got.efi" "$TMP/want.efi" || fail "BOOTIA64.EFI is not the package's elilo.efi"
sha=$(sha256sum "$TMP/good/debian-ports/pool/main/e/elilo/elilo_3.16-9_ia64.deb" | cut -d' ' -f1)
grep -q "elilo.efi from elilo 3.16-9 (sha256 $sha)" "$TMP/o1/logs/bootloader.log" ||
    fail "the log does not name the package and its sha256: $(grep -i elilo "$TMP/o1/logs/bootloader.log" | tail -n 3)"
mtype -i "$TMP/o1/bootloader/esp.img" ::/startup.nsh | grep -q 'BOOTIA64.EFI -C' || fail "no startup.nsh"
ok "elilo.efi from the archive's elilo 3.16-9 (signature-checked, sha256 ${sha:0:12}…) is EFI/BOOT/BOOTIA64.EFI"

# A pinned version enters the key (another key than the unpinned build's) and
# must be in the archive.
build "$TMP/o1p" "$TMP/c1" good --set bootloader.elilo_version=3.16-9
expect_rc 0
mcopy -n -i "$TMP/o1p/bootloader/esp.img" ::/EFI/trillian/elilo.efi "$TMP/gotp.efi" && cmp -s "$TMP/gotp.efi" "$TMP/want.efi" ||
    fail "elilo_version = 3.16-9 did not give the package's elilo.efi in EFI/trillian/"
k1=$(sed -n 's/.*"name": "bootloader", "kind": "[^"]*", "key": "\([0-9a-f]*\)".*/\1/p' "$TMP/o1/manifest.json")
k2=$(sed -n 's/.*"name": "bootloader", "kind": "[^"]*", "key": "\([0-9a-f]*\)".*/\1/p' "$TMP/o1p/manifest.json")
[ -n "$k1" ] && [ -n "$k2" ] && [ "$k1" != "$k2" ] || fail "elilo_version is not in the key ($k1 / $k2)"
build "$TMP/o1q" "$TMP/c1" good --set bootloader.elilo_version=3.16-10
expect_rc 1
expect_out "bootloader.elilo_version"
expect_out "version 3.16-10"
build "$TMP/o1r" "$TMP/c1" good --set "bootloader.elilo_version=3.16 9"
expect_rc 2
expect_out "bootloader.elilo_version"
ok "elilo_version = 3.16-9 is used and keyed; 3.16-10 (not in the archive) exits 1 and '3.16 9' exits 2, naming it"

build "$TMP/o2" "$TMP/c2" bad
expect_rc 1
expect_out "bootloader.loader: elilo 3.16-9 from $url/bad/debian-ports unstable has /usr/lib/elilo/elilo.efi, an EFI binary for x86-64, not IA-64 (0x200)"
[ ! -e "$TMP/o2/bootloader" ] || fail "a refused elilo left an ESP"
ok "an archive whose elilo.efi is x86-64 (0x8664): exit 1 naming bootloader.loader, nothing written"

build "$TMP/o3" "$TMP/c3" good --set "bootloader.keyring=$TMP/wrong-keyring.gpg"
expect_rc 1
expect_out "bootloader.keyring"
[ ! -e "$TMP/o3/bootloader" ] || fail "a wrong keyring left an ESP"
ok "a keyring that did not sign the archive: exit 1 naming bootloader.keyring"
