# The first boot's EFI boot entry (efi_boot_entry in
# overlays/firstboot/trillian-firstboot), run on a fake sysfs with a fake
# efibootmgr and uname (ia64):
#  - no /sys/firmware/efi, or no efibootmgr: says so, adds nothing
#  - / on sda2: `efibootmgr --create --disk /dev/sda --part 1 --label L
#    --loader \EFI\BOOT\BOOTIA64.EFI`; run again, the entry is there (as
#    efibootmgr 18 lists it: label, tab, device path) and nothing is added
#  - / on nvme0n1p2: --disk /dev/nvme0n1; a failing efibootmgr returns 1
. "$TOP/tests/lib.sh"
F=$TOP/overlays/firstboot/trillian-firstboot
S=$TMP/sys
mkdir -p "$TMP/bin" "$S/firmware" "$S/dev/block" "$S/block/sda/sda1" "$S/block/sda/sda2" \
    "$S/block/nvme0n1/nvme0n1p1" "$S/block/nvme0n1/nvme0n1p2"
echo 1 > "$S/block/sda/sda1/partition"; echo 2 > "$S/block/sda/sda2/partition"
echo 1 > "$S/block/nvme0n1/nvme0n1p1/partition"; echo 2 > "$S/block/nvme0n1/nvme0n1p2/partition"
ln -s ../../block/sda/sda2 "$S/dev/block/8:2"
ln -s ../../block/nvme0n1/nvme0n1p2 "$S/dev/block/259:2"
printf '#!/bin/sh\necho ia64\n' > "$TMP/bin/uname"
cat > "$TMP/bin/efibootmgr" <<EOF
#!/bin/sh
# fake: lists $TMP/entries, records --create calls in $TMP/calls
[ -n "\${EFIBOOTMGR_FAIL:-}" ] && exit 5
if [ \$# -eq 0 ]; then echo "BootCurrent: 0000"; cat "$TMP/entries" 2>/dev/null; exit 0; fi
echo "\$*" >> "$TMP/calls"
n=\$(cat "$TMP/entries" 2>/dev/null | wc -l)
while [ \$# -gt 0 ]; do [ "\$1" = --label ] && printf 'Boot%04X* %s\tHD(1,GPT,x)/File(y)\n' "\$n" "\$2" >> "$TMP/entries"; shift; done
EOF
chmod +x "$TMP/bin/uname" "$TMP/bin/efibootmgr"

run() { # [VAR=VALUE...]: efi_boot_entry "Trillian box" in a fresh shell; output in out.txt, status in rc
    # (the script sets its own PATH: the fakes go first after sourcing it)
    env TB="$TMP/bin:$PATH" "$@" SYSFS="$S" TRILLIAN_FIRSTBOOT_LIB=1 F="$F" sh -c \
        'log() { echo "log: $*"; }; . "$F"; PATH=$TB; efi_boot_entry "Trillian box"' > "$TMP/out.txt" 2>&1
    rc=$?
}
run ROOT_DEVNUM=8:2
expect_rc 0
expect_out "no EFI firmware (no /sys/firmware/efi): no boot entry added"
[ ! -e "$TMP/calls" ] || fail "efibootmgr was run without EFI"
mkdir -p "$S/firmware/efi"
mkdir -p "$TMP/nobin"
for t in sed cut grep readlink cat; do ln -sf "$(command -v $t)" "$TMP/nobin/$t"; done
run ROOT_DEVNUM=8:2 TB="$TMP/nobin"
expect_rc 0
expect_out "efibootmgr is not installed: no boot entry added"
ok "no EFI firmware, or no efibootmgr: logged, nothing added"

run ROOT_DEVNUM=8:2
expect_rc 0
expect_out "adding the EFI boot entry 'Trillian box': /dev/sda1 \\EFI\\BOOT\\BOOTIA64.EFI"
[ "$(cat "$TMP/calls")" = '--create --disk /dev/sda --part 1 --label Trillian box --loader \EFI\BOOT\BOOTIA64.EFI' ] ||
    fail "efibootmgr got: $(cat "$TMP/calls")"
run ROOT_DEVNUM=8:2
expect_rc 0
expect_out "the firmware already has a boot entry 'Trillian box'"
[ "$(wc -l < "$TMP/calls")" -eq 1 ] || fail "a second run added another entry: $(cat "$TMP/calls")"
ok "/ on sda2: efibootmgr --create --disk /dev/sda --part 1 ... --loader \\EFI\\BOOT\\BOOTIA64.EFI, once (second run finds it)"

rm -f "$TMP/entries" "$TMP/calls"
run ROOT_DEVNUM=259:2
expect_rc 0
grep -q -- '--disk /dev/nvme0n1 --part 1' "$TMP/calls" || fail "nvme: efibootmgr got $(cat "$TMP/calls")"
rm -f "$TMP/entries"
run ROOT_DEVNUM=259:2 EFIBOOTMGR_FAIL=1
expect_rc 1
expect_out "efibootmgr failed"
run ROOT_DEVNUM=0:33
expect_rc 0
expect_out "is not on a disk partition"
ok "nvme0n1p2: --disk /dev/nvme0n1; a failing efibootmgr returns 1; a root not on a partition adds nothing"
sh -n "$F" || fail "trillian-firstboot has a syntax error"
