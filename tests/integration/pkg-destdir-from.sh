# Packages of another stage's output (packages kind "package" with
# destdir_from), as recipes/ia64-packages.cfg makes libc6.1, libc-bin,
# libc6.1-dev and libgcc-s1 from the glibc and gcc stages: no source, no
# compile. Two `command` stages give fake outputs laid out as those stages'
# are (a "C library" sysroot/ compiled here with the host's gcc: libtrc.so.6.1
# and libtrm.so.6.1 in lib/, a program, headers with a kernel header among
# them, a static library, crt1.o, gconv-like modules needing a helper without
# a SONAME, locale data; and a runtime/lib/libtrgcc_s.so.1), split into
# libtrc6.1, libtrc-bin, libtrc6.1-dev and libtrgcc-s1. Checks the split and
# not_installed, the recipe's `install` file (a conffile), strip (as
# dh_strip: libraries and programs without symbols or debug info, the static
# library without debug info, crt1.o untouched), `executables` (libtrc 0755,
# libtrm 0644), the produced shlibs with shlibs_version (libtrc 6.1 libtrc6.1
# (>= 2.43); none for the helper without a SONAME), Depends resolved against
# it within the stage (libtrc-bin) and from another stage (libtrgcc-s1,
# shlibs_from), lintian with the tolerated tags. Bad inputs, each naming the
# recipe's FILE:LINE: a files glob that takes nothing, a file two packages
# take (both named), a not_installed glob that takes nothing, a files glob
# whose files not_installed all leaves out (it narrows the packages' globs:
# "usr/include" without "usr/include/linux"), an executables
# glob that takes nothing, an install row over a built file, a directory the
# stage does not make (exit 1); an unknown stage and a source with
# destdir_from (exit 2). About 10 s.
. "$TOP/tests/lib.sh"
need gcc ar dpkg-deb readelf strip python3
[ "$(dpkg --print-architecture 2>/dev/null)" = amd64 ] || skip "needs an amd64 host (the host's gcc builds the fake outputs)"
EPOCH=1700000000

# --- the fake stage outputs -------------------------------------------------------
F=$TMP/fake/sysroot G=$TMP/fakegcc/runtime/lib B=$TMP/b
mkdir -p "$F/lib" "$F/sbin" "$F/usr/bin" "$F/usr/lib/gconv" "$F/usr/include/linux" "$F/etc" \
    "$F/usr/share/i18n/locales" "$G" "$B"
cat >"$B/trc.c" <<'EOF'
#include <stdlib.h>
int trc_add(int a, int b) { return a + b + (getenv("TRC") != NULL); }
EOF
cat >"$B/trm.c" <<'EOF'
#include <stdlib.h>
int trc_add(int a, int b);
int trm_twice(int a) { return trc_add(a, a) + (getenv("TRM") != NULL); }
EOF
cat >"$B/help.c" <<'EOF'
#include <stdlib.h>
int help_me(void) { return getenv("HELP") ? 1 : 7; }
EOF
cat >"$B/mod.c" <<'EOF'
#include <stdlib.h>
int help_me(void);
int gconv(int a) { return a + help_me() + (getenv("GCONV") != NULL); }
EOF
cat >"$B/prog.c" <<'EOF'
#include <stdio.h>
int trm_twice(int a);
int main(void) { printf("%d\n", trm_twice(21)); return 0; }
EOF
cat >"$B/crt1.c" <<'EOF'
int trc_crt_marker = 1;
EOF
cat >"$B/gcc_s.c" <<'EOF'
#include <string.h>
int trc_add(int a, int b);
int gcc_s_unwind(const char *s) { return trc_add((int)strlen(s), 1); }
EOF
cc() { gcc -g -O1 "$@" || fail "gcc $*"; }
cc -shared -fPIC -Wl,-soname,libtrc.so.6.1 -o "$F/lib/libtrc.so.6.1" "$B/trc.c"
cc -shared -fPIC -Wl,-soname,libtrm.so.6.1 -o "$F/lib/libtrm.so.6.1" "$B/trm.c" "$F/lib/libtrc.so.6.1"
cc -shared -fPIC -o "$F/usr/lib/gconv/libHELP.so" "$B/help.c"   # no SONAME, as gconv's helpers
cc -shared -fPIC -o "$F/usr/lib/gconv/MOD.so" "$B/mod.c" -L"$F/usr/lib/gconv" -lHELP
cc -o "$F/usr/bin/trgetconf" "$B/prog.c" "$F/lib/libtrm.so.6.1" "$F/lib/libtrc.so.6.1"
cc -static -o "$F/sbin/trconfig" "$B/crt1.c" -x c - <<'EOF' # static, as ldconfig
int main(void) { return 0; }
EOF
cc -c -o "$B/trc.o" "$B/trc.c"
ar rcD "$F/usr/lib/libtrc.a" "$B/trc.o"
cc -c -o "$F/usr/lib/crt1.o" "$B/crt1.c"
ln -s ../../lib/libtrc.so.6.1 "$F/usr/lib/libtrc.so"
echo 'int trc_add(int a, int b);' >"$F/usr/include/trc.h"
echo '#define KERNEL_THING 1' >"$F/usr/include/linux/kern.h"
echo 'sunrpc 100000 portmap' >"$F/etc/rpc"
echo 'LC_CTYPE' >"$F/usr/share/i18n/locales/C"
cc -shared -fPIC -Wl,-soname,libtrgcc_s.so.1 -o "$G/libtrgcc_s.so.1" "$B/gcc_s.c" "$F/lib/libtrc.so.6.1"
chmod -R a-w "$TMP/fake" "$TMP/fakegcc" # as the cache keeps a stage's output
printf 'A test C library of Trillian.\nPublic domain.\n' >"$TMP/copyright"
printf '# the test library'"'"'s directory\n/usr/lib/trc\n' >"$TMP/trc.conf"
echo 'libc 6 libc6 (>= 2.36)' >"$TMP/libc.shlibs"

