# `trillian plan` says what it can foresee: a boot check whose emulator or
# firmware is missing will be skipped (optional) or fail, and `check` then
# does exactly that; a debootstrap that needs root or the network; pinned
# downloads neither the cache nor a local mirror has; a recipe without boot
# checks, for which `trillian check` is an error (exit 2) naming it.
. "$TOP/tests/lib.sh"
FAKE=$TOP/tests/fixtures/fake-emulator
C=$TMP/cache
printf 'code' > "$TMP/CODE.fd"
printf 'vars' > "$TMP/VARS.fd"
export TRILLIAN_QEMU_X86_64=$FAKE TRILLIAN_OVMF_CODE=$TMP/CODE.fd
cat > "$TMP/bc.cfg" <<CFG
name = "bc";
arch = "amd64";
stages = ( { name = "img"; kind = "command";
             argv = ["sh", "-c", "echo disk > \$TRILLIAN_OUT/img.img"]; outputs = ["img.img"]; } );
bootcheck = ( { kind = "boot"; name = "boot"; image = "img"; boot = "disk";
                firmware_vars = "$TMP/VARS.fd"; profile = "marker"; } );
CFG
trl plan "$TMP/bc.cfg" --cache "$C"
expect_rc 0
expect_no_out "will be SKIPPED"
expect_no_out "will FAIL"
ok "a boot check whose emulator and firmware are there: nothing predicted"

TRILLIAN_QEMU_X86_64=$TMP/no-qemu trl plan "$TMP/bc.cfg" --cache "$C"
expect_rc 0
expect_out "  boot will FAIL: emulator qemu-x86_64: TRILLIAN_QEMU_X86_64=$TMP/no-qemu is not an executable program (or set optional = true"
TRILLIAN_QEMU_X86_64=$TMP/no-qemu trl plan "$TMP/bc.cfg" --cache "$C" --set bootcheck.boot.optional=true
expect_out "  boot will be SKIPPED: emulator qemu-x86_64: TRILLIAN_QEMU_X86_64=$TMP/no-qemu is not"
TRILLIAN_QEMU_X86_64=$TMP/no-qemu trl check "$TMP/bc.cfg" --cache "$C" -o "$TMP/out" \
    --set bootcheck.boot.optional=true
expect_rc 0
expect_out "boot: SKIPPED"
TRILLIAN_QEMU_X86_64=$TMP/no-qemu trl check "$TMP/bc.cfg" --cache "$C" -o "$TMP/out"
expect_rc 3
ok "a missing emulator: plan predicts skip (optional) or fail, and check does just that"

mkdir -p "$TMP/emptybin"
ln -s "$(command -v sh)" "$TMP/emptybin/sh" # the command stage needs it
env -u TRILLIAN_QEMU_X86_64 PATH="$TMP/emptybin" "$TRILLIAN" plan "$TMP/bc.cfg" \
    --cache "$C" >"$TMP/out.txt" 2>&1
expect_out "  boot will FAIL: emulator qemu-x86_64 is not installed (qemu-system-x86_64 is not on PATH)"
TRILLIAN_OVMF_CODE=$TMP/no-code trl plan "$TMP/bc.cfg" --cache "$C"
expect_out "  boot will FAIL: emulator qemu-x86_64: no readable firmware ("
ok "an emulator not on PATH, firmware not readable"

# debootstrap: network from an http mirror, not from a file: one; root.
cat > "$TMP/ds.cfg" <<'CFG'
name = "ds";
arch = "amd64";
userland = { kind = "debootstrap"; };
CFG
trl plan "$TMP/ds.cfg" --cache "$C"
expect_rc 0
expect_out "  userland-base needs the network: debootstrap downloads the packages from http://deb.debian.org/debian"
expect_out "note: the recipe has no boot checks"
mkdir -p "$TMP/archive"
trl plan "$TMP/ds.cfg" --cache "$C" --set "userland.mirror=file:$TMP/archive"
expect_rc 0
expect_no_out "needs the network"
if [ "$(id -u)" -eq 0 ]; then
    command -v setpriv >/dev/null 2>&1 || skip "setpriv is not installed (util-linux)"
    chmod 755 "$TMP"
    setpriv --reuid=65534 --regid=65534 --clear-groups env HOME="$TMP" \
        "$TRILLIAN" plan "$TMP/ds.cfg" --cache "$TMP/nobody-cache" >"$TMP/out.txt" 2>&1
    expect_out "  userland-base needs root: debootstrap of the build host's architecture chroots"
    "$TRILLIAN" plan "$TMP/ds.cfg" --cache "$C" >"$TMP/out.txt" 2>&1
    expect_no_out "needs root"
else
    trl plan "$TMP/ds.cfg" --cache "$C"
    expect_out "  userland-base needs root: debootstrap of the build host's architecture chroots"
fi
ok "debootstrap: root, and the network unless its mirror is a file: one"

# `check` on a recipe without boot checks: exit 2, naming it; nothing written.
trl check "$TOP/tests/fixtures/core/hello.cfg" --cache "$TMP/c2" -o "$TMP/out2"
expect_rc 2
expect_out "trillian check: recipe hello ($TOP/tests/fixtures/core/hello.cfg) has no boot checks"
[ ! -e "$TMP/out2" ] && [ ! -e "$TMP/c2" ] || fail "check without boot checks wrote something"
ok "check without boot checks is an error naming the recipe"

# Pinned downloads: the shipped default's kernel inputs (the orig and the
# 136 patches of its series manifest); one put in the cache (as fetch names
# it there) is no longer predicted.
env -u TRILLIAN_MIRRORS "$TRILLIAN" plan ia64-minimal --cache "$TMP/c3" >"$TMP/out.txt" 2>&1
expect_out "  kernel needs the network: downloads 137 inputs neither the cache nor a local mirror has:"
expect_out "0001-Revert-Documentation-Drop-or-replace-remaining-menti.patch"
sha=$(grep ' 0001-Revert-Documentation' "$TOP/kernel-config/series/linux-7.2-autobuilds-87d6cde.series" | cut -c1-64)
[ -n "$sha" ] || fail "no sha256 for 0001 in the default kernel's series manifest"
mkdir -p "$TMP/c3/downloads"
: > "$TMP/c3/downloads/${sha:0:16}-0001-Revert-Documentation-Drop-or-replace-remaining-menti.patch"
env -u TRILLIAN_MIRRORS "$TRILLIAN" plan ia64-minimal --cache "$TMP/c3" >"$TMP/out.txt" 2>&1
expect_out "  kernel needs the network: downloads 136 inputs"
expect_no_out "0001-Revert-Documentation-Drop-or-replace-remaining-menti.patch"
ok "downloads the cache lacks are predicted; one in the cache is not"
