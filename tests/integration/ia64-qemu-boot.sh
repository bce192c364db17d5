# An ia64 GPT disk boots in qemu-system-ia64 through its EFI firmware and
# GRUB: the qemu-ia64 emulators stage (recipes/include/ia64-qemu.cfg, from
# the project's mirror ../shared/mirror) boots a lean disk made of the
# default recipe's toolchain and kernel (the same stage names and settings,
# so the same cache keys as ia64-minimal.sh), its GRUB (packages kind grub,
# shared with the default recipe) and the payload initramfs; the root
# partition holds only the kernel's modules (no userland: the payload is
# /init). The check follows the console: the firmware, GRUB, Linux, the
# payload's marker with machine=ia64 and its CPU lines, power-off, and
# qemu exiting by itself. Cold: qemu-ia64 ~13 min and GRUB ~7 min on top of
# ia64-minimal.sh's toolchain and kernel; warm: the boot, about a minute.
. "$TOP/tests/lib.sh"
need_mirror
need ia64-linux-gnu-as make gcc g++ ninja pkg-config flex bison bc mkfs.fat mke2fs
[ -r /usr/src/gcc-12/gcc-12.2.0-dfsg.tar.xz ] || skip "gcc-12-source is not installed"
C=$TRILLIAN_TEST_CACHE O=$TMP/out
# the recipe (tests/lib.sh), as tests/prebuild builds it in the background
ia64_test_recipes "$TMP/t" || skip "the ia64 inputs are missing (tools/install-deps, ../shared/mirror)"
R=$TMP/t/r/qemu-disk-check.cfg
grep -q 'generic_defconfig' "$R" || fail "recipe copy has no kernel"

t0=$SECONDS
# check, not build: a passing check is cached, and this one must boot
trl check "$R" --cache "$C" -o "$O" -j2
grep -v '^  |' "$TMP/out.txt" | tail -n 14
expect_rc 0
log=$O/boot-qemu/boot-qemu.log
grep -q 'TRILLIAN-BOOT-OK release=[0-9.]* machine=ia64' "$log" || fail "no boot marker in $log"
grep -q 'TRILLIAN-CPUINFO model name *: QEMU Montecito' "$log" || fail "no Montecito CPU in /proc/cpuinfo"
ok "qemu-system-ia64 booted the disk through its firmware and GRUB to the payload in $((SECONDS - t0)) s: $(grep -o 'boot-qemu: PASS.*' "$O/logs/boot-qemu.log" | head -n1)"
grep -q 'from the recipe.s emulators stage' "$O/logs/boot-qemu.log" ||
    fail "the check did not take qemu-system-ia64 from the qemu-ia64 stage"

# A boot check whose emulator the recipe builds never skips: with a broken
# override it fails (exit 3) although optional = true.
TRILLIAN_QEMU_IA64=$TMP/no-such-qemu trl check "$R" --cache "$C" -o "$TMP/out-bad" -j2 \
    --set bootcheck.boot-qemu.optional=true
expect_rc 3
expect_out "this check does not skip"
ok "optional = true does not skip a check whose emulator the recipe builds"
