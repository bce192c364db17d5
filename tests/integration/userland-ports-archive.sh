# The Debian-ports path of the debootstrap stage, offline: debian-ports
# (where ia64 lives) is not reachable from the build hosts, so this test
# makes a small signed ia64 archive (tests/fixtures/ports-archive.sh: real
# .debs, Packages(.gz/.xz), Release with hashes, InRelease and Release.gpg
# from a throwaway key), serves it on 127.0.0.1, and builds
# tests/fixtures/ports-ia64.cfg (arch ia64, foreign first stage, suite
# unstable) through trillian. Then the failures: a wrong keyring, a mirror
# that does not answer, a suite the mirror lacks, a package not built for
# ia64, a mirror without ia64.
. "$TOP/tests/lib.sh"
need debootstrap dpkg-deb dpkg-scanpackages gpg gpgv gpgconf python3 wget tar xz gzip
[ "$(id -u)" = 0 ] || need fakeroot
. "$TOP/tests/fixtures/ports-archive.sh"
recipe=$TOP/tests/fixtures/ports-ia64.cfg
t0=$SECONDS

# ---- the archive and its server ----------------------------------------------
arch=$TMP/archive
mkdir -p "$arch"
# gpg-agent sockets must fit in a sockaddr_un: a short GNUPGHOME
ports_gnupg_dirs trl-ports
ports_archive "$arch" "$gh/archive" || fail "could not make the test archive"
ports_key "$gh/wrong" "$TMP/wrong-keyring.gpg" "Trillian wrong key" || fail "could not make the wrong key"
key=$arch/archive-keyring.gpg
pk=$arch/debian-ports/dists/unstable/main/binary-ia64/Packages
for f in InRelease Release Release.gpg main/binary-ia64/Packages.xz main/binary-ia64/Packages.gz; do
    [ -s "$arch/debian-ports/dists/unstable/$f" ] || fail "archive lacks dists/unstable/$f"
done
gpgv --keyring "$key" "$arch/debian-ports/dists/unstable/InRelease" 2>/dev/null \
    || fail "InRelease does not verify with the archive's key"
! gpgv --keyring "$TMP/wrong-keyring.gpg" "$arch/debian-ports/dists/unstable/InRelease" 2>/dev/null \
    || fail "InRelease verifies with the wrong key"
ok "archive: $(grep -c '^Package:' "$pk") ia64 packages, signed InRelease and Release.gpg ($((SECONDS - t0)) s)"

# A static HTTP server on 127.0.0.1 and a free port, started and stopped here.
serve_http "$arch"
port=$http_port
mirror=http://127.0.0.1:$port/debian-ports
wget -q -O /dev/null "$mirror/dists/unstable/InRelease" || fail "the HTTP server does not serve the archive"
# a port nothing listens on: bound, then closed
closed=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')

build() { # out-dir cache-dir --set...: a build of the fixture against the archive
    local out=$1 cache=$2
    shift 2
    trl build "$recipe" --cache "$cache" -o "$out" --set "userland.mirror=$mirror" \
        --set "userland.keyring=$key" "$@"
}

# ---- the first stage -------------------------------------------------------------
t1=$SECONDS
build "$TMP/out" "$TMP/cache"
expect_rc 0
d=$TMP/out/userland
for f in rootfs.tar packages.tsv stage-manifest.json cmdline-extra; do
    [ -f "$d/$f" ] || fail "no userland/$f"
done
ok "trillian build of the ia64 ports recipe succeeds ($((SECONDS - t1)) s)"

tar tvf "$d/rootfs.tar" --numeric-owner >"$TMP/list.txt" || fail "rootfs.tar does not list"
awk '$2 != "0/0"' "$TMP/list.txt" >"$TMP/notroot.txt"
[ ! -s "$TMP/notroot.txt" ] || fail "entries not owned by root: $(head -3 "$TMP/notroot.txt")"
grep -Eq '^-rwxr-xr-x 0/0 .* debootstrap/debootstrap$' "$TMP/list.txt" || fail "no executable /debootstrap/debootstrap"
for f in functions debpaths required base arch suite-script; do
    grep -q " debootstrap/$f\$" "$TMP/list.txt" || fail "no /debootstrap/$f"
