# Target mode of the generic package build (pkg_build.h): a package built
# for the recipe's arch with the compiler stage's gcc against the libc
# stage's sysroot, here amd64's (the host toolchain kind and Debian's libc6
# as debian-libc, as recipes/reference-amd64-minimal has them, with its
# kernel: the libc stage's key holds the kernel it checks libc's ABI
# against, and with the same kernel the libc stage is that recipe's, built
# once in the shared test cache; checked).
# A program built by the make preset writes its header dependencies (-MD)
# into the log: stdio.h must come from the libc stage's sysroot, not the
# host's /usr/include. (The host's own gcc, the toolchain kind "host",
# still links its own startup files and libc with --sysroot, found through
# its installation prefix before the sysroot: on amd64 they are the same
# Debian packages; a cross gcc such as ia64's has no such prefix.) Its .deb
# depends on libc6 by the shlibs line given, and it runs. With --ccache,
# the CMake and Meson presets compile through ccache and a rebuild, in
# another scratch directory, hits; their programs hold no path of the cache
# (CMake's, with debug information, names its source ./source/cm-1.0/main.c
# and the sysroot's headers /usr/include: the path maps). build_depends: a
# library package (libtq1, libtq-dev at the multiarch path, as Debian puts
# them) and a program built against libtq-dev and libtq1 (where its libtq.so
# link points), unpacked into a copy of the
# sysroot (its header and library read from there), depending on libtq1 by
# the library stage's shlibs. Bad input: compiler without target mode, cross
# and target together, build_depends without target mode or naming no stage
# (plan time), a package the stage does not make (run time).
. "$TOP/tests/lib.sh"
need gcc make autoconf dpkg-deb tar gzip
[ "$(dpkg --print-architecture 2>/dev/null)" = amd64 ] || skip "needs an amd64 host"
C=${TRILLIAN_TEST_CACHE:-$TMP/cache}

S=$TMP/tt-1.0
mkdir -p "$S"
printf '#include <stdio.h>\n#include <gnu/libc-version.h>\nint main(int argc, char **argv) { (void)argv; printf("glibc %%s\\n", argc > 1 ? __FILE__ : gnu_get_libc_version()); return 0; }\n' >"$S/main.c"
echo 'tt, a test program of Trillian. Public domain.' >"$S/COPYING"
cat >"$S/Makefile" <<'EOF'
CC = gcc
PREFIX ?= /usr/local
tt: main.c
	$(CC) -O2 -MD -MF tt.d -o $@ main.c
	cat tt.d
install: tt
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 0755 tt $(DESTDIR)$(PREFIX)/bin/
EOF
(cd "$TMP" && tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -cf - tt-1.0 |
    gzip -n >tt-1.0.tar.gz)
echo 'libc 6 libc6 (>= 2.36)' >"$TMP/libc.shlibs"

entry() { pkg_entry "$1" "$2" "$3" "prints its C library's version"; }
# recipe FILE ENTRIES: Debian's libc as the sysroot and the package entries
recipe() {
    cat >"$1" <<CFG
name = "pkg-target";
arch = "amd64";
source_date_epoch = 1700000000;
toolchain = { kind = "host"; };
kernel = { kind = "package"; package = "linux-image-cloud-amd64"; };
packages = (
  { kind = "debian-libc"; name = "libc"; },
$2
);
CFG
}
recipe "$TMP/r.cfg" "$(entry tt make "target = true;")"
# the libc stage is reference-amd64-minimal's (the same key: one build in a cold run)
trl plan "$TOP/recipes/reference-amd64-minimal.cfg" --cache "$C"
expect_rc 0
ref=$(awk '$1 == "libc" { print $3 }' "$TMP/out.txt")
trl plan "$TMP/r.cfg" --cache "$C"
expect_rc 0
[ -n "$ref" ] && [ "$(awk '$1 == "libc" { print $3 }' "$TMP/out.txt")" = "$ref" ] ||
    fail "the libc stage's key is not reference-amd64-minimal's ($ref): $(grep '^libc' "$TMP/out.txt")"
