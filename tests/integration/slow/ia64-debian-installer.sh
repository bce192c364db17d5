# Slow tier: recipes/ia64-debian-installer.cfg, ia64-debian's Debian system
# on an install ISO whose live system is a busybox root (live_from = "live"),
# used in qemu-system-ia64 by its gating check: the ISO as a CD with a blank
# disk, the unattended install of the Debian root's image, power-off; then
# that disk alone: its ESP's GRUB, debootstrap's second stage on the
# emulated Itanium, sysvinit, root's login, dpkg and apt. Cold: ia64-debian's
# whole archive (the same cache entries as slow/ia64-debian.sh), busybox and
# the live root; the check two boots, the second with the second stage.
. "$TOP/tests/lib.sh"
[ -r /usr/src/linux-source-6.1.tar.xz ] || skip "linux-source-6.1 is not installed"
need_mirror
need debootstrap ia64-linux-gnu-as make gcc g++ ninja pkg-config flex bison bc gawk mkfs.fat mke2fs xorriso
t0=$SECONDS
debian_install_check "$TOP/recipes/ia64-debian-installer.cfg" /dev/sda 3d8f1b6a-5c2e-4e7a-9b14-7a0c2e6d5f81
python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); assert m["live_from"] == "live", m' \
    "$O/iso/stage-manifest.json" || fail "the ISO's live system is not the stage live"
grep -q '^Hello, world!' "$TMP/second.txt" || fail "hello did not run on the installed system"
ok "ia64-debian-installer: the busybox live system installed the Debian root, whose first boot ran the second stage and apt, in $((SECONDS - t0)) s"