done
[ "$(tar xOf "$d/rootfs.tar" debootstrap/arch)" = ia64 ] || fail "/debootstrap/arch is not ia64"
grep -Eq '^l.* sbin -> usr/sbin$' "$TMP/list.txt" || fail "sbin is not merged into usr/sbin"
grep -Eq '^-rwxr-xr-x 0/0 .* usr/sbin/trillian-firstboot$' "$TMP/list.txt" \
    || fail "/sbin/trillian-firstboot is not installed executable (usr/sbin through the merged /sbin)"
[ "$(cat "$d/cmdline-extra")" = "init=/sbin/trillian-firstboot" ] || fail "cmdline-extra: $(cat "$d/cmdline-extra")"
grep -Eq '^d.* 0/0 .* (proc|dev)/$' "$TMP/list.txt" || fail "no /proc or /dev"
grep -Eq '^c.* 0/0 +1,3 .* dev/null$' "$TMP/list.txt" || fail "no dev/null device node"
ok "rootfs.tar: /debootstrap/{debootstrap,functions,debpaths,...} for ia64, merged /usr, executable /sbin/trillian-firstboot, everything root's"

# What debootstrap should select, from the archive's own Packages file:
# Priority: required, minus the excluded e2fsprogs, plus apt (minbase's
# base) and the included ia64-hello, each with its dependencies.
pkgver() { awk -v p="$1" '$1 == "Package:" { n = $2 } $1 == "Version:" && n == p { print $2 }' "$pk"; }
required=$(awk '$1 == "Package:" { n = $2 } $1 == "Priority:" && $2 == "required" { print n }' "$pk" | sort)
echo "$required" | grep -qx e2fsprogs || fail "fixture: e2fsprogs is not required in the archive"
expected=$( (echo "$required" | grep -vx e2fsprogs; echo apt; echo libapt-pkg6.0t64; echo ia64-hello; echo libia64-hello1) | sort)
{
    echo "package	version	architecture"
    for p in $expected; do printf '%s\t%s\tia64\n' "$p" "$(pkgver "$p")"; done
} >"$TMP/expected.tsv"
diff -u "$TMP/expected.tsv" "$d/packages.tsv" >&2 || fail "packages.tsv is not the expected selection"
python3 - "$d/stage-manifest.json" "$d/packages.tsv" <<'EOF' || fail "stage-manifest.json does not match packages.tsv"
import json, sys
m = json.load(open(sys.argv[1]))
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[2])][1:]
assert m["foreign"] is True and m["suite"] == "unstable", m
got = [[p["name"], p["version"], p["arch"]] for p in m["packages"]]
assert got == rows, (got, rows)
EOF
grep -q '"arch": "ia64"' "$TMP/out/manifest.json" || fail "OUT/manifest.json lacks the package details"
ok "packages.tsv and stage-manifest.json: $(echo $expected | wc -w) packages, versions from the archive, arch ia64"

# every selected package's .deb is in the root, listed in /debootstrap/debpaths
tar xOf "$d/rootfs.tar" debootstrap/debpaths >"$TMP/debpaths"
for p in $expected; do
    deb=$(awk -v p="$p" '$1 == p { sub("^/", "", $2); print $2 }' "$TMP/debpaths")
    [ -n "$deb" ] || fail "/debootstrap/debpaths lacks $p"
    grep -q " $deb\$" "$TMP/list.txt" || fail "$deb is not in rootfs.tar"
done
[ "$(wc -l <"$TMP/debpaths")" -eq "$(echo $expected | wc -w)" ] || fail "debpaths lists other packages: $(cat "$TMP/debpaths")"
# a real ia64 .deb, with the maintainer script the second stage will run
deb=$(awk '$1 == "base-passwd" { sub("^/", "", $2); print $2 }' "$TMP/debpaths")
tar xOf "$d/rootfs.tar" "$deb" >"$TMP/bp.deb"
[ "$(dpkg-deb -f "$TMP/bp.deb" Architecture)" = ia64 ] || fail "base-passwd's .deb is not for ia64"
dpkg-deb -I "$TMP/bp.deb" postinst | grep -q 'base-passwd 3.6.5 configured' || fail "base-passwd's postinst is not in its .deb"
# the first stage unpacked the required packages only
tar xOf "$d/rootfs.tar" usr/lib/os-release | grep -qx VERSION_CODENAME=sid || fail "base-files not unpacked"
grep -q ' usr/share/doc/ia64-hello/' "$TMP/list.txt" && fail "ia64-hello unpacked by the first stage"
ok "/debootstrap/debpaths names each package's .deb in the root (ia64 .debs with their postinst); only required ones unpacked"

