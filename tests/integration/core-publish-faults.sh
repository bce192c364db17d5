# A kill or a full disk at the worst moment of storing a stage's outputs:
# SIGKILL just before the cache commit's rename, in the middle of the copy
# into OUT, and just after OUT/STAGE is replaced; ENOSPC during that copy,
# injected and on a real small file system. Each time the cache holds only
# complete entries (`cache verify`), OUT/STAGE is a complete tree (the old
# one, the new one, or none), and the next builds give exactly what
# undisturbed builds give. TRILLIAN_TEST_FAULT (docs/engine.md, "Test
# hook") stops trillian at the exact point, so nothing here is timed.
. "$TOP/tests/lib.sh"
C=$TMP/cache O=$TMP/out
# Two versions of one stage. Their outputs have the same names, sizes and
# mtimes (a reproducible stage's are clamped): only the bytes tell them
# apart, as only the cache's sums do.
for v in 1 2; do
    cat >"$TMP/r$v.cfg" <<CFG
name = "faults"; arch = "amd64";
stages = (
  { name = "data"; kind = "command";
    argv = ["sh", "-c", "cd \"\$TRILLIAN_OUT\" && echo v\$V > a.txt && head -c 2097152 /dev/zero | tr '\\\\0' \$V > big.bin && echo end > z.txt && touch -d @1700000000 a.txt big.bin z.txt"];
    env = ["V=$v"];
    outputs = ["a.txt", "big.bin", "z.txt"]; }
);
CFG
done

tree() { # DIR: each path below DIR with its file's sha256, or "absent"
    [ -e "$1" ] || { echo absent; return; }
    (cd "$1" && find . -mindepth 1 | LC_ALL=C sort | while IFS= read -r f; do
        if [ -f "$f" ]; then printf '%s %s\n' "$(sha256sum <"$f" | cut -c1-64)" "$f"
        else printf 'dir %s\n' "$f"; fi
    done)
}
expect_tree() { # DIR WANT(1|2|absent) WHAT
    local want=absent what=absent
    [ "$2" = absent ] || { want=$(cat "$TMP/ref$2.tree"); what="r$2's complete tree"; }
    [ "$(tree "$1")" = "$want" ] || fail "$3: $1 is not $what but:
$(tree "$1")"
}
expect_clean_cache() {
    trl cache verify --cache "$C"
    expect_rc 0
    expect_no_out BAD
}
# A rerun of r2 (and, with -o, any later build) gives what an undisturbed
# build gives, and leaves no temporary copy in OUT.
expect_rerun() { # OUTDIR
    trl build "$TMP/r2.cfg" --cache "$C" -o "$1"
    expect_rc 0
    expect_tree "$1/data" 2 "after the rerun"
    [ -z "$(find "$1" -maxdepth 1 -name '.data.*')" ] || fail "a temporary copy is left in $1: $(ls -a "$1")"
    expect_clean_cache
}

# The undisturbed builds, each into a fresh cache and OUT.
for v in 1 2; do
    [ -s "$TMP/ref$v.tree" ] && continue # made before this script ran again under unshare
    trl build "$TMP/r$v.cfg" --cache "$TMP/ref-cache$v" -o "$TMP/ref$v"
    expect_rc 0
    tree "$TMP/ref$v/data" >"$TMP/ref$v.tree"
done
[ "$(cat "$TMP/ref1.tree")" != "$(cat "$TMP/ref2.tree")" ] || fail "r1 and r2 build the same bytes"

can_exchange() { # DIR1 DIR2: whether renameat2(RENAME_EXCHANGE) works there
    mkdir -p "$1" "$2" && python3 - "$1" "$2" <<'PY'
import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
AT_FDCWD, RENAME_EXCHANGE = -100, 2
a, b = (p.encode() for p in sys.argv[1:3])
sys.exit(0 if libc.renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE) == 0 else 1)
PY
    local rc=$?
    rmdir "$1" "$2"
    return $rc
}

tpid=
cleanup() { [ -n "$tpid" ] && kill -KILL "$tpid" 2>/dev/null; }
trap cleanup EXIT
# paused POINT [OUTDIR]: r2's build with the hook's stop at POINT, in the
# background; returns once trillian is stopped there.
paused() {
    TRILLIAN_TEST_FAULT=stop@$1 "$TRILLIAN" build "$TMP/r2.cfg" --cache "$C" -o "${2:-$O}" \
        >"$TMP/out.txt" 2>&1 &
    tpid=$!
    local state=
    for _ in $(seq 1200); do # a guard, not a timing: it stops or it ends
        state=$(awk '{print $3}' "/proc/$tpid/stat" 2>/dev/null)
        [ "$state" = T ] && break
        if [ -z "$state" ] || [ "$state" = Z ]; then
            cat "$TMP/out.txt" >&2
            fail "trillian ended without stopping at $1"
        fi
        sleep 0.1
    done
    [ "$state" = T ] || fail "trillian did not stop at $1 in 120 s: $(cat "$TMP/out.txt")"
    expect_out "test hook: stopped at $1"
}
killed() {
    kill -KILL "$tpid"
    wait "$tpid" 2>/dev/null
    tpid=
}
with_r1() { # a fresh cache, and OUT holding r1's complete build
    rm -rf "$C" "$O"
    trl build "$TMP/r1.cfg" --cache "$C" -o "$O"
    expect_rc 0
    expect_tree "$O/data" 1 "r1's build"
}

