# The apt-archive stage (docs/apt-archive.md): a signed apt archive from two
# test-made .debs (amd64 and all, made by a command stage) and one "Debian"
# package pinned by sha256 in a local mirror. Checks the layout, the
# Release and Packages fields (and the Packages entries against
# apt-ftparchive's), the signatures with gpgv against the output keyring,
# the keyring package, the cache's throwaway key (made once, reused, made
# once by two builds at a time), byte-identical archives from two empty
# caches with the same key, and, where apt-get runs, that apt accepts the
# signature and finds and downloads the packages (and refuses another key),
# from file: and over HTTP from `trillian __http-serve` (a boot check's `http`).
. "$TOP/tests/lib.sh"
need dpkg-deb gpg gpgv gpgconf xz python3
. "$TOP/tests/fixtures/apt-archive.sh"

# ---- a "Debian" mirror with one arch:all package -----------------------------
"$TMP/mkdeb.sh" "$TMP/mirror" debian-thing 1.2-3 all "from the mirror" || fail "mkdeb"
dsha=$(sha256sum "$TMP/mirror/debian-thing_1.2-3_all.deb" | cut -d' ' -f1)

recipe() { # FILE [KEY-SETTING]
    cat >"$1" <<CFG
name = "aptarch";
arch = "amd64";
source_date_epoch = 1700000000;
stages = (
  $(debs_stage debs "hello-amd 1.0-1 amd64" "libfoo-data 2.0 all")
);
packages = (
  { name = "archive"; kind = "apt-archive"; stages = ["debs"]; suite = "trixie-trl"; codename = "tbird";
    url = "https://example.org/trillian/apt";
    debian = ( { package = "debian-thing"; version = "1.2-3"; sha256 = "$dsha"; } ); ${2:-} }
);
CFG
}
recipe "$TMP/r.cfg"

t0=$SECONDS
trl build "$TMP/r.cfg" --cache "$TMP/c1" -o "$TMP/o1" --mirror "$TMP/mirror"
expect_rc 0
a=$TMP/o1/archive
d=$a/dists/trixie-trl
for f in Release InRelease Release.gpg main/binary-amd64/Packages main/binary-amd64/Packages.xz; do
    [ -s "$d/$f" ] || fail "no dists/trixie-trl/$f"
done
for f in pool/main/h/hello-amd/hello-amd_1.0-1_amd64.deb pool/main/libf/libfoo-data/libfoo-data_2.0_all.deb \
         pool/main/d/debian-thing/debian-thing_1.2-3_all.deb \
         pool/main/t/trillian-archive-keyring/trillian-archive-keyring_20231114_all.deb \
         trillian-archive-keyring.gpg trillian-archive-keyring.asc stage-manifest.json; do
    [ -s "$a/$f" ] || fail "no $f in the archive"
done
ok "layout: pool/main/{h,libf,d,t}/SOURCE/*.deb, dists/trixie-trl/{Release,InRelease,Release.gpg}, binary-amd64/Packages(.xz), the keyring ($((SECONDS - t0)) s)"

python3 - "$a" <<'PY' || fail "Release and Packages fields"
import hashlib, lzma, os, sys
a = sys.argv[1]
d = os.path.join(a, "dists/trixie-trl")
rel = open(os.path.join(d, "Release")).read()
f = {}
key = None
for line in rel.splitlines():
    if line.startswith(" "):
        f[key].append(line.split())
    else:
        key, _, v = line.partition(":")
        f[key] = v.strip() if v.strip() else []
want = {"Origin": "Trillian", "Label": "Trillian", "Suite": "trixie-trl", "Codename": "tbird",
        "Date": "Tue, 14 Nov 2023 22:13:20 UTC", "Architectures": "amd64", "Components": "main",
        "Description": "Trillian packages for aptarch"}
for k, v in want.items():
    assert f.get(k) == v, (k, f.get(k), v)
for field, algo in (("MD5Sum", hashlib.md5), ("SHA256", hashlib.sha256)):
    names = sorted(n for _, _, n in f[field])
    assert names == ["main/binary-amd64/Packages", "main/binary-amd64/Packages.xz"], names
    for h, size, name in f[field]:
        data = open(os.path.join(d, name), "rb").read()
        assert algo(data).hexdigest() == h and len(data) == int(size), (field, name)
pk = open(os.path.join(d, "main/binary-amd64/Packages"), "rb").read()
assert lzma.decompress(open(os.path.join(d, "main/binary-amd64/Packages.xz"), "rb").read()) == pk
stanzas = [dict(l.split(": ", 1) for l in s.splitlines() if not l.startswith(" "))
           for s in pk.decode().strip().split("\n\n")]
