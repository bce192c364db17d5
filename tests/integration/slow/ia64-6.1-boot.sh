# Slow tier: recipes/ia64-6.1.cfg (the default disk on Debian's in-tree
# Linux 6.1) built and booted by its own gating check in qemu-system-ia64:
# firmware, GRUB, Linux 6.1, the from-source root's shell. Cold: the 6.1
# kernel (~15 min on 2 cores) on top of the default's toolchain, root, GRUB
# and qemu-ia64 from the shared test cache.
. "$TOP/tests/lib.sh"
[ -r /usr/src/linux-source-6.1.tar.xz ] || skip "linux-source-6.1 is not installed"
boot_shipped_recipe ia64-6.1 6.1.
