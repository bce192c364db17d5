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
# 'after' waits for 'slow': while it waits (up to its "started" line) it
# gets no progress line. Once started it may get one on a loaded machine.
awk '/\] after: started/ { exit } /\] after: running for/ { bad = 1; exit } END { exit bad }' \
    "$TMP/out.txt" || fail "a progress line for a stage that was not running yet"
grep -q '\] after: started' "$TMP/out.txt" || fail "no start line for after"
read -r t cpu < "$TMP/cache/times/prog/slow"
awk -v t="$t" -v c="$cpu" 'BEGIN { exit !(t >= 3.5 && t < 30 && c >= 0 && c < t / 2) }' ||
    fail "stage time kept: '$t' s, CPU '$cpu' s (slow mostly sleeps)"
ok "the cache keeps the stage's time ($t s) and its CPU time ($cpu s)"

# CPU time: a stage that computes has CPU seconds close to its wall time,
# counted through its child (the stage's own process only waits); one that
# sleeps has next to none. In OUT/manifest.json and CACHE/times.
cat > "$TMP/c.cfg" <<'CFG'
name = "cpu";
arch = "amd64";
stages = (
  { name = "burn"; kind = "command"; argv = ["sh", "-c", "i=0; while [ $i -lt 400000 ]; do i=$((i+1)); done; echo $i > $TRILLIAN_OUT/o"]; outputs = ["o"]; },
  { name = "nap"; kind = "command"; argv = ["sh", "-c", "sleep 2; echo > $TRILLIAN_OUT/o"]; outputs = ["o"]; }
);
CFG
trl build "$TMP/c.cfg" --cache "$TMP/cache" -o "$TMP/outc" -j2
expect_rc 0
python3 - "$TMP/outc/manifest.json" <<'PY' || fail "cpu_seconds in the manifest"
import json, sys
st = {s["name"]: s for s in json.load(open(sys.argv[1]))["stages"]}
b, n = st["burn"], st["nap"]
print("burn: wall %.2f s, CPU %.2f s; nap: wall %.2f s, CPU %.2f s"
      % (b["wall_seconds"], b["cpu_seconds"], n["wall_seconds"], n["cpu_seconds"]))
assert 0.1 < b["cpu_seconds"] <= b["wall_seconds"] + 0.05, "burn"
assert n["wall_seconds"] >= 2 and n["cpu_seconds"] < 0.5, "nap"
PY
grep -q '\] burn: done in [0-9.]* s (CPU [0-9.]* s)' "$TMP/out.txt" || fail "no CPU time on the done line"
ok "CPU time: a computing stage's is near its wall time, a sleeping one's near zero"

# default interval: a 4-second stage prints no progress line
trl build "$TMP/p.cfg" --cache "$TMP/cache" -o "$TMP/out2" -j2 --force slow
expect_rc 0
grep -q 'running for' "$TMP/out.txt" && fail "progress lines before the 60 s default"
ok "default interval: no line within 60 s"

# on a terminal: the overall line, with an estimate from the last build
cp -r "$TMP/cache/times/prog" "$TMP/times-before"
TERM=xterm script -qec "$TRILLIAN build $TMP/p.cfg --cache $TMP/cache -o $TMP/out3 -j2 --force slow" \
    "$TMP/tty.txt" >/dev/null 2>&1 </dev/null || fail "build on a terminal failed: $(tail -n 5 "$TMP/tty.txt")"
grep -aq '\[0/2 stages\] 0:0[0-9] elapsed, about [0-9]* s left (last build' "$TMP/tty.txt" ||
    { tr '\033' '~' < "$TMP/tty.txt" | tail -n 20; fail "no overall line with an estimate on the terminal"; }
# the first estimate: the sum of slow's and after's times as the previous
# build kept them, less the time elapsed when the line was drawn. Bounds from
# the kept times and the line's own elapsed field, not from the clock, so a
# loaded machine cannot fail it.
last=$(awk '{ s += $1 } END { printf "%d", s + 0.999 }' "$TMP/times-before/slow" "$TMP/times-before/after")
line=$(grep -ao '\[0/2 stages\] 0:[0-9]* elapsed, about [0-9]* s left' "$TMP/tty.txt" | head -n 1)
first=$(echo "$line" | sed 's/.*about \([0-9]*\) s left/\1/')
el=$(echo "$line" | sed 's/.*0:\([0-9]*\) elapsed.*/\1/')
[ "$first" -le $((last + 1)) ] && [ "$first" -ge $((last - el - 2)) ] ||
    fail "first estimate $first s at $el s elapsed; the last build's stages took $last s"
ok "on a terminal: stages done / total, elapsed, estimate from the last build ($first s)"
rm -rf "$TMP/cache/times"
TERM=xterm script -qec "$TRILLIAN build $TMP/p.cfg --cache $TMP/cache -o $TMP/out4 -j2 --force slow" \
    "$TMP/tty2.txt" >/dev/null 2>&1 </dev/null || fail "build on a terminal failed"
grep -aq 'no earlier build to estimate from' "$TMP/tty2.txt" || fail "no 'no earlier build' note without times"
ok "without earlier times the overall line says so"
