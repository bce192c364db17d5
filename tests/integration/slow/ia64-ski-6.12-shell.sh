# The out-of-tree ia64 kernel on the 6.12 LTS, booted: recipes/ia64-ski-6.12
# builds Debian's linux 6.12.8 source (downloaded from Debian's archive and
# checked by sha256) with the ia64 restoration (T2's squashed patch and its
# hotfixes), Trillian's O= build fix and the hp-sim patch, and boots it in
# Ski with the from-source root as its initramfs: the shell answers
# uname -r with 6.12.x and uname -m with ia64.
# Needs the project's mirror (Ski) and the patches in /opt/trillian-dev/patches
# (or TRILLIAN_IA64_PATCHES; none ship with Trillian, see the recipe for
# their URLs and sha256); otherwise SKIP. Cold: the root (~25 min, shared
# with ia64-ski) and the kernel (~15 min) on 2 cores.
. "$TOP/tests/lib.sh"
need_mirror # the patches, by their pinned URLs and sha256, and Ski
unset TRILLIAN_SKI TRILLIAN_SKI_BOOTLOADER TRILLIAN_SKI_EFI # the ski stage's
C=$TRILLIAN_TEST_CACHE O=$TMP/out

trl build ia64-ski-6.12 --cache "$C" -o "$O" -j2
grep -v '^  |' "$TMP/out.txt" | tail -n 12
expect_rc 0
rel=$(cat "$O/kernel/release")
case $rel in 6.12.*) ;; *) fail "kernel release '$rel' is not 6.12.x" ;; esac
file "$O/kernel/vmlinux" | grep -q 'IA-64' || fail "vmlinux is not IA-64"
grep -q '"result": "pass"' "$O/boot-ski/stage-manifest.json" || fail "the boot check did not pass"
clean_console "$O/boot-ski/boot-ski.log" >"$TMP/console.txt"
grep -qx "$rel" "$TMP/console.txt" || fail "uname -r did not answer $rel"
grep -qx 'ia64' "$TMP/console.txt" || fail "uname -m did not answer ia64"
grep -q "^Linux version $rel" "$TMP/console.txt" || fail "the console has no 'Linux version $rel' banner"
ok "Linux $rel (out-of-tree ia64) booted in Ski to the from-source root's shell"