# A real full disk: OUT on a 3 MiB tmpfs holds r1's 2 MiB tree, but not r2's
# copy beside it. In a private mount namespace, so the mount dies with it.
full_disk() {
    mount -t tmpfs -o size=3m tmpfs "$TMP/small" || exit 3
    O=$TMP/small/out
    with_r1
    trl build "$TMP/r2.cfg" --cache "$C" -o "$O"
    expect_rc 1
    grep -qi "data: cannot publish its outputs into $O: no space left" "$TMP/out.txt" ||
        { cat "$TMP/out.txt" >&2; fail "no line naming $O and no space left"; }
    expect_clean_cache
    expect_tree "$O/data" 1 "after a publish into a full OUT"
    [ -z "$(find "$O" -maxdepth 1 -name '.data.*')" ] || fail "a full disk left a copy in $O: $(ls -a "$O")"
    mount -o remount,size=16m "$TMP/small" || fail "cannot grow the tmpfs"
    expect_rerun "$O"
}
# (this script again, under unshare: the case at its end)
if [ "${FAULTS_FULL_DISK:-}" = 1 ]; then
    full_disk
    exit 0
fi

# SIGKILL at the commit: r2's entry is complete in CACHE/tmp, not yet renamed.
with_r1
paused commit
killed
[ "$(ls "$C/objects" | wc -l)" -eq 1 ] || fail "a killed commit left an entry: $(ls "$C/objects")"
expect_clean_cache
expect_tree "$O/data" 1 "after a kill at the commit"
[ -s "$(echo "$C"/tmp/*/out/z.txt)" ] || fail "the hook did not stop with the entry in $C/tmp: $(ls -R "$C/tmp")"
expect_rerun "$O"
ok "SIGKILL at the commit: no entry, OUT keeps r1; the rerun gives r2"

# SIGKILL in the middle of the copy into OUT: a.txt copied, big.bin not.
with_r1
paused publish
killed
expect_clean_cache
expect_tree "$O/data" 1 "after a kill during the copy"
[ -f "$O/.data.tmp/a.txt" ] && [ ! -e "$O/.data.tmp/big.bin" ] ||
    fail "the hook did not stop the copy between two outputs: $(ls -a "$O" "$O/.data.tmp")"
expect_rerun "$O"
ok "SIGKILL during publish: OUT keeps r1's complete tree; the rerun gives r2"

# The same into an OUT that never had the stage: none, not a part.
paused publish "$TMP/fresh"
killed
expect_clean_cache
expect_tree "$TMP/fresh/data" absent "after a kill during the first copy"
expect_rerun "$TMP/fresh"
ok "SIGKILL during a first publish: no OUT/data at all; the rerun gives r2"

# SIGKILL just after OUT/data became r2's, before the build's end writes
# OUT/.keys: an r1 build must not take r2's bytes (same names, sizes and
# mtimes) for its own.
with_r1
paused published
killed
expect_tree "$O/data" 2 "after a kill just after publishing"
# Where the file system can exchange two names (the engine's way), the old
# tree was swapped out whole: never removed before the new one was in.
if can_exchange "$O/.x1" "$O/.x2"; then
    expect_tree "$O/.data.tmp" 1 "the tree that OUT/data swapped out"
fi
trl build "$TMP/r1.cfg" --cache "$C" -o "$O"
expect_rc 0
expect_tree "$O/data" 1 "r1's build after a kill just after r2's publish"
expect_rerun "$O"
ok "SIGKILL just after publish: OUT has r2's complete tree, which no later r1 build takes for r1's"

# ENOSPC injected where the copy goes on after its first output.
with_r1
TRILLIAN_TEST_FAULT=enospc@publish trl build "$TMP/r2.cfg" --cache "$C" -o "$O"
expect_rc 1
expect_out "data: cannot publish its outputs into $O: No space left on device"
expect_clean_cache
expect_tree "$O/data" 1 "after a failed publish"
[ -z "$(find "$O" -maxdepth 1 -name '.data.*')" ] || fail "a failed publish left a copy in $O: $(ls -a "$O")"
expect_rerun "$O"
ok "ENOSPC during publish (injected): one line naming OUT, exit 1, OUT keeps r1; the rerun gives r2"

# ENOSPC injected at the commit: the stage fails, and nothing of it is kept.
with_r1
TRILLIAN_TEST_FAULT=enospc@commit trl build "$TMP/r2.cfg" --cache "$C" -o "$O"
expect_rc 1
expect_out "data: cannot store its outputs in the cache $C: No space left on device"
[ "$(ls "$C/objects" | wc -l)" -eq 1 ] || fail "a failed commit left an entry: $(ls "$C/objects")"
[ -z "$(ls "$C/tmp")" ] || fail "a failed commit left its directory: $(ls "$C/tmp")"
expect_clean_cache
expect_tree "$O/data" 1 "after a failed commit"
expect_rerun "$O"
ok "ENOSPC at the commit (injected): the stage fails naming the cache, no entry, OUT keeps r1; the rerun gives r2"

mkdir -p "$TMP/small"
unshare -m true 2>/dev/null || skip "unshare -m is not permitted here, so no small file system for the real full disk (the cases above passed)"
FAULTS_FULL_DISK=1 unshare -m --propagation private bash "${BASH_SOURCE[0]}"
case $? in
0) ok "a real full disk during publish: one line naming OUT, exit 1, OUT keeps r1; the rerun gives r2" ;;
3) skip "mounting a tmpfs is not permitted here, so no real full disk (the cases above passed)" ;;
*) fail "the real full disk case failed (above)" ;;
esac
