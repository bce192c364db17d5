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
UUID=5c2a7c3e-6f0e-4f5e-9b1a-3d7e2a9c0b11
t0=$SECONDS O=$TMP/out
trl check "$TOP/tests/fixtures/amd64-debian-installer/amd64-debian-installer.cfg" \
    --cache "$TRILLIAN_TEST_CACHE" -o "$O" -j2
grep -v '^  |' "$TMP/out.txt" | tail -n 8
expect_rc 0
expect_out "install-cd PASS"
L=$TMP/console.txt
clean_console "$O/install-cd/install-cd.log" >"$L"
sed -n "1,/==== trillian: reboot: the disk 'target' alone/p" "$L" >"$TMP/first.txt"
sed -n "/==== trillian: reboot: the disk 'target' alone/,\$p" "$L" >"$TMP/second.txt"
grep -q 'debootstrap --second-stage' "$TMP/first.txt" && fail "the live system ran the Debian root's first boot"
grep -q "trillian-install: done: /dev/vda holds the installed system (root UUID $UUID)" "$TMP/first.txt" ||
    fail "no finished install in the first boot's transcript"
grep -q '^trillian-firstboot: step 2: debootstrap --second-stage' "$TMP/second.txt" ||
    fail "the installed disk's first boot did not run the second stage"
grep -q '^I: Base system installed successfully' "$TMP/second.txt" || fail "the second stage did not finish"
ok "a busybox live system installed a foreign Debian root, whose first boot on the installed disk ran the second stage to sysvinit's login, in $((SECONDS - t0)) s"
