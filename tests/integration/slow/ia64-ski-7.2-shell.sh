# Linux 7.2 in the HP Ski simulator: recipes/ia64-ski-7.2 builds the
# default's 7.2.8 source with the linux-ia64 autobuilds series (its last
# three patches are the hp-sim platform), Trillian's O= and TLB fixes and
# sim_defconfig, and boots it in Ski with the default's from-source root
# (glibc 2.43, gcc 16.2 stage 2, busybox: the default's cache entries) as
# its initramfs; the shell answers uname -r with 7.2.8 and uname -m with
# ia64, and busybox runs through ld.so and libc.so.6.1.
# Needs the project's mirror (the series and Ski); otherwise SKIP. Cold on
# top of the default's cache: the hp-sim kernel and Ski.
. "$TOP/tests/lib.sh"
need_mirror
unset TRILLIAN_SKI TRILLIAN_SKI_BOOTLOADER TRILLIAN_SKI_EFI # the ski stage's
[ -r /usr/src/linux-source-6.1.tar.xz ] || skip "linux-source-6.1 is not installed"
C=$TRILLIAN_TEST_CACHE O=$TMP/out

trl build ia64-ski-7.2 --cache "$C" -o "$O" -j2
grep -v '^  |' "$TMP/out.txt" | tail -n 12
expect_rc 0
rel=$(cat "$O/kernel/release")
case $rel in 7.2.8*) ;; *) fail "kernel release '$rel' is not 7.2.8" ;; esac
grep -q '"result": "pass"' "$O/boot-ski/stage-manifest.json" || fail "the boot check did not pass"
clean_console "$O/boot-ski/boot-ski.log" >"$TMP/console.txt"
grep -qx "$rel" "$TMP/console.txt" || fail "uname -r did not answer $rel"
grep -qx 'ia64' "$TMP/console.txt" || fail "uname -m did not answer ia64"
grep -q '^vendor *: HP Ski Simulator' "$TMP/console.txt" || fail "no Ski processor in /proc/cpuinfo"
grep -q 'libc\.so\.6\.1 => /lib/libc\.so\.6\.1' "$TMP/console.txt" || fail "ld.so did not resolve libc"
grep -q "^Linux version $rel" "$TMP/console.txt" || fail "the console has no 'Linux version $rel' banner"
ok "Linux $rel (linux-ia64 autobuilds series, hp-sim) booted in Ski to the default root's shell"
