# Slow tier: recipes/ia64-6.18.cfg (the default disk on Linux 6.18.5 LTS
# with T2 SDE's 6.18 ia64 restoration, from the mirror) built and booted by
# its own gating check in qemu-system-ia64: firmware, GRUB, Linux 6.18.5,
# the from-source root's shell. Cold: the 6.18 kernel (~15 min on 2 cores).
. "$TOP/tests/lib.sh"
boot_shipped_recipe ia64-6.18 6.18.5
