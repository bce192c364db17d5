# The packages kind "package" with its source as a Debian source package
# (source_dsc, source_dsc_sha256; pkg_build.c, debfetch_dsc_get): a tiny C
# program written here, made into a 3.0 (quilt) source package by
# dpkg-source -b (an orig tarball; a debian/ whose patch changes the
# program's greeting and whose copyright is the binary package's), pinned
# by the .dsc's file:// URL and sha256 and built for amd64 with the host's
# gcc. Checked: the program prints Debian's greeting (the patch applied by
# dpkg-source -x), the .deb's copyright is debian/copyright
# (${src:source}/debian/copyright), the manifest names the .dsc with its
# Version and sha256, and the same build offline from a mirror that
# `trillian fetch --to` wrote (the .dsc and the two files it lists), the
# origin gone. Bad inputs, each leaving no OUT/trhello: a .dsc sha256 that
# is not one (exit 2 at plan time) or is another file's (exit 1, FILE:LINE,
# both hashes), a listed file with other bytes (exit 1, naming it and both
# hashes; nothing of it cached), source_url beside source_dsc (exit 2,
# FILE:LINE). Offline: file:// URLs only. About 5 s.
. "$TOP/tests/lib.sh"
need gcc make dpkg-deb dpkg-source tar gzip xz python3
[ "$(dpkg --print-architecture 2>/dev/null)" = amd64 ] || skip "needs an amd64 host (the host's gcc builds the package)"
EPOCH=1700000000

# --- the source package -----------------------------------------------------------
P=$TMP/pool S=$TMP/trhello-1.0
mkdir -p "$P" "$S"
printf '#include <stdio.h>\nint main(void) { puts(GREETING); return 0; }\n' >"$S/hello.c"
cat >"$S/Makefile" <<'EOF'
GREETING ?= "hello from upstream"
all: trhello
trhello: hello.c
	$(CC) -O2 '-DGREETING=$(GREETING)' -o $@ hello.c
install: all
	install -d $(DESTDIR)/usr/bin
	install -m 0755 trhello $(DESTDIR)/usr/bin/
EOF
(cd "$TMP" && tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -cf - trhello-1.0 |
    gzip -n >"$TMP/trhello_1.0.orig.tar.gz")
mkdir -p "$S/debian/source" "$S/debian/patches"
echo '3.0 (quilt)' >"$S/debian/source/format"
cat >"$S/debian/control" <<'EOF'
Source: trhello
Maintainer: Trillian Tests <tests@example.org>
Section: utils
Priority: optional
Standards-Version: 4.6.2

Package: trhello
Architecture: any
Description: prints a greeting
 A test program of Trillian.
EOF
cat >"$S/debian/changelog" <<'EOF'
trhello (1.0-1) unstable; urgency=medium

  * A test package.

 -- Trillian Tests <tests@example.org>  Tue, 14 Nov 2023 22:13:20 +0000
EOF
printf '#!/usr/bin/make -f\n%%:\n\tdh $@\n' >"$S/debian/rules"
chmod 755 "$S/debian/rules"
printf 'Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\nUpstream-Name: trhello\nComment: the debian/ of the trhello test source package\n' \
    >"$S/debian/copyright"
cat >"$S/debian/patches/greeting.patch" <<'EOF'
Description: Debian's greeting
--- a/Makefile
+++ b/Makefile
@@ -1,4 +1,4 @@
-GREETING ?= "hello from upstream"
+GREETING ?= "hello from Debian"
 all: trhello
 trhello: hello.c
 	$(CC) -O2 '-DGREETING=$(GREETING)' -o $@ hello.c
EOF
echo greeting.patch >"$S/debian/patches/series"
(cd "$TMP" && dpkg-source -b trhello-1.0 >dpkg-source.log 2>&1) || { cat "$TMP/dpkg-source.log"; fail "dpkg-source -b"; }
mv "$TMP"/trhello_1.0-1.dsc "$TMP"/trhello_1.0.orig.tar.gz "$TMP"/trhello_1.0-1.debian.tar.xz "$P/"
DSC=$P/trhello_1.0-1.dsc
DSHA=$(sha256sum "$DSC" | cut -d' ' -f1)
echo 'libc 6 libc6 (>= 2.36)' >"$TMP/libc.shlibs"

# recipe FILE [DSC_SHA256 [EXTRA]]
recipe() {
    cat >"$1" <<CFG
name = "pkg-dsc";
arch = "amd64";
source_date_epoch = $EPOCH;
packages = (
  { kind = "package"; name = "trhello";
    source_dsc = "file://$DSC";
    source_dsc_sha256 = "${2:-$DSHA}";${3:+
    $3}
    version = "1.0-1";
    maintainer = "Trillian Tests <tests@example.org>";
    shlibs = ["libc.shlibs"];
    steps = ( { label = "make"; argv = ["make", "CC=gcc"]; },
              { label = "install"; argv = ["make", "install", "DESTDIR=\${kind:destdir}"]; } );
    debs = ( { name = "trhello"; files = ["usr/bin"]; section = "utils"; priority = "optional";
               summary = "prints a greeting"; description = "A test program of Trillian.";
               copyright = "\${src:source}/debian/copyright"; } ); } );
CFG
}
line_of() { grep -n "$2" "$1" | head -n 1 | cut -d: -f1; } # FILE PATTERN

