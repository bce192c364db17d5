# Boots recipes/ia64-ski.cfg in the HP Ski simulator: the hp-sim kernel with
# the from-source minimal root (glibc 2.36 and busybox cross-built here, the
# stage-2 gcc's libgcc_s) as its initramfs. The boot check waits for the
# root shell on the console and types commands: uname -m says ia64,
# /proc/cpuinfo names the simulated processor, busybox runs through
# /lib/ld-linux-ia64.so.2 with libc.so.6.1, os-release names the root.
# Needs the project's mirror (Ski's source and the hp-sim patch);
# otherwise SKIP. Cold: about an hour
# on 2 cores (toolchain, kernel, glibc, gcc stage 2, busybox).
. "$TOP/tests/lib.sh"
need_mirror # Ski's source and the hp-sim patch (pinned URL)
unset TRILLIAN_SKI TRILLIAN_SKI_BOOTLOADER TRILLIAN_SKI_EFI # the ski stage's
for f in /usr/src/gcc-12/gcc-12.2.0-dfsg.tar.xz /usr/src/linux-source-6.1.tar.xz \
    /usr/src/glibc/glibc-2.36.tar.xz; do
    [ -r "$f" ] || skip "$f is not installed (tools/install-deps)"
done
C=$TRILLIAN_TEST_CACHE O=$TMP/out

trl build ia64-ski --cache "$C" -o "$O" -j2
grep -v '^  |' "$TMP/out.txt" | tail -n 12
expect_rc 0
grep -q '"result": "pass"' "$O/boot-ski/stage-manifest.json" || fail "the boot check did not pass"
log=$O/boot-ski/boot-ski.log
clean_console "$log" >"$TMP/console.txt"
grep -qx 'ia64' "$TMP/console.txt" || fail "uname -m did not answer ia64"
grep -q '^vendor *: HP Ski Simulator' "$TMP/console.txt" || fail "no processor in /proc/cpuinfo"
grep -q 'libc\.so\.6\.1 => /lib/libc\.so\.6\.1' "$TMP/console.txt" || fail "ld.so did not resolve libc"
grep -qx "$(cat "$O/kernel/release")" "$TMP/console.txt" || fail "uname -r did not answer the kernel's release"
ok "Ski ran the from-source root's shell: $(grep -m1 -A1 'uname -m' "$TMP/console.txt" | tr '\n' ' ')"

# A command whose answer never comes fails the check with exit 3.
mkdir -p "$TMP/r"
cp -r "$TOP/recipes/include" "$TMP/r/include"
cp "$TOP/recipes/ia64-ski.cfg" "$TMP/r/ia64-ski.cfg"
sed -i 's/{ expect = "^ia64\$"/{ expect = "^sparc64$"/' "$TMP/r/include/ia64-ski-shell-check.cfg"
grep -q 'sparc64' "$TMP/r/include/ia64-ski-shell-check.cfg" || fail "could not make the failing recipe"
trl check "$TMP/r/ia64-ski.cfg" --cache "$C" -o "$TMP/out-bad"
expect_rc 3
ok "a wrong answer to uname -m: exit 3"
