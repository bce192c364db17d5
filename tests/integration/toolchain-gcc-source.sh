# The toolchain stage's GCC source as the 2026 generation gives it: Debian's
# gcc-N orig tarball wraps the real source (gcc-16-16.2.0/ holds
# gcc-16.2.0-dfsg.tar.xz beside newlib's), and gcc_patches are applied to
# it in order before configure. Checked with a small stand-in GCC tree whose
# configure prints the file the patch changed and stops (a real GCC build
# is the slow tier's: slow/ia64-default-boot). Bad inputs: binutils_patches
# with the host's binutils is a plan-time error naming FILE:LINE; a wrapper
# with no gcc-*.tar.* inside, and a patch that does not apply, fail the
# stage naming what to do, before configure runs, and nothing is cached.
. "$TOP/tests/lib.sh"
need ia64-linux-gnu-as ia64-linux-gnu-ld patch tar xz gzip
R=$TMP/r
mkdir -p "$R/src/gcc-9.9.9" "$R/wrap/gcc-9-9.9.9" "$R/nowrap/gcc-9-9.9.9"

# the stand-in GCC: configure shows what it was given and fails
cat >"$R/src/gcc-9.9.9/configure" <<'SH'
#!/bin/sh
echo "stand-in configure: $(cat "$(dirname "$0")/gcc/BASE-VER")"
echo "stand-in configure: CC=$CC"
echo "stand-in configure: CFLAGS=$CFLAGS CXXFLAGS=$CXXFLAGS"
exit 1
SH
chmod 755 "$R/src/gcc-9.9.9/configure"
mkdir -p "$R/src/gcc-9.9.9/gcc"
echo "9.9.9" >"$R/src/gcc-9.9.9/gcc/BASE-VER"
tar -C "$R/src" -cJf "$R/wrap/gcc-9-9.9.9/gcc-9.9.9-dfsg.tar.xz" gcc-9.9.9
echo "newlib" >"$R/wrap/gcc-9-9.9.9/newlib-1.0.tar.xz"
tar -C "$R/wrap" -czf "$R/gcc-9_9.9.9.orig.tar.gz" gcc-9-9.9.9
echo "newlib" >"$R/nowrap/gcc-9-9.9.9/newlib-1.0.tar.xz"
tar -C "$R/nowrap" -czf "$R/nowrap.orig.tar.gz" gcc-9-9.9.9

cat >"$R/ok.patch" <<'PATCH'
--- a/gcc/BASE-VER
+++ b/gcc/BASE-VER
@@ -1 +1 @@
-9.9.9
+9.9.9-patched-by-trillian
PATCH
cat >"$R/bad.patch" <<'PATCH'
--- a/gcc/BASE-VER
+++ b/gcc/BASE-VER
@@ -1 +1 @@
-8.0.0
+8.0.1
PATCH

recipe() { # NAME GCC-TARBALL PATCH [EXTRA]
    cat >"$R/$1.cfg" <<CFG
name = "$1";
arch = "ia64";
toolchain = {
  kind = "build";
  gcc = "$2";
  gcc_patches = ["$3"];
  ${4:-}
};
CFG
}

# --- binutils_patches need binutils built here: plan-time error ---------------
recipe sys gcc-9_9.9.9.orig.tar.gz ok.patch 'binutils_patches = ["ok.patch"];'
trl plan "$R/sys.cfg" --cache "$TMP/c"
expect_rc 2
expect_out "sys.cfg:7: toolchain.binutils_patches: patches need binutils built here"
ok "binutils_patches with the host's binutils: exit 2 at plan time, naming FILE:LINE"

# --- a wrapped source, patched: configure sees the patched tree --------------
recipe wrapped gcc-9_9.9.9.orig.tar.gz ok.patch
trl build "$R/wrapped.cfg" --cache "$TMP/c" -o "$TMP/o1" -j1
expect_rc 1
L=$TMP/o1/logs/toolchain.log
grep -qF "gcc-9_9.9.9.orig.tar.gz wraps gcc-9.9.9-dfsg.tar.xz: unpacking that" "$L" ||
    fail "the wrapper was not unpacked in turn: $(tail -5 "$L")"
grep -qF "gcc_patches: 1 patch applied" "$L" || fail "no patch applied: $(tail -5 "$L")"
grep -qF "stand-in configure: 9.9.9-patched-by-trillian" "$L" ||
    fail "configure did not run on the patched tree: $(tail -5 "$L")"
expect_out "step 'configure' of the toolchain failed (GCC's configure: see "
expect_out "/gcc-obj/config.log, and check the toolchain settings"
ok "Debian's wrapping orig tarball: the inner gcc-*.tar.* unpacked, gcc_patches applied, configure runs on the patched tree"

# --- a patch that does not apply: named, configure never runs ----------------
recipe badpatch gcc-9_9.9.9.orig.tar.gz bad.patch
trl build "$R/badpatch.cfg" --cache "$TMP/c" -o "$TMP/o2" -j1
expect_rc 1
expect_out "badpatch.cfg:6: toolchain.gcc_patches: bad.patch does not apply: first rejected: gcc/BASE-VER"
! grep -q "stand-in configure" "$TMP/o2/logs/toolchain.log" || fail "configure ran after a patch failed"
ok "a gcc patch that does not apply: exit 1 naming FILE:LINE, the patch and the rejected file; configure never ran"