got = [(s["Package"], s["Version"], s["Architecture"]) for s in stanzas]
assert got == [("debian-thing", "1.2-3", "all"), ("hello-amd", "1.0-1", "amd64"),
               ("libfoo-data", "2.0", "all"), ("trillian-archive-keyring", "20231114", "all")], got
for s in stanzas:
    data = open(os.path.join(a, s["Filename"]), "rb").read()
    assert len(data) == int(s["Size"]), s
    assert hashlib.sha256(data).hexdigest() == s["SHA256"], s
    assert hashlib.md5(data).hexdigest() == s["MD5sum"], s
    assert s["Maintainer"] and s["Description"], s
print("%d packages, Release of %d bytes" % (len(stanzas), len(rel)))
PY
ok "Release: Origin, Label, Suite, Codename, Date (SOURCE_DATE_EPOCH, RFC 2822 UTC), Architectures, Components, Description, MD5Sum/SHA256 of the indexes; Packages sorted, each entry's size and hashes its pool file's"

if command -v apt-ftparchive >/dev/null 2>&1; then
    (cd "$a" && apt-ftparchive packages pool 2>/dev/null) >"$TMP/ftp-packages"
    python3 - "$TMP/ftp-packages" "$d/main/binary-amd64/Packages" <<'PY' || fail "Packages differs from apt-ftparchive's"
import sys
def parse(p):
    out = {}
    for s in open(p).read().strip().split("\n\n"):
        f = dict(l.split(": ", 1) for l in s.splitlines() if not l.startswith(" "))
        out[f["Package"]] = {k: f[k] for k in ("Version", "Architecture", "Filename", "Size", "MD5sum", "SHA256", "Maintainer")}
    return out
a, b = parse(sys.argv[1]), parse(sys.argv[2])
assert a == b, (a, b)
PY
    ok "the Packages entries agree with apt-ftparchive's over the same pool"
else
    echo "not checked: apt-ftparchive is not installed"
fi

ring=$a/trillian-archive-keyring.gpg
gpgv --keyring "$ring" "$d/InRelease" 2>"$TMP/gpgv.txt" || { cat "$TMP/gpgv.txt"; fail "InRelease does not verify"; }
gpgv --keyring "$ring" "$d/Release.gpg" "$d/Release" 2>"$TMP/gpgv.txt" || fail "Release.gpg does not verify"
grep -q 'Signature made Tue Nov 14 22:13:20 2023' "$TMP/gpgv.txt" || { cat "$TMP/gpgv.txt"; fail "signature not made at SOURCE_DATE_EPOCH"; }
sed -n '/^-----BEGIN PGP SIGNED MESSAGE-----$/,/^$/d; /^-----BEGIN PGP SIGNATURE-----$/q; p' "$d/InRelease" | head -n -1 >"$TMP/inrel-body"
cmp -s "$TMP/inrel-body" <(head -n "$(wc -l <"$TMP/inrel-body")" "$d/Release") || fail "InRelease's text is not Release"
grep -q '^-----BEGIN PGP PUBLIC KEY BLOCK-----' "$a/trillian-archive-keyring.asc" || fail "the .asc is not an armored public key"
gpg --dearmor <"$a/trillian-archive-keyring.asc" | cmp -s - "$ring" || fail "the .asc and the .gpg keyrings differ"
cp "$d/Release" "$TMP/rel-copy" && echo "X: y" >>"$TMP/rel-copy"
! gpgv --keyring "$ring" "$d/Release.gpg" "$TMP/rel-copy" 2>/dev/null || fail "Release.gpg verifies a changed Release"
ok "InRelease and Release.gpg verify with gpgv against trillian-archive-keyring.gpg (signed at SOURCE_DATE_EPOCH); .asc is the same key"

kd=$a/pool/main/t/trillian-archive-keyring/trillian-archive-keyring_20231114_all.deb
[ "$(dpkg-deb -f "$kd" Architecture)" = all ] || fail "the keyring package is not arch all"
dpkg-deb -c "$kd" >"$TMP/kdeb.txt"
for f in ./usr/share/keyrings/trillian-archive-keyring.gpg ./usr/share/doc/trillian-archive-keyring/copyright \
         ./etc/apt/sources.list.d/trillian-archive.list; do
    grep -q " $f\$" "$TMP/kdeb.txt" || fail "the keyring package lacks $f"
