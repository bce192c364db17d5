#!/bin/sh
# Slow tier (it needs an hp-sim kernel: a kernel build more than CI's fast
# tier affords). Builds a ski-bundle of a real hp-sim kernel, the payload
# initramfs, an ext2 disk holding the payload as /init, and the ski stage's
# ski-bootloader (tests/fixtures/bundle-ski-run.cfg), unpacks the tarball,
# runs the bundle's run-ski.sh unmodified as a user would (no arguments:
# the bundled boot loader; the built bski on PATH), waits for the payload's
# TRILLIAN-BOOT-OK, then stops Ski with the `kill PID` the script prints and
# checks the script ends. Ski and the hp-sim kernel come from the fixture
# tests/fixtures/ia64-ski-payload (the ski emulators stage and the 6.1
# hp-sim kernel, from the mirror; same keys), unless TRILLIAN_SKI_KERNEL
# names another kernel; TRILLIAN_SKI names another bski (as SKI).
. "$TOP/tests/lib.sh"
need ia64-linux-gnu-as ia64-linux-gnu-ld mke2fs
need_mirror
[ -r /usr/src/gcc-12/gcc-12.2.0-dfsg.tar.xz ] && [ -r /usr/src/linux-source-6.1.tar.xz ] \
    || skip "gcc-12-source or linux-source-6.1 is not installed"
unset TRILLIAN_SKI_BOOTLOADER
mkdir -p "$TMP/sr"
ln -s "$TOP/recipes/include" "$TMP/sr/include"
if [ -z "${TRILLIAN_SKI_KERNEL:-}" ]; then
    sed '/^bootcheck = (/,$d' "$TOP/tests/fixtures/ia64-ski-payload/ia64-ski-payload.cfg" \
        >"$TMP/sr/ski.cfg"
    trl build "$TMP/sr/ski.cfg" --cache "$TRILLIAN_TEST_CACHE" -o "$TMP/sk" -j2
    expect_rc 0
    KERNEL=$TMP/sk/kernel/vmlinux
else
    KERNEL=$TRILLIAN_SKI_KERNEL
fi
[ -r "$KERNEL" ] || skip "no hp-sim kernel at $KERNEL"
cp "$TOP/tests/fixtures/bundle-ski-run.cfg" "$TMP/sr/"
R=$TMP/sr/bundle-ski-run.cfg

trl build "$R" --cache "$TRILLIAN_TEST_CACHE" -o "$TMP/o" -j2 \
    --set "stages.kernel.argv=cp,$KERNEL,\${out}/vmlinux" --set "stages.kernel.inputs=$KERNEL"
expect_rc 0
ok "built the ski bundle with $KERNEL and the ski stage's boot loader"
SKIBIN=$TMP/o/ski/bin
[ -x "$SKIBIN/bski" ] || fail "no $SKIBIN/bski in the output"
cmp "$TMP/o/ski/share/ski/ski-bootloader" "$TMP/o/ski-bundle/ski-bundle/ski-bootloader" ||
    fail "the bundle's ski-bootloader is not the ski stage's"

mkdir -p "$TMP/x"
tar -xf "$TMP/o/ski-bundle/ski-bundle.tar.zst" -C "$TMP/x" || fail "cannot unpack ski-bundle.tar.zst"
grep -q 'GNU GENERAL PUBLIC LICENSE' "$TMP/x/ski-bundle/ski-bootloader.COPYING" &&
    grep -q 'GPL-2.0' "$TMP/x/ski-bundle/ski-bootloader.SOURCE" ||
    fail "the bundle's boot loader has no GPL text or source note"
con=$TMP/console.txt
start=$(date +%s)
# its own session, so the cleanup below can stop exactly what it started;
# no arguments: the bundled boot loader; bski from PATH (or SKI=TRILLIAN_SKI)
(unset SKI SKI_BOOTLOADER; [ -n "${TRILLIAN_SKI:-}" ] && export SKI=$TRILLIAN_SKI
    PATH=$SKIBIN:$PATH exec setsid sh "$TMP/x/ski-bundle/run-ski.sh") </dev/null >"$con" 2>&1 &
sid=$!
cleanup() { kill -KILL -- "-$sid" 2>/dev/null || :; }
trap cleanup EXIT

limit=${TRILLIAN_SKI_TIMEOUT:-240}
while ! grep -qa 'TRILLIAN-BOOT-OK' "$con"; do
    kill -0 "$sid" 2>/dev/null || { tail -n 30 "$con"; fail "run-ski.sh ended before the marker"; }
    [ $(($(date +%s) - start)) -lt "$limit" ] || { tail -n 30 "$con"; fail "no TRILLIAN-BOOT-OK within ${limit}s"; }
    sleep 1
done
secs=$(($(date +%s) - start))
grep -a 'TRILLIAN-BOOT-OK' "$con" | grep -q 'machine=ia64' || fail "marker without machine=ia64: $(grep -a TRILLIAN-BOOT-OK "$con")"
if grep -qa 'Unpacking initramfs\|Freeing initrd memory\|Trying to unpack rootfs' "$con"; then
    via="the initramfs"
else
    via="the disk sda (root=/dev/sda; this kernel does not unpack an initramfs)"
fi
grep -qa 'simulated SCSI host adapter' "$con" || fail "no simscsi disk in the console"
ok "Ski booted the bundle to the payload in ${secs}s via $via: $(grep -ao 'TRILLIAN-BOOT-OK.*' "$con" | head -n1)"

# Stop Ski the way the script says.
pid=$(sed -n 's/.*stop it with  kill \([0-9][0-9]*\).*/\1/p' "$con" | head -n1)
[ -n "$pid" ] || fail "run-ski.sh did not print the kill command"
sleep 2 # let the guest halt: Ski keeps running afterwards
kill -0 "$pid" 2>/dev/null || fail "Ski (process $pid) already ended: expected it to keep running after the halt"
kill "$pid"
n=0
while kill -0 "$sid" 2>/dev/null && [ $n -lt 20 ]; do sleep 0.5; n=$((n + 1)); done
kill -0 "$sid" 2>/dev/null && fail "run-ski.sh still running 10 s after kill $pid"
ok "kill $pid (as run-ski.sh says) stopped Ski and the script"
echo PASS
