# Slow tier (a kernel build more than CI's budget allows; the fast tier boots
# GRUB in Ski, ia64-grub-ski.sh). Boots the ia64 kernel in the HP Ski simulator: the fixture ia64-ski-payload
# (recipes/ia64-ski.cfg's toolchain and kernel) builds
# the toolchain, Linux 6.1 with the hp-sim patch and the ia64-ski fragment,
# and the payload initramfs, then the boot check runs bski and expects the
# payload's marker (release, machine ia64, the CPU lines). Ski comes from
# the fixture's `ski` emulators stage and the hp-sim patch from the recipe's
# pinned URL, both from the project's mirror.
. "$TOP/tests/lib.sh"
need_mirror
[ -r /usr/src/gcc-12/gcc-12.2.0-dfsg.tar.xz ] && [ -r /usr/src/linux-source-6.1.tar.xz ] \
    || skip "gcc-12-source or linux-source-6.1 is not installed"
unset TRILLIAN_SKI TRILLIAN_SKI_BOOTLOADER TRILLIAN_SKI_EFI # the ski stage's
C=$TRILLIAN_TEST_CACHE O=$TMP/out
# the recipe's toolchain and kernel with the payload instead of the
# from-source root (~40 minutes; slow/ia64-ski-shell.sh boots that):
# same stages, same cache keys
mkdir -p "$TMP/r"
ln -s "$TOP/recipes/include" "$TMP/r/include"
cp "$TOP/tests/fixtures/ia64-ski-payload/ia64-ski-payload.cfg" "$TMP/r/"
R=$TMP/r/ia64-ski-payload.cfg

# check, not build: a passing check is cached, and this one must boot
trl check "$R" --cache "$C" -o "$O" -j2
grep -v '^  |' "$TMP/out.txt" | tail -n 12
expect_rc 0
log=$O/boot-ski/boot-ski.log
grep -q 'TRILLIAN-BOOT-OK release=6\.1\.[0-9]* machine=ia64' "$log" || fail "no boot marker in $log"
grep -q 'TRILLIAN-CPUINFO vendor *: HP Ski Simulator' "$log" || fail "no CPU lines from /proc/cpuinfo"
ok "Ski booted the ia64 kernel to the payload: $(grep -o 'TRILLIAN-BOOT-OK.*' "$log" | head -n1)"

# A wrong marker must fail the check with exit 3.
trl check "$R" --cache "$C" -o "$TMP/out-bad" \
    --set bootcheck.boot-ski.marker=NEVER-PRINTED --set bootcheck.boot-ski.boot_timeout=30
expect_rc 3
ok "a marker that never appears: exit 3"
