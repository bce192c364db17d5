# kernel kind "source" on Debian's `linux` source package (debian_version +
# debian_suite), offline: a tiny signed archive served on 127.0.0.1 carries
# a `linux` source package whose orig tarball is the fake tree of
# kernel-patch.sh and whose Debian patches would change the release; a
# series is applied on top, config_only, so it runs in seconds.
#  - the orig tarball is fetched through the signed Sources index, kept in
#    CACHE/downloads/sources/, built without Debian's patches, and with the
#    series; the manifest names the Debian version, the series and each patch
#  - series_urls over HTTP from 127.0.0.1: applied, kept in CACHE/downloads
#  - a version the suite lacks names kernel.debian_version; a wrong keyring
#    names kernel.debian_keyring; neither keeps anything
#  - plan-time errors at FILE:LINE: debian_version without debian_suite,
#    debian_suite without debian_version, two sources
. "$TOP/tests/lib.sh"
need patch make tar python3 apt-get dpkg-source dpkg-scansources gpg gpgv gpgconf xz gzip curl
. "$TOP/tests/fixtures/ports-archive.sh"
F=$TOP/tests/fixtures
P=$F/kernel-patches
C=$TMP/cache

# ---- the archive: linux 6.1.999-1 in suite trixie ----------------------------
ports_gnupg_dirs trl-kdeb
A=$TMP/archive/debian
pool=$A/pool/main/l/linux
mkdir -p "$pool" "$TMP/pkg"
ports_key "$gh/archive" "$TMP/archive-keyring.gpg" "Trillian test kernel archive" || fail "no test key"
ports_key "$gh/wrong" "$TMP/wrong-keyring.gpg" "Trillian wrong key" || fail "no wrong key"
cp -r "$F/kernel-fake-tree" "$TMP/pkg/linux-6.1.999"
tar -C "$TMP/pkg" --sort=name --mtime=@1700000000 --owner=0 --group=0 -cJf \
    "$TMP/pkg/linux_6.1.999.orig.tar.xz" linux-6.1.999
d=$TMP/pkg/linux-6.1.999/debian
mkdir -p "$d/source" "$d/patches"
echo '3.0 (quilt)' >"$d/source/format"
printf 'Source: linux\nSection: kernel\nPriority: optional\nMaintainer: Trillian tests <test@trillian.invalid>\nStandards-Version: 4.7.0\n\nPackage: linux-fake\nArchitecture: all\nDescription: fake\n fake\n' >"$d/control"
printf 'linux (6.1.999-1) trixie; urgency=medium\n\n  * Test.\n\n -- Trillian tests <test@trillian.invalid>  Tue, 14 Nov 2023 22:13:20 +0000\n' >"$d/changelog"
printf '#!/usr/bin/make -f\n%%:\n\tdh $@\n' >"$d/rules"
chmod 755 "$d/rules"
# Debian's own patch: must NOT reach the build (only the orig tarball does)
printf 'Debian.\n--- a/RELEASE\n+++ b/RELEASE\n@@ -1 +1 @@\n-6.1.0-fake\n+6.1.0-debian\n' >"$d/patches/debian.patch"
echo debian.patch >"$d/patches/series"
(cd "$TMP/pkg" && dpkg-source -b linux-6.1.999 >"$TMP/dpkg-source.log" 2>&1) ||
    fail "dpkg-source -b failed: $(cat "$TMP/dpkg-source.log")"
cp "$TMP/pkg"/linux_6.1.999* "$pool/"
mkdir -p "$A/dists/trixie/main/source"
(cd "$A" && dpkg-scansources pool /dev/null 2>/dev/null) >"$A/dists/trixie/main/source/Sources"
grep -q '^Package: linux$' "$A/dists/trixie/main/source/Sources" || fail "no linux in the Sources index"
xz -9 <"$A/dists/trixie/main/source/Sources" >"$A/dists/trixie/main/source/Sources.xz"
gzip -9n <"$A/dists/trixie/main/source/Sources" >"$A/dists/trixie/main/source/Sources.gz"
ports_release "$A" trixie trixie "$gh/archive" || fail "could not sign the Release file"
serve_http "$TMP/archive"
mirror=http://127.0.0.1:$http_port/debian
ORIG_SHA=$(sha256sum "$pool/linux_6.1.999.orig.tar.xz" | cut -d' ' -f1)

recipe() { # file extra-kernel-settings
    cat >"$1" <<CFG
name = "kernel-series-debian";
arch = "amd64";
kernel = { kind = "source"; defconfig = "tinyconfig"; config_only = true;
           $2 };
CFG
}
DEB="debian_version = \"6.1.999-1\"; debian_suite = \"trixie\"; debian_mirror = \"$mirror\";
           debian_keyring = \"$TMP/archive-keyring.gpg\";"
details() { # OUT KEY: the kernel's manifest detail KEY as JSON
    python3 -c '
import json, sys
m = json.load(open(sys.argv[1] + "/manifest.json"))
k = [s for s in m["stages"] if s["name"] == "kernel"][0]
print(json.dumps(k["details"].get(sys.argv[2])))' "$1" "$2"
}

# ---- Debian's orig tarball plus a series ------------------------------------
mkdir -p "$TMP/s1"
cp "$P/0001-release.patch" "$P/0002-foo.patch" "$TMP/s1/"
recipe "$TMP/deb.cfg" "$DEB series = \"s1\";"
trl build "$TMP/deb.cfg" --cache "$C" -o "$TMP/o1"
expect_rc 0
[ "$(cat "$TMP/o1/kernel/release")" = 6.1.0-patched ] ||
    fail "release $(cat "$TMP/o1/kernel/release"): not the orig tarball with the series (6.1.0-debian = Debian's patches applied)"