# recipe FILE [BIN-FILES] [NOT-INSTALLED] [DEV-EXEC] [INSTALL-TO] [FROM] [EXTRA]
recipe() {
    local binfiles=${2:-'"sbin", "usr/bin"'}
    local ni=${3:-'"etc/rpc", "usr/share/i18n", "usr/include/linux"'}
    local devexec=${4:-} to=${5:-etc/ld.so.conf.d/trc.conf} from=${6:-fakelibc/sysroot}
    local extra=${7:-}
    cat >"$1" <<CFG
name = "pkg-destdir-from";
arch = "amd64";
source_date_epoch = $EPOCH;
stages = (
  { name = "fakelibc"; kind = "command"; argv = ["cp", "-a", "$TMP/fake/.", "\${out}"];
    inputs = ["$TMP/fake"]; outputs = ["sysroot/lib/libtrc.so.6.1"]; },
  { name = "fakegcc"; kind = "command"; argv = ["cp", "-a", "$TMP/fakegcc/.", "\${out}"];
    inputs = ["$TMP/fakegcc"]; outputs = ["runtime/lib/libtrgcc_s.so.1"]; }
);
packages = (
  { kind = "package"; name = "libc-debs";
    destdir_from = "$from";
    $extra
    version = "2.43-0trillian1";
    shlibs_version = "2.43";
    maintainer = "Trillian Tests <tests@example.org>";
    shlibs = ["libc.shlibs"];
    strip = true;
    install = ( { from = "trc.conf"; to = "$to"; } );
    not_installed = [$ni];
    debs = (
      { name = "libtrc6.1"; section = "libs"; priority = "optional"; multi_arch = "same";
        files = ["lib/*.so.*", "usr/lib/gconv", "etc/ld.so.conf.d"];
        executables = ["lib/libtrc.so.6.1"];
        summary = "test C library: shared libraries";
        description = "The shared libraries of the test C library.";
        copyright = "copyright"; },
      { name = "libtrc-bin"; section = "libs"; priority = "required"; multi_arch = "foreign";
        files = [$binfiles];
        depends = "libtrc6.1 (= 2.43-0trillian1)";
        summary = "test C library: programs";
        description = "The programs of the test C library.";
        copyright = "copyright"; },
      { name = "libtrc6.1-dev"; section = "libdevel"; priority = "optional";
        multi_arch = "same";
        files = ["usr/include", "usr/lib/*.o", "usr/lib/*.a", "usr/lib/*.so"];
        $devexec
        depends = "libtrc6.1 (= 2.43-0trillian1)";
        provides = "libtrc-dev";
        summary = "test C library: development files";
        description = "Headers, static library and start files of the test C library.";
        copyright = "copyright"; }
    ); },
  { kind = "package"; name = "libgcc-debs";
    destdir_from = "fakegcc/runtime";
    version = "16.2.0-0trillian1";
    maintainer = "Trillian Tests <tests@example.org>";
    shlibs = ["libc.shlibs"];
    shlibs_from = ["libc-debs"];
    strip = true;
    debs = (
      { name = "libtrgcc-s1"; section = "libs"; priority = "optional"; multi_arch = "same";
        files = ["lib"];
        summary = "test GCC support library";
        description = "The shared runtime of the test compiler.";
        copyright = "copyright"; }
    ); }
);
CFG
}

