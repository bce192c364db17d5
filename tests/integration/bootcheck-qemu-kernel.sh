# A real boot check: qemu-system-x86_64 (TCG) boots Debian's cloud kernel with
# a tiny busybox initramfs whose init runs getty on ttyS0, and the
# debian-login profile logs in as root with a password, checks `uname -m`
# and /etc/os-release, and powers off through sysrq. Then two failures on
# the same kernel: a wrong expected machine (exit 3 at once, when the prompt
# comes back) and no initramfs (the kernel panics: exit 3 at once).
# The kernel and busybox-static .debs are fetched with apt-get download into
# the shared test cache. SKIPs when qemu, cpio, dpkg-deb or the packages are
# not available.
. "$TOP/tests/lib.sh"
need qemu-system-x86_64 cpio dpkg-deb apt-get apt-cache
unset TRILLIAN_QEMU_X86_64 FAKE_EMU_MODE
cloud_kernel_and_busybox
BB=$x/bb/bin/busybox

# The initramfs: busybox, an init that runs getty on the serial console, a
# root password, an os-release.
r=$x/root
mkdir -p "$r/bin" "$r/dev" "$r/proc" "$r/sys" "$r/etc" "$r/root"
cp "$BB" "$r/bin/busybox"
hash=$("$BB" mkpasswd -m sha512 trillian-pw trillian) || fail "busybox mkpasswd"
printf 'root:%s:0:0:root:/root:/bin/sh\n' "$hash" > "$r/etc/passwd"
printf 'root:x:0:\n' > "$r/etc/group"
printf 'PRETTY_NAME="Trillian test initramfs"\nVERSION_CODENAME=trillian-test\nID=debian\n' \
    > "$r/etc/os-release"
cat > "$r/init" <<'EOF'
#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
hostname trillian
echo TRILLIAN-INIT-READY
while :; do setsid getty -L 115200 ttyS0 vt100; done
EOF
chmod 755 "$r/init"
(cd "$r" && find . | LC_ALL=C sort | cpio -o -H newc --quiet > "$TMP/initrd.img") \
    || fail "cpio"

# recipe NAME SETTINGS
recipe() {
    cat > "$TMP/$1.cfg" <<CFG
name = "$1";
arch = "amd64";
stages = (
  { name = "kernel"; kind = "command"; argv = ["cp", "$TMP/vmlinuz", "\${out}/vmlinuz"];
    inputs = ["$TMP/vmlinuz"]; outputs = ["vmlinuz"]; },
  { name = "initramfs"; kind = "command"; argv = ["cp", "$TMP/initrd.img", "\${out}/initrd.img"];
    inputs = ["$TMP/initrd.img"]; outputs = ["initrd.img"]; }
);
bootcheck = ( { kind = "boot"; name = "boot"; image = "kernel";
                append = "console=ttyS0 panic=-1 loglevel=3"; memory_mib = 512;
                boot_timeout = 300; $2 } );
CFG
}

recipe login 'profile = "debian-login"; password = "trillian-pw";
              os_release = "^VERSION_CODENAME=trillian-test$";'
start=$(date +%s.%N)
trl build "$TMP/login.cfg" --cache "$TMP/cache" -o "$TMP/out-login" -j2
expect_rc 0
secs=$(awk "BEGIN { printf \"%.1f\", $(date +%s.%N) - $start }")
L=$TMP/out-login/boot
grep -q "trillian login:" "$L/boot.log" || fail "no login prompt in the transcript"
grep -q "^x86_64" "$L/boot.log" || fail "no uname -m output in the transcript"
grep -q "reboot: Power down" "$L/boot.log" || fail "the guest did not power off"
! grep -q "trillian-pw" "$L/boot.log" || fail "the password was echoed into the transcript"
grep -q 'tests="13" failures="0" errors="0" skipped="0"' "$L/boot.junit.xml" \
    || { cat "$L/boot.junit.xml"; fail "JUnit report"; }
grep -qF -- "-accel tcg" "$TMP/out-login/logs/boot.log" || fail "not booted with -accel tcg"
line=$(grep "boot: PASS" "$TMP/out-login/logs/boot.log")
ok "qemu TCG: $kpkg + busybox initramfs, login with password, 13 steps ($line; ${secs}s in all)"

recipe wrong 'profile = "debian-login"; password = "trillian-pw"; machine = "ia64";'
start=$(date +%s)
trl build "$TMP/wrong.cfg" --cache "$TMP/cache" -o "$TMP/out-wrong" -j2
expect_rc 3
expect_out "expected /^ia64$/"
expect_out "| x86_64"
[ $(( $(date +%s) - start )) -lt 120 ] || fail "a wrong expectation waited for its timeout"
grep -q 'failures="1"' "$TMP/out-wrong/boot/boot.junit.xml" || fail "JUnit has no failure"
ok "wrong machine: exit 3 in $(( $(date +%s) - start )) s"

recipe panic 'profile = "marker"; initrd = "";'
start=$(date +%s)
trl build "$TMP/panic.cfg" --cache "$TMP/cache" -o "$TMP/out-panic" -j2
expect_rc 3
expect_out "Kernel panic - not syncing"
[ $(( $(date +%s) - start )) -lt 120 ] || fail "the panic was not caught at once"
ok "no initramfs: kernel panic caught, exit 3 in $(( $(date +%s) - start )) s"