trl build "$TMP/r.cfg" --cache "$C" -o "$TMP/out"
expect_rc 0
log=$TMP/out/logs/tt.log
sysroot=$(readlink -f "$TMP/out/libc/sysroot")
[ -d "$sysroot" ] || fail "no libc sysroot in OUT"
grep -q -- "--sysroot=" "$log" || fail "the compiler ran without --sysroot (log: $log)"
# -MD: the headers it read
stdio=$(grep -o '[^ ]*/stdio\.h' "$log" | head -n 1)
[ -n "$stdio" ] || { cat "$log" >&2; fail "the dependency list names no stdio.h"; }
case $stdio in "$sysroot"/usr/include/stdio.h | */sysroot/usr/include/stdio.h) ;;
*) fail "stdio.h came from $stdio, not the libc stage's sysroot ($sysroot)" ;; esac
deb=$TMP/out/tt/debs/tt_1.0-1_amd64.deb
dpkg-deb -x "$deb" "$TMP/x" || fail "no $deb"
"$TMP/x/usr/bin/tt" | grep -q '^glibc 2\.' || fail "the target-mode program does not run"
[ "$(dpkg-deb --field "$deb" Depends)" = "libc6 (>= 2.36)" ] || fail "Depends: $(dpkg-deb --field "$deb" Depends)"
ok "target mode: the make preset's compiler read the sysroot's headers ($stdio); the program runs and depends on libc6"

# the user's ccache (--ccache), as the kernel has it: the compiler runs behind
# it, its objects in CACHE/ccache/pkg, and the package's bytes do not change
if command -v ccache >/dev/null; then
    trl build "$TMP/r.cfg" --cache "$C" -o "$TMP/out-cc" --ccache --force tt
    expect_rc 0
    grep -q "compiles through [^ ]*ccache (CCACHE_DIR $C/ccache/pkg)" "$TMP/out-cc/logs/tt.log" ||
        fail "no ccache in front of the compiler (log: $TMP/out-cc/logs/tt.log)"
    grep -q "^[^ ]*ccache [^ ]*gcc --sysroot=.* -o tt main\.c" "$TMP/out-cc/logs/tt.log" ||
        fail "make did not compile through ccache (log: $TMP/out-cc/logs/tt.log)"
    cmp -s "$deb" "$TMP/out-cc/tt/debs/tt_1.0-1_amd64.deb" || fail "ccache changed the package's bytes"
    ok "with --ccache the target compiler runs through ccache; the same .deb"

    # CMake and Meson name the compiler themselves: the launcher goes in
    # CMAKE_<LANG>_COMPILER_LAUNCHER and at the head of the cross file's list
    if command -v cmake >/dev/null && command -v meson >/dev/null && command -v ninja >/dev/null; then
        for t in cm me; do
            mkdir -p "$TMP/$t-1.0"
            cp "$S/main.c" "$S/COPYING" "$TMP/$t-1.0/"
        done
        printf 'cmake_minimum_required(VERSION 3.13)\nproject(cm C)\nadd_executable(cm main.c)\ninstall(TARGETS cm DESTINATION bin)\n' \
            >"$TMP/cm-1.0/CMakeLists.txt"
        printf "project('me', 'c')\nexecutable('me', 'main.c', install : true)\n" >"$TMP/me-1.0/meson.build"
        for t in cm me; do
            (cd "$TMP" && tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -cf - $t-1.0 |
                gzip -n >$t-1.0.tar.gz)
        done
        # cm with debug information: the sysroot's headers and the scratch
        # directory are in it, by the paths they are mapped to
        recipe "$TMP/cm.cfg" "$(entry cm cmake 'target = true; configure = ["-DCMAKE_BUILD_TYPE=RelWithDebInfo"];'),