recipe "$TMP/r.cfg"
trl build "$TMP/r.cfg" --cache "$TMP/c" -o "$TMP/o" -j1
expect_rc 0
D=$TMP/o/libc-debs/debs
LIBC=$D/libtrc6.1_2.43-0trillian1_amd64.deb BIN=$D/libtrc-bin_2.43-0trillian1_amd64.deb
DEV=$D/libtrc6.1-dev_2.43-0trillian1_amd64.deb
GCC=$TMP/o/libgcc-debs/debs/libtrgcc-s1_16.2.0-0trillian1_amd64.deb
for f in "$LIBC" "$BIN" "$DEV" "$GCC"; do [ -f "$f" ] || { ls -lR "$TMP/o" >&2; fail "no $(basename "$f")"; }; done
[ "$(ls "$D" | grep -c '\.deb$')" = 3 ] || fail "libc-debs made $(ls "$D") (3 .debs expected)"

# --- the split ----------------------------------------------------------------------
files() { dpkg-deb --fsys-tarfile "$1" | tar -t | grep -v '/$' | grep -v '^\./usr/share/doc/' | sort | tr '\n' ' '; }
[ "$(files "$LIBC")" = "./etc/ld.so.conf.d/trc.conf ./lib/libtrc.so.6.1 ./lib/libtrm.so.6.1 ./usr/lib/gconv/MOD.so ./usr/lib/gconv/libHELP.so " ] ||
    fail "libtrc6.1 holds: $(files "$LIBC")"
[ "$(files "$BIN")" = "./sbin/trconfig ./usr/bin/trgetconf " ] || fail "libtrc-bin holds: $(files "$BIN")"
[ "$(files "$DEV")" = "./usr/include/trc.h ./usr/lib/crt1.o ./usr/lib/libtrc.a ./usr/lib/libtrc.so " ] ||
    fail "libtrc6.1-dev holds: $(files "$DEV")"
[ "$(files "$GCC")" = "./lib/libtrgcc_s.so.1 " ] || fail "libtrgcc-s1 holds: $(files "$GCC")"
for d in "$LIBC" "$BIN" "$DEV"; do
    dpkg-deb -c "$d" | grep -E 'etc/rpc|i18n|linux/kern\.h' && fail "$(basename "$d") has a not_installed file"
done
# glibc installs ../../lib/libtrc.so.6.1; across top-level directories dh_link
# (policy 10.5) makes it absolute
dpkg-deb -c "$DEV" | grep -q '^lrwxrwxrwx .* \./usr/lib/libtrc\.so -> /lib/libtrc\.so\.6\.1$' ||
    fail "libtrc6.1-dev's libtrc.so is not the symlink to /lib/libtrc.so.6.1"
x=$TMP/x/libc
mkdir -p "$x"
dpkg-deb -e "$LIBC" "$x/DEBIAN"
[ "$(cat "$x/DEBIAN/conffiles")" = /etc/ld.so.conf.d/trc.conf ] || fail "libtrc6.1's conffiles: $(cat "$x/DEBIAN/conffiles")"
dpkg-deb --fsys-tarfile "$LIBC" | tar -xOf - ./etc/ld.so.conf.d/trc.conf | cmp -s - "$TMP/trc.conf" ||
    fail "the install row's file is not the recipe's"
ok "split: each file in one package, not_installed left out, the install row's conffile, the symlink as dh_link has it"

# --- strip and modes ---------------------------------------------------------------
dpkg-deb -x "$LIBC" "$x/root"
dpkg-deb -x "$BIN" "$TMP/x/bin"
dpkg-deb -x "$DEV" "$TMP/x/dev"
sections() { readelf -SW "$1" 2>/dev/null | grep -oE '\.(symtab|debug_[a-z]+|comment)' | sort -u | tr '\n' ' '; }
for f in "$x/root/lib/libtrc.so.6.1" "$x/root/usr/lib/gconv/MOD.so" "$TMP/x/bin/usr/bin/trgetconf" \
    "$TMP/x/bin/sbin/trconfig"; do
    [ -z "$(sections "$f")" ] || fail "$f was not stripped as dh_strip does: $(sections "$f")"
