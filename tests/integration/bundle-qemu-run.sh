#!/bin/sh
# Fast tier: runs an amd64 qemu-bundle's run-qemu.sh for real. The bundle's
# disk (tests/fixtures/bundle-amd64.cfg) is a GPT image whose EFI system
# partition holds a GRUB EFI image that prints a marker and halts, so the
# run goes through the script's firmware handling (OVMF code + a first-run
# copy of the variable store), the qcow2 disk, a real EFI loader and a
# firmware power-off (qemu exits 0). TCG only.
. "$TOP/tests/lib.sh"
need qemu-system-x86_64 qemu-img grub-mkimage mkfs.vfat mmd mcopy sfdisk timeout
[ -r /usr/share/OVMF/OVMF_CODE.fd ] && [ -r /usr/share/OVMF/OVMF_VARS.fd ] || skip "OVMF is not installed"
[ -d /usr/lib/grub/x86_64-efi ] || skip "GRUB's x86_64-efi modules are not installed (grub-efi-amd64-bin)"
R=$TOP/tests/fixtures/bundle-amd64.cfg

trl build "$R" --cache "$TMP/c" -o "$TMP/o" -j2
expect_rc 0
mkdir -p "$TMP/x"
tar -xf "$TMP/o/qemu/qemu.tar.zst" -C "$TMP/x" || fail "cannot unpack qemu.tar.zst"
[ ! -e "$TMP/x/qemu/ovmf-vars.fd" ] || fail "the bundle ships ovmf-vars.fd (the script makes it)"
ok "built and unpacked the amd64 qemu bundle"

start=$(date +%s)
rc=0
# -nic none: the marker comes from the disk, not after minutes of PXE
(cd "$TMP" && timeout -k 5 "${TRILLIAN_QEMU_TIMEOUT:-180}" sh x/qemu/run-qemu.sh -nic none </dev/null) \
    >"$TMP/console.txt" 2>&1 || rc=$?
secs=$(($(date +%s) - start))
grep -qa 'TRILLIAN-BOOT-OK from GRUB in the bundle' "$TMP/console.txt" ||
    { tail -c 2000 "$TMP/console.txt"; fail "no marker from the bundle's disk (exit $rc after ${secs}s)"; }
[ "$rc" -eq 0 ] || { tail -c 2000 "$TMP/console.txt"; fail "run-qemu.sh exit $rc (expected 0 after GRUB's halt)"; }
[ -s "$TMP/x/qemu/ovmf-vars.fd" ] || fail "run-qemu.sh did not make ovmf-vars.fd"
ok "run-qemu.sh booted the bundle's disk through OVMF to GRUB's marker and halted, exit 0 in ${secs}s"
echo PASS
