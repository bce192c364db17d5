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
