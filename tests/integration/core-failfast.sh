# Fail fast: after a stage fails, no new stage starts; the build says which
# running stages it waits for and why (their results are cached) and that
# Ctrl-C is safe; those stages finish and are cached. --keep-going starts
# the stages that do not need the failed one. Ctrl-C while waiting stops at
# once with exit 130.
. "$TOP/tests/lib.sh"
C=$TMP/cache
cat > "$TMP/ff.cfg" <<'CFG'
name = "ff";
arch = "amd64";
stages = (
  { name = "bad"; kind = "command"; argv = ["sh", "-c", "sleep 0.3; exit 1"]; outputs = []; },
  { name = "slow"; kind = "command"; argv = ["sh", "-c", "sleep 2; touch $TRILLIAN_OUT/y"];
    outputs = ["y"]; },
  { name = "gate"; kind = "command"; argv = ["sleep", "1"]; outputs = []; },
  { name = "queued"; kind = "command"; argv = ["true"]; outputs = []; after = ["gate"]; }
);
CFG
trl build "$TMP/ff.cfg" --cache "$C" -o "$TMP/out" -j4
expect_rc 1
expect_out "stage 'bad' failed: exit status 1"
expect_out "'bad' failed, so no new stage starts (--keep-going would go on"
expect_out "waiting for 2 running stages ("
grep -q "waiting for 2 running stages (.*slow.*) to finish, so their results are cached" \
    "$TMP/out.txt" || fail "the wait does not name slow"
expect_out "Ctrl-C stops them at once and is safe"
expect_out "slow: done"
expect_out "gate: done"
expect_no_out "queued: started"
[ -e "$TMP/out/slow/y" ] || fail "the stage waited for did not publish its outputs"
ok "after a failure no stage starts; the wait is explained and the running ones finish"

trl build "$TMP/ff.cfg" --cache "$C" -o "$TMP/out" -j4 --keep-going
expect_rc 1
expect_out "slow: cached"
expect_out "queued: done"
expect_no_out "no new stage starts"
ok "--keep-going starts the stages that do not need the failed one; the waited-for ones were cached"

# Ctrl-C while waiting: at once, not after the running stage.
cat > "$TMP/ffint.cfg" <<'CFG'
name = "ffint";
arch = "amd64";
stages = (
  { name = "bad"; kind = "command"; argv = ["sh", "-c", "sleep 0.3; exit 1"]; outputs = []; },
  { name = "long"; kind = "command"; argv = ["sleep", "300"]; outputs = []; }
);
CFG
"$TRILLIAN" build "$TMP/ffint.cfg" --cache "$C" -o "$TMP/out2" -j2 >"$TMP/out.txt" 2>&1 &
tpid=$!
for _ in $(seq 100); do grep -q "waiting for 1 running stage (long)" "$TMP/out.txt" && break; sleep 0.1; done
expect_out "waiting for 1 running stage (long) to finish, so its result is cached"
t0=$(date +%s)
kill -INT $tpid
wait $tpid
rc=$?
expect_rc 130
# at once: not after the 300 s stage (a bound no loaded machine reaches)
[ $(( $(date +%s) - t0 )) -le 60 ] || fail "Ctrl-C while waiting took $(( $(date +%s) - t0 )) s"
expect_out "interrupted"
ok "Ctrl-C while waiting stops at once (exit 130)"
