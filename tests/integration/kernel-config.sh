# kernel kind "source", configuration only, on the real Linux 6.1 tree
# (/usr/src/linux-source-6.1.tar.xz from linux-source-6.1; SKIP without it):
#  - tinyconfig + kernel-config/amd64-tiny merges and survives olddefconfig:
#    every option amd64-tiny sets is in the final config, the log says so
#  - fragments merged in order: a later fragment overriding an earlier one is
#    warned about, naming both files and lines, and the later value wins
#  - options that do not survive fail the stage, each named with the
#    fragment line that set it and why: an unknown symbol, an ia64-only
#    symbol on x86, a value Kconfig refuses (PRINTK=m), unmet dependencies
#  - a fragment with a malformed line, or a fragment name that does not
#    exist, is a recipe error (exit 2) naming it
# The tree is unpacked once into the keep directory and reused.
. "$TOP/tests/lib.sh"
need make gcc flex bison
SRC=/usr/src/linux-source-6.1.tar.xz
[ -f "$SRC" ] || skip "$SRC is missing (apt-get install linux-source-6.1)"
export TRILLIAN_DATA=$TOP
C=$TMP/cache

recipe() { # file fragments-list
    cat > "$1" <<CFG
name = "kernel-config-test";
arch = "amd64";
kernel = { kind = "source"; tarball = "$SRC"; defconfig = "tinyconfig";
           fragments = [ $2 ]; config_only = true; };
CFG
}

recipe "$TMP/ok.cfg" '"amd64-tiny"'
trl build "$TMP/ok.cfg" --cache "$C" -o "$TMP/o1"
expect_rc 0
CONF=$TMP/o1/kernel/config
n=0
while read -r line; do
    case $line in CONFIG_*=*) ;; *) continue ;; esac
    grep -qxF "$line" "$CONF" || fail "$line from amd64-tiny is not in the final config"
    n=$((n + 1))
done < "$TOP/kernel-config/amd64-tiny.config"
[ "$n" -gt 10 ] || fail "amd64-tiny.config has only $n options?"
grep -qx 'CONFIG_64BIT=y' "$CONF" || fail "not a 64-bit config"
grep -q "all $n options the fragments set are in the final .config" "$TMP/o1/logs/kernel.log" \
    || fail "the log does not report the check: $(grep -i configured "$TMP/o1/logs/kernel.log")"
MK=$(ls "$C"/keep/kernel-config-test/kernel/src-*/Makefile)
V=$(sed -n 's/^VERSION = //p; s/^PATCHLEVEL = //p; s/^SUBLEVEL = //p' "$MK" | paste -sd.)
[ "$(cat "$TMP/o1/kernel/release")" = "$V" ] || fail "release '$(cat "$TMP/o1/kernel/release")' is not the tree's $V"
ok "tinyconfig + amd64-tiny: all $n options in the final config, release $(cat "$TMP/o1/kernel/release")"

# a later fragment overrides an earlier one: warned, and it wins
printf '# override test\nCONFIG_SERIAL_8250_NR_UARTS=2\n' > "$TMP/uarts.config"
printf 'CONFIG_SERIAL_8250_NR_UARTS=3\n' > "$TMP/uarts3.config"
recipe "$TMP/over2.cfg" '"amd64-tiny", "uarts.config", "uarts3.config"'
trl build "$TMP/over2.cfg" --cache "$C" -o "$TMP/o3"
expect_rc 0
grep -qF 'warning: kernel.fragments: CONFIG_SERIAL_8250_NR_UARTS: CONFIG_SERIAL_8250_NR_UARTS=3 (uarts3.config:1) overrides CONFIG_SERIAL_8250_NR_UARTS=2 (uarts.config:2)' \
    "$TMP/o3/logs/kernel.log" || fail "no override warning: $(grep -i warning "$TMP/o3/logs/kernel.log")"
grep -qx 'CONFIG_SERIAL_8250_NR_UARTS=3' "$TMP/o3/kernel/config" || fail "the last fragment did not win"
ok "a later fragment overrides an earlier one, with a warning naming both"

# options that do not survive olddefconfig
cat > "$TMP/bad.config" <<'FRAG'
# options that cannot hold on x86 tinyconfig
CONFIG_TRILLIAN_NO_SUCH_OPTION=y
CONFIG_IA64_MCA_RECOVERY=y
CONFIG_PRINTK=m
CONFIG_EXT4_USE_FOR_EXT2=y
FRAG
recipe "$TMP/bad.cfg" '"amd64-tiny", "bad.config"'
trl build "$TMP/bad.cfg" --cache "$C" -o "$TMP/o4"
expect_rc 1
expect_out "kernel.fragments: 4 options the fragments set did not survive make olddefconfig (ARCH=x86_64)"
expect_out "CONFIG_TRILLIAN_NO_SUCH_OPTION=y (set by bad.config:2) was dropped: TRILLIAN_NO_SUCH_OPTION is not a Kconfig symbol in this source tree"
expect_out "CONFIG_IA64_MCA_RECOVERY=y (set by bad.config:3) was dropped: IA64_MCA_RECOVERY exists only for other architectures (arch/ia64/Kconfig)"
expect_out "CONFIG_PRINTK=m (set by bad.config:4) did not hold: the final .config has CONFIG_PRINTK=y"
expect_out "CONFIG_EXT4_USE_FOR_EXT2=y (set by bad.config:5) was dropped: its dependencies are not met (see 'depends on' of EXT4_USE_FOR_EXT2 in fs/ext4/Kconfig"
ok "dropped options fail the stage, each named with its fragment line and the reason"

printf 'CONFIG_OK=y\nSERIAL_8250=y\n' > "$TMP/syntax.config"
recipe "$TMP/syn.cfg" '"amd64-tiny", "syntax.config"'
trl build "$TMP/syn.cfg" --cache "$C" -o "$TMP/o5"
expect_rc 2
expect_out "syntax.config:2: expected CONFIG_NAME=value"
recipe "$TMP/none.cfg" '"amd64-tiny", "trillian-no-such-fragment"'
trl build "$TMP/none.cfg" --cache "$C" -o "$TMP/o6"
expect_rc 2
expect_out "kernel.fragments: no fragment 'trillian-no-such-fragment'"
ok "a malformed fragment line or an unknown fragment name: exit 2 naming it"

n=$(ls -d "$C"/keep/kernel-config-test/kernel/src-* | wc -l)
[ "$n" -eq 1 ] || fail "$n unpacked trees in keep (expected one, reused)"
grep -q "using the prepared source tree" "$TMP/o4/logs/kernel.log" || fail "the unpacked tree was not reused"
ok "the unpacked tree is kept and reused"
