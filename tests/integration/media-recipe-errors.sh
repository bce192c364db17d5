# Bad install-media recipes are refused at plan time, naming the recipe's
# FILE:LINE, the setting and what to do: boot checks' disks (not NAME:MIB),
# reboot_from (not one of disks, or without reboot_steps; "image" on an
# ISO, as a CD or as a disk, beside a disk named image, or on Ski),
# reboot_steps without reboot_from; the iso kind's autoinstall (not a /dev path, or
# without the installer), install_root_mib without installer_root = image.
# At build time: live_root = initramfs on a root with no init, and
# installer_root = image on a root without busybox's dd (the lean test root
# is empty). Plans and one small iso stage on the cached lean ia64 stages.
. "$TOP/tests/lib.sh"
need_mirror
[ -r /usr/src/gcc-12/gcc-12.2.0-dfsg.tar.xz ] || skip "gcc-12-source is not installed"
C=$TRILLIAN_TEST_CACHE
ia64_test_recipes "$TMP/t" || skip "the ia64 inputs are missing (tools/install-deps, ../shared/mirror)"
R=$TMP/t/r/qemu-iso-check.cfg
variant() { # NAME SED-EXPR: a copy of R changed by SED-EXPR
    sed "$2" "$R" > "$TMP/t/r/$1.cfg"
    grep -q "$3" "$TMP/t/r/$1.cfg" || fail "variant $1 did not apply"
}
plan_fails() { # NAME MESSAGE
    trl plan "$TMP/t/r/$1.cfg" --cache "$C"
    expect_rc 2
    expect_out "$2"
    grep -q "$1.cfg:[0-9]*: bootcheck\.\|$1.cfg:[0-9]*: images\." "$TMP/out.txt" || { cat "$TMP/out.txt"; fail "$1: no FILE:LINE: section.key"; }
}
variant d1 's|file = "iso.iso";|file = "iso.iso"; disks = ["target"];|' 'disks = \["target"\]'
plan_fails d1 "bootcheck.iso-disk.disks: 'target' is not NAME:MIB"
variant d2 's|file = "iso.iso";|file = "iso.iso"; disks = ["target:64"]; reboot_from = "other"; reboot_steps = ( { wait = "x"; } );|' 'reboot_from = "other"'
plan_fails d2 "bootcheck.iso-disk.reboot_from: 'other' is not one of \`disks\`"
variant d3 's|file = "iso.iso";|file = "iso.iso"; reboot_steps = ( { wait = "x"; } );|' 'reboot_steps'
plan_fails d3 "bootcheck.iso-disk.reboot_steps: needs \`reboot_from\`"
variant d4 's|file = "iso.iso";|file = "iso.iso"; disks = ["target:64"]; reboot_from = "target";|' 'reboot_from = "target"'
plan_fails d4 "bootcheck.iso-disk.reboot_from: needs \`reboot_steps\`"
variant d5 's|file = "iso.iso";|file = "iso.iso"; disks = ["a:64", "a:32"];|' '"a:32"'
plan_fails d5 "two disks are named 'a'"
# reboot_from = "image" (boot the image again as the first boot left it):
# only a disk image keeps a boot's writes, not an ISO as a CD or as a disk;
# a disk named "image" is ambiguous; Ski is never run twice
RS='reboot_from = "image"; reboot_steps = ( { wait = "x"; } );'
variant d6 's|boot = "iso";|boot = "iso"; '"$RS"'|' 'reboot_from = "image"'
plan_fails d6 "bootcheck.iso-cd.reboot_from: \"image\" boots the image again as the first boot left it, and only a disk image keeps what a boot wrote; this check boots an ISO:"
variant d7 's|file = "iso.iso";|file = "iso.iso"; '"$RS"'|' 'reboot_from = "image"'
plan_fails d7 "bootcheck.iso-disk.reboot_from: \"image\" boots the image again as the first boot left it, and only a disk image keeps what a boot wrote; this check boots an ISO as a disk:"
variant d8 's|file = "iso.iso";|file = "iso.iso"; disks = ["image:64"]; '"$RS"'|' '"image:64"'
plan_fails d8 "bootcheck.iso-disk.disks: a disk named 'image' cannot be told from reboot_from = \"image\""
variant d9 's|emulator = "qemu-ia64"; image = "iso"; boot = "disk";|emulator = "ski"; image = "iso"; boot = "disk"; '"$RS"'|' 'emulator = "ski"'
plan_fails d9 "bootcheck.iso-disk.reboot_from: emulator ski cannot boot a second time in one check"
ok "disks, reboot_from and reboot_steps: refused at plan time with FILE:LINE and the fix"

variant i1 's|installer = false;|installer = true; autoinstall = "sda";|' 'autoinstall = "sda"'
plan_fails i1 "images.iso.autoinstall: 'sda' is not a disk's device path"
variant i2 's|installer = false;|installer = false; autoinstall = "/dev/sda";|' 'autoinstall = "/dev/sda"'
plan_fails i2 "images.iso.autoinstall: needs the installer"
variant i3 's|installer = false;|installer = false; install_root_mib = 100;|' 'install_root_mib'
plan_fails i3 "images.iso.install_root_mib: only installer_root = \"image\" uses it"
ok "autoinstall and install_root_mib: refused at plan time"

# build time, on the lean test root (an empty rootfs.tar): no init for the
# kernel to run, no dd for the installer (no bootcheck: only the iso stage)
variant b1 's|installer = false;|installer = false; live_root = "initramfs";|' 'live_root'
sed -i '/^bootcheck = (/,$d' "$TMP/t/r/b1.cfg"
trl build "$TMP/t/r/b1.cfg" --cache "$C" -o "$TMP/o1" -j2
expect_rc 1
expect_out 'images.iso.live_root = "initramfs": the root has neither /init nor /sbin/init'
grep -q 'b1.cfg:[0-9]*: images.iso.live_root' "$TMP/out.txt" || fail "no FILE:LINE for live_root"
variant b2 's|installer = false;|installer_root = "image";|' 'installer_root'
sed -i '/^bootcheck = (/,$d' "$TMP/t/r/b2.cfg"
trl build "$TMP/t/r/b2.cfg" --cache "$C" -o "$TMP/o2" -j2
expect_rc 1
expect_out 'images.iso.installer_root = "image": the root filesystem has no dd'
grep -q 'b2.cfg:[0-9]*: images.iso.installer_root' "$TMP/out.txt" || fail "no FILE:LINE for installer_root"
ok "a live root without init, an image installer without dd: the iso stage fails naming the setting"
