# The debian-libc packages kind for ia64, offline: debian-ports (where
# libc6.1 for ia64 lives) is not reachable here, so this test makes signed
# ia64 archives with the ports fixture (tests/fixtures/ports-archive.sh) whose
# libc6.1, libc6.1-dev, linux-libc-dev, libgcc-s1, libcrypt1 and
# libcrypt-dev are small stand-ins made with dpkg-deb: libc.so.6.1 and
# ld-linux-ia64.so.2 are tiny ELF files for IA-64 (e_machine 50), libc with
# the GNU ABI tag "Linux 3.2.0". Checks: the sysroot layout, version and
# manifest; a kernel older than the ABI tag fails naming both versions; a
# wrong keyring names the keyring; the archive defaults to the debootstrap
# userland's and its libc6.1 must equal the root's (a second archive with
# another version fails naming both); a package the archive lacks names the
# packages setting.
. "$TOP/tests/lib.sh"
need debootstrap dpkg-deb dpkg-scanpackages gpg gpgv gpgconf python3 apt-get apt-cache xz gzip
[ "$(id -u)" = 0 ] || need fakeroot
. "$TOP/tests/fixtures/ports-archive.sh"
t0=$SECONDS
gh=$(mktemp -d /tmp/trl-libc.XXXXXX) || fail "mktemp"
cleanup() {
    [ -d "$gh/archive" ] && gpgconf --homedir "$gh/archive" --kill gpg-agent 2>/dev/null
    [ -d "$gh/wrong" ] && gpgconf --homedir "$gh/wrong" --kill gpg-agent 2>/dev/null
    rm -rf "$gh"
}
trap cleanup EXIT

# elf FILE [MAJOR.MINOR.PATCH]: a 64-bit LSB IA-64 shared object, with a GNU
# ABI tag note for Linux at that version when given.
elf() {
    python3 - "$@" <<'EOF'
import struct, sys
path = sys.argv[1]
tag = [int(x) for x in sys.argv[2].split(".")] if len(sys.argv) > 2 else None
note = struct.pack("<III4sIIII", 4, 16, 1, b"GNU\0", 0, *tag) if tag else b""
phnum = 1 if tag else 0
ehdr = struct.pack("<4sBBBBB7sHHIQQQIHHHHHH", b"\x7fELF", 2, 1, 1, 0, 0, b"\0" * 7,
                   3, 50, 1, 0, 64 if phnum else 0, 0, 0, 64, 56, phnum, 64, 0, 0)
off = 64 + 56 * phnum
ph = struct.pack("<IIQQQQQQ", 4, 4, off, off, off, len(note), len(note), 4) if tag else b""
open(path, "wb").write(ehdr + ph + note)
EOF
}