$(entry me meson "target = true;")"
        # a compile that ccache answers from its cache (CACHE/ccache/pkg):
        # the rebuild compiles in another scratch directory (a new PID),
        # which the path maps name the same
        compiles() {
            CCACHE_DIR=$C/ccache/pkg ccache --print-stats 2>/dev/null |
                awk '/^(direct_cache_hit|preprocessed_cache_hit)\t/ { s += $2 } END { print s + 0 }'
        }
        trl build "$TMP/cm.cfg" --cache "$C" -o "$TMP/out-cm" --ccache
        expect_rc 0
        grep -q -- "-DCMAKE_C_COMPILER_LAUNCHER=[^ ]*ccache" "$TMP/out-cm/logs/cm.log" ||
            fail "cmake was not given ccache as its launcher (log: $TMP/out-cm/logs/cm.log)"
        for t in cm me; do
            n0=$(compiles)
            trl build "$TMP/cm.cfg" --cache "$C" -o "$TMP/out-cm" --ccache --force $t
            expect_rc 0
            n1=$(compiles)
            [ "$n1" -gt "$n0" ] || fail "$t: the rebuild had no ccache hit ($n0 hits before, $n1 after; log: $TMP/out-cm/logs/$t.log)"
        done
        for t in cm me; do
            dpkg-deb -x "$TMP/out-cm/$t/debs/${t}_1.0-1_amd64.deb" "$TMP/x-$t" || fail "no $t package"
            "$TMP/x-$t/usr/bin/$t" | grep -q '^glibc 2\.' || fail "the $t program does not run"
            grep -aq "$C/" "$TMP/x-$t/usr/bin/$t" &&
                fail "the $t program holds a path of the cache ($(grep -ao "$C/[^[:cntrl:]]*" "$TMP/x-$t/usr/bin/$t" | head -n 1))"
        done
        "$TMP/x-cm/usr/bin/cm" file | grep -q '^glibc \./source/cm-1\.0/main\.c$' ||
            fail "cm's __FILE__ is '$("$TMP/x-cm/usr/bin/cm" file)', not ./source/cm-1.0/main.c"
        grep -aq '^/usr/include$' <(strings -a "$TMP/x-cm/usr/bin/cm") ||
            fail "cm's debug information names no /usr/include (the sysroot's, mapped)"
        ok "CMake and Meson in target mode compile through ccache too, and hit on a rebuild in another scratch directory; their programs run and hold no path of the cache (cm's __FILE__ ./source/cm-1.0/main.c, its headers /usr/include)"
    fi
fi

# ---- build_depends ------------------------------------------------------------
L=$TMP/libtq-1.0
mkdir -p "$L"
printf 'int tq_answer(void);\n' >"$L/tq.h"
printf '#include "tq.h"\nint tq_answer(void) { return 42; }\n' >"$L/tq.c"
printf '#include <stdio.h>\n#include <tq.h>\nint main(void) { printf("%%d\\n", tq_answer()); return 0; }\n' >"$L/main.c"
echo 'libtq, a test library of Trillian. Public domain.' >"$L/COPYING"
cat >"$L/Makefile" <<'EOF'
M = usr/lib/x86_64-linux-gnu
lib:
	$(CC) -O2 -fPIC -shared -Wl,-soname,libtq.so.1 -o libtq.so.1 tq.c
install-lib: lib
	install -d $(DESTDIR)/$(M) $(DESTDIR)/usr/include
	install -m 0644 libtq.so.1 $(DESTDIR)/$(M)/
	ln -s libtq.so.1 $(DESTDIR)/$(M)/libtq.so
	install -m 0644 tq.h $(DESTDIR)/usr/include/
prog:
	$(CC) -O2 -MD -MF tq.d $(LDFLAGS) -o tq main.c -ltq
	cat tq.d
install-prog: prog
	install -d $(DESTDIR)/usr/bin
	install -m 0755 tq $(DESTDIR)/usr/bin/
EOF
(cd "$TMP" && tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -cf - libtq-1.0 |
    gzip -n >libtq-1.0.tar.gz)
