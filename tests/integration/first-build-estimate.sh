# The first build's estimate: stages this cache has no kept time for are
# costed from a table of CPU seconds recorded on a reference machine,
# scaled by this machine's probe compile against the reference's, and
# spread over the job slots as busily as the reference build kept its
# cores. Said before the build starts, with --substituter as the faster way;
# not said once the cache keeps the stages' times; a bad table is named
# with its line and the build goes on.
. "$TOP/tests/lib.sh"
need cc
cat > "$TMP/est.cfg" <<'CFG'
name = "est";
arch = "amd64";
stages = (
  { name = "a"; kind = "command"; argv = ["sh", "-c", "echo a > $TRILLIAN_OUT/o"]; outputs = ["o"]; },
  { name = "b"; kind = "command"; argv = ["sh", "-c", "echo b > $TRILLIAN_OUT/o"]; outputs = ["o"]; after = ["a"]; },
  { name = "c"; kind = "command"; argv = ["sh", "-c", "echo c > $TRILLIAN_OUT/o"]; outputs = ["o"]; after = ["a"]; }
);
CFG
mkdir -p "$TMP/costs"
cp "$TOP/recipes/costs/probe.c" "$TMP/costs/probe.c"
cat > "$TMP/costs/stages" <<'EOF'
# a test table: the reference probe took 1 s, its build kept the cores half busy
recipe est probe=1.0 busy=0.5
stage est a 600
stage est b 900
stage other a 5
EOF
export TRILLIAN_COSTS=$TMP/costs/stages

# 1500 CPU-s at probe 1 s; here the probe takes 2 s (fixed for the test), so
# 3000 CPU-s here, over 2 jobs at half their time: 3000 s, 50 min
TRILLIAN_PROBE_SECONDS=2 trl build "$TMP/est.cfg" --cache "$TMP/cache" -o "$TMP/out" -j2
expect_rc 0
expect_out "first build of 3 stages here: roughly 50 min on this machine (2 jobs)"
expect_out "probe compile took 1.00 s; here it took 2.00 s"
expect_out "1 of them has no recorded cost and is not counted"
expect_out "faster: --substituter URL|DIR"
# said before any stage starts
awk '/first build of/ { seen = 1 } / a: started/ { exit !seen }' "$TMP/out.txt" ||
    { cat "$TMP/out.txt"; fail "the estimate came after a stage started"; }
ok "no kept times: roughly 50 min from 1500 recorded CPU-s, before the first stage starts"

# one job: the same work over one slot
TRILLIAN_PROBE_SECONDS=2 trl build "$TMP/est.cfg" --cache "$TMP/cache1" -o "$TMP/out1" -j1
expect_rc 0
expect_out "roughly 100 min on this machine (1 job)"
ok "one job slot: twice the time"

# the cache now keeps every stage's time: the estimate is not said
TRILLIAN_PROBE_SECONDS=2 trl build "$TMP/est.cfg" --cache "$TMP/cache" -o "$TMP/out" -j2 --force a
expect_rc 0
expect_no_out "first build"
expect_no_out "--substituter"
ok "kept times: no first-build estimate"

# only a stage with a kept time is missing from the cache but c is new: the
# estimate covers the new stage alone, which has no cost here: nothing said
rm -f "$TMP/cache/times/est/c"
TRILLIAN_PROBE_SECONDS=2 trl build "$TMP/est.cfg" --cache "$TMP/cache" -o "$TMP/out" -j2 --force a
expect_rc 0
expect_no_out "first build"
ok "a new stage with no recorded cost alone: nothing to estimate"

# with a substituter that has none of the stages: built here, and said so
if command -v ssh-keygen >/dev/null; then
    ssh-keygen -q -t ed25519 -N '' -C 'trillian test' -f "$TMP/key" || fail "ssh-keygen"
    mkdir -p "$TMP/empty-subst"
    TRILLIAN_PROBE_SECONDS=2 trl build "$TMP/est.cfg" --cache "$TMP/cache7" -o "$TMP/out7" -j2 \
        --substituter "$TMP/empty-subst" --trust "$TMP/key.pub"
    expect_rc 0
    expect_out "roughly 50 min on this machine (2 jobs)"
    expect_out "the substituters offered none of these stages: they are built here"
    expect_no_out "faster: --substituter"
    ok "a substituter without these stages: the estimate, and no advice to add one"
fi

