# Fast tier: an ia64 qemu-bundle boots where it is unpacked. The bundle is
# of the lean payload disk (tests/lib.sh qemu-bundle.cfg: the stages of
# ia64-qemu-boot.sh's qemu-disk.cfg, same keys, so cached, plus a
# qemu-bundle stage); its firmware is the qemu-ia64 stage's, with the
# licence text and source note. The test runs the bundle's own run-qemu.sh,
# unmodified, from the unpacked tarball, with the built qemu-system-ia64 on
# PATH (no QEMU, no QEMU_IA64_BIOS: the bundled firmware), headless under a
# timeout, and reads the serial console to the payload's marker
# (TRILLIAN-BOOT-OK ... machine=ia64) and power-off, qemu exiting by
# itself. The payload, not a login shell: the lean disk has no userland,
# which would cost a from-source root build; the slow tier boots shells.
# Then: the bundle built again (--force) is the same tarball to the byte,
# and the recipe without its qemu-ia64 stage is a plan-time error naming it.
# Warm: about a minute of boot under TCG.
. "$TOP/tests/lib.sh"
need_mirror
need ia64-linux-gnu-as make gcc g++ ninja pkg-config flex bison bc mkfs.fat mke2fs qemu-img zstd timeout
[ -r /usr/src/gcc-12/gcc-12.2.0-dfsg.tar.xz ] || skip "gcc-12-source is not installed"
C=$TRILLIAN_TEST_CACHE O=$TMP/out
ia64_test_recipes "$TMP/t" || skip "the ia64 inputs are missing (tools/install-deps, ../shared/mirror)"
R=$TMP/t/r/qemu-bundle.cfg
grep -q 'kind = "qemu-bundle"' "$R" || fail "the recipe copy has no qemu-bundle"

t0=$SECONDS
trl build "$R" --cache "$C" -o "$O" -j2
grep -v '^  |' "$TMP/out.txt" | tail -n 14
expect_rc 0
tb=$O/bundle/bundle.tar.zst
[ -s "$tb" ] || fail "no $tb"
ok "built the bundle in $((SECONDS - t0)) s ($(grep -c ' cached$' "$TMP/out.txt") stages cached)"

# ---- what it carries ------------------------------------------------------------
X=$TMP/x
mkdir -p "$X"
tar -xf "$tb" -C "$X" || fail "cannot unpack $tb"
B=$X/bundle
for f in README run-qemu.sh disk.qcow2 nvram.bin ia64-firmware.bin ia64-firmware.COPYING \
    ia64-firmware.SOURCE; do
    [ -s "$B/$f" ] || fail "the bundle has no $f: $(ls "$B")"
done
cmp "$B/ia64-firmware.bin" "$O/qemu-ia64/share/qemu/ia64-firmware.bin" ||
    fail "ia64-firmware.bin is not the qemu-ia64 stage's firmware"
grep -q 'GNU GENERAL PUBLIC LICENSE' "$B/ia64-firmware.COPYING" &&
    grep -q 'Version 2, June 1991' "$B/ia64-firmware.COPYING" ||
    fail "ia64-firmware.COPYING is not the GPL version 2: $(head -n 5 "$B/ia64-firmware.COPYING")"
sha=$(sed -n 's/.*sha256 = "\([0-9a-f]*\)".*/\1/p' "$TOP/recipes/include/ia64-qemu.cfg")
commit=$(sed -n 's/.*commit = "\([0-9a-f]*\)".*/\1/p' "$TOP/recipes/include/ia64-qemu.cfg")
for want in 'GPL-2.0-or-later' "$sha" "$commit" 'roms/ia64-firmware/' 'qemu-ia64-00c5484.tar.xz'; do
    grep -qF -- "$want" "$B/ia64-firmware.SOURCE" ||
        fail "ia64-firmware.SOURCE does not name $want: $(cat "$B/ia64-firmware.SOURCE")"
