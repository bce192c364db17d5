# The jobserver: two stages that each run `make` with many jobs share -j2,
# so no more than two jobs ever run at once, and both slots are used.
. "$TOP/tests/lib.sh"
need make
mkdir -p "$TMP/running"
cat > "$TMP/Makefile" <<'MK'
JOBS := 1 2 3 4 5 6
all: $(JOBS)
$(JOBS):
	@touch $(RUNNING)/$(STAGE)-$@; ls $(RUNNING) | wc -l >> $(RUNNING)/../counts; sleep 0.4; rm $(RUNNING)/$(STAGE)-$@
.PHONY: all $(JOBS)
MK
cat > "$TMP/js.cfg" <<CFG
name = "js";
arch = "amd64";
stages = (
  { name = "m1"; kind = "command"; argv = ["make", "-s", "-f", "$TMP/Makefile", "RUNNING=$TMP/running", "STAGE=m1"]; outputs = []; },
  { name = "m2"; kind = "command"; argv = ["make", "-s", "-f", "$TMP/Makefile", "RUNNING=$TMP/running", "STAGE=m2"]; outputs = []; }
);
CFG
trl build "$TMP/js.cfg" --cache "$TMP/cache" -o "$TMP/out" -j2
expect_rc 0
max=$(sort -n "$TMP/counts" | tail -n1)
echo "concurrency samples: $(tr '\n' ' ' < "$TMP/counts")"
[ "$max" -le 2 ] || fail "saw $max jobs at once under -j2"
[ "$max" -eq 2 ] || fail "never ran two jobs at once (max $max): jobserver not shared"
[ "$(wc -l < "$TMP/counts")" -eq 12 ] || fail "not all 12 jobs ran"
ok "12 make jobs in 2 stages never exceeded -j2"

rm -f "$TMP/counts"
trl build "$TMP/js.cfg" --cache "$TMP/cache2" -o "$TMP/out2" -j1
expect_rc 0
[ "$(sort -n "$TMP/counts" | tail -n1)" -eq 1 ] || fail "-j1 ran jobs in parallel"
ok "-j1 runs one job at a time"

# With fewer slots than ready stages, the longest chain starts first: under
# -j1, "lone" (listed first, nothing needs it) waits for the chain a -> b -> c;
# after a build, each stage's own time decides: a slow lone stage goes first.
cat > "$TMP/order.cfg" <<CFG
name = "order";
arch = "amd64";
stages = (
  { name = "lone"; kind = "command"; argv = ["sleep", "\${sleep_lone}"]; outputs = []; },
  { name = "a"; kind = "command"; argv = ["true"]; outputs = []; },
  { name = "b"; kind = "command"; argv = ["true"]; outputs = []; after = ["a"]; },
  { name = "c"; kind = "command"; argv = ["true"]; outputs = []; after = ["b"]; }
);
CFG
sed -i 's/\${sleep_lone}/0.1/' "$TMP/order.cfg"
trl build "$TMP/order.cfg" --cache "$TMP/cache3" -o "$TMP/out3" -j1
expect_rc 0
first=$(grep -m1 ': started' "$TMP/out.txt" | sed 's/.*\] //; s/:.*//')
[ "$first" = a ] || { cat "$TMP/out.txt" >&2; fail "under -j1 '$first' started first, not the chain's 'a'"; }
sed -i 's/"sleep", "0.1"/"sleep", "2"/' "$TMP/order.cfg"
trl build "$TMP/order.cfg" --cache "$TMP/cache3" -o "$TMP/out3" -j1
expect_rc 0
trl build "$TMP/order.cfg" --cache "$TMP/cache3" -o "$TMP/out3" -j1 --force lone --force a
expect_rc 0
first=$(grep -m1 ': started' "$TMP/out.txt" | sed 's/.*\] //; s/:.*//')
[ "$first" = lone ] || { cat "$TMP/out.txt" >&2; fail "after a 2 s build of 'lone', '$first' started first"; }
ok "the longest chain gets the first slot (kind hints, then each stage's last time)"

# A stage that ends hands its job token to the next stage in the start order,
# not back to the pipe, where a running make (blocked reading it) would take
# it first and the next stage would wait for that make's jobs to run out.
# "long" runs eight 1 s jobs; "short" ends after 0.5 s; "next" needs it.
# Judged by the order of events in one log, not by the clock: while "short"
# or "next" holds the pipe's token, long's make has only its implicit slot,
# so until "next" starts no two of its jobs may overlap. Had make taken the
# token, two of its jobs would run before "next" could.
cat > "$TMP/Makefile.long" <<'MK'
JOBS := 1 2 3 4 5 6 7 8
all: $(JOBS)
$(JOBS):
	@echo start >> $(EV); sleep 1; echo end >> $(EV)
.PHONY: all $(JOBS)
MK
cat > "$TMP/hand.cfg" <<CFG
name = "hand";
arch = "amd64";
stages = (
  { name = "long"; kind = "command"; argv = ["make", "-s", "-f", "$TMP/Makefile.long", "EV=$TMP/events"]; outputs = []; },
  { name = "short"; kind = "command"; argv = ["sh", "-c", "sleep 0.5; echo short-end >> $TMP/events"]; outputs = []; },
  { name = "next"; kind = "command"; argv = ["sh", "-c", "echo next >> $TMP/events"]; outputs = []; after = ["short"]; }
);
CFG
# the first build records each stage's time, so that "long" starts first in
# the second and "short" runs on the pipe's token
trl build "$TMP/hand.cfg" --cache "$TMP/cache4" -o "$TMP/out4" -j2
expect_rc 0
rm -f "$TMP/events"
trl build "$TMP/hand.cfg" --cache "$TMP/cache4" -o "$TMP/out4" -j2 --force long --force short
expect_rc 0
first=$(grep -m1 ': started' "$TMP/out.txt" | sed 's/.*\] //; s/:.*//')
[ "$first" = long ] || { cat "$TMP/out.txt" >&2; fail "'$first' started first, not 'long'"; }
# counted from short's end (its token free) to next's start: before it,
# make may have won a token race the engine is not answerable for
most=$(awk '$1 == "next" { exit } $1 == "short-end" { on = 1; m = n } $1 == "start" { n++; if (on && n > m) m = n } $1 == "end" { n-- } END { print m + 0 }' "$TMP/events")
grep -qx next "$TMP/events" || fail "next never ran: $(tr '\n' ' ' < "$TMP/events")"
[ "$most" -le 1 ] ||
    fail "$most of long's make jobs ran at once between short's end and next's start: its token went to make ($(tr '\n' ' ' < "$TMP/events"))"
ok "a finished stage's token starts the next stage at once (long's make never had two jobs before it)"
