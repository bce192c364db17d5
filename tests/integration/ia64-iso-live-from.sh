# The iso kind's live_from: the ISO's live system from another stage than
# the userland it installs (how ia64-debian-installer boots busybox to
# install the Debian root). On the cached lean ia64 stages, with two
# command stages for roots: "userland" (the installed system, with a
# cmdline-extra naming its init) and "live" (a stand-in live system: an init,
# busybox's rcS and the programs trillian-install's image mode runs, as
# empty files; nothing boots here). Checked: the initrd holds the live
# root and not the userland; the installer's root image is the userland's
# ext4 with root_uuid; the ISO's boot entries drop the userland's init=
# while the installed ESP keeps it; the manifest names the stage. Bad
# input at plan time: live_from naming no stage, a stage without a
# rootfs.tar, and the copy installer (it would install the live system).
# Then a boot: the lean disk's empty userland with the boot-check payload
# (its initramfs stage, as a root) for the live system, the ISO booted as a
# CD in qemu-system-ia64: the payload runs, where the empty userland alone
# would leave the kernel nothing to run.
. "$TOP/tests/lib.sh"
need_mirror
need xorriso mke2fs debugfs dumpe2fs cpio gunzip
[ -r /usr/src/gcc-12/gcc-12.2.0-dfsg.tar.xz ] || skip "gcc-12-source is not installed"
C=$TRILLIAN_TEST_CACHE O=$TMP/out
ia64_test_recipes "$TMP/t" || skip "the ia64 inputs are missing (tools/install-deps, ../shared/mirror)"

# the two roots, made by command stages
mkdir -p "$TMP/roots/u/etc" "$TMP/roots/l/etc/init.d" "$TMP/roots/l/bin" "$TMP/roots/l/sbin"
echo installed-system > "$TMP/roots/u/etc/trillian-marker"
echo "UUID=7c1e3b52-9d4a-4f60-8e21-5a3b9c0d7e14 / ext4 defaults 0 1" > "$TMP/roots/u/etc/fstab"
echo live-system > "$TMP/roots/l/etc/trillian-marker"
for p in bin/dd bin/gunzip bin/crc32 bin/xxd sbin/blockdev sbin/init etc/init.d/rcS; do
    printf '#!/bin/sh\n' > "$TMP/roots/l/$p" && chmod 755 "$TMP/roots/l/$p"
done
R=$TMP/t/r/live.cfg
sed -e '/^bootcheck = (/,$d' \
    -e 's|^images = .*|images = ( { kind = "disk"; name = "disk"; size_mib = 64; },\
           { kind = "iso"; name = "iso"; loader = "grub"; live_root = "initramfs"; live_from = "live";\
             installer_root = "image"; autoinstall = "/dev/sda"; } );|' \
    -e '/^stages = (/,/^);/d' "$TMP/t/r/qemu-disk.cfg" > "$R"
cat >> "$R" <<CFG
stages = (
  { name = "userland"; kind = "command";
    argv = ["sh", "-c", "tar -C $TMP/roots/u --owner=0 --group=0 --numeric-owner -cf \${out}/rootfs.tar . && echo init=/sbin/test-firstboot > \${out}/cmdline-extra"];
    outputs = ["rootfs.tar", "cmdline-extra"]; },
  { name = "live"; kind = "command";
    argv = ["tar", "-C", "$TMP/roots/l", "--owner=0", "--group=0", "--numeric-owner", "-cf", "\${out}/rootfs.tar", "."];
    outputs = ["rootfs.tar"]; }
);
CFG
grep -q 'live_from = "live"' "$R" || fail "the recipe variant did not apply"

trl build "$R" --cache "$C" -o "$O" -j2
grep -v '^  |' "$TMP/out.txt" | tail -n 8
expect_rc 0
mkdir -p "$TMP/iso" "$TMP/initrd"
xorriso -osirrox on -indev "$O/iso/iso.iso" -extract /boot "$TMP/iso/boot" >/dev/null 2>&1 || fail "cannot read the ISO"
(cd "$TMP/initrd" && gunzip -c "$TMP/iso/boot/initrd.img" | cpio -idm --quiet 2>/dev/null) || fail "cannot unpack the initrd"
[ "$(cat "$TMP/initrd/etc/trillian-marker")" = live-system ] ||
    fail "the live root is not the live stage's: /etc/trillian-marker is '$(cat "$TMP/initrd/etc/trillian-marker")'"
[ -x "$TMP/initrd/usr/sbin/trillian-install" ] || fail "no trillian-install in the live root"
[ -x "$TMP/initrd/etc/init.d/rc.local" ] || fail "no unattended-install hook (rc.local) in the live root"
ok "the ISO's initrd is the live stage's root with the installer"

