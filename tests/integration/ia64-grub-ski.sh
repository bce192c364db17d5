# Fast tier: the ia64 boot in Ski that CI runs (the hp-sim kernel's boot in
# Ski, slow/ia64-ski.sh, costs a kernel build more: slow tier).
# Starts GRUB ia64-efi (the packages kind grub, built through the test cache)
# in the HP Ski simulator under ski-efi, Ski's minimal EFI firmware, through
# the boot-check engine's ski-efi row, and expects GRUB's greeting. bski
# and ski-efi come from the fixture's `ski` emulators stage, built from the
# project's mirror (../shared/mirror); without it, SKIP. GRUB's build needs
# Debian's archive the first time (about 6-20 minutes on 2 cores).
. "$TOP/tests/lib.sh"
need_mirror
[ -r /usr/src/gcc-12/gcc-12.2.0-dfsg.tar.xz ] || skip "no gcc-12-source (tools/install-deps)"
unset TRILLIAN_SKI TRILLIAN_SKI_EFI
mkdir -p "$TMP/r"
ln -s "$TOP/recipes/include" "$TMP/r/include"
cp "$TOP/tests/fixtures/grub-ski-efi/grub-ski-efi.cfg" "$TMP/r/"
R=$TMP/r/grub-ski-efi.cfg C=$TRILLIAN_TEST_CACHE

# check, not build: a passing check is cached, and this one must boot
trl check "$R" --cache "$C" -o "$TMP/o" -j2
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
