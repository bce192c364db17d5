# A stage's processes die with the build: after SIGKILL of trillian (which
# it cannot catch), nothing of the running stage's process group lives on,
# and the rerun neither waits for the dead build's lock nor builds twice.
. "$TOP/tests/lib.sh"
C=$TMP/cache
cat >"$TMP/long.cfg" <<'CFG'
name = "long"; arch = "amd64";
stages = (
  { name = "long"; kind = "command";
    argv = ["sh", "-c", "ps -o pgid= $$ | tr -d ' ' > \"$PIDFILE.tmp\"; sh -c 'sleep 300; echo late > \"$1\"' sh \"$PIDFILE.late\" & sleep 300 & mv \"$PIDFILE.tmp\" \"$PIDFILE\"; wait"];
    env = ["PIDFILE=${keep}/pgid"];
    outputs = ["never"]; }
);
CFG
pgfile=$C/keep/long/long/pgid
pg=
group() { ps -eo pid=,pgid=,stat=,args= | awk -v g="$1" '$2 == g && $3 !~ /^Z/'; } # live ones
cleanup() { [ -n "$pg" ] && kill -KILL -- "-$pg" 2>/dev/null; }
trap cleanup EXIT
"$TRILLIAN" build "$TMP/long.cfg" --cache "$C" -o "$TMP/out" >"$TMP/out.txt" 2>&1 &
tpid=$!
for _ in $(seq 100); do [ -s "$pgfile" ] && break; sleep 0.1; done
[ -s "$pgfile" ] || fail "the stage never started: $(cat "$TMP/out.txt")"
pg=$(cat "$pgfile")
[ "$(group "$pg" | wc -l)" -ge 3 ] || fail "the stage's group has too few processes: $(group "$pg")"
kill -KILL $tpid
wait $tpid 2>/dev/null
alive=
for _ in $(seq 50); do
    alive=$(group "$pg")
    [ -z "$alive" ] && break
    sleep 0.1
done
[ -z "$alive" ] || fail "SIGKILL of trillian left the stage's processes running: $alive"
pg=
ok "SIGKILL of trillian leaves no process of its stage"

# The rerun takes over the dead build's lock at once (no waiting line).
trl build "$TMP/long.cfg" --cache "$C" -o "$TMP/out" --set 'stages.long.argv=sh,-c,touch $TRILLIAN_OUT/never'
expect_rc 0
expect_no_out "waiting for"
[ -e "$TMP/out/long/never" ] || fail "the rerun did not complete"
ok "the rerun takes over the dead build's lock and completes"
