# Compiler launchers (--ccache, --distcc) on the kernel stage, with the fake
# tree of kernel-patch.sh built whole (its drivers compiled with $(CC)), so
# it runs in seconds:
#  - neither changes a key: a build with them is a cache hit of one without
#  - --ccache: the compiles go through ccache under CACHE/ccache/kernel; a
#    rebuild from a fresh tree is all ccache hits, with the same vmlinux
#  - --distcc HOSTS: the compiles reach a distccd listening on 127.0.0.1
#    (its log records them), with the same vmlinux; with --ccache too, the
#    ccache misses go to distccd
#  - a malformed host list is refused before anything runs
. "$TOP/tests/lib.sh"
need make tar gcc ld nm ccache distcc distccd python3
F=$TOP/tests/fixtures
tar -C "$F" -czf "$TMP/linux-fake.tar.gz" kernel-fake-tree
C=$TMP/cache
cat > "$TMP/k.cfg" <<'CFG'
name = "kernel-launchers-test";
arch = "amd64";
source_date_epoch = 1700000000;
kernel = { kind = "source"; tarball = "linux-fake.tar.gz"; defconfig = "tinyconfig"; };
CFG
stats() { CCACHE_DIR=$C/ccache/kernel ccache --print-stats | awk -v k="$1" '$1 == k {print $2}'; }
fresh() { rm -rf "$C/keep"; } # the kernel stage rebuilds incrementally in KEEP

trl build "$TMP/k.cfg" --cache "$C" -o "$TMP/plain"
expect_rc 0
[ -s "$TMP/plain/kernel/vmlinux" ] || fail "the fake tree built no vmlinux"
grep -q 'compiles through' "$TMP/plain/logs/kernel.log" && fail "a launcher was used without being asked for"
want=$(sha256sum < "$TMP/plain/kernel/vmlinux")
trl plan "$TMP/k.cfg" --cache "$C" --ccache --distcc 127.0.0.1/2
expect_rc 0
expect_out "cached"
trl build "$TMP/k.cfg" --cache "$C" -o "$TMP/hit" --ccache
expect_out "kernel: cached"
ok "neither launcher is part of the kernel's key"

fresh
trl build "$TMP/k.cfg" --cache "$C" -o "$TMP/cc1" --ccache --force kernel
expect_rc 0
grep -q "compiles through .*ccache (CCACHE_DIR $C/ccache/kernel)" "$TMP/cc1/logs/kernel.log" ||
    fail "the log does not say ccache was used: $(grep -i ccache "$TMP/cc1/logs/kernel.log")"
grep -q "CC=.*ccache gcc" "$TMP/cc1/logs/kernel.log" || fail "make was not given CC with ccache"
[ "$(stats cache_miss)" = 2 ] || fail "expected 2 ccache misses (foo.c, bar.c): $(stats cache_miss)"
fresh
trl build "$TMP/k.cfg" --cache "$C" -o "$TMP/cc2" --ccache --force kernel
expect_rc 0
hits=$(( $(stats direct_cache_hit) + $(stats preprocessed_cache_hit) ))
[ "$hits" = 2 ] || fail "a rebuild from a fresh tree was not all ccache hits: $hits"
[ "$(sha256sum < "$TMP/cc2/kernel/vmlinux")" = "$want" ] || fail "vmlinux differs through ccache"
ok "--ccache: misses, then hits from a fresh tree, the same vmlinux"

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
user=()
[ "$(id -u)" -eq 0 ] && user=(--user nobody)
distccd --no-detach --daemon --listen 127.0.0.1 --port "$port" --allow 127.0.0.1 "${user[@]}" \
    --log-stderr --log-level info --jobs 2 2>"$TMP/distccd.log" &
dpid=$!
trap 'kill $dpid 2>/dev/null; wait $dpid 2>/dev/null' EXIT
for _ in $(seq 50); do
    python3 -c "import socket; socket.create_connection(('127.0.0.1', $port), 0.2)" 2>/dev/null && break
    sleep 0.1
done
fresh
trl build "$TMP/k.cfg" --cache "$C" -o "$TMP/d1" --distcc "127.0.0.1:$port/2" --force kernel
expect_rc 0
grep -q "compiles through .*distcc to 127.0.0.1:$port/2" "$TMP/d1/logs/kernel.log" ||
    fail "the log does not say distcc was used"
n=$(grep -c 'COMPILE_OK' "$TMP/distccd.log")
[ "$n" = 2 ] || { cat "$TMP/distccd.log" >&2; fail "distccd compiled $n files, expected 2"; }
[ "$(sha256sum < "$TMP/d1/kernel/vmlinux")" = "$want" ] || fail "vmlinux differs through distcc"
ok "--distcc: both compiles ran on the distccd at 127.0.0.1:$port, the same vmlinux"

fresh
rm -rf "$C/ccache/kernel"
trl build "$TMP/k.cfg" --cache "$C" -o "$TMP/d2" --ccache --distcc "127.0.0.1:$port/2" --force kernel
expect_rc 0
grep -q "ccache (CCACHE_DIR $C/ccache/kernel), then distcc to 127.0.0.1:$port/2" "$TMP/d2/logs/kernel.log" ||
    fail "the log does not say ccache then distcc"
[ "$(grep -c 'COMPILE_OK' "$TMP/distccd.log")" = 4 ] || fail "ccache's misses did not go to distccd"
[ "$(stats cache_miss)" = 2 ] || fail "ccache saw no misses"
ok "--ccache --distcc: ccache's misses compiled on distccd"

trl build "$TMP/k.cfg" --cache "$C" -o "$TMP/bad" --distcc "'a','b'"
expect_rc 2
expect_out "is not a distcc host"
[ ! -e "$TMP/bad" ] || fail "a refused host list left an output directory"
ok "a malformed host list is refused before the build"