# the real probe: its own figure, and the total follows from it
trl build "$TMP/est.cfg" --cache "$TMP/cache2" -o "$TMP/out2" -j2
expect_rc 0
here=$(sed -n 's/.*here it took \([0-9.]*\) s.*/\1/p' "$TMP/out.txt")
said=$(sed -n 's/.*roughly \([0-9]*\) \(s\|min\) on this machine.*/\1 \2/p' "$TMP/out.txt")
[ -n "$here" ] && [ -n "$said" ] || { cat "$TMP/out.txt"; fail "no probe figure or estimate"; }
python3 - "$here" $said <<'PY' || fail "estimate '$said' does not follow from the probe's $here s"
import sys
here, n, unit = float(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
assert here > 0, "probe"
want = 1500 * here / 1.0 / (2 * 0.5)  # seconds
got = n * 60 if unit == "min" else n
# the probe is printed to 0.01 s, the total to a minute
lo, hi = 1500 * (here - 0.005) / 1.0, 1500 * (here + 0.005) / 1.0
assert lo - 60 <= got <= hi + 60, (got, want)
print("probe %.1f s: said %d %s, computed %.0f s" % (here, n, unit, want))
PY
ok "the probe compile runs here ($here s) and scales the recorded costs"

# a bad table: named with its line; the build goes on without an estimate
printf 'recipe est probe=1.0 busy=0.5\nstage est a lots\n' > "$TMP/costs/bad"
TRILLIAN_COSTS=$TMP/costs/bad TRILLIAN_PROBE_SECONDS=2 \
    trl build "$TMP/est.cfg" --cache "$TMP/cache3" -o "$TMP/out3" -j2
expect_rc 0
expect_out "no estimate of this first build's time: $TMP/costs/bad:2: not \"recipe NAME probe=SECONDS busy=FRACTION\" or \"stage RECIPE STAGE CPU-SECONDS\"; rewrite it with bench/stage-costs"
[ -s "$TMP/out3/c/o" ] || fail "the build did not go on"
printf 'stage est a 10\n' > "$TMP/costs/norecipe"
TRILLIAN_COSTS=$TMP/costs/norecipe TRILLIAN_PROBE_SECONDS=2 \
    trl build "$TMP/est.cfg" --cache "$TMP/cache4" -o "$TMP/out4" -j2
expect_rc 0
expect_out "no \"recipe est probe=SECONDS busy=FRACTION\" line"
TRILLIAN_PROBE_SECONDS=fast trl build "$TMP/est.cfg" --cache "$TMP/cache5" -o "$TMP/out5" -j2
expect_rc 0
expect_out "TRILLIAN_PROBE_SECONDS=fast is not a positive number of seconds"
ok "a bad table or probe figure: one line naming it, the build goes on"

# a recipe the table does not know: nothing said, no probe run (no cc on
# PATH would make a probe fail loudly)
sed 's/name = "est"/name = "unknown"/' "$TMP/est.cfg" > "$TMP/unknown.cfg"
mkdir -p "$TMP/bin"
for p in sh cat mkdir rm mv cp ln; do ln -sf "$(command -v $p)" "$TMP/bin/$p"; done
PATH=$TMP/bin trl build "$TMP/unknown.cfg" --cache "$TMP/cache6" -o "$TMP/out6" -j2
expect_rc 0
expect_no_out "estimate"
expect_no_out "first build"
ok "a recipe with no recorded costs: no estimate and no probe"

# the shipped table parses and its costs cover the default recipe's stages
unset TRILLIAN_COSTS
grep -q '^recipe ia64-minimal probe=' "$TOP/recipes/costs/stages" ||
    fail "recipes/costs/stages has no costs for the default recipe"
"$TRILLIAN" plan ia64-minimal --json > "$TMP/plan.json" 2>/dev/null || fail "plan ia64-minimal"
python3 - "$TMP/plan.json" "$TOP/recipes/costs/stages" <<'PY' || fail "the default's stages in the table"
import json, sys
stages = [s["name"] for s in json.load(open(sys.argv[1]))["stages"]]
have = {l.split()[2] for l in open(sys.argv[2]) if l.startswith("stage ia64-minimal ")}
missing = [s for s in stages if s not in have]
# the cheap stages (a second or two) may be left out; the compiles may not
for s in ("toolchain", "glibc", "gcc", "kernel", "grub", "qemu-ia64"):
    assert s in have, "no cost for " + s
print("the default's %d stages, %d with a recorded cost; without: %s"
      % (len(stages), len(stages) - len(missing), " ".join(missing) or "none"))
PY
ok "the shipped table costs the default recipe's compiles"
