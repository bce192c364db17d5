# One builder per key: two builds of different recipes that share stages,
# started at once on one cache, build each shared stage once (the other
# waits, says for whom, and reuses the entry), and their outputs are the
# same bytes even where a stage is not reproducible.
. "$TOP/tests/lib.sh"
C=$TMP/cache
for n in one two; do
    cat >"$TMP/$n.cfg" <<CFG
name = "$n"; arch = "amd64"; source_date_epoch = 1700000000;
stages = (
  { name = "shared"; kind = "command";
    argv = ["sh", "-c", "echo x >> \"\$1\"; sleep 2; echo \$\$ > \"\$TRILLIAN_OUT/o\"", "sh", "\${recipe_dir}/count-shared"];
    outputs = ["o"]; },
  { name = "after"; kind = "command";
    argv = ["sh", "-c", "echo x >> \"\$1\"; cat \"\$2/o\" > \"\$TRILLIAN_OUT/p\"; echo \$\$ >> \"\$TRILLIAN_OUT/p\"", "sh", "\${recipe_dir}/count-after", "\${stage:shared}"];
    outputs = ["p"]; },
  { name = "own-$n"; kind = "command"; argv = ["sh", "-c", "echo $n > \"\$TRILLIAN_OUT/q\""];
    outputs = ["q"]; }
);
CFG
done
"$TRILLIAN" build "$TMP/one.cfg" --cache "$C" -o "$TMP/o1" >"$TMP/one.txt" 2>&1 &
p1=$!
"$TRILLIAN" build "$TMP/two.cfg" --cache "$C" -o "$TMP/o2" >"$TMP/two.txt" 2>&1 &
p2=$!
wait $p1; r1=$?
wait $p2; r2=$?
[ $r1 -eq 0 ] && [ $r2 -eq 0 ] || { cat "$TMP/one.txt" "$TMP/two.txt"; fail "exit $r1 and $r2"; }
[ "$(wc -l < "$TMP/count-shared")" -eq 1 ] || { cat "$TMP/one.txt" "$TMP/two.txt"; fail "the shared stage ran $(wc -l < "$TMP/count-shared") times"; }
[ "$(wc -l < "$TMP/count-after")" -eq 1 ] || fail "the stage after it ran $(wc -l < "$TMP/count-after") times"
cat "$TMP/one.txt" "$TMP/two.txt" >"$TMP/out.txt"
expect_out "waiting for shared, being built by pid"
cmp "$TMP/o1/shared/o" "$TMP/o2/shared/o" || fail "the two builds have different bytes for one key"
cmp "$TMP/o1/after/p" "$TMP/o2/after/p" || fail "the two builds have different bytes for one key"
[ -s "$TMP/o1/own-one/q" ] && [ -s "$TMP/o2/own-two/q" ] || fail "a build's own stage is missing"
ok "two builds sharing stages build each once and publish the same bytes"

# Two keys of one recipe's stage (another --set) share CACHE/keep/RECIPE/STAGE
# (a kernel's O= tree): they take turns in it.
cat >"$TMP/keep.cfg" <<'CFG'
name = "keep"; arch = "amd64"; source_date_epoch = 1700000000;
stages = ( { name = "k"; kind = "command";
    argv = ["sh", "-c", "echo start >> \"$1\"; sleep 1; echo end >> \"$1\"; touch \"$TRILLIAN_OUT/o\"", "sh", "${recipe_dir}/turns"];
    outputs = ["o"]; } );
CFG
"$TRILLIAN" build "$TMP/keep.cfg" --cache "$C" -o "$TMP/k1" --set stages.k.env=A=1 >"$TMP/k1.txt" 2>&1 &
p1=$!
"$TRILLIAN" build "$TMP/keep.cfg" --cache "$C" -o "$TMP/k2" --set stages.k.env=A=2 >"$TMP/k2.txt" 2>&1 &
p2=$!
wait $p1; r1=$?
wait $p2; r2=$?
[ $r1 -eq 0 ] && [ $r2 -eq 0 ] || { cat "$TMP/k1.txt" "$TMP/k2.txt"; fail "exit $r1 and $r2"; }
[ "$(tr '\n' ' ' < "$TMP/turns")" = "start end start end " ] || fail "the two builds were in keep/ at once: $(tr '\n' ' ' < "$TMP/turns")"
cat "$TMP/k1.txt" "$TMP/k2.txt" >"$TMP/out.txt"
expect_out "waiting for k's build directory, used by pid"
ok "two keys of one stage take turns in its keep/ directory"

# A stage queued for a job slot does not hold its key: build A (-j1) runs
# its long stage first (the kept times put it first) with 'shared' ready
# behind it; build B, started meanwhile, builds 'shared' itself at once
# instead of waiting for A, and A then reuses B's entry. Ordered by files,
# not by the clock: A's long stage ends when the test says so.
mkdir -p "$C/times/qa"
echo 100 >"$C/times/qa/long"
echo 1 >"$C/times/qa/shared"
for n in qa qb; do
    cat >"$TMP/$n.cfg" <<CFG
name = "$n"; arch = "amd64"; source_date_epoch = 1700000000;
stages = (
  { name = "shared"; kind = "command";
    argv = ["sh", "-c", "echo x >> \"\$1\"; echo s > \"\$TRILLIAN_OUT/o\"", "sh", "\${recipe_dir}/count-q"];
    outputs = ["o"]; }$( [ $n = qa ] && echo ',
  { name = "long"; kind = "command";
    argv = ["sh", "-c", "touch \"$1.started\"; while [ ! -e \"$1\" ]; do sleep 0.1; done; touch \"$TRILLIAN_OUT/o\"", "sh", "${recipe_dir}/release"];
    outputs = ["o"]; }')
);
CFG
done
"$TRILLIAN" build "$TMP/qa.cfg" --cache "$C" -o "$TMP/qa" -j1 >"$TMP/qa.txt" 2>&1 &
pa=$!
for _ in $(seq 600); do [ -e "$TMP/release.started" ] && break; sleep 0.1; done
[ -e "$TMP/release.started" ] || { touch "$TMP/release"; fail "A's long stage never started: $(cat "$TMP/qa.txt")"; }
grep -q 'shared: started' "$TMP/qa.txt" && { touch "$TMP/release"; fail "A started 'shared' first: $(cat "$TMP/qa.txt")"; }
# B would block on A's lock for as long as A's long stage runs: bound it,
# then let A go either way
timeout 120 "$TRILLIAN" build "$TMP/qb.cfg" --cache "$C" -o "$TMP/qb" -j1 >"$TMP/qb.txt" 2>&1
rb=$?
touch "$TMP/release"
wait $pa; ra=$?
[ $rb -eq 0 ] && [ $ra -eq 0 ] || { cat "$TMP/qa.txt" "$TMP/qb.txt"; fail "exit $ra (A) and $rb (B)"; }
grep -q 'waiting for shared' "$TMP/qb.txt" && { cat "$TMP/qb.txt"; fail "B waited for a stage A had only queued"; }
[ "$(wc -l < "$TMP/count-q")" -eq 1 ] || fail "'shared' ran $(wc -l < "$TMP/count-q") times"
ok "a stage queued for a slot leaves its key to a build that can start it; the other reuses the entry"
