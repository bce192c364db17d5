# Debian binary packages from the generic package build (packages kind
# "package", pkg_deb.c): a tiny C package written here (libtrtest.so.1 and a
# program trtest linking it), tarred and pinned by sha256 as a file:// URL,
# built for amd64 with the host's gcc and split into two binary packages,
# libtrtest1 and trtest. Checked with dpkg-deb and Python's tarfile: the
# control fields, Installed-Size (recomputed here the way dpkg-gencontrol
# does), md5sums, conffiles, the postinst's mode, root ownership, every
# mtime = source_date_epoch, the computed Depends (trtest on libtrtest1 with
# >= the version and on libc6 through the shlibs line the recipe gives; no
# self-dependency of the library), DEBIAN/shlibs and OUT/trtest/debs/shlibs,
# the manifest's debs (size, sha256); two clean builds in two empty caches
# (so two scratch directories) give byte-identical .debs, though the
# library's assert() names its source by the scratch path (mapped to ".":
# pkg_build.h); lintian reports only the tags
# tolerated below. Bad inputs, each leaving no OUT/trtest: a bad package
# name and a bad version (exit 2 at plan time), a file no package takes, a
# file two packages take, a DT_NEEDED nothing provides, a package without a
# copyright file (exit 1). A binary package's own version (an epoch, as
# util-linux's bsdutils) beside the others', and a bad one refused. About
# 10 s.
. "$TOP/tests/lib.sh"
need gcc make dpkg-deb tar gzip python3
[ "$(dpkg --print-architecture 2>/dev/null)" = amd64 ] || skip "needs an amd64 host (the host's gcc builds the package)"
EPOCH=1700000000

# --- the source package ---------------------------------------------------------
S=$TMP/trtest-1.0
mkdir -p "$S"
cat >"$S/trtest.c" <<'EOF'
#include <assert.h>
#include <string.h>
#include "trtest.h"
int trtest_answer(const char *q) { assert(q); return (int)strlen(q) + 30; }
EOF
echo 'int trtest_answer(const char *q);' >"$S/trtest.h"
cat >"$S/main.c" <<'EOF'
#include <stdio.h>
#include "trtest.h"
int main(void) { printf("%d\n", trtest_answer("the question")); return 0; }
EOF
printf 'trtest, a test package of Trillian.\nCopyright: none (public domain).\n' >"$S/COPYING"
echo 'answer = 42' >"$S/trtest.conf"
# The library's source by its absolute path, as an out-of-tree build
# (autotools, CMake) names it: its assert() then carries the path in
# __FILE__. The Makefile's own CFLAGS and the step's plain `make` (CC from
# the environment) are the common case of a hand-written Makefile.
cat >"$S/Makefile" <<'EOF'
CFLAGS = -O2
all: libtrtest.so.1 trtest
libtrtest.so.1: trtest.c trtest.h
	$(CC) $(CFLAGS) -fPIC -shared -Wl,-soname,libtrtest.so.1 -o $@ $(CURDIR)/trtest.c
trtest: main.c libtrtest.so.1
	$(CC) $(CFLAGS) -o $@ main.c libtrtest.so.1
install: all
	install -d $(DESTDIR)/usr/lib $(DESTDIR)/usr/bin $(DESTDIR)/etc
	install -m 0644 -s libtrtest.so.1 $(DESTDIR)/usr/lib/
	install -m 0755 -s trtest $(DESTDIR)/usr/bin/
	install -m 0644 trtest.conf $(DESTDIR)/etc/
EOF
(cd "$TMP" && tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -cf - trtest-1.0 |
    gzip -n >trtest-1.0.tar.gz)
SHA=$(sha256sum "$TMP/trtest-1.0.tar.gz" | cut -d' ' -f1)
echo 'libc 6 libc6 (>= 2.36)' >"$TMP/libc.shlibs"
printf '#!/bin/sh\nset -e\nif [ "$1" = configure ]; then\n    mkdir -p /var/lib/trtest\nfi\n' >"$TMP/postinst"