[ "$(details "$TMP/o1" debian)" = '"linux 6.1.999-1 (trixie)"' ] || fail "manifest debian: $(details "$TMP/o1" debian)"
[ "$(details "$TMP/o1" sha256)" = "\"$ORIG_SHA\"" ] || fail "manifest sha256 is not the orig tarball's"
[ "$(details "$TMP/o1" series)" = '"s1"' ] || fail "manifest series: $(details "$TMP/o1" series)"
details "$TMP/o1" patches | grep -q '"name": "0002-foo.patch", "sha256": "'"$(sha256sum "$P/0002-foo.patch" | cut -d' ' -f1)" ||
    fail "manifest patches: $(details "$TMP/o1" patches)"
[ -s "$C/downloads/sources/linux_6.1.999.orig.tar.xz" ] || fail "the orig tarball is not kept in CACHE/downloads/sources"
grep -q 'GET /debian/dists/trixie/InRelease' "$TMP/http.log" || fail "the signed Release file was not read"
ok "Debian's linux 6.1.999-1 (trixie): orig tarball through the signed Sources index, series on top, Debian's patches left out"

# a second build of the same recipe: a cache hit, nothing fetched
: >"$TMP/http.log"
trl build "$TMP/deb.cfg" --cache "$C" -o "$TMP/o1b"
expect_rc 0
grep -q 'linux_6.1.999' "$TMP/http.log" && fail "a cached build fetched the source again"
ok "rebuilt from the cache without fetching"

# ---- series_urls over HTTP ---------------------------------------------------
mkdir -p "$TMP/archive/patches"
cp "$P/0002-foo.patch" "$TMP/archive/patches/"
S2=$(sha256sum "$P/0002-foo.patch" | cut -d' ' -f1)
cp "$P/0001-release.patch" "$TMP/one.patch"
recipe "$TMP/http.cfg" "$DEB series_urls = ( { url = \"http://127.0.0.1:$http_port/patches/0002-foo.patch\"; sha256 = \"$S2\"; } );
           patches = [ \"one.patch\" ];"
trl build "$TMP/http.cfg" --cache "$C" -o "$TMP/o2"
expect_rc 0
[ "$(details "$TMP/o2" patches | python3 -c 'import json,sys; print(" ".join(p["name"] for p in json.load(sys.stdin)))')" = \
  "${S2:0:16}-0002-foo.patch one.patch" ] || fail "series_urls, then patches: $(details "$TMP/o2" patches)"
[ "$(cat "$TMP/o2/kernel/release")" = 6.1.0-patched ] || fail "the patches list was not applied"
grep -q 'GET /patches/0002-foo.patch' "$TMP/http.log" || fail "the patch was not fetched over HTTP"
ok "series_urls from http://127.0.0.1, then a list of patch files"

# ---- run-time failures: named, nothing kept ----------------------------------
recipe "$TMP/nover.cfg" "$(echo "$DEB" | sed 's/6.1.999-1/6.1.998-1/') series = \"s1\";"
trl build "$TMP/nover.cfg" --cache "$C" -o "$TMP/o3"
expect_rc 1
expect_out "kernel.debian_version: $mirror (trixie) has no source package linux version 6.1.998-1"
ls "$C/downloads/sources/"*6.1.998* >/dev/null 2>&1 && fail "something of the missing version was kept"
ok "a version the suite lacks names kernel.debian_version"

rm -rf "$C/downloads/sources"
recipe "$TMP/badkey.cfg" "$(echo "$DEB" | sed "s#$TMP/archive-keyring.gpg#$TMP/wrong-keyring.gpg#") series = \"s1\";"
trl build "$TMP/badkey.cfg" --cache "$C" -o "$TMP/o4"
expect_rc 1
expect_out "kernel.debian_keyring: the Release file of trixie at $mirror is not signed by a key in $TMP/wrong-keyring.gpg"
ls "$C/downloads/sources/"* >/dev/null 2>&1 && fail "a download from an unverified archive was kept"
ok "a wrong keyring names kernel.debian_keyring and keeps nothing"

# ---- plan-time errors at FILE:LINE -------------------------------------------
recipe "$TMP/e1.cfg" 'debian_version = "6.12.8-1";'
trl plan "$TMP/e1.cfg" --cache "$C"
expect_rc 2
expect_out "e1.cfg:4: kernel.debian_version: needs kernel.debian_suite"
touch "$TMP/x.tar.xz"
recipe "$TMP/e2.cfg" 'tarball = "x.tar.xz"; debian_suite = "trixie";'
trl plan "$TMP/e2.cfg" --cache "$C"
expect_rc 2
expect_out "kernel.debian_suite: only goes with kernel.debian_version"
recipe "$TMP/e3.cfg" 'tarball = "x.tar.xz"; debian_version = "6.12.8-1"; debian_suite = "trixie";'
trl plan "$TMP/e3.cfg" --cache "$C"
expect_rc 2
expect_out "e3.cfg:4: kernel.tarball: has more than one source"
recipe "$TMP/e4.cfg" 'debian_version = "6.12.8-1 x"; debian_suite = "trixie";'
trl plan "$TMP/e4.cfg" --cache "$C"
expect_rc 2
expect_out "kernel.debian_version: '6.12.8-1 x' is not a Debian version"
ok "plan errors: no suite, a suite without a version, two sources, a malformed version"
