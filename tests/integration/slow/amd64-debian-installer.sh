# Slow tier: the install path of ia64-debian-installer run whole on amd64
# (tests/fixtures/amd64-debian-installer): an ISO whose live system is a
# busybox root (the iso's live_from = "live", a minimal stage) installs a
# foreign Debian first stage (reference-amd64-foreign's) unattended onto a
# blank disk in qemu-system-x86_64 + OVMF and powers off; that disk alone
# then boots, its first boot runs debootstrap's second stage, and sysvinit
# logs root in. Cold on the shared test cache: the foreign root's download
# is reference-amd64-foreign's; busybox, the live root, the ISO, two boots
# (the second with the second stage under TCG, about 5 minutes).
. "$TOP/tests/lib.sh"
need debootstrap qemu-system-x86_64 xorriso gensquashfs mke2fs
[ -r /usr/share/OVMF/OVMF_CODE.fd ] || [ -r /usr/share/OVMF/OVMF_CODE_4M.fd ] || skip "OVMF is not installed"
t0=$SECONDS
debian_install_check "$TOP/tests/fixtures/amd64-debian-installer/amd64-debian-installer.cfg" \
    /dev/vda 5c2a7c3e-6f0e-4f5e-9b1a-3d7e2a9c0b11
ok "a busybox live system installed a foreign Debian root, whose first boot on the installed disk ran the second stage to sysvinit's login, in $((SECONDS - t0)) s"