done
[ -n "$(sections "$F/usr/bin/trgetconf")" ] || fail "the fake program had nothing to strip: the check proves nothing"
readelf -SW "$TMP/x/dev/usr/lib/libtrc.a" | grep -q '\.debug_' && fail "libtrc.a keeps its debug sections"
readelf -sW "$TMP/x/dev/usr/lib/libtrc.a" | grep -q ' trc_add$' || fail "libtrc.a lost its symbols (only debug info goes)"
cmp -s "$TMP/x/dev/usr/lib/crt1.o" "$F/usr/lib/crt1.o" || fail "crt1.o was changed (dh_strip leaves object files)"
[ "$(stat -c %a "$x/root/lib/libtrc.so.6.1")" = 755 ] || fail "libtrc.so.6.1 (executables) is $(stat -c %a "$x/root/lib/libtrc.so.6.1")"
[ "$(stat -c %a "$x/root/lib/libtrm.so.6.1")" = 644 ] || fail "libtrm.so.6.1 is $(stat -c %a "$x/root/lib/libtrm.so.6.1")"
[ "$(LD_LIBRARY_PATH=$x/root/lib "$TMP/x/bin/usr/bin/trgetconf")" = 42 ] || fail "the stripped program does not run"
ok "strip as dh_strip (libraries, programs; static library without debug info; crt1.o as built), executables 0755, others 0644"

# --- shlibs and Depends -------------------------------------------------------------
printf 'libtrc 6.1 libtrc6.1 (>= 2.43)\nlibtrm 6.1 libtrc6.1 (>= 2.43)\n' | diff -u - "$x/DEBIAN/shlibs" >&2 ||
    fail "libtrc6.1's DEBIAN/shlibs"
diff -u "$x/DEBIAN/shlibs" "$D/shlibs" >&2 || fail "OUT/libc-debs/debs/shlibs differs from libtrc6.1's"
grep -qx 'activate-noawait ldconfig' "$x/DEBIAN/triggers" || fail "libtrc6.1 lacks the ldconfig trigger"
field() { dpkg-deb --field "$1" "$2"; }
# its libraries need each other, a helper without a SONAME and the host's libc
[ "$(field "$LIBC" Depends)" = "libc6 (>= 2.36)" ] || fail "libtrc6.1's Depends: $(field "$LIBC" Depends)"
[ "$(field "$BIN" Depends)" = "libc6 (>= 2.36), libtrc6.1 (>= 2.43), libtrc6.1 (= 2.43-0trillian1)" ] ||
    fail "libtrc-bin's Depends: $(field "$BIN" Depends)"
[ "$(field "$GCC" Depends)" = "libc6 (>= 2.36), libtrc6.1 (>= 2.43)" ] || fail "libtrgcc-s1's Depends: $(field "$GCC" Depends)"
[ "$(cat "$TMP/o/libgcc-debs/debs/shlibs")" = "libtrgcc_s 1 libtrgcc-s1 (>= 16.2.0-0trillian1)" ] ||
    fail "libgcc-debs's shlibs: $(cat "$TMP/o/libgcc-debs/debs/shlibs")"
grep -q '"destdir_from": "fakelibc/sysroot"' "$TMP/o/libc-debs/stage-manifest.json" || fail "the manifest lacks destdir_from"
ok "shlibs with shlibs_version (none for a library without a SONAME), Depends within the stage and by shlibs_from"

# --- lintian ---------------------------------------------------------------------
# Tolerated, each because:
#   no-changelog: there is no Debian source package, so no changelog.Debian.gz;
#   no-manual-page: a test program;
#   no-symbols-control-file: Trillian writes shlibs, not symbols (as asked);
#   shared-library-is-executable: libtrc.so.6.1 is 0755 on purpose (executables),
#     as Debian's libc.so.6 and ld.so are;
#   arch-dependent-file-not-in-arch-specific-directory: the glibc stage's
#     tree (and so this fake's) is /lib and /usr/lib, without Debian's
#     multiarch directories (docs/packages.md: packaged where it was built);
#   undeclared-elf-prerequisites: lintian looks for a DT_NEEDED library in
#     the multiarch directories only, so not in /lib or in gconv's own;
#   package-modifies-ld.so-search-path: lintian allows it to libc6 and
#     friends by name, and the fake is named libtrc6.1;
#   statically-linked-binary: trconfig is static as ldconfig is (Debian's
#     libc-bin overrides the tag for ldconfig);
#   running with root privileges: the test may run as root.
command -v lintian >/dev/null 2>&1 || fail "lintian is not installed (tools/install-deps tests installs it)"
lintian --no-tag-display-limit "$LIBC" "$BIN" "$DEV" "$GCC" >"$TMP/lintian.txt" 2>&1
grep -v -e ' no-changelog' -e ' no-manual-page ' -e ' no-symbols-control-file' \
    -e ' shared-library-is-executable ' -e ' arch-dependent-file-not-in-arch-specific-directory ' \
    -e ' undeclared-elf-prerequisites ' -e ' package-modifies-ld.so-search-path ' \
    -e ' statically-linked-binary ' -e 'running with root privileges' "$TMP/lintian.txt" |
    grep -E '^[EWIX]:' &&
    fail "lintian reports tags beyond the tolerated ones (above)"