# recipe FILE [NAME VERSION LIBFILES BINFILES SHLIBS LIBCOPYRIGHT]
recipe() {
    local name=${2:-trtest} ver=${3:-1.0-1} libfiles=${4:-'"usr/lib/libtrtest.so.*"'}
    local binfiles=${5:-'"usr/bin", "etc/trtest.conf"'} shlibs=${6-'shlibs = ["libc.shlibs"];'}
    local libcopy=${7-'copyright = "${src:source}/COPYING";'}
    local bintrig=${8-'triggers = ["interest-noawait trtest-cache"];'}
    cat >"$1" <<CFG
name = "pkg-deb";
arch = "amd64";
source_date_epoch = $EPOCH;
packages = (
  { kind = "package"; name = "trtest";
    source_url = "file://$TMP/trtest-1.0.tar.gz";
    source_sha256 = "$SHA";
    version = "$ver";
    maintainer = "Trillian Tests <tests@example.org>";
    steps = ( { label = "make"; argv = ["make"]; },
              { label = "install"; argv = ["make", "install", "DESTDIR=\${kind:destdir}"]; } );
    $shlibs
    debs = ( { name = "libtrtest1"; files = [$libfiles]; section = "libs";
               priority = "optional"; shlibs_field = "pre_depends";
               summary = "library of the trtest test program";
               description = "The shared library the trtest program links.\n\nIt counts.";
               $libcopy },
             { name = "$name"; files = [$binfiles]; section = "utils";
               priority = "optional"; summary = "prints the answer";
               description = "A test program of Trillian.";
               postinst = "postinst"; copyright = "\${src:source}/COPYING";
               $bintrig } ); } );
CFG
}

recipe "$TMP/r.cfg"
trl build "$TMP/r.cfg" --cache "$TMP/c1" -o "$TMP/o1" -j2
expect_rc 0
D=$TMP/o1/trtest/debs
LIB=$D/libtrtest1_1.0-1_amd64.deb BIN=$D/trtest_1.0-1_amd64.deb
[ -f "$LIB" ] && [ -f "$BIN" ] || { ls -lR "$TMP/o1" >&2; fail "OUT/trtest/debs lacks the two .debs"; }
field() { dpkg-deb --field "$1" "$2"; }
for f in "Package libtrtest1" "Version 1.0-1" "Architecture amd64" "Section libs" \
         "Priority optional" "Maintainer Trillian Tests <tests@example.org>" \
         "Pre-Depends libc6 (>= 2.36)"; do
    [ "$(field "$LIB" "${f%% *}")" = "${f#* }" ] || fail "libtrtest1's ${f%% *} is '$(field "$LIB" "${f%% *}")', not '${f#* }'"
done
[ -z "$(field "$LIB" Depends)" ] || fail "libtrtest1 (shlibs_field pre_depends) has Depends: $(field "$LIB" Depends)"
[ "$(field "$BIN" Depends)" = "libc6 (>= 2.36), libtrtest1 (>= 1.0-1)" ] ||
    fail "trtest's Depends is '$(field "$BIN" Depends)'"
dpkg-deb -I "$BIN" | grep -q '^ Description: prints the answer$' || fail "trtest's Description"
dpkg-deb -I "$LIB" | grep -q '^  \.$' || fail "libtrtest1's long description lacks its ' .' line"
ok "fields; Depends from DT_NEEDED: trtest on libtrtest1 (>= 1.0-1) and libc6 by the recipe's shlibs, libtrtest1 on libc6 only"

# the rest by Python: the control archive and the data tar
for deb in "$LIB" "$BIN"; do
    x=$TMP/x/$(basename "$deb" .deb)
    mkdir -p "$x"
    dpkg-deb -e "$deb" "$x/DEBIAN"
    dpkg-deb --fsys-tarfile "$deb" >"$x/data.tar"
    dpkg-deb -x "$deb" "$x/root"
    python3 - "$x" "$EPOCH" "$(field "$deb" Installed-Size)" <<'PY' || fail "$(basename "$deb"): see above"