gunzip -c "$TMP/initrd/usr/share/trillian/root.img.gz" > "$TMP/root.img" || fail "no root image in the live root"
[ "$(debugfs -R 'cat /etc/trillian-marker' "$TMP/root.img" 2>/dev/null)" = installed-system ] ||
    fail "the installer's root image is not the userland's"
debugfs -R 'stat /sbin/init' "$TMP/root.img" 2>/dev/null | grep -q 'Type: regular' &&
    fail "the live root's /sbin/init is in the installed root image"
dumpe2fs -h "$TMP/root.img" 2>/dev/null | grep -q '^Filesystem UUID: *7c1e3b52-9d4a-4f60-8e21-5a3b9c0d7e14$' ||
    fail "the root image does not carry root_uuid"
grep -q '^ROOT_IMAGE=/usr/share/trillian/root.img.gz$' "$TMP/initrd/usr/share/trillian/install.conf" ||
    fail "install.conf names no root image"
# the loader here names no root= (so no PARTUUID): the image installer, which
# writes the GPT itself, gets a root partition GUID derived by the stage
grep -Eq '^ROOT_PARTUUID=[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}$' "$TMP/initrd/usr/share/trillian/install.conf" ||
    fail "install.conf has no ROOT_PARTUUID for the image installer: $(cat "$TMP/initrd/usr/share/trillian/install.conf")"
ok "the installer writes the userland's root (ext4, root_uuid), not the live one"

grep -q 'init=/sbin/test-firstboot' "$O/bootloader/cmdline" ||
    fail "the installed ESP's command line lost the userland's init=: $(cat "$O/bootloader/cmdline")"
grep -q 'init=' "$TMP/iso/boot/grub/grub.cfg" && fail "the ISO's boot entries carry the userland's init=: $(grep init= "$TMP/iso/boot/grub/grub.cfg")"
grep -q 'trillian.install=/dev/sda' "$TMP/iso/boot/grub/grub.cfg" || fail "no unattended-install entry"
python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); assert m["live_from"] == "live", m' \
    "$O/iso/stage-manifest.json" || fail "the manifest does not name the live stage"
ok "the installed ESP keeps the userland's init=, the ISO's entries drop it; the manifest says live_from = live"

plan_fails() { # NAME SED-EXPR MESSAGE
    sed "$2" "$R" > "$TMP/t/r/$1.cfg"
    trl plan "$TMP/t/r/$1.cfg" --cache "$C"
    expect_rc 2
    expect_out "$3"
    grep -q "$1.cfg:[0-9]*: images.iso" "$TMP/out.txt" || { cat "$TMP/out.txt"; fail "$1: no FILE:LINE"; }
}
plan_fails e1 's|live_from = "live"|live_from = "nolive"|' "needs a stage named 'nolive'"
plan_fails e2 's|"\${out}/rootfs.tar", "."\];|"${out}/other.tar", "."];|; s|outputs = \["rootfs.tar"\]; }|outputs = ["other.tar"]; }|' \
    "needs rootfs.tar from stage 'live'"
plan_fails e3 's|installer_root = "image"; ||' \
    "images.iso.live_from: the installer's copy mode"
ok "live_from: a missing stage, a stage without rootfs.tar, the copy installer: refused at plan time"

# --- a boot of a live system from another stage --------------------------
[ "$(id -u)" = 0 ] || skip "the live root from the payload's initrd needs root (its /dev/console)"
B=$TMP/t/r/live-boot.cfg
# qemu-iso-check.cfg (the live ISO of the lean stages) with its live root
# from the stage live, and only its check of the ISO as a CD
sed -e 's|installer = false;|installer = false; live_root = "initramfs"; live_from = "live";|' \
    -e '/name = "iso-disk";/,/^    ); }$/d' -e 's|^    ); },$|    ); }|' "$TMP/t/r/qemu-iso-check.cfg" > "$B"
sed -i 's|^stages = (|stages = (\
  { name = "live"; kind = "command";\
    argv = ["sh", "-c", "mkdir ${work}/r \&\& cd ${work}/r \&\& gunzip -c ${stage:initramfs}/initrd.img \| cpio -idm --quiet \&\& tar --owner=0 --group=0 --numeric-owner -cf ${out}/rootfs.tar ."];\
    outputs = ["rootfs.tar"]; },|' "$B"
grep -q 'name = "live"; kind = "command"' "$B" && grep -q 'live_from = "live"' "$B" || fail "the boot variant did not apply"
trl check "$B" --cache "$C" -o "$TMP/out-boot" -j2
grep -v '^  |' "$TMP/out.txt" | tail -n 6
expect_rc 0
expect_out "iso-cd PASS"
expect_no_out "iso-disk"
ok "the ISO's live system from the stage live (the payload) booted in qemu-system-ia64 as a CD"
