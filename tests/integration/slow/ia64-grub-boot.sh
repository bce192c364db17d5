# Slow tier: recipes/ia64-grub.cfg (Linux 6.1 and the payload initramfs on
# a GRUB disk with an empty root) built and booted by its own gating check
# in qemu-system-ia64: firmware, GRUB, Linux, the payload's marker and
# power-off. Shares the 6.1 kernel with ia64-6.1-boot.
. "$TOP/tests/lib.sh"
[ -r /usr/src/linux-source-6.1.tar.xz ] || skip "linux-source-6.1 is not installed"
boot_shipped_recipe ia64-grub 6.1.
grep -q 'TRILLIAN-BOOT-OK release=6\.1\.[0-9]* machine=ia64' "$O/boot-qemu/boot-qemu.log" ||
    fail "no payload marker naming 6.1 on ia64"
ok "the payload ran on ia64 and powered off"