# libc_debs POOL VERSION: the six packages, Architecture ia64
libc_debs() {
    local pool=$1 ver=$2 b=$1/.libc
    rm -rf "$b"
    mk() { # name version files-dir
        local name=$1 v=$2 t=$3
        mkdir -p "$t/DEBIAN" "$pool/main/${name:0:1}/$name"
        printf 'Package: %s\nVersion: %s\nArchitecture: ia64\nMaintainer: Trillian tests <test@trillian.invalid>\nPriority: optional\nSection: libs\nDescription: stand-in %s for ia64\n' \
            "$name" "$v" "$name" >"$t/DEBIAN/control"
        find "$t" -exec touch -h -d @1700000000 {} +
        SOURCE_DATE_EPOCH=1700000000 dpkg-deb --root-owner-group -Zxz --build "$t" \
            "$pool/main/${name:0:1}/$name/${name}_${v#*:}_ia64.deb" >/dev/null
    }
    mkdir -p "$b/c/lib/ia64-linux-gnu"
    elf "$b/c/lib/ia64-linux-gnu/libc.so.6.1" 3.2.0
    elf "$b/c/lib/ia64-linux-gnu/ld-linux-ia64.so.2"
    elf "$b/c/lib/ia64-linux-gnu/libm.so.6.1"
    ln -s /lib/ia64-linux-gnu/ld-linux-ia64.so.2 "$b/c/lib/ld-linux-ia64.so.2"
    mk libc6.1 "$ver" "$b/c"
    mkdir -p "$b/d/usr/include" "$b/d/usr/lib/ia64-linux-gnu"
    echo '/* stand-in */' >"$b/d/usr/include/stdio.h"
    echo 'GROUP ( /lib/ia64-linux-gnu/libc.so.6.1 )' >"$b/d/usr/lib/ia64-linux-gnu/libc.so"
    mk libc6.1-dev "$ver" "$b/d"
    mkdir -p "$b/k/usr/include/linux"
    echo '#define LINUX_VERSION_CODE 393472' >"$b/k/usr/include/linux/version.h"
    mk linux-libc-dev 6.1.76-1 "$b/k"
    mkdir -p "$b/g/lib/ia64-linux-gnu"
    elf "$b/g/lib/ia64-linux-gnu/libgcc_s.so.1"
    mk libgcc-s1 12.2.0-14 "$b/g"
    mkdir -p "$b/y/lib/ia64-linux-gnu"
    elf "$b/y/lib/ia64-linux-gnu/libcrypt.so.1.1.0"
    ln -s libcrypt.so.1.1.0 "$b/y/lib/ia64-linux-gnu/libcrypt.so.1"
    mk libcrypt1 1:4.4.36-4 "$b/y"
    mkdir -p "$b/z/usr/include"
    echo '/* stand-in */' >"$b/z/usr/include/crypt.h"
    mk libcrypt-dev 1:4.4.36-4 "$b/z"
    rm -rf "$b"
}

# archive 1: the ports fixture (what debootstrap installs) with the
# stand-in C library at the version its packages depend on
A=$TMP/a1
ports_archive "$A" "$gh/archive" || fail "could not make the ports archive"
root=$A/debian-ports
libc_debs "$root/pool" 2.40-3 || fail "could not make the libc packages"
ports_index "$root" unstable ia64 && ports_release "$root" unstable sid "$gh/archive" \
    || fail "could not index and sign archive 1"
key=$A/archive-keyring.gpg
# archive 2: the same key, another libc6.1 version
B=$TMP/a2/debian-ports
mkdir -p "$B/pool"
libc_debs "$B/pool" 2.41-1 && ports_index "$B" unstable ia64 && ports_release "$B" unstable sid "$gh/archive" \
    || fail "could not make archive 2"
ports_key "$gh/wrong" "$TMP/wrong.gpg" "Trillian wrong key" || fail "wrong key"
ok "two signed ia64 archives with stand-in libc6.1 2.40-3 and 2.41-1 ($((SECONDS - t0)) s)"

# recipe NAME KERNEL-RELEASE USERLAND(yes|no) LIBC-SETTINGS
recipe() {
    {
        echo "name = \"$1\"; arch = \"ia64\"; source_date_epoch = 1700000000;"
        echo "stages = ( { kind = \"command\"; name = \"kernel\"; argv = [\"sh\", \"-c\", \"echo $2 > \${out}/release\"]; outputs = [\"release\"]; } );"
        [ "$3" = yes ] && echo "userland = { kind = \"debootstrap\"; suite = \"unstable\"; mirror = \"file://$root\"; keyring = \"$key\"; variant = \"minbase\"; foreign = true; };"
        echo "packages = ( { kind = \"debian-libc\"; name = \"libc\"; $4 } );"
    } >"$TMP/$1.cfg"
}
C=$TMP/cache

recipe plain 6.1.76 no "mirror = \"file://$root\"; suite = \"unstable\"; keyring = \"$key\";"
trl build "$TMP/plain.cfg" --cache "$C" -o "$TMP/o1"
expect_rc 0
S=$TMP/o1/libc/sysroot
for f in lib/ia64-linux-gnu/libc.so.6.1 lib/ia64-linux-gnu/ld-linux-ia64.so.2 usr/include/stdio.h \
         usr/include/linux/version.h usr/include/crypt.h lib/ia64-linux-gnu/libgcc_s.so.1; do
    [ -e "$S/$f" ] || fail "sysroot lacks $f"