LSHA=$(sha256sum "$TMP/libtq-1.0.tar.gz" | cut -d' ' -f1)
bd_recipe() { # FILE TQ-SETTINGS
    cat >"$1" <<CFG
name = "pkg-target-bd";
arch = "amd64";
source_date_epoch = 1700000000;
toolchain = { kind = "host"; };
kernel = { kind = "package"; package = "linux-image-cloud-amd64"; };
packages = (
  { kind = "debian-libc"; name = "libc"; },
  { kind = "package"; name = "libtq"; target = true;
    source_url = "file://$TMP/libtq-1.0.tar.gz"; source_sha256 = "$LSHA";
    steps = ( { label = "install"; argv = ["make", "install-lib", "DESTDIR=\${kind:destdir}"]; } );
    version = "1.0-1"; maintainer = "Trillian Tests <tests@example.org>";
    shlibs = ["libc.shlibs"];
    debs = ( { name = "libtq1"; files = ["usr/lib/x86_64-linux-gnu/libtq.so.1"];
               summary = "the answer, as a library"; copyright = "\${src:source}/COPYING"; },
             { name = "libtq-dev"; files = ["usr/include", "usr/lib/x86_64-linux-gnu/libtq.so"];
               summary = "the answer's header"; copyright = "\${src:source}/COPYING"; } ); },
  { kind = "package"; name = "tq"; $2
    source_url = "file://$TMP/libtq-1.0.tar.gz"; source_sha256 = "$LSHA";
    steps = ( { label = "install"; argv = ["make", "install-prog", "DESTDIR=\${kind:destdir}"]; } );
    version = "1.0-1"; maintainer = "Trillian Tests <tests@example.org>";
    shlibs = ["libc.shlibs"]; shlibs_from = ["libtq"];
    debs = ( { name = "tq"; files = ["usr/bin"]; summary = "prints the answer";
               copyright = "\${src:source}/COPYING"; } ); }
);
CFG
}
bd_recipe "$TMP/bd.cfg" 'target = true; build_depends = ["libtq/libtq-dev", "libtq/libtq1"];'
trl build "$TMP/bd.cfg" --cache "$C" -o "$TMP/outbd"
expect_rc 0
log=$TMP/outbd/logs/tq.log
grep -q 'build_depends: libtq-dev 1.0-1 unpacked into the sysroot' "$log" || fail "libtq-dev was not unpacked (log: $log)"
hdr=$(grep -o '[^ ]*/tq\.h' "$log" | head -n 1)
case $hdr in */work/sysroot/usr/include/tq.h) ;; *) fail "tq.h came from '$hdr', not the build's sysroot" ;; esac
deb=$TMP/outbd/tq/debs/tq_1.0-1_amd64.deb
[ "$(dpkg-deb --field "$deb" Depends)" = "libc6 (>= 2.36), libtq1 (>= 1.0-1)" ] || fail "tq's Depends: $(dpkg-deb --field "$deb" Depends)"
dpkg-deb -x "$deb" "$TMP/xbd"
dpkg-deb -x "$TMP/outbd/libtq/debs/libtq1_1.0-1_amd64.deb" "$TMP/xbd"
[ "$(LD_LIBRARY_PATH=$TMP/xbd/usr/lib/x86_64-linux-gnu "$TMP/xbd/usr/bin/tq")" = 42 ] || fail "tq does not run with libtq1"
ok "build_depends: tq built against libtq-dev unpacked into a copy of the sysroot (tq.h from there, -ltq from its multiarch directory), depends on libtq1 by its shlibs, runs"

# ---- bad input ----------------------------------------------------------------
recipe "$TMP/b1.cfg" "$(entry tt make 'compiler = "toolchain";')"
trl plan "$TMP/b1.cfg" --cache "$TMP/plan"
expect_rc 2
expect_out "only target mode uses it"
recipe "$TMP/b2.cfg" "$(entry tt make 'target = true; cross = true;')"
trl plan "$TMP/b2.cfg" --cache "$TMP/plan"
expect_rc 2
expect_out "exclude each other"
bd_recipe "$TMP/b3.cfg" 'build_depends = ["libtq/libtq-dev"];'
trl plan "$TMP/b3.cfg" --cache "$TMP/plan"
expect_rc 2
expect_out "packages.tq.build_depends: only target mode builds against packages"
bd_recipe "$TMP/b4.cfg" 'target = true; build_depends = ["nolib/libtq-dev"];'
trl plan "$TMP/b4.cfg" --cache "$TMP/plan"
expect_rc 2
expect_out "'nolib/libtq-dev': no stage named 'nolib'"
bd_recipe "$TMP/b5.cfg" 'target = true; build_depends = ["libtq/libtq2-dev"];'
trl build "$TMP/b5.cfg" --cache "$C" -o "$TMP/outb5"
expect_rc 1
expect_out "packages.tq.build_depends: 'libtq/libtq2-dev': stage libtq made no binary package libtq2-dev"
ok "compiler without target mode, cross with target, build_depends without target mode or naming no stage are refused at plan time, a package the stage does not make at run time"
