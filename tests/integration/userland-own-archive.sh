# The debootstrap userland bootstrapping from the recipe's own apt archive
# (userland.archive, docs/userland.md): an amd64 recipe builds trhello (a
# tiny C program from a tarball made here, built with the host's gcc by the
# `package` kind, Priority required) and trbase (the /dev and /proc that
# Debian's base-files would give, made with dpkg-deb by a command stage),
# puts them in an apt-archive stage with Debian bookworm's libc6,
# libgcc-s1 and gcc-12-base pinned by version and sha256 (as the host's apt
# index has them), signed by a key
# made here, and runs debootstrap's first stage (foreign, minbase, without
# apt) from it. Checks: the build; rootfs.tar holds /debootstrap/ (first
# stage only) and trhello, the same bytes as in its .deb, which runs on the
# root's own libc6; the selection (Priority required and dependencies); the
# base stage's key holds the archive's; the root names no path of the
# build's cache (but file:///trillian-archive, or the archive's url), and a
# second cold build in another cache gives the same rootfs.tar; the archive's default suite ("trillian", no debootstrap
# script) works. Bad inputs: another keyring for the archive's file:// URL
# (and the right one, which builds), an include the archive lacks (both fail
# at run time naming the key, nothing cached), and at plan time a name that
# is not an apt-archive stage and `archive` with mirror, keyring or another
# suite. The three Debian packages (2.8 MB) come from deb.debian.org once,
# then from the shared test cache (TRILLIAN_TEST_CACHE/downloads). About 10 s
# (8 s warm, 12 s with the downloads, at a load of 9 on 2 cores); runs as root or
# not (fakeroot).
#
# The pins are bookworm's as of 2026-12 (apt-cache show on a bookworm host);
# deb.debian.org drops a version when a point release replaces it: then a
# cold first run fails naming the URL, and the pins need the new versions.
. "$TOP/tests/lib.sh"
need debootstrap gcc make dpkg-deb gpg gpgv gpgconf xz tar gzip
[ "$(dpkg --print-architecture 2>/dev/null)" = amd64 ] || skip "needs an amd64 host (the host's gcc builds the package, the root's libc6 runs it)"
[ "$(id -u)" = 0 ] || need fakeroot
EPOCH=1700000000
t0=$SECONDS

# ---- the Debian packages: shared test cache, else deb.debian.org -------------
# the host's apt index (bookworm's, signed) names each one's current version,
# pool directory and sha256: a point release moves the pins with it
pins=$(for p in libc6 libgcc-s1 gcc-12-base; do
    apt-cache show --no-all-versions "$p:amd64" 2>/dev/null | awk -v p="$p" '
        /^Version:/ { v = $2 } /^Filename:/ { f = $2 } /^SHA256:/ { s = $2 }
        END { if (v && f && s) { d = f; sub(/\/[^\/]*$/, "", d); print p, v, d, s } }'
done)
[ "$(echo "$pins" | grep -c .)" -eq 3 ] || skip "apt-cache does not know libc6, libgcc-s1 and gcc-12-base (run apt-get update)"
shared=${TRILLIAN_TEST_CACHE:-$TMP/shared}/downloads
# CACHE/downloads/SHA16-FILE is where fetch keeps a pinned file (fetch.h)
pinned_files() { echo "$pins" | while read -r p v dir sha; do echo "${sha:0:16}-${p}_${v}_amd64.deb"; done; }
seed() { # CACHE: the pinned packages the shared cache has
    mkdir -p "$1/downloads"
    for f in $(pinned_files); do
        [ -f "$shared/$f" ] && cp "$shared/$f" "$1/downloads/"
    done
    return 0
}
keep() { # CACHE: what it downloaded, for later runs
    mkdir -p "$shared"
    for f in $(pinned_files); do
        [ -f "$1/downloads/$f" ] && [ ! -f "$shared/$f" ] && cp "$1/downloads/$f" "$shared/$f.$$" && mv "$shared/$f.$$" "$shared/$f"
    done
    return 0
}
for f in $(pinned_files); do
    [ -f "$shared/$f" ] && continue
    getent hosts deb.debian.org >/dev/null 2>&1 || skip "deb.debian.org does not resolve and $shared lacks $f"
done
debian=$(echo "$pins" | while read -r p v dir sha; do
    printf '{ package = "%s"; version = "%s"; arch = "amd64"; sha256 = "%s";\n  filename = "%s/%s_%s_amd64.deb"; },\n' \
        "$p" "$v" "$sha" "$dir" "$p" "$v"
done)
debian=${debian%,}

