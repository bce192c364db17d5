# Slow tier: recipes/ia64-netboot.cfg built and booted by its gating check:
# the tree (GRUB ia64-efi from the grub packages stage, grub.cfg, Linux
# 7.1.8, a busybox initramfs, root.ext4.gz) served by a real dnsmasq in a
# network namespace of the check's own, the guest's e1000 on a tap there, the
# loader from the stand-in disk (compared byte for byte with the tree), the
# kernel's DHCP lease and TFTP fetch of the root in dnsmasq's log, a shell
# whose / is the fetched image (/dev/loop0, with the served root's marker).
# Then the same check must fail when the root does not come over the
# network: the command line names a root file the server does not have, so
# the initramfs cannot fetch it (exit 3, at the step "server: root image sent
# over TFTP" or the initramfs's diagnostic shell).
# The same tree with elilo as its loader boots too (elilo.conf and the files
# it names beside elilo on the stand-in disk).
# And a server that cannot start (a dhcp-range dnsmasq rejects) fails it at
# once, naming dnsmasq's own message.
# Cold: busybox-static (~2 min) and the small stages keyed on it, on top of
# the default's toolchain, kernel, root packages, GRUB and qemu-ia64 from the
# shared test cache (the from-source root is ~25 minutes when those are cold).
. "$TOP/tests/lib.sh"
[ -r /usr/src/linux-source-6.1.tar.xz ] || skip "linux-source-6.1 is not installed"
need dnsmasq ip mkfs.vfat mcopy mdir gzip
probe=$(unshare -rn true 2>&1) || [ "$(id -u)" = 0 ] ||
    skip "no network namespace for the netboot server here (unshare -rn: $probe)"
t0=$SECONDS
need_mirror
need ia64-linux-gnu-as make gcc g++ ninja pkg-config flex bison bc gawk mkfs.fat mke2fs
[ -r /usr/src/gcc-12/gcc-12.2.0-dfsg.tar.xz ] || skip "gcc-12-source is not installed"
O=$TMP/out
trl check "$TOP/recipes/ia64-netboot.cfg" --cache "$TRILLIAN_TEST_CACHE" -o "$O" -j2
grep -v '^  |' "$TMP/out.txt" | tail -n 14
expect_rc 0
expect_out "boot-netboot PASS"
L=$O/boot-netboot/boot-netboot.log
T=$O/netboot/tftp
clean_console "$L" > "$TMP/console.txt"
grep -q "^stand-in disk: 4 files, each identical to the tree's, and nothing else on it" "$TMP/console.txt" || fail "no stand-in comparison in the transcript"
grep -q "dnsmasq-tftp.*sent .*/tftp/root.ext4.gz to 192.168.100" "$TMP/console.txt" || fail "dnsmasq never sent the root"
grep -q "^/dev/loop0 / ext4 rw" "$TMP/console.txt" || fail "the shell's / is not the fetched image"
rel=$(cat "$O/kernel/release")
grep -q "Linux version $rel " "$TMP/console.txt" || fail "the console never named Linux $rel"
grep -q 'root=tftp:/root.ext4.gz' "$T/grub/grub.cfg" || fail "grub.cfg does not say root=tftp:/root.ext4.gz"
[ "$(head -c 2 "$T/bootia64.efi")" = MZ ] || fail "bootia64.efi is not a PE file"
grep -q '"image_kind": "netboot' "$O/boot-netboot/stage-manifest.json" || fail "the check's manifest has no image kind"
grep -q 'name="image_kind" value="netboot' "$O/boot-netboot/boot-netboot.junit.xml" || fail "junit.xml has no image kind"
shell=$(grep -o '"shell_seconds": [0-9.]*' "$O/boot-netboot/stage-manifest.json" | grep -o '[0-9.]*$')
ok "ia64-netboot: Linux $rel netbooted (root over TFTP from dnsmasq) to the shell in $shell s; test $((SECONDS - t0)) s"

# the root not served: the check fails
trl check "$TOP/recipes/ia64-netboot.cfg" --cache "$TRILLIAN_TEST_CACHE" -o "$TMP/bad" -j2 \
    --set 'images.netboot.cmdline=console=ttyS0,115200 rw root=tftp:/not-served.ext4.gz'
