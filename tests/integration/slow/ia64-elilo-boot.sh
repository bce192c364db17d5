# Slow tier: recipes/ia64-elilo.cfg (the default's toolchain, kernel and
# from-source root on a GPT disk booted by elilo 3.16 built from source
# with gnu-efi 3.0.15) built and booted by its own gating check in
# qemu-system-ia64: firmware, elilo's prompt and its gunzip of the kernel,
# Linux 7.2, the root mounted read-write, the shell and the default's
# commands. Cold: elilo (a few minutes) and the root stages keyed on it on
# top of the default's toolchain, kernel, root packages and qemu-ia64 from
# the shared test cache.
. "$TOP/tests/lib.sh"
[ -r /usr/src/linux-source-6.1.tar.xz ] || skip "linux-source-6.1 is not installed"
boot_shipped_recipe ia64-elilo 7.2.
grep -q 'ELILO boot:' "$O/boot-qemu/boot-qemu.log" || fail "the console never showed elilo's prompt"
ok "ia64-elilo booted through elilo (its prompt and gunzip) to the root shell"
