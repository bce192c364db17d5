# Progress: not on a terminal, a line per running stage every interval
# (TRILLIAN_PROGRESS_INTERVAL, default 60 s) with its elapsed time and its
# log's last line; on a terminal, an overall line with stages done / total,
# the elapsed time and an estimate from the previous build's stage times,
# which the cache keeps (CACHE/times/RECIPE/STAGE).
. "$TOP/tests/lib.sh"
need script
cat > "$TMP/p.cfg" <<CFG
name = "prog";
arch = "amd64";
stages = (
  { name = "slow"; kind = "command"; argv = ["sh", "-c", "for i in 1 2 3 4; do echo step \$i; sleep 1; done; echo done > \$TRILLIAN_OUT/o"]; outputs = ["o"]; },
  { name = "after"; kind = "command"; argv = ["sh", "-c", "echo x > \$TRILLIAN_OUT/o"]; outputs = ["o"]; after = ["slow"]; }
);
CFG
TRILLIAN_PROGRESS_INTERVAL=1 trl build "$TMP/p.cfg" --cache "$TMP/cache" -o "$TMP/out" -j2
expect_rc 0
n=$(grep -c '\] slow: running for [0-9]* s: step [0-9]' "$TMP/out.txt")
[ "$n" -ge 2 ] || { cat "$TMP/out.txt"; fail "expected at least 2 progress lines for slow, saw $n"; }
ok "not on a terminal: $n progress lines for the running stage, with its log's last line"
grep -q 'after: running for' "$TMP/out.txt" && fail "a progress line for a stage that was not running"
t=$(cat "$TMP/cache/times/prog/slow")
awk -v t="$t" 'BEGIN { exit !(t >= 3.5 && t < 30) }' || fail "stage time kept: '$t'"
ok "the cache keeps the stage's time ($t s)"

# default interval: a 4-second stage prints no progress line
trl build "$TMP/p.cfg" --cache "$TMP/cache" -o "$TMP/out2" -j2 --force slow
expect_rc 0
grep -q 'running for' "$TMP/out.txt" && fail "progress lines before the 60 s default"
ok "default interval: no line within 60 s"

# on a terminal: the overall line, with an estimate from the last build
TERM=xterm script -qec "$TRILLIAN build $TMP/p.cfg --cache $TMP/cache -o $TMP/out3 -j2 --force slow" \
    "$TMP/tty.txt" >/dev/null 2>&1 </dev/null || fail "build on a terminal failed: $(tail -n 5 "$TMP/tty.txt")"
grep -aq '\[0/2 stages\] 0:0[0-9] elapsed, about [0-9]* s left (last build' "$TMP/tty.txt" ||
    { tr '\033' '~' < "$TMP/tty.txt" | tail -n 20; fail "no overall line with an estimate on the terminal"; }
# the first estimate: slow's and after's last times (about 4 s), less the
# little time slow has had
first=$(grep -ao 'about [0-9]* s left' "$TMP/tty.txt" | head -n 1 | tr -dc 0-9)
[ "$first" -ge 2 ] && [ "$first" -le 6 ] || fail "first estimate $first s, expected about 4 s"
ok "on a terminal: stages done / total, elapsed, estimate from the last build ($first s)"
rm -rf "$TMP/cache/times"
TERM=xterm script -qec "$TRILLIAN build $TMP/p.cfg --cache $TMP/cache -o $TMP/out4 -j2 --force slow" \
    "$TMP/tty2.txt" >/dev/null 2>&1 </dev/null || fail "build on a terminal failed"
grep -aq 'no earlier build to estimate from' "$TMP/tty2.txt" || fail "no 'no earlier build' note without times"
ok "without earlier times the overall line says so"
