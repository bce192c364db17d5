# Slow tier: the full default recipe, recipes/ia64-minimal.cfg, with its
# from-source root (recipes/include/ia64-minimal-root.cfg): glibc 2.36 for
# ia64 from source, a stage-2 gcc, busybox from Debian's source package built
# with it, assembled by the minimal userland kind. About 40 minutes the first
# time on 2 cores (glibc and gcc stage 2; the toolchain and kernel come from
# the shared test cache when the fast tier has built them), a cache hit
# after. Checks the root: IA-64 busybox whose program interpreter
# /lib/ld-linux-ia64.so.2 is in the root with libc.so.6.1 and libgcc_s.so.1,
# device nodes and owners, no headers or static libraries, the component
# versions in packages.tsv, and its compressed size (target: < 16 MiB).
# glibc is built against the headers stage (not the kernel): its manifest
# names the headers' version, and ia64-ski plans the same glibc, gcc and
# busybox keys (one root for both recipes).
. "$TOP/tests/lib.sh"
need ia64-linux-gnu-as ia64-linux-gnu-readelf make gcc g++ flex bison bc gawk dpkg-source apt-get xz
for f in /usr/src/gcc-12/gcc-12.2.0-dfsg.tar.xz /usr/src/linux-source-6.1.tar.xz \
         /usr/src/glibc/glibc-2.36.tar.xz; do
    [ -r "$f" ] || skip "$f is missing (tools/install-deps installs it)"
done
C=${TRILLIAN_TEST_CACHE:-$TMP/cache} O=$TMP/out

t0=$SECONDS
trl build ia64-minimal --cache "$C" -o "$O" -j2
grep -v '^  |' "$TMP/out.txt" | tail -n 12
expect_rc 0
ok "ia64-minimal with its root built (or found cached) in $((SECONDS - t0)) s"
grep -h 'make: [0-9.]* s' "$O/logs/busybox.log" | sed 's/^/busybox: /' || true

U=$O/userland
x=$TMP/root
mkdir -p "$x"
tar -xf "$U/rootfs.tar" -C "$x" --no-same-owner 2>/dev/null || fail "rootfs.tar does not unpack"
ia64-linux-gnu-readelf -h "$x/bin/busybox" | grep -q 'Machine: *Intel IA-64' || fail "busybox is not IA-64"
interp=$(ia64-linux-gnu-readelf -l "$x/bin/busybox" | sed -n 's/.*interpreter: \(.*\)]$/\1/p')
[ "$interp" = /lib/ld-linux-ia64.so.2 ] || fail "busybox's interpreter is '$interp'"
for f in lib/ld-linux-ia64.so.2 lib/libc.so.6.1 lib/libm.so.6.1 lib/libgcc_s.so.1; do
    [ -e "$x/$f" ] || fail "the root has no /$f"
    ia64-linux-gnu-readelf -h "$x/$f" | grep -q 'Machine: *Intel IA-64' || fail "/$f is not IA-64"
done
ok "busybox is IA-64 with interpreter $interp; ld.so, libc.so.6.1, libm.so.6.1, libgcc_s.so.1 in the root"

tar -tvf "$U/rootfs.tar" --numeric-owner >"$TMP/list"
awk '$2 != "0/0"' "$TMP/list" | head -n 3 | grep . && fail "entries not owned by root"
grep -Eq '^crw------- 0/0 +5,1 .* dev/console$' "$TMP/list" || fail "no dev/console"
grep -Eq '^l.* sbin/init -> \.\./bin/busybox$' "$TMP/list" || fail "no sbin/init"
! grep -Eq ' usr/include/|\.a$' "$TMP/list" || fail "headers or static libraries in the root"
rel=$(cat "$O/kernel/release")
for c in "glibc	2.36" "busybox	1." "gcc	12" "kernel	$rel"; do
    grep -q "^$c" "$U/packages.tsv" || fail "packages.tsv lacks '$c': $(cat "$U/packages.tsv")"
done
hv=$(cat "$O/headers/version")
grep -q "\"kernel_release\": \"$hv\"" "$O/manifest.json" && grep -q '"headers": "headers"' \
    "$O/manifest.json" || fail "glibc was not built against the headers stage ($hv)"
ok "tarball: $(wc -l <"$TMP/list") entries, all 0/0, device nodes; components: $(tail -n +2 "$U/packages.tsv" | cut -f1,2 | tr '\t\n' ' ')"

size=$(stat -c %s "$U/rootfs.tar")
gz=$(gzip -9n <"$U/rootfs.tar" | wc -c)
xzs=$(xz -9 <"$U/rootfs.tar" | wc -c)
echo "root: $size bytes, gzip -9 $gz, xz -9 $xzs"
[ "$gz" -lt $((16 * 1024 * 1024)) ] || fail "the root is $gz bytes gzipped, over 16 MiB"
ok "root size: $((size / 1024)) KiB, $((gz / 1024)) KiB gzip -9, $((xzs / 1024)) KiB xz -9 (target < 16 MiB)"

keys() { awk '$1 ~ /^(headers|glibc|gcc|busybox)$/ { print $1, $3 }' "$TMP/out.txt"; }
trl plan ia64-minimal --cache "$C"
k1=$(keys)
# the hp-sim patch is not shipped: any file stands in, plan applies nothing
trl plan ia64-ski --cache "$C" --set "kernel.patches=$TOP/README.md"
expect_rc 0
[ "$(echo "$k1" | wc -l)" -eq 4 ] && [ "$k1" = "$(keys)" ] \
    || fail "ia64-minimal and ia64-ski plan different roots: $k1 / $(keys)"
ok "ia64-ski shares the root's cache entries: $(echo $k1)"

trl build ia64-minimal --cache "$C" -o "$O" -j2
expect_rc 0
expect_out "busybox: cached"
expect_out "userland: cached"
ok "second build is a cache hit"