done
[ "$(readlink "$S/lib/ld-linux-ia64.so.2")" = ../lib/ia64-linux-gnu/ld-linux-ia64.so.2 ] \
    || fail "the absolute loader link was not made relative: $(readlink "$S/lib/ld-linux-ia64.so.2")"
[ "$(cat "$TMP/o1/libc/version")" = 2.40 ] || fail "version: $(cat "$TMP/o1/libc/version")"
M=$TMP/o1/libc/stage-manifest.json
for w in '"glibc": "2.40"' '"debian_version": "2.40-3"' '"min_kernel": "3.2.0"' '"kernel_release": "6.1.76"' \
         '"libc6.1-dev": "2.40-3"' '"libcrypt1": "1:4.4.36-4"'; do
    grep -qF "$w" "$M" || fail "manifest lacks $w: $(cat "$M")"
done
ls "$C/downloads/apt/" | grep -q '^libc6.1_2.40-3_ia64.deb$' || fail "the .deb is not in the download cache"
ok "sysroot from the ia64 archive: libc.so.6.1, loader, headers; version 2.40, min_kernel 3.2.0"

recipe old 3.0.0 no "mirror = \"file://$root\"; suite = \"unstable\"; keyring = \"$key\";"
trl build "$TMP/old.cfg" --cache "$C" -o "$TMP/o2"
expect_rc 1
expect_out "needs Linux >= 3.2.0"
expect_out "3.0.0"
[ ! -e "$TMP/o2/libc/sysroot" ] || fail "a sysroot was published after the failure"
ok "a kernel (3.0.0) older than libc's ABI tag (3.2.0) fails naming both"

recipe badkey 6.1.76 no "mirror = \"file://$root\"; suite = \"unstable\"; keyring = \"$TMP/wrong.gpg\";"
trl build "$TMP/badkey.cfg" --cache "$TMP/cache-bad" -o "$TMP/o3"
expect_rc 1
expect_out "packages.libc.keyring: the Release file of unstable at file://$root is not signed by a key in $TMP/wrong.gpg"
! ls "$TMP/cache-bad/downloads/apt/" 2>/dev/null | grep -q deb || fail "packages of an unverified archive were downloaded"
ok "a wrong keyring fails naming packages.libc.keyring; nothing downloaded"

recipe nopkg 6.1.76 no "mirror = \"file://$root\"; suite = \"unstable\"; keyring = \"$key\"; packages = [\"libc6.1\", \"libfoo-dev\"];"
trl build "$TMP/nopkg.cfg" --cache "$C" -o "$TMP/o4"
expect_rc 1
expect_out "packages.libc.packages: file://$root (unstable) has no ia64 package libfoo-dev"
ok "a package the archive lacks fails naming packages.libc.packages"

# With a debootstrap userland: the archive defaults to the userland's, and
# the sysroot's libc6.1 must be the root's.
recipe same 6.1.76 yes ""
trl build "$TMP/same.cfg" --cache "$C" -o "$TMP/o5"
expect_rc 0
grep -q '^libc6.1	2.40-3	ia64$' "$TMP/o5/userland/packages.tsv" || fail "the root has no libc6.1 2.40-3"
grep -qF '"mirror": "file://'"$root"'"' "$TMP/o5/libc/stage-manifest.json" || fail "the userland's mirror was not the default"
grep -q 'the userland root has the same libc6.1 (2.40-3)' "$TMP/o5/logs/libc.log" || fail "the versions were not compared"
recipe other 6.1.76 yes "mirror = \"file://$B\";"
trl build "$TMP/other.cfg" --cache "$C" -o "$TMP/o6"
expect_rc 1
expect_out "the sysroot's libc6.1 is 2.41-1 but the userland root has libc6.1 2.40-3"
ok "debootstrap userland: its archive is the default, the same libc6.1 passes, 2.41-1 against the root's 2.40-3 fails naming both"
ok "all checks in $((SECONDS - t0)) s"
