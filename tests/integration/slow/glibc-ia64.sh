# Slow tier: glibc 2.36 for ia64 built from Debian's glibc-source with the
# ia64 stage-1 gcc against Linux 6.1's UAPI headers (packages kind glibc),
# then a GCC stage 2 against that sysroot (packages kind gcc), through the
# shared test cache: tests/fixtures/glibc-ia64.cfg, whose toolchain and
# headers stage are ia64-bookworm's (the same keys: its glibc and gcc are
# ia64-bookworm's root's). Cold: ~30 minutes for glibc and ~20 for gcc stage 2
# on 2 cores (docs/userland.md); warm: a minute. Checks: the sysroot has an IA-64
# ld-linux-ia64.so.2 and libc.so.6.1 whose ABI tag (readelf) is the manifest's
# min_kernel, the manifest has the glibc version and the headers' kernel
# version, a too-new enable_kernel fails naming both versions; the stage-2 gcc links a dynamic hello world
# whose program interpreter is /lib/ld-linux-ia64.so.2, and ships an IA-64
# libgcc_s.so.1.
. "$TOP/tests/lib.sh"
need ia64-linux-gnu-as ia64-linux-gnu-readelf make gcc g++ flex bison bc gawk
for f in /usr/src/gcc-12/gcc-12.2.0-dfsg.tar.xz /usr/src/linux-source-6.1.tar.xz \
         /usr/src/glibc/glibc-2.36.tar.xz; do
    [ -r "$f" ] || skip "$f is missing (tools/install-deps installs it)"
done
C=${TRILLIAN_TEST_CACHE:-$TMP/cache} O=$TMP/out
R=$TOP/tests/fixtures/glibc-ia64.cfg

t0=$SECONDS
trl build "$R" --cache "$C" -o "$O" -j2
grep -v '^  |' "$TMP/out.txt" | tail -n 8
expect_rc 0
ok "built (or found cached) in $((SECONDS - t0)) s"
for s in glibc gcc; do
    grep -E "^\[?.*(unpack|configure|make|install|make-all-gcc|make-all-target-libgcc): [0-9.]+ s" \
        "$O/logs/$s.log" 2>/dev/null | sed "s/^/$s: /" || true
done

S=$O/glibc/sysroot
for f in lib/ld-linux-ia64.so.2 lib/libc.so.6.1; do
    [ -f "$S/$f" ] || fail "sysroot lacks $f"
    ia64-linux-gnu-readelf -h "$S/$f" | grep -q 'Machine: *Intel IA-64' || fail "$f is not IA-64"
done
[ -f "$S/usr/include/stdio.h" ] && [ -f "$S/usr/include/linux/version.h" ] \
    || fail "sysroot lacks glibc's or the kernel's headers"
[ "$(cat "$O/glibc/version")" = 2.36 ] || fail "version file: $(cat "$O/glibc/version")"
grep -q '"glibc": "2.36"' "$O/manifest.json" || fail "manifest lacks the glibc version"
min=$(ia64-linux-gnu-readelf -n "$S/lib/libc.so.6.1" | sed -n 's/.*OS: Linux, ABI: \([0-9.]*\).*/\1/p')
[ -n "$min" ] || fail "libc.so.6.1 has no Linux ABI tag"
grep -q "\"min_kernel\": \"$min\"" "$O/manifest.json" || fail "manifest min_kernel is not readelf's $min"
ok "sysroot: IA-64 ld.so and libc.so.6.1 (glibc 2.36, minimum kernel $min)"

# a glibc that needs a newer kernel than the headers': refused, naming both
rel=$(cat "$O/headers/version")
grep -q "\"kernel_release\": \"$rel\"" "$O/manifest.json" || fail "manifest lacks the headers' $rel"
trl build "$R" --cache "$C" -o "$TMP/out2" -j2 --set packages.glibc.enable_kernel=9.0.0
expect_rc 1
expect_out "kernel too old for this glibc"
expect_out "9.0.0"
expect_out "$rel"
ok "enable_kernel 9.0.0 against headers of $rel: refused"

# the stage-2 compiler: dynamic programs against the sysroot
G=$O/gcc
[ "$(cat "$G/target")" = ia64-linux-gnu ] || fail "gcc stage: target file"
printf '#include <stdio.h>\nint main(void) { puts("hi"); return 0; }\n' >"$TMP/hello.c"
"$G/bin/ia64-linux-gnu-gcc" -O2 -o "$TMP/hello" "$TMP/hello.c" || fail "stage-2 gcc cannot link hello"
ia64-linux-gnu-readelf -l "$TMP/hello" | grep -q 'interpreter: /lib/ld-linux-ia64.so.2' \
    || fail "hello's interpreter: $(ia64-linux-gnu-readelf -l "$TMP/hello" | grep interpreter)"
ia64-linux-gnu-readelf -h "$G/runtime/lib/libgcc_s.so.1" | grep -q 'Machine: *Intel IA-64' \
    || fail "runtime/lib/libgcc_s.so.1 is not IA-64"
ok "stage-2 gcc links a dynamic IA-64 hello world (interpreter /lib/ld-linux-ia64.so.2), libgcc_s.so.1"
# GCC's own programs compiled with the toolchain's host_cflags (the bookworm
# chain's -O1), as stage 1's were, so that stage 1's ccache objects serve it
want=$(sed -n 's/^ *host_cflags = "\([^"]*\)";.*/\1/p' "$TOP/recipes/include/ia64-toolchain.cfg")
[ -n "$want" ] || fail "include/ia64-toolchain.cfg sets no host_cflags"
grep -E -- "-c .* $want +-DIN_GCC .*toplev\.cc" "$O/logs/gcc.log" >/dev/null ||
    fail "stage 2 did not compile toplev.cc with the toolchain's host_cflags ($want): $(grep -m1 -E -- '-c .*toplev\.cc' "$O/logs/gcc.log" | cut -c1-200)"
ok "stage 2 compiled GCC's programs with the toolchain's host_cflags ($want)"

trl build "$R" --cache "$C" -o "$O" -j2
expect_rc 0
expect_out "glibc: cached"
expect_out "gcc: cached"
ok "second build is a cache hit"
echo PASS
