# The generic package build's presets (builder/stages/pkg_presets.c), through
# the packages kind "package": one tiny C program written here as an
# autotools (configure made by autoconf from a hand-written configure.ac),
# a CMake, a Meson and a plain-make project, each pinned by sha256 and
# built for amd64 by its preset with the host's compilers. Each .deb must
# hold the program where the preset installs it (/usr/bin), and the program
# must print what the preset's `configure` (or `make_args`) argument asked
# for, so an argument the preset dropped fails. Given an argument, it
# prints its __FILE__, which must not hold the build's scratch directory
# (each preset's compiler maps it to "."; the autotools, CMake and make
# builds name the source by its absolute path, and make's Makefile sets its
# own CC). A recipe `steps` list runs after the preset's. Bad input: an
# unknown preset and `configure` without a preset (plan time, FILE:LINE).
# About 15 s.
. "$TOP/tests/lib.sh"
need gcc make cmake autoconf dpkg-deb tar gzip
[ "$(dpkg --print-architecture 2>/dev/null)" = amd64 ] || skip "needs an amd64 host (the host's compilers build the packages)"
command -v meson >/dev/null && command -v ninja >/dev/null ||
    fail "meson and ninja are not installed (tools/install-deps tests installs them)"

# project NAME: the source tree NAME-1.0 with main.c printing GREETING, a
# macro the build system sets from its configure or make argument
project() {
    local s=$TMP/$1-1.0
    mkdir -p "$s"
    printf '#include <stdio.h>\nint main(int argc, char **argv) { (void)argv; puts(argc > 1 ? __FILE__ : GREETING); return 0; }\n' >"$s/main.c"
    printf '%s, a test program of Trillian. Public domain.\n' "$1" >"$s/COPYING"
    case $1 in
    ac) cat >"$s/configure.ac" <<'EOF'
AC_INIT([ac], [1.0])
AC_PROG_CC
AC_ARG_WITH([greeting], [greeting], [GREETING=$withval], [GREETING=none])
AC_SUBST([GREETING])
AC_CONFIG_FILES([Makefile])
AC_OUTPUT
EOF
        cat >"$s/Makefile.in" <<'EOF'
srcdir = @srcdir@
VPATH = @srcdir@
prefix = @prefix@
all: ac
ac: main.c
	@CC@ -O2 -DGREETING='"@GREETING@"' -o $@ $(srcdir)/main.c
install: ac
	install -d $(DESTDIR)$(prefix)/bin
	install -m 0755 ac $(DESTDIR)$(prefix)/bin/
EOF
        (cd "$s" && autoconf && rm -rf autom4te.cache) || fail "autoconf" ;;
    cm) cat >"$s/CMakeLists.txt" <<'EOF'
cmake_minimum_required(VERSION 3.13)
project(cm C)
set(GREETING "none" CACHE STRING "greeting")
add_executable(cm main.c)
target_compile_definitions(cm PRIVATE GREETING="${GREETING}")
install(TARGETS cm DESTINATION bin)
EOF
        ;;
    me) cat >"$s/meson.build" <<'EOF'
project('me', 'c', version : '1.0')
executable('me', 'main.c', c_args : ['-DGREETING="' + get_option('greeting') + '"'],
           install : true)
EOF
        echo "option('greeting', type : 'string', value : 'none')" >"$s/meson_options.txt" ;;
    pm) cat >"$s/Makefile" <<'EOF'
CC = gcc
PREFIX ?= /usr/local
GREETING ?= none
pm: main.c
	$(CC) -O2 -DGREETING='"$(GREETING)"' -o $@ $(CURDIR)/main.c
install: pm
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 0755 pm $(DESTDIR)$(PREFIX)/bin/
EOF
        ;;
    esac
    (cd "$TMP" && tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -cf - "$1-1.0" |
        gzip -n >"$1-1.0.tar.gz")
}

entry() { pkg_entry "$1" "$2" "$3" "prints a greeting"; }
echo 'libc 6 libc6 (>= 2.36)' >"$TMP/libc.shlibs"
for p in ac cm me pm; do project $p; done
cat >"$TMP/r.cfg" <<CFG
name = "pkg-presets";
arch = "amd64";
source_date_epoch = 1700000000;
packages = (
$(entry ac autotools 'configure = ["--with-greeting=hello from autotools"];'),
$(entry cm cmake 'configure = ["-DGREETING=hello from cmake"];'),
$(entry me meson 'configure = ["-Dgreeting=hello from meson"];'),
$(entry pm make 'make_args = ["GREETING=hello from make"];
    steps = ( { label = "after"; argv = ["touch", "${kind:destdir}/usr/bin/pm.after"]; } );')
);
CFG
trl build "$TMP/r.cfg" --cache "$TMP/cache" -o "$TMP/out" -j2
expect_rc 0
for p in "ac autotools" "cm cmake" "me meson" "pm make"; do
    n=${p% *} preset=${p#* }
    deb=$TMP/out/$n/debs/${n}_1.0-1_amd64.deb
    [ -f "$deb" ] || fail "$preset: no $deb"
    dpkg-deb -x "$deb" "$TMP/x-$n" || fail "$preset: $deb does not unpack"
    got=$("$TMP/x-$n/usr/bin/$n") || fail "$preset: /usr/bin/$n is not in the package or does not run"
    [ "$got" = "hello from $preset" ] || fail "$preset: the program prints '$got', not 'hello from $preset' (the preset's argument was lost)"
    dpkg-deb --field "$deb" Depends | grep -qx 'libc6 (>= 2.36)' || fail "$preset: Depends is '$(dpkg-deb --field "$deb" Depends)'"
    file=$("$TMP/x-$n/usr/bin/$n" file)
    case $file in /* | *"$TMP"*) fail "$preset: the program's __FILE__ is $file, the build's scratch path" ;; esac
done
[ -f "$TMP/x-pm/usr/bin/pm.after" ] || fail "the recipe's steps did not run after the make preset's"
grep -q "step configure" "$TMP/out/logs/ac.log" || { cat "$TMP/out/logs/ac.log" >&2; fail "no configure step in the autotools log"; }
ok "autotools, cmake, meson and make presets: each program installed in /usr/bin with its configure/make argument, its __FILE__ relative; the recipe's steps after the preset's"

# ---- bad input: plan time, FILE:LINE ------------------------------------------
sed 's/preset = "cmake"/preset = "scons"/' "$TMP/r.cfg" >"$TMP/bad1.cfg"
trl plan "$TMP/bad1.cfg" --cache "$TMP/cache"
expect_rc 2
expect_out "bad1.cfg:$(grep -n 'preset = "scons"' "$TMP/bad1.cfg" | cut -d: -f1)"
expect_out "scons"
sed 's/preset = "autotools"; //' "$TMP/r.cfg" >"$TMP/bad2.cfg"
trl plan "$TMP/bad2.cfg" --cache "$TMP/cache"
expect_rc 2
expect_out "bad2.cfg:"
expect_out "only a preset uses it"
ok "an unknown preset and configure without a preset are refused at plan time with FILE:LINE"