ok "lintian: only the tolerated tags ($(grep -cE '^[EWIX]:' "$TMP/lintian.txt") of them)"

# --- bad inputs ------------------------------------------------------------------
bad() { # NAME STATUS MESSAGE...: refused naming each MESSAGE; nothing in OUT
    local name=$1 status=$2
    shift 2
    trl build "$TMP/$name.cfg" --cache "$TMP/c" -o "$TMP/o-$name" -j1
    expect_rc "$status"
    for m in "$@"; do expect_out "$m"; done
    [ ! -e "$TMP/o-$name/libc-debs" ] || fail "$name: OUT/libc-debs exists after the failure"
}
line() { grep -n -m1 -F -- "$2" "$1" | cut -d: -f1; } # FILE TEXT: its first line number
recipe "$TMP/glob.cfg" '"sbin", "usr/bin", "usr/sbin/nothing*"'
bad glob 1 "$TMP/glob.cfg:$(line "$TMP/glob.cfg" '{ name = "libtrc-bin"'): packages.libc-debs.debs: libtrc-bin's glob 'usr/sbin/nothing*' takes no file of DESTDIR"
recipe "$TMP/twice.cfg" '"sbin", "usr/bin", "lib/libtrm.so.6.1"'
bad twice 1 "/lib/libtrm.so.6.1 is taken by two binary packages, libtrc6.1 and libtrc-bin" \
    "$TMP/twice.cfg:$(line "$TMP/twice.cfg" '{ name = "libtrc-bin"'): packages.libc-debs.debs"
recipe "$TMP/ni.cfg" '' '"etc/rpc", "usr/share/i18n", "usr/include/linux", "usr/share/locale"'
bad ni 1 "$TMP/ni.cfg:$(line "$TMP/ni.cfg" 'not_installed'): packages.libc-debs.not_installed: not_installed's glob 'usr/share/locale' takes no file"
recipe "$TMP/shadow.cfg" '' '"etc/rpc", "usr/share/i18n", "usr/include"'
bad shadow 1 "libtrc6.1-dev's glob 'usr/include' takes no file of DESTDIR (" \
    "; those it matches, not_installed leaves out)"
recipe "$TMP/exec.cfg" '' '' 'executables = ["usr/lib/ld.so"];'
bad exec 1 "libtrc6.1-dev's executables glob 'usr/lib/ld.so' takes none of its files"
recipe "$TMP/over.cfg" '' '' '' usr/include/trc.h
bad over 1 "$TMP/over.cfg:$(line "$TMP/over.cfg" '{ from = "trc.conf"'): packages.libc-debs.install: /usr/include/trc.h is already in DESTDIR"
recipe "$TMP/dir.cfg" '' '' '' '' fakelibc/nosysroot
bad dir 1 "packages.libc-debs.destdir_from: stage fakelibc's output has no directory nosysroot"
recipe "$TMP/stage.cfg" '' '' '' '' nolibc/sysroot
bad stage 2 "packages.libc-debs.destdir_from: 'nolibc/sysroot': no other stage named 'nolibc'"
recipe "$TMP/src.cfg" '' '' '' '' '' 'source_url = "file:///nonexistent.tar.gz";'
bad src 2 "packages.libc-debs.source_url: destdir_from packages another stage's output"
ok "refused, naming FILE:LINE and what to fix, nothing in OUT: a glob that takes nothing (files, not_installed, executables), a file two packages take, a glob whose files not_installed all leaves out, an install row over a built file, a missing directory (exit 1); an unknown stage, a source with destdir_from (exit 2)"