expect_rc 3
expect_out "boot-netboot FAIL"
grep -q "trillian-initramfs: root=tftp:/not-served.ext4.gz: TFTP from 192.168.100.1 failed" "$TMP/bad/boot-netboot/boot-netboot.log" ||
    fail "the failing run's transcript does not show the failed fetch"
ok "a root that does not come over the network fails the check (exit 3): $(grep -o 'boot-netboot: FAIL at step [0-9]*/[0-9]* ([^)]*)' "$TMP/bad/logs/boot-netboot.log" | head -n1)"

# the server cannot start (dnsmasq rejects the tree's dhcp-range): the check
# fails at once, its error naming dnsmasq's own message
t1=$SECONDS
trl check "$TOP/recipes/ia64-netboot.cfg" --cache "$TRILLIAN_TEST_CACHE" -o "$TMP/bad2" -j2 \
    --set images.netboot.dhcp_range=192.168.100.100,192.168.100.300,1h
expect_rc 3
expect_out "the netboot server failed: dnsmasq exited (status"
expect_out "dnsmasq: bad dhcp-range"
ok "a dnsmasq that cannot start fails the check in $((SECONDS - t1)) s, naming dnsmasq's message"

# an initramfs without the loop module (a module in this kernel): the
# netboot stage refuses, naming initramfs.modules
trl build "$TOP/recipes/ia64-netboot.cfg" --cache "$TRILLIAN_TEST_CACHE" -o "$TMP/bad3" -j2 \
    --set 'initramfs.modules=[]'
expect_rc 1
expect_out 'the kernel has CONFIG_BLK_DEV_LOOP=m, but the initramfs does not load loop'
expect_out 'add "loop" to initramfs.modules'
ok "an initramfs without loop: the netboot stage fails naming initramfs.modules"

# the same tree with elilo (built here: packages kind elilo, taken from the
# ESP as the netboot kind does on ia64) as the loader: the stand-in disk
# holds elilo.conf, the kernel and the initrd beside BOOTIA64.EFI, where
# elilo reads them, and the root still comes over TFTP
mkdir -p "$TMP/r"
ln -sfn "$TOP/recipes/include" "$TMP/r/include"
ln -sfn "$TOP/kernel-config" "$TMP/kernel-config"
ln -sfn "$TOP/firmware" "$TMP/firmware"
sed -e 's/^name = "ia64-netboot";/name = "ia64-netboot-elilo";/' \
    -e 's/^  # the initramfs has no C library/  { kind = "elilo"; },\n&/' \
    -e 's/{ kind = "netboot"; name = "netboot"; loader = "grub";/{ kind = "netboot"; name = "netboot"; loader = "elilo";/' \
    -e 's/^@include "include\/ia64-qemu.cfg"$/bootloader = { kind = "elilo"; console = "ttyS0,115200"; root = "LABEL=trillian-net"; label = "Trillian ia64"; };\n&/' \
    -e "s/{ wait = \"Booting \`\[^']+'\"; name = \"GRUB boots its entry\"; timeout = 120; },/{ wait = \"ELILO boot:\"; name = \"elilo starts\"; timeout = 120; },/" \
    "$TOP/recipes/ia64-netboot.cfg" > "$TMP/r/ia64-netboot-elilo.cfg"
grep -q 'loader = "elilo"' "$TMP/r/ia64-netboot-elilo.cfg" && grep -q '^bootloader = { kind = "elilo"' "$TMP/r/ia64-netboot-elilo.cfg" &&
    grep -q '{ kind = "elilo"; },' "$TMP/r/ia64-netboot-elilo.cfg" || fail "could not make the elilo variant"
trl check "$TMP/r/ia64-netboot-elilo.cfg" --cache "$TRILLIAN_TEST_CACHE" -o "$TMP/elilo" -j2
grep -v '^  |' "$TMP/out.txt" | tail -n 6
expect_rc 0
expect_out "boot-netboot PASS"
clean_console "$TMP/elilo/boot-netboot/boot-netboot.log" > "$TMP/console-elilo.txt"
grep -q "^stand-in disk: EFI/BOOT/elilo.conf = .*/tftp/elilo.conf" "$TMP/console-elilo.txt" || fail "no elilo.conf on the elilo stand-in"
grep -q "^/dev/loop0 / ext4 rw" "$TMP/console-elilo.txt" || fail "elilo variant: / is not the fetched image"
ok "the elilo tree netbooted too (elilo.conf, kernel, initrd beside elilo on the stand-in; root over TFTP)"