# ---- trhello's source, trbase's maker, the keys ---------------------------------
S=$TMP/trhello-1.0
mkdir -p "$S"
printf '#include <stdio.h>\nint main(void) { puts("trhello from the own archive"); return 0; }\n' >"$S/hello.c"
echo 'trhello, a test program of Trillian. Public domain.' >"$S/COPYING"
cat >"$S/Makefile" <<'EOF'
trhello: hello.c
	$(CC) -O2 -o $@ hello.c
install: trhello
	install -d $(DESTDIR)/usr/bin
	install -m 0755 trhello $(DESTDIR)/usr/bin/
EOF
SHA=$(src_tarball trhello-1.0) && [ -n "$SHA" ] || fail "the source tarball"
echo 'libc 6 libc6 (>= 2.36)' >"$TMP/libc.shlibs"
# trbase: base-files' /dev and /proc (debootstrap's first stage makes its
# device nodes in /dev), Priority required
deb_maker "$TMP/mkbase.sh" trbase "the base directories of a test root" "dev proc"
# the archive's key (the recipe's, so that two caches sign alike; made
# before SOURCE_DATE_EPOCH, when it signs) and another one; short GnuPG homes
gh=$(mktemp -d /tmp/trl-own.XXXXXX) || fail mktemp
trap 'for h in "$gh"/*/; do gpgconf --homedir "$h" --kill gpg-agent 2>/dev/null; done; rm -rf "$gh"' EXIT
for k in archive wrong; do
    mkdir -m 700 "$gh/$k"
    GNUPGHOME=$gh/$k gpg --batch --quiet --passphrase '' --faked-system-time 20230101T000000 \
        --quick-gen-key "Trillian $k test key <test@trillian.invalid>" ed25519 sign never 2>/dev/null || fail "gpg: the $k key"
done
GNUPGHOME=$gh/archive gpg --batch --armor --export-secret-keys >"$TMP/archive-key.asc"
GNUPGHOME=$gh/wrong gpg --batch --export >"$TMP/wrong.gpg"

# recipe FILE USERLAND-SETTINGS [ARCHIVE-SETTINGS]: USERLAND-SETTINGS on a
# line of their own (the FILE:LINE of the plan-time errors)
recipe() {
    cat >"$1" <<CFG
name = "own-archive";
arch = "amd64";
source_date_epoch = $EPOCH;
stages = (
  { name = "trbase"; kind = "command"; argv = ["$TMP/mkbase.sh", "\${out}/debs"];
    inputs = ["$TMP/mkbase.sh"]; outputs = ["debs"]; }
);
packages = (
  { kind = "package"; name = "trhello";
    source_url = "file://$TMP/trhello-1.0.tar.gz"; source_sha256 = "$SHA";
    version = "1.0-1"; maintainer = "Trillian Tests <tests@example.org>";
    steps = ( { label = "make"; argv = ["make", "CC=gcc"]; },
              { label = "install"; argv = ["make", "install", "DESTDIR=\${kind:destdir}"]; } );
    shlibs = ["libc.shlibs"];
    debs = ( { name = "trhello"; files = ["usr/bin"]; summary = "says where it comes from";
               priority = "required"; copyright = "\${src:source}/COPYING"; } ); },
  { kind = "apt-archive"; name = "archive"; stages = ["trhello", "trbase"];
    key = "archive-key.asc"; ${3:-}
    debian = ( $debian ); }
);
userland = { kind = "debootstrap";
  $2
  foreign = true; variant = "minbase"; exclude = ["apt"]; };
CFG
}
own='archive = "archive";'
recipe "$TMP/r.cfg" "$own"
objects() { find "$1/objects" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l; }

# ---- the build -------------------------------------------------------------------
seed "$TMP/c1"
t1=$SECONDS
trl build "$TMP/r.cfg" --cache "$TMP/c1" -o "$TMP/o1"
expect_rc 0
keep "$TMP/c1"
d=$TMP/o1/userland
for f in rootfs.tar packages.tsv stage-manifest.json cmdline-extra; do
    [ -f "$d/$f" ] || fail "no userland/$f"
done
grep -q 'debootstrap has no script for suite trillian: using sid' "$TMP/o1/logs/userland-base.log" ||
    fail "the archive's suite trillian did not fall back to sid's script"
grep -q -- '--keyring=.*/trillian-archive-keyring.gpg trillian .* file:///.*/out sid$' "$TMP/o1/logs/userland-base.log" ||
    fail "debootstrap did not run on the archive's output, keyring and suite: $(grep '^\$ debootstrap' "$TMP/o1/logs/userland-base.log")"
ok "build: trhello, trbase, the archive and debootstrap's first stage from it ($((SECONDS - t1)) s)"

