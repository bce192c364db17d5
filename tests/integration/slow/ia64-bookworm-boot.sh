# Slow tier: recipes/ia64-bookworm.cfg, the default's disk on the bookworm
# chain (gcc 12.2 with Debian's binutils 2.40, glibc 2.36, GRUB 2.06, Linux
# 7.1.8: the fast tier's toolchain and kernel, so those come from the shared
# test cache), built and booted by its own gating check in qemu-system-ia64.
# Cold beyond the fast tier: glibc 2.36, gcc stage 2, busybox (~30 min).
. "$TOP/tests/lib.sh"
[ -r /usr/src/linux-source-6.1.tar.xz ] || skip "linux-source-6.1 is not installed"
boot_shipped_recipe ia64-bookworm 7.1.8
"$O/toolchain/bin/ia64-linux-gnu-gcc" --version | head -n1 | grep -q ' 12\.2\.0' || fail "the toolchain is not gcc 12.2.0"
ok "ia64-bookworm: gcc 12.2.0's disk booted"
