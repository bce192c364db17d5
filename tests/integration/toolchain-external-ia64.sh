# toolchain, kind "external", accepted: a real ia64-linux-gnu gcc prefix
# (TRILLIAN_IA64_GCC_PREFIX, else /opt/trillian-dev/ia64-gcc as
# bench/ia64-toolchain-by-hand.sh builds it, else the toolchain stage's own
# output from the shared test cache) passes the compiler check,
# lands in the cache with `target` and a manifest naming e_machine 50, the
# cached compiler still works (it is relocatable), and a rebuild is a cache hit.
. "$TOP/tests/lib.sh"
P=${TRILLIAN_IA64_GCC_PREFIX:-/opt/trillian-dev/ia64-gcc}
if [ ! -x "$P/bin/ia64-linux-gnu-gcc" ] && [ -z "${TRILLIAN_IA64_GCC_PREFIX:-}" ]; then
    # none given: the one the shipped recipes build (include/ia64-toolchain.cfg),
    # from the shared test cache (ia64-minimal.sh built it) or built here
    [ -r /usr/src/gcc-12/gcc-12.2.0-dfsg.tar.xz ] || skip "no ia64 gcc at $P and no gcc-12-source"
    mkdir -p "$TMP/tc"
    ln -s "$TOP/recipes/include" "$TMP/tc/include"
    printf 'name = "tc";\n@include "include/ia64-toolchain.cfg"\n' >"$TMP/tc/tc.cfg"
    trl build "$TMP/tc/tc.cfg" --cache "$TRILLIAN_TEST_CACHE" -o "$TMP/tc/out" -j2
    expect_rc 0
    P=$TMP/tc/out/toolchain
fi
[ -x "$P/bin/ia64-linux-gnu-gcc" ] || skip "no ia64 gcc at $P (build one with bench/ia64-toolchain-by-hand.sh $P)"
need ia64-linux-gnu-readelf
C=$TMP/cache O=$TMP/out
cat >"$TMP/r.cfg" <<EOF2
name = "toolchain-external-ia64";
description = "external ia64 toolchain, accepted";
arch = "ia64";
source_date_epoch = 1700000000;
toolchain = { kind = "external"; prefix = "$P"; };
EOF2
trl build "$TMP/r.cfg" --cache "$C" -o "$O"
expect_rc 0
expect_out "toolchain: done"
[ "$(cat "$O/toolchain/target")" = ia64-linux-gnu ] || fail "target file: $(cat "$O/toolchain/target")"
grep -q '"e_machine": 50' "$O/manifest.json" || fail "manifest lacks e_machine 50"
grep -q 'ok, compiles and links IA-64 code (ELF e_machine 50)' "$O/logs/toolchain.log" \
    || fail "log lacks the passed check"
ok "accepted: $(grep -o 'ok, compiles and links[^,]*' "$O/logs/toolchain.log")"

# The cached copy compiles on its own (gcc finds cc1, as and ld relative to itself).
printf 'int f(int x) { return x * 3; }\nvoid _start(void) { for (;;) ; }\n' >"$TMP/t.c"
"$O/toolchain/bin/ia64-linux-gnu-gcc" -ffreestanding -nostdlib -static -O2 -o "$TMP/t" "$TMP/t.c" \
    || fail "the cached compiler cannot build a program"
ia64-linux-gnu-readelf -h "$TMP/t" | grep -q 'Machine: *Intel IA-64' || fail "not an IA-64 program"
ok "the cached compiler builds IA-64 programs"

trl build "$TMP/r.cfg" --cache "$C" -o "$O"
expect_rc 0
expect_out "toolchain: cached"
ok "second build is a cache hit"
echo PASS
