# Starts GRUB ia64-efi (the packages kind grub, built through the test cache)
# in the HP Ski simulator under ski-efi, Ski's minimal EFI firmware, through
# the boot-check engine's ski-efi row, and expects GRUB's greeting. Needs
# bski and ski-efi (neither ships with Trillian: TRILLIAN_SKI or bski on
# PATH, TRILLIAN_SKI_EFI); otherwise SKIP. GRUB's build needs Debian's
# archive the first time (about 6-20 minutes on 2 cores).
. "$TOP/tests/lib.sh"
SKI=${TRILLIAN_SKI:-$(command -v bski || echo /opt/ski/bin/bski)}
EFI=${TRILLIAN_SKI_EFI:-/opt/ski/ski-efi}
[ -x "$SKI" ] || skip "no Ski simulator (bski): set TRILLIAN_SKI"
[ -r "$EFI" ] || skip "no ski-efi firmware (built from the Ski sources): set TRILLIAN_SKI_EFI"
[ -r /usr/src/gcc-12/gcc-12.2.0-dfsg.tar.xz ] || skip "no gcc-12-source (tools/install-deps)"
export TRILLIAN_SKI=$SKI TRILLIAN_SKI_EFI=$EFI
mkdir -p "$TMP/r"
ln -s "$TOP/recipes/include" "$TMP/r/include"
cp "$TOP/tests/fixtures/grub-ski-efi/grub-ski-efi.cfg" "$TMP/r/"
R=$TMP/r/grub-ski-efi.cfg C=$TRILLIAN_TEST_CACHE

trl build "$R" --cache "$C" -o "$TMP/o" -j2
grep -v '^  |' "$TMP/out.txt" | tail -n 6
expect_rc 0
log=$TMP/o/grub-ski/grub-ski.log
grep -q 'Welcome to GRUB!' "$log" || fail "no GRUB greeting in $log"
grep -q '"result": "pass"' "$TMP/o/grub-ski/stage-manifest.json" || fail "not a pass"
ok "GRUB ia64-efi built here starts in Ski: $(tr -d '\000\r' <"$log" | grep -m1 'Welcome to GRUB')"

# a greeting that never comes fails the check (exit 3)
sed 's/Welcome to GRUB!/NEVER-PRINTED/' "$R" >"$TMP/r/bad.cfg"
trl check "$TMP/r/bad.cfg" --cache "$C" -o "$TMP/o2"
[ "$rc" -eq 3 ] || { cat "$TMP/out.txt"; fail "a missing greeting gave exit $rc, expected 3"; }
ok "a greeting that never comes: exit 3"
