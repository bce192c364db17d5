# Slow tier: recipes/ia64-7.1.cfg (the default disk on Linux 7.1.13, the
# last 7.1 release, with T2 SDE's 7.1.8 ia64 restoration from the mirror)
# built and booted by its own gating check in qemu-system-ia64: firmware,
# GRUB, Linux 7.1.13, the from-source root's shell. Cold: the 7.1 kernel
# (~30 min on 2 cores) on top of the default's toolchain and root packages.
. "$TOP/tests/lib.sh"
[ -r /usr/src/linux-source-6.1.tar.xz ] || skip "linux-source-6.1 is not installed"
boot_shipped_recipe ia64-7.1 7.1.13
