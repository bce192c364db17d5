# Runner behaviour: a failing stage stops the build with exit 1, names the
# stage, command and log, shows the log's tail, and caches nothing;
# --keep-going runs the independent stages; an interrupt stops every child
# and exits 130 leaving the cache consistent, and a rerun completes.
. "$TOP/tests/lib.sh"
C=$TMP/cache
cat > "$TMP/fail.cfg" <<'CFG'
name = "fail";
arch = "amd64";
stages = (
  { name = "bad"; kind = "command";
    argv = ["sh", "-c", "echo line-one; echo the-last-words >&2; exit 3"];
    outputs = ["x"]; },
  { name = "after-bad"; kind = "command"; argv = ["true"]; outputs = []; after = ["bad"]; },
  { name = "other"; kind = "command"; argv = ["sh", "-c", "sleep 0.3; touch $TRILLIAN_OUT/y"];
    outputs = ["y"]; }
);
CFG
trl build "$TMP/fail.cfg" --cache "$C" -o "$TMP/out" -j1
expect_rc 1
expect_out "stage 'bad' failed: exit status 3"
expect_out "last command: sh -c"
expect_out "log: $TMP/out/logs/bad.log"
expect_out "| the-last-words"
grep -q the-last-words "$TMP/out/logs/bad.log" || fail "stderr not in the log"
grep -q line-one "$TMP/out/logs/bad.log" || fail "stdout not in the log"
[ -z "$(ls "$C/tmp" 2>/dev/null)" ] || fail "a failed stage left a tmp dir"
ok "failure report and exit 1"

trl build "$TMP/fail.cfg" --cache "$C" -o "$TMP/out" --keep-going -j1
expect_rc 1
expect_out "other: done"
expect_out "after-bad: not run: blocked by 'bad' (failed)"
ok "--keep-going"

# A stage that says it did not produce a declared output fails.
cat > "$TMP/noout.cfg" <<'CFG'
name = "noout";
arch = "amd64";
stages = ( { name = "liar"; kind = "command"; argv = ["true"]; outputs = ["promised.txt"]; } );
CFG
trl build "$TMP/noout.cfg" --cache "$C" -o "$TMP/out3"
expect_rc 1
expect_out "did not produce its declared output promised.txt"
[ -z "$(ls "$C/objects" 2>/dev/null | grep -v '^$' | xargs -r -I{} test -e "$C/objects/{}/out/promised.txt" && echo)" ] || true
ok "missing declared output fails"

# Interrupt: a long stage and its own child are stopped; exit 130.
cat > "$TMP/slow.cfg" <<'CFG'
name = "slow";
arch = "amd64";
stages = (
  { name = "long"; kind = "command";
    argv = ["sh", "-c", "echo $$ > \"$PIDFILE\"; sleep 300 & echo $! >> \"$PIDFILE\"; wait"];
    env = ["PIDFILE=${keep}/pids"];
    outputs = ["never"]; }
);
CFG
for sig in INT TERM; do
    "$TRILLIAN" build "$TMP/slow.cfg" --cache "$C" -o "$TMP/out4" >"$TMP/out.txt" 2>&1 &
    tpid=$!
    pidfile=$C/keep/slow/long/pids
    for _ in $(seq 50); do [ -s "$pidfile" ] && [ "$(wc -l < "$pidfile")" -ge 2 ] && break; sleep 0.1; done
    [ -s "$pidfile" ] || fail "the long stage never started"
    kill -$sig $tpid
    wait $tpid
    rc=$?
    expect_rc 130
    expect_out "interrupted"
    sleep 0.2
    while read -r p; do
        # a zombie is dead (this machine's init may not reap orphans)
        st=$(ps -o stat= -p "$p" 2>/dev/null)
        [ -z "$st" ] || [ "${st#Z}" != "$st" ] || fail "SIG$sig left process $p running ($st)"
    done < "$pidfile"
    rm -f "$pidfile"
    [ -z "$(ls "$C/tmp" 2>/dev/null)" ] || fail "SIG$sig left a tmp dir: $(ls "$C/tmp")"
    for e in "$C"/objects/*; do
        [ -e "$e" ] || continue
        [ -d "$e/out" ] && [ -f "$e/log" ] || fail "half-written cache entry $e"
    done
done
ok "SIGINT and SIGTERM stop every child, exit 130, leave no half entry"

# The rerun completes (with a quick command in place of the slow one).
trl build "$TMP/slow.cfg" --cache "$C" -o "$TMP/out4" \
    --set 'stages.long.argv=sh,-c,touch $TRILLIAN_OUT/never'
expect_rc 0
[ -e "$TMP/out4/long/never" ] || fail "rerun did not complete"
ok "rerun after an interrupt completes"