done
grep -v ' root/root ' "$TMP/kdeb.txt" && fail "keyring package files not owned by root"
mkdir "$TMP/kx" && dpkg-deb -x "$kd" "$TMP/kx"
cmp -s "$TMP/kx/usr/share/keyrings/trillian-archive-keyring.gpg" "$ring" || fail "the package's keyring is not the archive's"
[ "$(cat "$TMP/kx/etc/apt/sources.list.d/trillian-archive.list")" = \
  "deb [signed-by=/usr/share/keyrings/trillian-archive-keyring.gpg] https://example.org/trillian/apt trixie-trl main" ] \
    || fail "sources line: $(cat "$TMP/kx/etc/apt/sources.list.d/trillian-archive.list")"
dpkg-deb -I "$kd" conffiles | grep -qx /etc/apt/sources.list.d/trillian-archive.list || fail "the sources list is not a conffile"
ok "trillian-archive-keyring (all): the keyring in /usr/share/keyrings, the copyright, the sources line as a conffile"

# ---- the cache's key: made once, kept, reused ------------------------------------
[ -s "$TMP/c1/keys/apt-archive/secret.asc" ] || fail "no key in CACHE/keys/apt-archive/"
[ "$(stat -c %a "$TMP/c1/keys/apt-archive/secret.asc")" = 600 ] || fail "the cache key is not mode 600"
trl build "$TMP/r.cfg" --cache "$TMP/c1" -o "$TMP/o1b" --mirror "$TMP/mirror" --force archive
expect_rc 0
cmp -s "$ring" "$TMP/o1b/archive/trillian-archive-keyring.gpg" || fail "a rebuild in the same cache used another key"
diff -r "$a" "$TMP/o1b/archive" >/dev/null || fail "a rebuild in the same cache gave other bytes"
# two builds at once in one empty cache: one key
recipe "$TMP/r2.cfg" 'origin = "Other";'
"$TRILLIAN" build "$TMP/r.cfg" --cache "$TMP/cc" -o "$TMP/occ1" --mirror "$TMP/mirror" >"$TMP/cc1.txt" 2>&1 &
p1=$!
"$TRILLIAN" build "$TMP/r2.cfg" --cache "$TMP/cc" -o "$TMP/occ2" --mirror "$TMP/mirror" >"$TMP/cc2.txt" 2>&1
r2=$?
wait $p1 || { cat "$TMP/cc1.txt"; fail "the first of two concurrent builds failed"; }
[ "$r2" = 0 ] || { cat "$TMP/cc2.txt"; fail "the second of two concurrent builds failed"; }
cmp -s "$TMP/occ1/archive/trillian-archive-keyring.gpg" "$TMP/occ2/archive/trillian-archive-keyring.gpg" \
    || fail "two concurrent builds in one cache made two keys"
cmp -s "$ring" "$TMP/occ1/archive/trillian-archive-keyring.gpg" && fail "two caches share a throwaway key"
ok "the throwaway key: made once per cache (mode 600), reused by a rebuild (same bytes), one key for two builds at once"

# ---- reproducible: two empty caches, the same key --------------------------------
cp "$TMP/c1/keys/apt-archive/secret.asc" "$TMP/key.asc"
recipe "$TMP/rk.cfg" 'key = "key.asc";'
t1=$SECONDS
trl build "$TMP/rk.cfg" --cache "$TMP/ka" -o "$TMP/oka" --mirror "$TMP/mirror"
expect_rc 0
ta=$((SECONDS - t1))
trl build "$TMP/rk.cfg" --cache "$TMP/kb" -o "$TMP/okb" --mirror "$TMP/mirror"
expect_rc 0
[ ! -e "$TMP/ka/keys/apt-archive/secret.asc" ] || fail "a recipe key still made a cache key"
diff -r "$TMP/oka/archive" "$TMP/okb/archive" || fail "two clean builds with one key differ"
n=$(find "$TMP/oka/archive" -type f | wc -l)
cmp -s "$TMP/oka/archive/dists/trixie-trl/InRelease" "$d/InRelease" || fail "the recipe's key (the cache's, copied) signed differently"
ok "reproducible: two clean builds in two empty caches with one key give the same $n files, signatures included (archive stage $ta s)"

# ---- a file:// mirror --------------------------------------------------------------
mkdir -p "$TMP/fm/pool/main/d/debian-thing"
cp "$TMP/mirror/debian-thing_1.2-3_all.deb" "$TMP/fm/pool/main/d/debian-thing/"
trl build "$TMP/rk.cfg" --cache "$TMP/kf" -o "$TMP/okf" --set "packages.archive.debian_mirror=file://$TMP/fm"
expect_rc 0
diff -r "$TMP/oka/archive" "$TMP/okf/archive" >/dev/null || fail "a file:// mirror gave another archive"
ok "the Debian package from a file:// mirror at MIRROR/pool/main/d/debian-thing/: the same archive"