done
grep -q 'Getting qemu-system-ia64' "$B/README" && grep -qF -- "$sha" "$B/README" &&
    grep -q 'OUT/qemu-ia64/bin/qemu-system-ia64' "$B/README" ||
    fail "the README does not say where to get qemu-system-ia64: $(cat "$B/README")"
ok "the bundle carries the qemu-ia64 stage's firmware, the GPL-2 text and a source note (GPL-2.0-or-later, tarball sha256 ${sha%"${sha#????????????}"}…, commit ${commit%"${commit#????????}"}); the README says how to get qemu-system-ia64"

# ---- run-qemu.sh, unmodified, to the payload's power-off ------------------------
QBIN=$O/qemu-ia64/bin
[ -x "$QBIN/qemu-system-ia64" ] || fail "no $QBIN/qemu-system-ia64 in the output"
con=$TMP/console.txt
start=$SECONDS
rc=0
(cd "$TMP" && unset QEMU QEMU_IA64_BIOS &&
    PATH=$QBIN:$PATH timeout -k 5 "${TRILLIAN_QEMU_TIMEOUT:-600}" sh x/bundle/run-qemu.sh </dev/null) \
    >"$con" 2>&1 || rc=$?
secs=$((SECONDS - start))
clean_console "$con" >"$TMP/clean.txt"
show() { tail -n 25 "$TMP/clean.txt"; }
grep -q 'qemu-system-ia64 Firmware' "$TMP/clean.txt" || { show; fail "the firmware never started (exit $rc after ${secs}s)"; }
grep -q 'Welcome to GRUB!' "$TMP/clean.txt" || { show; fail "GRUB never started (exit $rc after ${secs}s)"; }
grep -q 'TRILLIAN-BOOT-OK release=[^ ]* machine=ia64' "$TMP/clean.txt" ||
    { show; fail "no TRILLIAN-BOOT-OK ... machine=ia64 (exit $rc after ${secs}s)"; }
grep -q 'TRILLIAN-POWEROFF' "$TMP/clean.txt" || { show; fail "no TRILLIAN-POWEROFF (exit $rc after ${secs}s)"; }
[ "$rc" -eq 0 ] || { show; fail "run-qemu.sh exit $rc after ${secs}s (expected qemu to exit 0 at the power-off)"; }
ok "run-qemu.sh booted the bundle with the bundled firmware to the payload and power-off in ${secs}s: $(grep -o 'TRILLIAN-BOOT-OK.*' "$TMP/clean.txt" | head -n1)"

# ---- reproducible ----------------------------------------------------------------
trl build "$R" --cache "$C" -o "$TMP/out2" -j2 --force bundle
expect_rc 0
grep -q 'bundle .* built' "$TMP/out.txt" || fail "--force bundle did not build the bundle again"
s1=$(sha256sum <"$tb" | cut -d' ' -f1)
s2=$(sha256sum <"$TMP/out2/bundle/bundle.tar.zst" | cut -d' ' -f1)
[ "$s1" = "$s2" ] || fail "the bundle built twice differs: $s1 vs $s2"
ok "built twice (--force bundle): the same bundle.tar.zst, sha256 $s1"

# ---- no firmware to bundle: a plan-time error naming the emulator stage -----------
grep -v '^@include "include/ia64-qemu.cfg"' "$R" >"$TMP/t/r/no-qemu.cfg"
trl plan "$TMP/t/r/no-qemu.cfg" --cache "$C"
expect_rc 2
expect_out "no-qemu.cfg:"
expect_out "images.bundle: a qemu-bundle for ia64 carries qemu-system-ia64's EFI firmware, share/qemu/ia64-firmware.bin of the emulators stage of kind qemu-ia64, and this recipe has none"
ok "without the qemu-ia64 stage: exit 2 at plan time, $(grep -o 'images.bundle: .*this recipe has none' "$TMP/out.txt" | head -n1)"
echo PASS
