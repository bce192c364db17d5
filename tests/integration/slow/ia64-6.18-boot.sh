# Slow tier: recipes/ia64-6.18.cfg (the default disk, on the default's 2026
# chain and root, with Linux 6.18.5 LTS and T2 SDE's 6.18 ia64 restoration
# from the mirror) built and booted by its own gating check in
# qemu-system-ia64: firmware, GRUB 2.14, Linux 6.18.5, the from-source
# root's shell. Cold on top of the default's entries: the 6.18 kernel
# (450 s, 860 CPU-s on 2 cores, 2026-12-06).
. "$TOP/tests/lib.sh"
boot_shipped_recipe ia64-6.18 6.18.5
