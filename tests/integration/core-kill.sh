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

# A boot check's emulator runs in its own session (its pty), outside the
# stage's group: it goes too, even one that ignores the pty's hangup.
printf 'code' > "$TMP/CODE.fd"
printf 'vars' > "$TMP/VARS.fd"
tag=kill-$$-$RANDOM
ln -s "$TOP/tests/fixtures/fake-emulator" "$TMP/real-$tag"
printf '#!/bin/sh\ntrap "" HUP\nexec "%s" "$@"\n' "$TMP/real-$tag" >"$TMP/fake-$tag"
chmod +x "$TMP/fake-$tag"
cat >"$TMP/boot.cfg" <<CFG
name = "boot"; arch = "amd64";
stages = ( { name = "img"; kind = "command";
    argv = ["sh", "-c", "echo disk > \$TRILLIAN_OUT/img.img"]; outputs = ["img.img"]; } );
bootcheck = ( { kind = "boot"; name = "boot"; image = "img"; boot = "disk";
    firmware_vars = "$TMP/VARS.fd"; boot_timeout = 300; } );
CFG
emus() { pgrep -f "real-$tag"; }
cleanup() { [ -n "$pg" ] && kill -KILL -- "-$pg" 2>/dev/null; for p in $(emus); do kill -KILL "$p"; done; }
TRILLIAN_QEMU_X86_64=$TMP/fake-$tag TRILLIAN_OVMF_CODE=$TMP/CODE.fd FAKE_EMU_MODE=silent \
    FAKE_EMU_ARGS=$TMP/args "$TRILLIAN" build "$TMP/boot.cfg" --cache "$C" -o "$TMP/out-boot" \
    >"$TMP/out.txt" 2>&1 &
tpid=$!
for _ in $(seq 100); do [ -n "$(emus)" ] && break; sleep 0.1; done
[ -n "$(emus)" ] || fail "the fake emulator never started: $(cat "$TMP/out.txt")"
sleep 1 # past its boot output: a write to a hung-up pty would end it anyway
kill -KILL $tpid
wait $tpid 2>/dev/null
for _ in $(seq 50); do [ -z "$(emus)" ] && break; sleep 0.1; done
[ -z "$(emus)" ] || fail "SIGKILL of trillian left the emulator running: $(emus)"
ok "SIGKILL of trillian during a boot check leaves no emulator"