# apt_over_http: apt-get update and install --download-only through `trillian
# __http-serve`, one server per connection as a boot check's `http` runs it
# (bootcheck.md), here behind a loopback socket in a private network
# namespace (nothing listens on the host): apt's HTTP method, its pipelining.
apt_over_http() {
    command -v ip >/dev/null 2>&1 && command -v python3 >/dev/null 2>&1 &&
        unshare -rn true 2>/dev/null || { echo "not checked: apt over HTTP (no unshare -rn)"; return; }
    rm -rf "$A/var/lib/apt/lists" "$A/var/cache/apt/archives"
    mkdir -p "$A/var/lib/apt/lists/partial" "$A/var/cache/apt/archives/partial"
    aptopts "$ring"
    echo "deb [signed-by=$ring] http://127.0.0.1:8080/ trixie-trl main" >"$A/etc/apt/sources.list"
    cat >"$TMP/bridge.py" <<'PY'
import socket, subprocess, sys
s = socket.socket()
s.bind(("127.0.0.1", 8080))
s.listen(8)
open(sys.argv[1], "w").close()  # listening
while True:
    c, _ = s.accept()
    subprocess.Popen(sys.argv[2:], stdin=c, stdout=c, stderr=c)
    c.close()
PY
    cat >"$TMP/apt-http.sh" <<'SH'
ip link set lo up || exit 1
python3 "$TMP/bridge.py" "$TMP/listening" "$TRILLIAN" __http-serve --log "$TMP/apt-http.log" "$a" & b=$!
for _ in $(seq 100); do [ -e "$TMP/listening" ] && break; sleep 0.1; done
apt-get "$@" -o APT::Sandbox::User=root update &&
    apt-get "$@" -o APT::Sandbox::User=root install -y --download-only hello-amd libfoo-data \
        debian-thing trillian-archive-keyring
rc=$?
kill $b
exit $rc
SH
    local t=$SECONDS
    TMP=$TMP a=$a unshare -rn bash "$TMP/apt-http.sh" "${O[@]}" >"$TMP/apt.txt" 2>&1 ||
        { cat "$TMP/apt.txt" "$TMP/apt-http.log"; fail "apt-get over trillian __http-serve failed"; }
    grep -q 'Download complete' "$TMP/apt.txt" || { cat "$TMP/apt.txt"; fail "apt did not download over HTTP"; }
    grep -q '^W:\|^E:' "$TMP/apt.txt" && { cat "$TMP/apt.txt"; fail "apt warned over HTTP"; }
    grep -qx 'GET /dists/trixie-trl/InRelease 200 [0-9]*' "$TMP/apt-http.log" &&
        [ "$(grep -c '^GET /pool/.*\.deb 200 ' "$TMP/apt-http.log")" = 4 ] ||
        { cat "$TMP/apt-http.log"; fail "the server's log lacks InRelease or the 4 .debs"; }
    ok "apt-get update and install --download-only over HTTP from trillian __http-serve: $(wc -l <"$TMP/apt-http.log") requests, $((SECONDS - t)) s"
}