tar tvf "$d/rootfs.tar" --numeric-owner >"$TMP/list.txt" || fail "rootfs.tar does not list"
grep -Eq '^-rwxr-xr-x 0/0 .* debootstrap/debootstrap$' "$TMP/list.txt" || fail "no /debootstrap/debootstrap"
for f in functions debpaths required suite-script mirror; do
    grep -q " debootstrap/$f\$" "$TMP/list.txt" || fail "no /debootstrap/$f"
done
[ "$(tar xOf "$d/rootfs.tar" debootstrap/suite)" = trillian ] || fail "/debootstrap/suite is not trillian"
[ -z "$(tar xOf "$d/rootfs.tar" var/lib/dpkg/status)" ] || fail "dpkg's status is not empty: the second stage ran"
[ "$(cat "$d/cmdline-extra")" = "init=/sbin/trillian-firstboot" ] || fail "cmdline-extra: $(cat "$d/cmdline-extra")"
grep -Eq '^-rwxr-xr-x 0/0 .* usr/bin/trhello$' "$TMP/list.txt" || fail "no executable /usr/bin/trhello"
deb=$TMP/o1/trhello/debs/trhello_1.0-1_amd64.deb
cmp -s "$deb" "$TMP/o1/archive/pool/main/t/trhello/trhello_1.0-1_amd64.deb" || fail "the archive's trhello is not the package stage's"
dpkg-deb --fsys-tarfile "$deb" | tar xOf - ./usr/bin/trhello >"$TMP/trhello.deb-bin" || fail "trhello's .deb has no usr/bin/trhello"
tar xOf "$d/rootfs.tar" usr/bin/trhello >"$TMP/trhello.root-bin"
cmp -s "$TMP/trhello.deb-bin" "$TMP/trhello.root-bin" || fail "the root's trhello is not the one in the .deb"
mkdir "$TMP/root"
tar -C "$TMP/root" -xf "$d/rootfs.tar" --exclude='./dev/*' --exclude='dev/*' 2>/dev/null
out=$("$TMP/root/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2" --library-path "$TMP/root/usr/lib/x86_64-linux-gnu" \
    "$TMP/root/usr/bin/trhello") || fail "trhello does not run on the root's libc6"
[ "$out" = "trhello from the own archive" ] || fail "trhello printed: $out"
ok "rootfs.tar: /debootstrap/ of a first stage (suite trillian, empty dpkg status), /usr/bin/trhello the bytes of its .deb, running on the root's libc6"

{
    printf 'package\tversion\tarchitecture\n'
    { echo "$pins" | while read -r p v dir sha; do printf '%s\t%s\tamd64\n' "$p" "$v"; done
      printf 'trbase\t1.0\tall\ntrhello\t1.0-1\tamd64\n'; } | LC_ALL=C sort
} >"$TMP/expected.tsv"
diff -u "$TMP/expected.tsv" "$d/packages.tsv" >&2 || fail "packages.tsv is not the expected selection"
grep -q '"archive": "archive"' "$d/stage-manifest.json" && grep -q '"suite": "trillian"' "$d/stage-manifest.json" ||
    fail "stage-manifest.json does not name the archive and its suite: $(head -5 "$d/stage-manifest.json")"
ok "selection: the required trhello and trbase, trhello's libc6 and theirs (the keyring package and apt left out)"

