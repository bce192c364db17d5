# The last lines of a build say what was verified: a table of the stages
# (built, cached, failed, skipped with its reason, blocked, not started),
# each boot check's verdict, the images with sha256 and what to do with
# them, and a verdict line naming the primary image and its sha256. A build
# whose only boot check was skipped (or that has none) is "built, not
# boot-verified" (exit 0), on the terminal and in report.html; a passing
# check (the fake emulator) is "PASS (shell at N s)", a failing one "FAIL at
# step N ..." with exit 3. OUT/SHA256SUMS lists the images' files, sorted,
# checks with sha256sum -c and is the same from a fresh cache.
. "$TOP/tests/lib.sh"
. "$TOP/tests/fixtures/image-lib.sh"
need mke2fs sha256sum python3
FAKE=$TOP/tests/fixtures/fake-emulator
printf 'code' > "$TMP/CODE.fd"
printf 'vars' > "$TMP/VARS.fd"
export TRILLIAN_OVMF_CODE=$TMP/CODE.fd FAKE_EMU_PASSWORD=pw
unset FAKE_EMU_MODE TRILLIAN_SKI TRILLIAN_SKI_BOOTLOADER
image_inputs

# The verdict line is the last line of the output.
last_line() { tail -n 1 "$TMP/out.txt"; }
expect_last() { # fixed-string pattern
    last_line | grep -qF -- "$1" || { cat "$TMP/out.txt" >&2; fail "last line lacks: $1"; }
}
# One <h1> verdict of report.html.
verdict_of() { python3 - "$1" <<'PY'
import re, sys
page = open(sys.argv[1]).read()
m = re.search(r'<span id="verdict" class="([^"]*)">([^<]*)</span>', page)
d = re.search(r'<p id="verdict-detail">([^<]*)</p>', page)
print(m.group(1), "|", m.group(2), "|", d.group(1) if d else "")
PY
}

# 1. A disk image whose only boot check is optional and skipped (no
# emulator): exit 0, but not a green "ok".
image_recipe skip '{ kind = "disk"; name = "disk"; size_mib = 32; }'
cat >> "$TMP/skip.cfg" <<CFG
bootcheck = ( { kind = "boot"; name = "boot-qemu"; image = "disk"; optional = true;
  firmware_vars = "$TMP/VARS.fd"; password = "pw"; } );
CFG
O=$TMP/out-skip
TRILLIAN_QEMU_X86_64=$TMP/no-such-qemu trl build "$TMP/skip.cfg" --cache "$TMP/cache" -o "$O" -j2
expect_rc 0
sum=$(sha256sum "$O/disk/disk.img" | cut -d' ' -f1)
expect_last "trillian: built, not boot-verified: $O/disk/disk.img sha256 $sum; boot-qemu SKIPPED (emulator qemu-x86_64: TRILLIAN_QEMU_X86_64=$TMP/no-such-qemu is not an executable program"
expect_no_out "trillian: ok"
grep -Eq "^  boot-qemu +[0-9.]+ s  skipped: emulator qemu-x86_64: " "$TMP/out.txt" ||
    { cat "$TMP/out.txt"; fail "the stage table does not show the check as skipped with its reason"; }
expect_out "    write it with dd if=$O/disk/disk.img of=/dev/sdX bs=4M conv=fsync"
expect_out "    boot it in an emulator: see docs/bootcheck.md"
v=$(verdict_of "$O/report.html")
case $v in
"unverified | built, not boot-verified | Built, but no boot check passed: disk/disk.img sha256 $sum; boot-qemu SKIPPED (emulator qemu-x86_64: TRILLIAN_QEMU_X86_64="*) ;;
*) fail "report.html verdict: $v" ;;
esac
! grep -q 'build ok' "$O/report.html" || fail "report.html says build ok"
ok "only check skipped: exit 0, 'built, not boot-verified' with the reason and the image's sha256, here and in report.html"

