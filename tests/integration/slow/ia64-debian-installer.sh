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
UUID=3d8f1b6a-5c2e-4e7a-9b14-7a0c2e6d5f81
t0=$SECONDS O=$TMP/out
trl check "$TOP/recipes/ia64-debian-installer.cfg" --cache "$TRILLIAN_TEST_CACHE" -o "$O" -j2
grep -v '^  |' "$TMP/out.txt" | tail -n 8
expect_rc 0
expect_out "install-cd PASS"
L=$TMP/console.txt
clean_console "$O/install-cd/install-cd.log" >"$L"
sed -n "/==== trillian: reboot: the disk 'target' alone/,\$p" "$L" > "$TMP/second.txt"
sed -n "1,/==== trillian: reboot: the disk 'target' alone/p" "$L" > "$TMP/first.txt"
python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); assert m["live_from"] == "live", m' \
    "$O/iso/stage-manifest.json" || fail "the ISO's live system is not the stage live"
grep -q 'debootstrap --second-stage' "$TMP/first.txt" && fail "the live system ran the Debian root's first boot"
grep -q "trillian-install: done: /dev/sda holds the installed system (root UUID $UUID)" "$TMP/first.txt" ||
    fail "no finished install in the transcript"
[ -s "$TMP/second.txt" ] || fail "no second boot in the transcript"
grep -q '^trillian-firstboot: step 2: debootstrap --second-stage' "$TMP/second.txt" ||
    fail "the installed disk's first boot did not run the second stage"
grep -q '^I: Base system installed successfully' "$TMP/second.txt" || fail "the second stage did not finish"
grep -q '^Hello, world!' "$TMP/second.txt" || fail "hello did not run on the installed system"
ok "ia64-debian-installer: the busybox live system installed the Debian root, whose first boot ran the second stage and apt, in $((SECONDS - t0)) s"