# the root names no path of this cache: /debootstrap/mirror, deburis and
# the index files' names say file:///trillian-archive
! grep -aqF "$TMP" "$d/rootfs.tar" || fail "rootfs.tar names a path of the build ($TMP): $(tar xOf "$d/rootfs.tar" debootstrap/mirror)"
[ "$(tar xOf "$d/rootfs.tar" debootstrap/mirror)" = file:///trillian-archive ] || fail "/debootstrap/mirror: $(tar xOf "$d/rootfs.tar" debootstrap/mirror)"
grep -q ' var/lib/apt/lists/_trillian-archive_dists_trillian_main_binary-amd64_Packages$' "$TMP/list.txt" ||
    fail "the Packages index is not named after file:///trillian-archive: $(grep lists/ "$TMP/list.txt")"
seed "$TMP/c2"
trl build "$TMP/r.cfg" --cache "$TMP/c2" -o "$TMP/o2"
expect_rc 0
cmp -s "$d/rootfs.tar" "$TMP/o2/userland/rootfs.tar" || fail "rootfs.tar differs between two caches"
ok "the root names file:///trillian-archive, not the cache; another cache gives the same rootfs.tar"
# with the archive's url (a trailing slash, which debootstrap drops), that
trl build "$TMP/r.cfg" --cache "$TMP/c1" -o "$TMP/ou" --set packages.archive.url=https://example.org/trl/apt/
expect_rc 0
[ "$(tar xOf "$TMP/ou/userland/rootfs.tar" debootstrap/mirror)" = https://example.org/trl/apt ] ||
    fail "/debootstrap/mirror with url: $(tar xOf "$TMP/ou/userland/rootfs.tar" debootstrap/mirror)"
tar tf "$TMP/ou/userland/rootfs.tar" | grep -qx 'var/lib/apt/lists/example.org_trl_apt_dists_trillian_main_binary-amd64_Packages' ||
    fail "the Packages index is not named after the url: $(tar tf "$TMP/ou/userland/rootfs.tar" | grep lists/)"
tar xOf "$TMP/ou/userland/rootfs.tar" debootstrap/deburis | grep -q ' https://example.org/trl/apt/pool/main/t/trhello/trhello_1.0-1_amd64.deb$' ||
    fail "deburis does not name the url"
[ "$(tar xOf "$TMP/ou/userland/rootfs.tar" etc/apt/sources.list)" = "deb https://example.org/trl/apt trillian main" ] ||
    fail "sources.list with url: $(tar xOf "$TMP/ou/userland/rootfs.tar" etc/apt/sources.list)"
ok "with the archive's url set, the root names that url (/debootstrap/mirror, deburis, the index files, sources.list)"

# archive_in_root: the archive's tree at /trillian-archive, which the
# root's sources.list names (signed-by the keyring when the root has
# trillian-archive-keyring); refused with a url, which sources.list names
# (in the second cache: the checks below plan against the first's last build)
[ "$(tar xOf "$d/rootfs.tar" etc/apt/sources.list)" = "deb file:///trillian-archive trillian main" ] ||
    fail "sources.list: $(tar xOf "$d/rootfs.tar" etc/apt/sources.list)"
trl build "$TMP/r.cfg" --cache "$TMP/c2" -o "$TMP/oin" --set userland.archive_in_root=true \
    --set 'userland.include=["trillian-archive-keyring"]'
expect_rc 0
tar tf "$TMP/oin/userland/rootfs.tar" >"$TMP/oin.txt"
for f in dists/trillian/InRelease dists/trillian/main/binary-amd64/Packages pool/main/t/trhello/trhello_1.0-1_amd64.deb; do
    grep -qx "trillian-archive/$f" "$TMP/oin.txt" || fail "archive_in_root: no /trillian-archive/$f"
    tar xOf "$TMP/oin/userland/rootfs.tar" "trillian-archive/$f" | cmp -s - "$TMP/oin/archive/$f" || fail "/trillian-archive/$f is not the archive's"
done
[ "$(tar xOf "$TMP/oin/userland/rootfs.tar" etc/apt/sources.list)" = \
  "deb [signed-by=/usr/share/keyrings/trillian-archive-keyring.gpg] file:///trillian-archive trillian main" ] ||
    fail "sources.list with the keyring: $(tar xOf "$TMP/oin/userland/rootfs.tar" etc/apt/sources.list)"
trl build "$TMP/r.cfg" --cache "$TMP/c2" -o "$TMP/oinu" --set userland.archive_in_root=true \
    --set packages.archive.url=https://example.org/trl/apt/
[ "$rc" -ne 0 ] || fail "archive_in_root with an archive url built"
expect_out "userland.archive_in_root: the archive has a url (https://example.org/trl/apt)"
trl plan "$TMP/r.cfg" --cache "$TMP/c2" --set userland.archive_in_root=true --set userland.foreign=false
[ "$rc" -ne 0 ] || fail "archive_in_root without foreign planned"
expect_out "userland.archive_in_root: puts the recipe's own archive into a foreign root"
ok "sources.list names the recorded source; archive_in_root puts the archive at /trillian-archive, the same bytes, signed-by with the keyring package; refused with a url, and without foreign at plan time"

# the base stage's key holds the archive's: another Origin rebuilds it
trl plan "$TMP/r.cfg" --cache "$TMP/c1"
expect_rc 0
grep -Eq '^userland-base +userland/debootstrap-base +[0-9a-f]+ +cached' "$TMP/out.txt" || fail "a second plan does not find userland-base cached"
trl plan "$TMP/r.cfg" --cache "$TMP/c1" --set packages.archive.origin=Other
expect_rc 0
expect_out "dep:archive changed"
grep -Eq '^userland-base +userland/debootstrap-base +[0-9a-f]+ +build +dep:archive changed' "$TMP/out.txt" ||
    { cat "$TMP/out.txt" >&2; fail "a changed archive does not rebuild userland-base"; }
ok "userland-base depends on the archive stage: a changed archive rebuilds it"

# ---- bad inputs at run time: exit 1, nothing cached ----------------------------------
n0=$(objects "$TMP/c1")
# (1) the archive as a plain file:// mirror with another key: a suite
# debootstrap has a script for (sid), as the recipe names it
recipe "$TMP/sid.cfg" "$own" 'suite = "sid";'
sed -i '/^userland = /,$d' "$TMP/sid.cfg"
trl build "$TMP/sid.cfg" --cache "$TMP/c1" -o "$TMP/osid"
expect_rc 0
n0=$(objects "$TMP/c1")
recipe "$TMP/k.cfg" "mirror = \"file://$TMP/osid/archive\"; keyring = \"$TMP/wrong.gpg\"; suite = \"sid\";" 'suite = "sid";'
trl build "$TMP/k.cfg" --cache "$TMP/c1" -o "$TMP/ok"
expect_rc 1
expect_out "userland.keyring: the Release file of sid at file://$TMP/osid/archive is not signed by a key in $TMP/wrong.gpg"
[ ! -e "$TMP/ok/userland/rootfs.tar" ] || fail "a failed stage left rootfs.tar"
[ "$(objects "$TMP/c1")" -eq "$n0" ] || fail "the failed stage was cached"
recipe "$TMP/k.cfg" "mirror = \"file://$TMP/osid/archive\"; keyring = \"$TMP/osid/archive/trillian-archive-keyring.gpg\"; suite = \"sid\";" 'suite = "sid";'
trl build "$TMP/k.cfg" --cache "$TMP/c1" -o "$TMP/ok"
expect_rc 0
ok "another keyring for the archive's file:// URL fails naming userland.keyring, nothing cached; its own keyring builds"

# (2) a package the archive lacks
recipe "$TMP/i.cfg" "$own include = [\"not-in-archive\"];"
n0=$(objects "$TMP/c1")
trl build "$TMP/i.cfg" --cache "$TMP/c1" -o "$TMP/oi"
expect_rc 1
expect_out "E: Couldn't find these debs: not-in-archive"
expect_out "userland.include: the archive stage 'archive' (suite trillian) has no amd64 package for: not-in-archive"
[ ! -e "$TMP/oi/userland/rootfs.tar" ] || fail "a failed stage left rootfs.tar"
[ "$(objects "$TMP/c1")" -eq "$n0" ] || fail "the failed stage was cached"
ok "an include the archive lacks fails with debootstrap's message, naming userland.include; nothing cached"

# ---- plan-time errors: exit 2, FILE:LINE ----------------------------------------------
line=$(grep -n '^  archive = ' "$TMP/r.cfg" | cut -d: -f1)
[ -n "$line" ] || fail "the recipe's archive line"
plan_error() { # USERLAND-SETTINGS ARCHIVE-SETTINGS EXPECTED...
    recipe "$TMP/p.cfg" "$1" "$2"
    shift 2
    trl plan "$TMP/p.cfg" --cache "$TMP/c1"
    expect_rc 2
    for e in "$@"; do expect_out "$e"; done
}
plan_error 'archive = "nope";' '' \
    "p.cfg:$line: userland.archive: the recipe has no stage 'nope'; name one of its apt-archive stages: archive"
plan_error 'archive = "trhello";' '' \
    "p.cfg:$line: userland.archive: the package stage 'trhello' is not an apt-archive stage; name one of its apt-archive stages: archive"
plan_error "$own mirror = \"file://$TMP/osid/archive\";" '' \
    "p.cfg:$line: userland.mirror: userland.archive = \"archive\" gives the mirror (that stage's output, as file://); drop userland.mirror, or drop userland.archive"
plan_error "$own keyring = \"$TMP/wrong.gpg\";" '' \
    "p.cfg:$line: userland.keyring: userland.archive = \"archive\" gives the keyring (that stage's trillian-archive-keyring.gpg); drop userland.keyring, or drop userland.archive"
plan_error "$own suite = \"bookworm\";" '' \
    "p.cfg:$line: userland.suite: 'bookworm' is not the suite of the archive stage 'archive', which has dists/trillian only; drop userland.suite"
plan_error "$own" 'architecture = "arm64";' \
    "p.cfg:$line: userland.archive: the archive stage 'archive' is for arm64 (its architecture), the recipe for amd64"
ok "plan-time errors at FILE:LINE: no such stage, not an apt-archive stage (naming the ones there are), archive with mirror, keyring, another suite or architecture"
ok "all checks in $((SECONDS - t0)) s"