# No boot checks at all: not verified either, and it says so.
image_recipe nocheck '{ kind = "disk"; name = "disk"; size_mib = 32; }'
trl build "$TMP/nocheck.cfg" --cache "$TMP/cache" -o "$TMP/out-nocheck" -j2
expect_rc 0
expect_last "trillian: built, not boot-verified: $TMP/out-nocheck/disk/disk.img sha256 $sum; no boot checks in the recipe"
verdict_of "$TMP/out-nocheck/report.html" | grep -q '^unverified | built, not boot-verified |.*no boot checks in the recipe' ||
    fail "report.html without checks: $(verdict_of "$TMP/out-nocheck/report.html")"
ok "no boot checks: 'built, not boot-verified: ... no boot checks in the recipe'"

# 2. The fake emulator passes the check: PASS with the time the shell
# answered, from the check's own stage manifest.
O=$TMP/out-pass
TRILLIAN_QEMU_X86_64=$FAKE FAKE_EMU_DELAY=0.5 trl build "$TMP/skip.cfg" --cache "$TMP/cache" -o "$O" -j2
expect_rc 0
shell=$(python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
assert d["result"] == "pass" and d["shell_seconds"] >= d["marker_seconds"] > 0.4, d
print("%.1f" % d["shell_seconds"])' "$O/boot-qemu/stage-manifest.json") || fail "no shell_seconds in the check's stage manifest"
expect_last "trillian: ok, boot-verified: $O/disk/disk.img sha256 $sum; boot-qemu PASS (shell at $shell s)"
grep -Eq "^  boot-qemu +PASS \(shell at $shell s\)$" "$TMP/out.txt" || fail "no verdict under 'boot checks'"
verdict_of "$O/report.html" | grep -qF "pass | build ok, boot-verified | Boot-verified: disk/disk.img sha256 $sum; boot-qemu PASS (shell at $shell s)" ||
    fail "report.html verdict: $(verdict_of "$O/report.html")"
# a later build reuses the passing check and says it comes from the cache
TRILLIAN_QEMU_X86_64=$FAKE trl build "$TMP/skip.cfg" --cache "$TMP/cache" -o "$O" -j2
expect_rc 0
expect_last "boot-qemu PASS (cached: shell at $shell s)"
ok "a passing check: 'ok, boot-verified', PASS (shell at $shell s), in report.html too; cached says so"

# A failing check: FAILED, exit 3, the step that failed.
TRILLIAN_QEMU_X86_64=$FAKE FAKE_EMU_MODE=wrong-machine trl check "$TMP/skip.cfg" --cache "$TMP/cache" \
    -o "$TMP/out-fail" -j2 --set bootcheck.boot-qemu.command_timeout=2
expect_rc 3
expect_last "trillian: FAILED: $TMP/out-fail/disk/disk.img sha256 $sum; boot-qemu FAIL at step 07 machine: expect: expect /^x86_64\$/"
verdict_of "$TMP/out-fail/report.html" | grep -q '^fail | build FAILED | Failed: .*boot-qemu FAIL at step 07 machine: expect' ||
    fail "report.html verdict: $(verdict_of "$TMP/out-fail/report.html")"
ok "a failing check: FAILED, exit 3, FAIL at the step"

# 3. SHA256SUMS: every file of the images, sorted, relative to OUT; the same
# from a fresh cache; no stale one after a build without images.
(cd "$O" && sha256sum --quiet -c SHA256SUMS) || fail "sha256sum -c SHA256SUMS failed"
(cd "$O" && find disk -type f ! -name stage-manifest.json | LC_ALL=C sort) > "$TMP/files"
cut -d' ' -f3- "$O/SHA256SUMS" > "$TMP/listed"
cmp -s "$TMP/files" "$TMP/listed" || { diff "$TMP/files" "$TMP/listed"; fail "SHA256SUMS does not list exactly the images' files, sorted"; }
grep -qx "$sum  disk/disk.img" "$O/SHA256SUMS" || fail "SHA256SUMS lacks disk/disk.img"
trl build "$TMP/skip.cfg" --cache "$TMP/cache2" -o "$TMP/out-fresh" -j2 \
    --set bootcheck.boot-qemu.binary=/nonexistent
cmp "$O/SHA256SUMS" "$TMP/out-fresh/SHA256SUMS" || fail "SHA256SUMS differs from a fresh cache"
ok "SHA256SUMS: checks with sha256sum -c, lists the images' files sorted, the same from a fresh cache"

# 4. The states kept apart: built, failed, skipped (exit 77, with the
# command's own reason, not an error), blocked by a failure or a skip.
cat > "$TMP/states.cfg" <<'CFG'
name = "states";
arch = "amd64";
stages = (
  { name = "bad"; kind = "command"; argv = ["sh", "-c", "exit 3"]; outputs = []; },
  { name = "after-bad"; kind = "command"; argv = ["true"]; outputs = []; after = ["bad"]; },
  { name = "skipper"; kind = "command";
    argv = ["sh", "-c", "echo no frobnicator on this host >&2; exit 77"]; outputs = []; },
  { name = "after-skip"; kind = "command"; argv = ["true"]; outputs = []; after = ["skipper"]; },
  { name = "other"; kind = "command"; argv = ["true"]; outputs = []; }
);
CFG
trl build "$TMP/states.cfg" --cache "$TMP/cache3" -o "$TMP/out-states" -j1 --keep-going
expect_rc 1
expect_out "trillian: states: 5 stages: 1 built, 0 cached, 1 failed, 1 skipped, 2 blocked, 0 not started, in "
expect_out "skipper: SKIPPED: no frobnicator on this host"
grep -Eq "^  skipper +[0-9.]+ s  skipped: no frobnicator on this host$" "$TMP/out.txt" || fail "skip reason not in the table"
grep -Eq "^  after-bad +- +blocked by 'bad' \(failed\)$" "$TMP/out.txt" || fail "after-bad not blocked by bad"
grep -Eq "^  after-skip +- +blocked by 'skipper' \(skipped\)$" "$TMP/out.txt" || fail "after-skip not blocked by skipper"
grep -Eq "^  bad +[0-9.]+ s  failed: the command exited with status 3$" "$TMP/out.txt" || fail "bad's failure"
expect_last "trillian: FAILED: stage 'bad' failed (the command exited with status 3); no boot checks in the recipe"
expect_no_out "error: stage skipper"
! grep -q "error" "$TMP/out-states/logs/skipper.log" || fail "the skip is logged as an error: $(cat "$TMP/out-states/logs/skipper.log")"
ok "--keep-going: failed, skipped with its reason (not an error), blocked by a failure and by a skip, built"

# Without --keep-going the build stops at the failure: what needs it is
# blocked, the rest not started (-j1: bad, on the longest chain, goes first).
trl build "$TMP/states.cfg" --cache "$TMP/cache4" -o "$TMP/out-stop" -j1
expect_rc 1
expect_out "trillian: states: 5 stages: 0 built, 0 cached, 1 failed, 0 skipped, 1 blocked, 3 not started, in "
for s in skipper after-skip other; do
    grep -Eq "^  $s +- +not started$" "$TMP/out.txt" || fail "$s is not 'not started'"
done
python3 - "$TMP/out-stop/manifest.json" "$TMP/out-states/manifest.json" <<'PY' || fail "manifest statuses"
import json, sys
stop = {s["name"]: s for s in json.load(open(sys.argv[1]))["stages"]}
assert {n: s["status"] for n, s in stop.items()} == {"bad": "failed", "after-bad": "blocked",
    "skipper": "not-started", "after-skip": "not-started", "other": "not-started"}, stop
assert "--keep-going" in stop["other"]["reason"], stop["other"]
kg = {s["name"]: s for s in json.load(open(sys.argv[2]))["stages"]}
assert kg["skipper"]["status"] == "skipped" and kg["skipper"]["reason"] == "no frobnicator on this host", kg
assert kg["after-skip"]["reason"] == "blocked by 'skipper' (skipped)", kg
assert kg["after-bad"]["reason"] == "blocked by 'bad' (failed)", kg
PY
ok "without --keep-going: blocked vs. not started, in the table and the manifest"
