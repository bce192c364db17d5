# trillian boot: a built image started in its emulator on the terminal,
# with the emulator line of the recipe's boot check (the fake emulator
# records its argv): the same argv as the check's but for the emulator's
# private files; the disk with snapshot=on; OUT's record (manifest.json) and
# the cache untouched; --persistent boots a copy in OUT/boot-CHECK/ with
# snapshot=off and keeps it (and the NVRAM) from one boot to the next; a
# recipe without boot checks, or an unknown check, is exit 2.
. "$TOP/tests/lib.sh"
FAKE=$TOP/tests/fixtures/fake-emulator
C=$TMP/cache
printf 'code' > "$TMP/CODE.fd"
printf 'vars' > "$TMP/VARS.fd"
export TRILLIAN_QEMU_X86_64=$FAKE TRILLIAN_OVMF_CODE=$TMP/CODE.fd
export FAKE_EMU_MODE=marker FAKE_EMU_MARKER_TEXT=TRILLIAN-BOOT-OK
unset TRILLIAN_SKI TRILLIAN_SKI_BOOTLOADER
cat > "$TMP/r.cfg" <<CFG
name = "bootcmd";
arch = "amd64";
stages = (
  { name = "img"; kind = "command";
    argv = ["sh", "-c", "echo disk > \$TRILLIAN_OUT/img.img"]; outputs = ["img.img"]; }
);
bootcheck = ( { kind = "boot"; name = "boot"; image = "img"; boot = "disk";
                firmware_vars = "$TMP/VARS.fd"; profile = "marker"; } );
CFG
FAKE_EMU_ARGS=$TMP/args-check trl check "$TMP/r.cfg" --cache "$C" -o "$TMP/out" -j2
expect_rc 0
m0=$(stat -c %Y.%s "$TMP/out/manifest.json")

norm() { sed -e "s|$TMP/out/boot-boot|PRIV|g" -e 's|/var/tmp/[^ ]*/work|PRIV|g' \
             -e "s|$C/tmp/[^/]*/work|PRIV|g" "$1"; }
FAKE_EMU_ARGS=$TMP/args-boot "$TRILLIAN" boot "$TMP/r.cfg" --cache "$C" -o "$TMP/out" -j2 \
    </dev/null >"$TMP/boot.txt" 2>&1
rc=$?
[ $rc -eq 0 ] || { cat "$TMP/boot.txt"; fail "trillian boot exit $rc"; }
grep -q TRILLIAN-BOOT-OK "$TMP/boot.txt" || fail "the emulator's console did not reach the terminal"
diff <(norm "$TMP/args-check") <(norm "$TMP/args-boot") >"$TMP/diff" ||
    { cat "$TMP/diff"; fail "trillian boot ran another line than the check"; }
grep -q 'snapshot=on$' "$TMP/args-boot" || fail "the disk is not booted with snapshot=on"
grep -q "file=$TMP/out/boot-boot/VARS.fd" "$TMP/args-boot" || fail "the firmware variables are not private"
[ "$(stat -c %Y.%s "$TMP/out/manifest.json")" = "$m0" ] || fail "trillian boot rewrote OUT's manifest"
[ ! -e "$TMP/out/boot-boot/img.img" ] || fail "a read-only boot copied the image"
ok "trillian boot runs the check's emulator line on the terminal, snapshot=on, OUT untouched"

FAKE_EMU_ARGS=$TMP/args-p1 trl boot "$TMP/r.cfg" --cache "$C" -o "$TMP/out" --persistent
expect_rc 0
P=$TMP/out/boot-boot/img.img
grep -q "^file=$P,format=raw,if=virtio,snapshot=off$" "$TMP/args-p1" ||
    fail "--persistent: not the private copy with snapshot=off: $(grep file= "$TMP/args-p1")"
echo "written by the guest" >> "$P"
FAKE_EMU_ARGS=$TMP/args-p2 trl boot "$TMP/r.cfg" --cache "$C" -o "$TMP/out" --persistent
expect_rc 0
grep -q "written by the guest" "$P" || fail "--persistent: the copy was replaced on the next boot"
[ "$(cat "$TMP/out/img/img.img")" = disk ] || fail "the published image changed"
ok "--persistent: a private copy, snapshot=off, kept from one boot to the next"

trl boot "$TMP/r.cfg" nosuch --cache "$C" -o "$TMP/out"
expect_rc 2
expect_out "has no boot check or image 'nosuch'"
sed '/^bootcheck/,$d' "$TMP/r.cfg" > "$TMP/none.cfg"
trl boot "$TMP/none.cfg" --cache "$C" -o "$TMP/out-none"
expect_rc 2
expect_out "has no boot checks"
trl build "$TMP/r.cfg" --cache "$C" -o "$TMP/out" --persistent
expect_rc 2
expect_out "--persistent goes with \`trillian boot\`"
ok "no such check, no checks, --persistent elsewhere: exit 2"