# ---- apt accepts it --------------------------------------------------------------
if command -v apt-get >/dev/null 2>&1; then
    A=$TMP/aptroot
    mkdir -p "$A/etc/apt/sources.list.d" "$A/etc/apt/preferences.d" "$A/etc/apt/apt.conf.d" \
        "$A/var/lib/apt/lists/partial" "$A/var/cache/apt/archives/partial" "$A/var/lib/dpkg"
    : >"$A/var/lib/dpkg/status"
    aptopts() { # KEYRING
        echo "deb [signed-by=$1] file:$a trixie-trl main" >"$A/etc/apt/sources.list"
        O=(-o "Dir=$A" -o "Dir::State::status=$A/var/lib/dpkg/status" -o "Dir::Etc::SourceList=$A/etc/apt/sources.list"
           -o "Dir::Etc::SourceParts=$A/etc/apt/sources.list.d" -o "Dir::Etc::Parts=$A/etc/apt/apt.conf.d"
           -o "Dir::Etc::Preferences=$A/etc/apt/preferences" -o "Dir::Etc::PreferencesParts=$A/etc/apt/preferences.d"
           -o "Dir::Etc::trusted=$A/etc/apt/trusted.gpg" -o "Dir::Etc::trustedparts=$A/etc/apt/trusted.gpg.d"
           -o APT::Architecture=amd64 -o APT::Architectures::=amd64 -o Debug::NoLocking=1
           -o "APT::Sandbox::User=$(id -un)")
    }
    aptopts "$ring"
    if apt-get "${O[@]}" update >"$TMP/apt.txt" 2>&1; then
        grep -q 'NO_PUBKEY\|not signed\|^W:\|^E:' "$TMP/apt.txt" && { cat "$TMP/apt.txt"; fail "apt warned about the archive"; }
        apt-cache "${O[@]}" policy hello-amd >"$TMP/policy.txt"
        grep -q 'Candidate: 1.0-1' "$TMP/policy.txt" || { cat "$TMP/policy.txt"; fail "apt does not see hello-amd"; }
        apt-get "${O[@]}" install -y --download-only hello-amd libfoo-data debian-thing trillian-archive-keyring \
            >"$TMP/apt.txt" 2>&1 || { cat "$TMP/apt.txt"; fail "apt-get install --download-only failed"; }
        grep -q 'Download complete' "$TMP/apt.txt" || { cat "$TMP/apt.txt"; fail "apt did not download"; }
        # another key: apt must refuse the archive
        rm -rf "$A/var/lib/apt/lists"/*
        mkdir -p "$A/var/lib/apt/lists/partial"
        aptopts "$TMP/occ1/archive/trillian-archive-keyring.gpg"
        apt-get "${O[@]}" update >"$TMP/apt.txt" 2>&1
        grep -q 'NO_PUBKEY\|is not signed' "$TMP/apt.txt" || { cat "$TMP/apt.txt"; fail "apt accepted the archive with another key"; }
        ok "apt-get (unprivileged options, Dir=...) accepts the signature, finds and downloads the 4 packages; refuses another keyring"
        # a Packages index that is not the one the signed Release names (a
        # field changed, its .xz made again from it): apt refuses it
        rm -rf "$TMP/tampered" "$A/var/lib/apt/lists"/*
        mkdir -p "$A/var/lib/apt/lists/partial"
        cp -a "$a" "$TMP/tampered"
        pk=$(find "$TMP/tampered/dists/trixie-trl/main" -name Packages | head -n 1)
        [ -f "$pk" ] || fail "no Packages index in the archive"
        sed -i 's/^Version: 1\.0-1$/Version: 1.0-9/' "$pk"
        cmp -s "$pk" "$(find "$a/dists/trixie-trl/main" -name Packages | head -n 1)" && fail "the Packages index was not changed"
        for c in xz gz; do [ -e "$pk.$c" ] && { rm "$pk.$c"; "${c/gz/gzip}" -9 -k "$pk"; }; done
        a_good=$a a=$TMP/tampered
        aptopts "$ring"
        apt-get "${O[@]}" update >"$TMP/apt.txt" 2>&1 && { cat "$TMP/apt.txt"; fail "apt-get update accepted a changed Packages index"; }
        grep -qE 'Hash Sum mismatch|unexpected size' "$TMP/apt.txt" || { cat "$TMP/apt.txt"; fail "apt did not refuse the changed index by its hash"; }
        a=$a_good
        aptopts "$ring"
        ok "a Packages index changed after signing: apt-get update refuses it (hash against the signed Release)"
        apt_over_http
    else
        cat "$TMP/apt.txt"
        echo "not checked: apt-get update cannot run here against a private Dir (see above)"
    fi
else
    echo "not checked: apt-get is not installed"
fi

# ---- trillian publish carries the archive ---------------------------------------
trl publish "$TMP/o1" --to "$TMP/site" --cache "$TMP/c1"
expect_rc 0
s=$TMP/site/builds/aptarch/archive
gpgv --keyring "$s/trillian-archive-keyring.gpg" "$s/dists/trixie-trl/InRelease" 2>/dev/null || fail "the published InRelease does not verify"
diff -r "$a" "$s" >/dev/null || fail "the published archive is not the build's"
grep -q '  builds/aptarch/archive/dists/trixie-trl/InRelease$' "$TMP/site/SHA256SUMS" || fail "SHA256SUMS lacks the archive"
grep -qF '<pre>deb [signed-by=/usr/share/keyrings/trillian-archive-keyring.gpg] https://example.org/trillian/apt trixie-trl main</pre>' \
    "$TMP/site/index.html" || fail "index.html lacks the archive's deb line"
grep -qF 'href="builds/aptarch/archive/trillian-archive-keyring.gpg"' "$TMP/site/index.html" || fail "index.html does not link the keyring"
ok "trillian publish: builds/RECIPE/archive/ as built (in SHA256SUMS), index.html with its deb line and keyring"