# --- a wrapper without a GCC tarball inside ------------------------------------
recipe nowrap nowrap.orig.tar.gz ok.patch
trl build "$R/nowrap.cfg" --cache "$TMP/c" -o "$TMP/o3" -j1
expect_rc 1
expect_out "toolchain.gcc: nowrap.orig.tar.gz has no configure at its top and no gcc-*.tar.* inside"
ok "a tarball that is neither GCC nor a wrapper of one: exit 1 saying what was expected"

# --- ccache: always for the gcc stages, unless TRILLIAN_CCACHE=0 --------------
if command -v ccache >/dev/null; then
    for v in 1 0 unset; do
        if [ $v = unset ]; then
            (unset TRILLIAN_CCACHE; "$TRILLIAN" build "$R/wrapped.cfg" --cache "$TMP/c" -o "$TMP/cc-$v" -j1) >/dev/null 2>&1
        else
            TRILLIAN_CCACHE=$v "$TRILLIAN" build "$R/wrapped.cfg" --cache "$TMP/c" -o "$TMP/cc-$v" -j1 >/dev/null 2>&1
        fi
        grep -o 'stand-in configure: CC=.*' "$TMP/cc-$v/logs/toolchain.log" >"$TMP/cc-$v.txt"
    done
    grep -qx 'stand-in configure: CC=.*ccache gcc' "$TMP/cc-1.txt" || fail "TRILLIAN_CCACHE=1: $(cat "$TMP/cc-1.txt")"
    grep -qx 'stand-in configure: CC=.*ccache gcc' "$TMP/cc-unset.txt" ||
        fail "TRILLIAN_CCACHE unset: the gcc stage should use ccache: $(cat "$TMP/cc-unset.txt")"
    grep -qx 'stand-in configure: CC=' "$TMP/cc-0.txt" || fail "TRILLIAN_CCACHE=0: $(cat "$TMP/cc-0.txt")"
    grep -qF 'no ccache (not on PATH, or TRILLIAN_CCACHE=0)' "$TMP/cc-0/logs/toolchain.log" ||
        fail "TRILLIAN_CCACHE=0: the log does not say the compiler is built without ccache"
    ok "ccache: the gcc stage compiles through it by default and with TRILLIAN_CCACHE=1, not with 0"
fi

# --- host_cflags: the flags of GCC's own programs (-O2 unless set) -------------
grep -qx 'stand-in configure: CFLAGS=-O2 CXXFLAGS=-O2' "$TMP/o1/logs/toolchain.log" ||
    fail "host_cflags unset: $(grep 'stand-in configure: CFLAGS' "$TMP/o1/logs/toolchain.log")"
trl build "$R/wrapped.cfg" --cache "$TMP/c" -o "$TMP/o5" -j1 --set toolchain.host_cflags=-O1
grep -qx 'stand-in configure: CFLAGS=-O1 CXXFLAGS=-O1' "$TMP/o5/logs/toolchain.log" ||
    fail "host_cflags = -O1: $(grep 'stand-in configure: CFLAGS' "$TMP/o5/logs/toolchain.log")"
ok "host_cflags: GCC's programs are compiled with -O2 by default and with what it sets"

# --- binutils from a tarball: its steps run first, without GCC's flags ---------
mkdir -p "$R/bu/binutils-9.9"
cat >"$R/bu/binutils-9.9/configure" <<'SH'
#!/bin/sh
echo "stand-in binutils configure: $*"
echo "stand-in binutils configure: CFLAGS=$CFLAGS CC=$CC"
exit 1
SH
chmod 755 "$R/bu/binutils-9.9/configure"
tar -C "$R/bu" -czf "$R/binutils-9.9.tar.gz" binutils-9.9
recipe bu gcc-9_9.9.9.orig.tar.gz ok.patch 'binutils = "binutils-9.9.tar.gz"; host_cflags = "-O1";'
trl build "$R/bu.cfg" --cache "$TMP/c" -o "$TMP/o6" -j1
expect_rc 1
L=$TMP/o6/logs/toolchain.log
grep -q "^stand-in binutils configure: --prefix=.* --target=ia64-linux-gnu --disable-nls " "$L" ||
    fail "binutils' configure did not get the prefix, target and flags: $(grep stand-in "$L")"
grep -qx "stand-in binutils configure: CFLAGS= CC=" "$L" ||
    fail "binutils got GCC's host_cflags or compiler: $(grep 'stand-in binutils' "$L")"
! grep -q "stand-in configure" "$L" || fail "GCC's configure ran after binutils' failed"
expect_out "step 'binutils-configure' of the toolchain failed (binutils' configure: see "
grep -q "step binutils-configure$" "$TMP/o1/logs/toolchain.log" &&
    fail "with the host's binutils, binutils' configure ran"
grep -q "source binutils not used here" "$TMP/o1/logs/toolchain.log" ||
    fail "with the host's binutils, a binutils source was unpacked"
grep -q "step binutils-link not needed here" "$L" || fail "a built binutils was also linked from the host"
ok "binutils from a tarball: configured first into the prefix, without GCC's flags; its failure named, GCC never configured"

# nothing of the failed builds entered the cache: its objects/ is empty
[ -z "$(ls -A "$TMP/c/objects" 2>/dev/null)" ] ||
    fail "a failed toolchain build left an entry in the cache: $(ls "$TMP/c/objects")"
ok "no failed build was cached"