grep -q ' usr/share/doc/e2fsprogs/\| e2fsprogs_' "$TMP/list.txt" && fail "excluded e2fsprogs is in the root"
grep -q 'vim-tiny\|amd64-only' "$d/packages.tsv" && fail "packages nobody asked for were selected"
ok "include: ia64-hello and its dependency libia64-hello1 selected; exclude: e2fsprogs left out"

# the same inputs, another cache: the same bytes; the same cache: cached
t1=$SECONDS
build "$TMP/out2" "$TMP/cache2"
expect_rc 0
cmp -s "$d/rootfs.tar" "$TMP/out2/userland/rootfs.tar" || fail "rootfs.tar differs between two builds"
build "$TMP/out3" "$TMP/cache"
expect_rc 0
expect_out "2 cached"
ok "reproducible: a second build in a fresh cache gives the same rootfs.tar; a rebuild is cached ($((SECONDS - t1)) s)"

# As root, the same build without root (fakeroot records the owners and
# device nodes) must give the same bytes.
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null 2>&1 && command -v fakeroot >/dev/null 2>&1; then
    nr=$TMP/nonroot
    mkdir -p "$nr"
    chown 65534:65534 "$nr"
    chmod 755 "$TMP"
    t1=$SECONDS
    setpriv --reuid=65534 --regid=65534 --clear-groups env HOME="$nr" \
        "$TRILLIAN" build "$recipe" --cache "$nr/cache" -o "$nr/out" --set "userland.mirror=$mirror" \
        --set "userland.keyring=$key" >"$TMP/out.txt" 2>&1
    rc=$?
    expect_rc 0
    cmp -s "$d/rootfs.tar" "$nr/out/userland/rootfs.tar" || fail "rootfs.tar differs between root and fakeroot builds"
    ok "without root (fakeroot): the same rootfs.tar ($((SECONDS - t1)) s)"
else
    echo "not checked: the build without root (needs root, setpriv and fakeroot)"
fi

# The same archive as a file: mirror (a local copy of ports)
build "$TMP/file" "$TMP/filecache" --set "userland.mirror=file://$arch/debian-ports"
expect_rc 0
cmp -s "$d/packages.tsv" "$TMP/file/userland/packages.tsv" || fail "a file: mirror selected other packages"
ok "the same archive as a file:// mirror gives the same packages"

# ---- failures --------------------------------------------------------------------
objects() { find "$1/objects" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l; }
n0=$(objects "$TMP/cache")
fresh=$TMP/badkey-cache
build "$TMP/badkey" "$fresh" --set "userland.keyring=$TMP/wrong-keyring.gpg"
expect_rc 1
expect_out "userland.keyring: the Release file of unstable at $mirror is not signed by a key in $TMP/wrong-keyring.gpg"
[ ! -e "$TMP/badkey/userland/rootfs.tar" ] || fail "a failed stage left rootfs.tar"
[ "$(objects "$fresh")" -eq 0 ] || fail "the failed stage was cached"
! ls "$fresh/downloads/debootstrap" 2>/dev/null | grep -q '\.deb$' || fail "packages of an unverified archive were cached"
build "$TMP/badkey" "$TMP/cache" --set "userland.keyring=$TMP/wrong-keyring.gpg"
expect_rc 1
[ "$(objects "$TMP/cache")" -eq "$n0" ] || fail "the failed stage added a cache entry"
ok "a wrong keyring fails with exit 1 naming userland.keyring; nothing cached, no package downloaded"

trl build "$recipe" --cache "$TMP/cache" -o "$TMP/closed" --set "userland.mirror=http://127.0.0.1:$closed/debian-ports" \
    --set "userland.keyring=$key"
expect_rc 1
expect_out "userland.mirror: http://127.0.0.1:$closed/debian-ports does not answer"
expect_out "(connection refused)"
ok "a mirror that does not answer (127.0.0.1:$closed) fails naming userland.mirror"

