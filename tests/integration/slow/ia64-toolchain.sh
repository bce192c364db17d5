# Slow tier: toolchain kind "build" makes the ia64-linux-gnu gcc 12.2 stage 1
# from Debian's gcc-12-source tarball with Debian's ia64 binutils, through the
# cache: the result passes the compiler check (e_machine 50), builds IA-64
# programs from the cache, and a second build is a cache hit. Takes ~15-25
# minutes on 2 cores the first time (bench/ia64-toolchain-by-hand.sh is the
# by-hand baseline); later runs reuse the shared test cache.
. "$TOP/tests/lib.sh"
GCC_TARBALL=${TRILLIAN_GCC_TARBALL:-/usr/src/gcc-12/gcc-12.2.0-dfsg.tar.xz}
[ -r "$GCC_TARBALL" ] || skip "no $GCC_TARBALL (install gcc-12-source)"
need ia64-linux-gnu-as ia64-linux-gnu-ld ia64-linux-gnu-readelf gcc g++ make
C=${TRILLIAN_TEST_CACHE:-$TMP/cache} O=$TMP/out
cat >"$TMP/r.cfg" <<EOF2
name = "ia64-toolchain";
description = "ia64 gcc stage 1 built from the gcc-12 source tarball";
arch = "ia64";
source_date_epoch = 1700000000;
toolchain = { kind = "build"; gcc = "$GCC_TARBALL"; binutils = "system"; };
EOF2
t0=$(date +%s)
trl build "$TMP/r.cfg" --cache "$C" -o "$O" -j 2
expect_rc 0
t1=$(date +%s)
grep -q '"e_machine": 50' "$O/manifest.json" || fail "manifest lacks e_machine 50"
[ "$(cat "$O/toolchain/target")" = ia64-linux-gnu ] || fail "target file wrong"
ok "built (or found cached) in $((t1 - t0)) s: $(grep -oE 'toolchain: (done|cached)' "$TMP/out.txt" | head -n1)"
grep -E '^\[?.*(configure|make-all-gcc|make-all-target-libgcc|install): [0-9.]+ s' "$O/logs/toolchain.log" 2>/dev/null || true

printf 'int f(int x) { return x * 3; }\nvoid _start(void) { for (;;) ; }\n' >"$TMP/t.c"
"$O/toolchain/bin/ia64-linux-gnu-gcc" -ffreestanding -nostdlib -static -O2 -o "$TMP/t" "$TMP/t.c" \
    || fail "the built compiler cannot build a program"
ia64-linux-gnu-readelf -h "$TMP/t" | grep -q 'Machine: *Intel IA-64' || fail "not an IA-64 program"
ok "the cached compiler builds IA-64 programs"

trl build "$TMP/r.cfg" --cache "$C" -o "$O"
expect_rc 0
expect_out "toolchain: cached"
ok "second build is a cache hit"
echo PASS