# checks OUT/trhello: the greeting, the copyright, the manifest
check_out() { # OUT
    local deb=$1/trhello/debs/trhello_1.0-1_amd64.deb x=$TMP/x-$(basename "$1")
    [ -f "$deb" ] || { ls -lR "$1" >&2; fail "no $deb"; }
    dpkg-deb -x "$deb" "$x"
    [ "$("$x/usr/bin/trhello")" = "hello from Debian" ] ||
        fail "trhello prints '$("$x/usr/bin/trhello")': Debian's patch was not applied"
    cmp -s "$x/usr/share/doc/trhello/copyright" "$S/debian/copyright" ||
        fail "the .deb's copyright is not the source package's debian/copyright"
    python3 - "$1/trhello/stage-manifest.json" "file://$DSC" "$DSHA" <<'PY' || fail "the manifest's source"
import json, sys
s = json.load(open(sys.argv[1]))["sources"]
want = {"name": "source", "version": "1.0-1", "file": "trhello_1.0-1.dsc", "url": sys.argv[2],
        "sha256": sys.argv[3], "patches": []}
assert s == [want], s
PY
}

recipe "$TMP/r.cfg"
trl build "$TMP/r.cfg" --cache "$TMP/c1" -o "$TMP/o1" -j2
expect_rc 0
check_out "$TMP/o1"
grep -q 'dpkg-source --no-check --no-copy -x' "$TMP/o1/logs/trhello.log" ||
    fail "the log does not show dpkg-source -x"
ok "built from the .dsc: Debian's patch applied, debian/copyright as the copyright, the manifest names the .dsc (Version 1.0-1, its sha256)"

# --- trillian fetch --to: a mirror of the .dsc and its files; offline from it ------
trl fetch "$TMP/r.cfg" --cache "$TMP/c2" --to "$TMP/mirror"
expect_rc 0
expect_out "3 inputs, 0 failed"
for f in trhello_1.0-1.dsc trhello_1.0.orig.tar.gz trhello_1.0-1.debian.tar.xz; do
    grep -q "^$(sha256sum "$P/$f" | cut -d' ' -f1)  [0-9a-f]*-$f\$" "$TMP/mirror/SHA256SUMS" ||
        fail "the mirror's SHA256SUMS lacks $f: $(cat "$TMP/mirror/SHA256SUMS")"
done
mv "$P" "$TMP/pool-away"
trl build "$TMP/r.cfg" --cache "$TMP/c3" -o "$TMP/o3" -j2 --offline --mirror "$TMP/mirror"
expect_rc 0
mv "$TMP/pool-away" "$P"
check_out "$TMP/o3"
cmp "$TMP/o1/trhello/debs/trhello_1.0-1_amd64.deb" "$TMP/o3/trhello/debs/trhello_1.0-1_amd64.deb" ||
    fail "the .deb built from the mirror differs from the first"
ok "trillian fetch --to brings the .dsc's files too; built offline from that mirror, the same .deb"

# --- bad inputs: refused, nothing in OUT ------------------------------------------
bad() { # NAME EXPECTED-STATUS MESSAGE
    trl build "$TMP/$1.cfg" --cache "$TMP/c-$1" -o "$TMP/o-$1" -j2
    expect_rc "$2"
    expect_out "$3"
    [ ! -e "$TMP/o-$1/trhello" ] || fail "$1: OUT/trhello exists after the failure"
}
recipe "$TMP/notsha.cfg" "not-a-sha256"
bad notsha 2 "notsha.cfg:$(line_of "$TMP/notsha.cfg" source_dsc_sha256): packages.trhello.source_dsc_sha256: 'not-a-sha256' is not a SHA-256"
WRONG=$(sha256sum "$TMP/libc.shlibs" | cut -d' ' -f1)
recipe "$TMP/wrongsha.cfg" "$WRONG"
bad wrongsha 1 "wrongsha.cfg:$(line_of "$TMP/wrongsha.cfg" source_dsc_sha256): packages.trhello.source_dsc_sha256: no verified copy of trhello_1.0-1.dsc (sha256 $WRONG): "
expect_out "file://$DSC has sha256 $DSHA" # after what a mirror (lib.sh's) lacked
recipe "$TMP/both.cfg" "" "source_url = \"file://$TMP/trhello_1.0.orig.tar.gz\";"
bad both 2 "both.cfg:$(line_of "$TMP/both.cfg" source_url): packages.trhello.source_url: source_url and source_dsc exclude each other"

# a listed file whose bytes are not the .dsc's: named, both hashes, not kept
DEB=$P/trhello_1.0-1.debian.tar.xz
GOOD=$(sha256sum "$DEB" | cut -d' ' -f1)
cp "$DEB" "$TMP/debian.tar.xz.good"
echo tampered >>"$DEB"
recipe "$TMP/listed.cfg"
bad listed 1 "listed.cfg:$(line_of "$TMP/listed.cfg" 'source_dsc ='): packages.trhello.source_dsc: trhello_1.0-1.dsc lists trhello_1.0-1.debian.tar.xz: no verified copy of trhello_1.0-1.debian.tar.xz (sha256 $GOOD): "
expect_out "file://$DEB has sha256 $(sha256sum "$DEB" | cut -d' ' -f1)"
! ls "$TMP/c-listed/downloads" | grep -q debian.tar.xz || fail "the tampered file was kept in the cache"
cp "$TMP/debian.tar.xz.good" "$DEB"
trl build "$TMP/listed.cfg" --cache "$TMP/c-listed" -o "$TMP/o-listed" -j2
expect_rc 0
expect_out "1 built, 0 cached"
ok "refused, naming what to fix, with nothing in OUT: a .dsc sha256 that is not one (exit 2) or another file's (exit 1), a listed file with other bytes (exit 1; nothing cached: built once it is right), source_url beside source_dsc (exit 2)"