import hashlib, os, sys, tarfile
x, epoch, isize = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
t = tarfile.open(os.path.join(x, "data.tar"))
members = t.getmembers()
names = [m.name for m in members]
bad = [m.name for m in members if (m.uid, m.gid, m.uname, m.gname) != (0, 0, "root", "root")]
assert not bad, f"not root-owned: {bad}"
bad = [m.name for m in members if m.mtime != epoch]
assert not bad, f"mtime not {epoch}: {bad}"
assert names == sorted(names, key=lambda n: n.rstrip("/").split("/")), f"not sorted: {names}"
# Installed-Size as dpkg-gencontrol: files and symlinks ceil(size/1024),
# other objects 1; DEBIAN/ as dh_gencontrol sees it (no control, md5sums)
kib = sum((m.size + 1023) // 1024 if m.isfile() or m.issym() else 1 for m in members)
deb = os.path.join(x, "DEBIAN")
kib += 1 + sum((os.path.getsize(os.path.join(deb, f)) + 1023) // 1024
               for f in os.listdir(deb) if f not in ("control", "md5sums"))
assert kib == isize, f"Installed-Size {isize}, computed {kib}"
sums = open(os.path.join(deb, "md5sums")).read().splitlines()
want = [f"{hashlib.md5(t.extractfile(m).read()).hexdigest()}  {m.name[2:]}"
        for m in members if m.isfile()]
assert sums == sorted(want, key=lambda l: l[34:]), f"md5sums {sums} != {want}"
PY
done
x=$TMP/x/trtest_1.0-1_amd64
[ "$(cat "$x/DEBIAN/conffiles")" = /etc/trtest.conf ] || fail "trtest's conffiles: $(cat "$x/DEBIAN/conffiles")"
[ "$(stat -c %a "$x/DEBIAN/postinst")" = 755 ] && cmp -s "$x/DEBIAN/postinst" "$TMP/postinst" ||
    fail "trtest's postinst is not the recipe's, mode 0755"
[ ! -e "$x/DEBIAN/shlibs" ] || fail "trtest ships no library but has DEBIAN/shlibs"
[ "$(cat "$x/DEBIAN/triggers")" = "interest-noawait trtest-cache" ] ||
    fail "trtest's DEBIAN/triggers is not its recipe's one line: $(cat "$x/DEBIAN/triggers")"
x=$TMP/x/libtrtest1_1.0-1_amd64
[ "$(cat "$x/DEBIAN/shlibs")" = "libtrtest 1 libtrtest1 (>= 1.0-1)" ] || fail "libtrtest1's DEBIAN/shlibs"
[ "$(cat "$x/DEBIAN/triggers")" = "activate-noawait ldconfig" ] || fail "libtrtest1's triggers are not the ldconfig activation alone"
[ "$(cat "$D/shlibs")" = "libtrtest 1 libtrtest1 (>= 1.0-1)" ] || fail "OUT/trtest/debs/shlibs: $(cat "$D/shlibs")"
[ "$(LD_LIBRARY_PATH=$TMP/x/libtrtest1_1.0-1_amd64/root/usr/lib "$TMP/x/trtest_1.0-1_amd64/root/usr/bin/trtest")" = 42 ] ||
    fail "the packaged trtest does not run with the packaged library"
python3 - "$TMP/o1/trtest/stage-manifest.json" "$D" <<'PY' || fail "the manifest's debs"
import hashlib, json, os, sys
debs = json.load(open(sys.argv[1]))["debs"]
assert [d["package"] for d in debs] == ["libtrtest1", "trtest"], debs
for d in debs:
    p = os.path.join(sys.argv[2], d["file"])
    assert d["version"] == "1.0-1" and d["architecture"] == "amd64", d
    assert d["size"] == os.path.getsize(p), d
    assert d["sha256"] == hashlib.sha256(open(p, "rb").read()).hexdigest(), d
PY
ok "Installed-Size, sorted md5sums, root-owned, mtimes $EPOCH, conffiles, postinst 0755, shlibs and the ldconfig trigger, a recipe's trigger, the manifest's debs"

# --- reproducible: a second clean build in another empty cache -------------------
# Each build compiles in its own scratch directory (CACHE/tmp/KEY.PID/work):
# the compiler's -ffile-prefix-map (pkg_build.h) maps it to ".", so the
# library's assert names ./source/trtest-1.0/trtest.c in both.
trl build "$TMP/r.cfg" --cache "$TMP/c2" -o "$TMP/o2" -j1
expect_rc 0
for f in "$LIB" "$BIN" "$D/shlibs"; do
    cmp "$f" "$TMP/o2/trtest/debs/$(basename "$f")" || fail "$(basename "$f") differs between two clean builds"
done
lib=$TMP/x/libtrtest1_1.0-1_amd64/root/usr/lib/libtrtest.so.1
grep -aq "$TMP/c1" "$lib" && fail "libtrtest.so.1 holds the build's scratch path ($(grep -ao "$TMP/c1[^[:cntrl:]]*" "$lib" | head -n 1))"
grep -aq '\./source/trtest-1\.0/trtest\.c' "$lib" || fail "libtrtest.so.1 lacks its assert's file name ./source/trtest-1.0/trtest.c"
ok "two clean builds in two empty caches (two scratch paths): byte-identical .debs; the assert's __FILE__ is ./source/trtest-1.0/trtest.c"

# --- lintian ---------------------------------------------------------------------
# Tolerated, each because:
#   no-changelog: there is no Debian source package, so no changelog.Debian.gz;
#   no-manual-page: a test program;
#   no-symbols-control-file: Trillian writes shlibs, not symbols (as asked);
#   running with root privileges: the test may run as root.
command -v lintian >/dev/null 2>&1 || fail "lintian is not installed (tools/install-deps tests installs it)"
{
    lintian --no-tag-display-limit "$LIB" "$BIN" >"$TMP/lintian.txt" 2>&1
    grep -v -e ' no-changelog ' -e ' no-manual-page ' -e ' no-symbols-control-file ' \
        -e 'running with root privileges' "$TMP/lintian.txt" | grep -E '^[EWIX]:' &&
        fail "lintian reports tags beyond the tolerated ones (above)"
    ok "lintian: only the tolerated tags ($(grep -cE '^[EWIX]:' "$TMP/lintian.txt") of them)"
}

# --- bad inputs: refused, nothing in OUT -------------------------------------------
bad() { # NAME EXPECTED-STATUS MESSAGE
    trl build "$TMP/$1.cfg" --cache "$TMP/c1" -o "$TMP/o-$1" -j2
    expect_rc "$2"
    expect_out "$3"
    [ ! -e "$TMP/o-$1/trtest" ] || fail "$1: OUT/trtest exists after the failure"
}
recipe "$TMP/name.cfg" Trtest
bad name 2 "package name 'Trtest' must start with a lower-case letter or a digit"
recipe "$TMP/version.cfg" trtest a1.0-1
bad version 2 "version 'a1.0-1': the upstream version must start with a digit"
recipe "$TMP/unclaimed.cfg" trtest 1.0-1 '"usr/lib/libtrtest.so.*"' '"usr/bin"'
bad unclaimed 1 "/etc/trtest.conf is in no binary package"
recipe "$TMP/twice.cfg" trtest 1.0-1 '"usr/lib/libtrtest.so.*", "usr/bin/trtest"'
bad twice 1 "/usr/bin/trtest is taken by two binary packages, libtrtest1 and trtest"
recipe "$TMP/unresolved.cfg" trtest 1.0-1 '"usr/lib/libtrtest.so.*"' '"usr/bin", "etc/trtest.conf"' ''
bad unresolved 1 "/usr/lib/libtrtest.so.1 (package libtrtest1) needs libc.so.6 (DT_NEEDED), which no package of this build and no shlibs file provides"
recipe "$TMP/copyright.cfg" trtest 1.0-1 '"usr/lib/libtrtest.so.*"' '"usr/bin", "etc/trtest.conf"' \
    'shlibs = ["libc.shlibs"];' ''
bad copyright 1 "libtrtest1 has no /usr/share/doc/libtrtest1/copyright"
recipe "$TMP/trigger.cfg" trtest 1.0-1 '"usr/lib/libtrtest.so.*"' '"usr/bin", "etc/trtest.conf"' \
    'shlibs = ["libc.shlibs"];' 'copyright = "${src:source}/COPYING";' 'triggers = ["wants ldconfig"];'
bad trigger 1 "trtest: trigger 'wants ldconfig' is not 'DIRECTIVE NAME'"
recipe "$TMP/shlibsfield.cfg" trtest 1.0-1 '"usr/lib/libtrtest.so.*"' '"usr/bin", "etc/trtest.conf"' \
    'shlibs = ["libc.shlibs"];' 'copyright = "${src:source}/COPYING";' 'shlibs_field = "recommends";'
bad shlibsfield 2 "trtest: shlibs_field 'recommends': the field the libraries' dependencies go into"
recipe "$TMP/baddir.cfg" trtest 1.0-1 '"usr/lib/libtrtest.so.*"' '"usr/bin", "etc/trtest.conf"' \
    'shlibs = ["libc.shlibs"];' 'copyright = "${src:source}/COPYING";' 'dirs = ["var/../etc 0755"];'
bad baddir 1 "dirs: 'var/../etc 0755' is not PATH or PATH MODE"
expect_out "packages.trtest.debs: dirs: 'var/../etc 0755'" # named at its debs entry (FILE:LINE)
ok "refused, naming what to fix, with nothing in OUT: a bad name or version (exit 2), a file in no package, a file in two, an unresolved DT_NEEDED, no copyright file, a bad dirs entry (exit 1)"

# --- dirs: empty directories with their modes, as base-files ships /tmp ---------------
recipe "$TMP/dirs.cfg" trtest 1.0-1 '"usr/lib/libtrtest.so.*"' '"usr/bin", "etc/trtest.conf"' \
    'shlibs = ["libc.shlibs"];' 'copyright = "${src:source}/COPYING";' \
    'dirs = ["var/lib/trtest", "var/spool/trtest 1777", "root 0700"];'
trl build "$TMP/dirs.cfg" --cache "$TMP/c1" -o "$TMP/o-dirs" -j2
expect_rc 0
dpkg-deb -c "$TMP/o-dirs/trtest/debs/trtest_1.0-1_amd64.deb" >"$TMP/dirs.txt" || fail "dpkg-deb -c"
grep -Eq '^drwxr-xr-x root/root .* \./var/lib/trtest/$' "$TMP/dirs.txt" &&
    grep -Eq '^drwxrwxrwt root/root .* \./var/spool/trtest/$' "$TMP/dirs.txt" &&
    grep -Eq '^drwx------ root/root .* \./root/$' "$TMP/dirs.txt" || { cat "$TMP/dirs.txt" >&2; fail "dirs: not shipped with their modes"; }
ok "dirs: empty directories in the package, 0755 or the mode given (1777, 0700)"

# --- a binary package's own version, as util-linux's bsdutils has an epoch ----------
recipe "$TMP/ownver.cfg" trtest 1.0-1 '"usr/lib/libtrtest.so.*"' '"usr/bin", "etc/trtest.conf"' \
    'shlibs = ["libc.shlibs"];' 'copyright = "${src:source}/COPYING";' 'version = "1:1.0-2";'
trl build "$TMP/ownver.cfg" --cache "$TMP/c1" -o "$TMP/o-ownver" -j2
expect_rc 0
V=$TMP/o-ownver/trtest/debs
[ "$(field "$V/trtest_1.0-2_amd64.deb" Version)" = 1:1.0-2 ] &&
    [ "$(field "$V/libtrtest1_1.0-1_amd64.deb" Version)" = 1.0-1 ] || { ls "$V" >&2; fail "a row's version: not trtest 1:1.0-2 (file trtest_1.0-2) beside libtrtest1 1.0-1"; }
[ "$(field "$V/trtest_1.0-2_amd64.deb" Depends)" = "libc6 (>= 2.36), libtrtest1 (>= 1.0-1)" ] ||
    fail "trtest 1:1.0-2's Depends: $(field "$V/trtest_1.0-2_amd64.deb" Depends)"
python3 -c 'import json, sys; d = {x["package"]: x for x in json.load(open(sys.argv[1]))["debs"]}; assert (d["trtest"]["version"], d["trtest"]["file"], d["libtrtest1"]["version"]) == ("1:1.0-2", "trtest_1.0-2_amd64.deb", "1.0-1"), d' \
    "$TMP/o-ownver/trtest/stage-manifest.json" || fail "the manifest's debs: not trtest's own version"
recipe "$TMP/badownver.cfg" trtest 1.0-1 '"usr/lib/libtrtest.so.*"' '"usr/bin", "etc/trtest.conf"' \
    'shlibs = ["libc.shlibs"];' 'copyright = "${src:source}/COPYING";' 'version = "x1";'
bad badownver 2 "trtest: version 'x1': the upstream version must start with a digit"
ok "a row's own version (1:1.0-2, epoch kept, file name without it) beside the packages' (1.0-1); a bad one refused at plan time"

# --- an Architecture: all package beside them, Recommends and Suggests ------------
# trtest.conf in trtest-data (all, as Debian's data and script packages:
# ncurses-base's terminfo), which trtest recommends
all_recipe() { # FILE TRTEST-ROW-EXTRA DATA-ROW-EXTRA
    recipe "$1" trtest 1.0-1 '"usr/lib/libtrtest.so.*"' '"usr/bin"' \
        'shlibs = ["libc.shlibs"];' 'copyright = "${src:source}/COPYING";' "$2"
    sed -i 's|^\( *.*\) } ); } );$|\1 },\
             { name = "trtest-data"; files = ["etc"]; summary = "the answer, as data";\
               copyright = "${src:source}/COPYING"; '"$3"' } ); } );|' "$1"
    grep -q 'name = "trtest-data"' "$1" || fail "all_recipe: the data row was not added"
}
all_recipe "$TMP/all.cfg" 'recommends = "trtest-data"; suggests = "trtest-doc";' 'architecture = "all";'
trl build "$TMP/all.cfg" --cache "$TMP/c1" -o "$TMP/o-all" -j2
expect_rc 0
A=$TMP/o-all/trtest/debs
[ -f "$A/trtest-data_1.0-1_all.deb" ] || { ls "$A" >&2; fail "no trtest-data_1.0-1_all.deb"; }
[ "$(field "$A/trtest-data_1.0-1_all.deb" Architecture)" = all ] || fail "trtest-data is not Architecture: all"
dpkg-deb -c "$A/trtest-data_1.0-1_all.deb" | grep -q ' \./etc/trtest\.conf$' || fail "trtest-data lacks /etc/trtest.conf"
[ "$(field "$A/trtest_1.0-1_amd64.deb" Recommends)" = trtest-data ] &&
    [ "$(field "$A/trtest_1.0-1_amd64.deb" Suggests)" = trtest-doc ] ||
    fail "trtest's Recommends/Suggests: $(dpkg-deb --field "$A/trtest_1.0-1_amd64.deb" Recommends Suggests)"
dpkg-deb -I "$A/trtest_1.0-1_amd64.deb" control | grep -A2 '^Depends:' | head -n 3 | paste -sd'|' |
    grep -q '^Depends: .*|Recommends: trtest-data|Suggests: trtest-doc$' || fail "Recommends and Suggests are not after Depends"
python3 -c 'import json, sys; d = {x["package"]: x for x in json.load(open(sys.argv[1]))["debs"]}; assert (d["trtest-data"]["architecture"], d["trtest-data"]["file"], d["trtest"]["architecture"]) == ("all", "trtest-data_1.0-1_all.deb", "amd64"), d' \
    "$TMP/o-all/trtest/stage-manifest.json" || fail "the manifest's debs: trtest-data is not all"
ok "an Architecture: all package (trtest-data_1.0-1_all.deb) beside amd64 ones; Recommends and Suggests after Depends"
all_recipe "$TMP/allelf.cfg" 'architecture = "all";' ''
bad allelf 1 "trtest is Architecture: all, but /usr/bin/trtest is an ELF object"
all_recipe "$TMP/allbad.cfg" 'architecture = "i386";' ''
bad allbad 2 "trtest: architecture 'i386': a binary package is the recipe's architecture (leave it unset) or \"all\""
ok "refused: an Architecture: all package holding an ELF program (exit 1), another architecture (exit 2)"