build "$TMP/nosuite" "$TMP/cache" --set userland.suite=bookworm
expect_rc 1
expect_out "userland.suite: $mirror has no suite 'bookworm'"
build "$TMP/nosuite" "$TMP/cache" --set userland.suite=no-such-suite
expect_rc 1
expect_out "userland.suite: debootstrap has no script for suite 'no-such-suite'"
ok "a suite the mirror lacks (bookworm) and one debootstrap does not know fail naming userland.suite"

build "$TMP/nosuite" "$TMP/cache" --set "userland.mirror=file://$arch/debian-ports" --set userland.suite=bookworm
expect_rc 1
expect_out "userland.suite: file://$arch/debian-ports has no suite 'bookworm'"
build "$TMP/nomirror" "$TMP/cache" --set "userland.mirror=file://$arch/no-such-dir"
expect_rc 1
expect_out "userland.mirror: file://$arch/no-such-dir does not answer or has no Debian archive there (no such directory)"
ok "file: mirrors: a missing suite names userland.suite, a missing directory userland.mirror"

grep -q '^Package: amd64-only$' "$arch/debian-ports/dists/unstable/main/binary-amd64/Packages" \
    || fail "fixture: amd64-only is not in the amd64 Packages"
build "$TMP/noinc" "$TMP/cache" --set 'userland.include=["ia64-hello", "amd64-only"]'
expect_rc 1
expect_out "userland.include: $mirror (unstable) has no ia64 package for: amd64-only"
[ ! -e "$TMP/noinc/userland/rootfs.tar" ] || fail "a failed stage left rootfs.tar"
ok "an include that exists only for amd64 fails naming userland.include and the package"

# The same archive without ia64 (an ordinary Debian mirror, or ports after
# an architecture was dropped): the Release file has no binary-ia64 entry.
na=$arch/noia64
mkdir -p "$na/dists/unstable/main"
ln -s "$arch/debian-ports/pool" "$na/pool"
cp -r "$arch/debian-ports/dists/unstable/main/binary-amd64" "$na/dists/unstable/main/"
ports_release "$na" unstable sid "$gh/archive" || fail "could not sign the amd64-only archive"
trl build "$recipe" --cache "$TMP/cache" -o "$TMP/noia64" --set "userland.mirror=http://127.0.0.1:$port/noia64" \
    --set "userland.keyring=$key"
expect_rc 1
expect_out "userland.mirror: http://127.0.0.1:$port/noia64 unstable has no ia64 packages"
ok "a mirror without ia64 fails naming userland.mirror"

[ "$(objects "$TMP/cache")" -eq "$n0" ] || fail "failed builds added cache entries"

# A snapshot (snapshot.debian.org/archive/debian-ports/DATE/): signed back
# then by a key that has expired since, as the ports keys of the ia64 years
# have (they are in debian-ports-archive-keyring-removed.gpg). debootstrap
# accepts a good signature by an expired key, so such a mirror builds.
sn=$arch/snapshot
mkdir -p "$sn/dists/unstable"
ln -s "$arch/debian-ports/pool" "$sn/pool"
cp -r "$arch/debian-ports/dists/unstable/main" "$sn/dists/unstable/"
ports_key "$gh/old" "$TMP/old-keyring.gpg" "Trillian expired key (2024)" 2025-02-01 \
    --faked-system-time 20240105T000000 || fail "could not make the expired key"
ports_release "$sn" unstable sid "$gh/old" --faked-system-time 20240601T000000 2>/dev/null \
    || fail "could not sign the snapshot"
gpgv --status-fd 1 --keyring "$TMP/old-keyring.gpg" "$sn/dists/unstable/InRelease" 2>/dev/null | grep -q EXPKEYSIG \
    || fail "fixture: the snapshot's key has not expired"
trl build "$recipe" --cache "$TMP/cache" -o "$TMP/snapshot" --set "userland.mirror=http://127.0.0.1:$port/snapshot" \
    --set "userland.keyring=$TMP/old-keyring.gpg"
expect_rc 0
cut -f1,2 "$TMP/snapshot/userland/packages.tsv" | cmp -s - <(cut -f1,2 "$d/packages.tsv") \
    || fail "the snapshot build selected other packages"
ok "a snapshot mirror signed by a since-expired key builds with that key as userland.keyring"
ok "all checks in $((SECONDS - t0)) s"
