#!/bin/sh
# Slow tier (it needs an hp-sim kernel: a kernel build more than CI's fast
# tier affords). Builds a ski-bundle of a real hp-sim kernel, the payload
# initramfs and an ext2 disk holding the payload as /init
# (tests/fixtures/bundle-ski-run.cfg), unpacks the tarball, runs the
# bundle's run-ski.sh as a user would (bski as SKI, the boot loader as its
# argument), waits for the payload's TRILLIAN-BOOT-OK, then stops Ski with
# the `kill PID` the script prints and checks the script ends. Ski, its
# ski-bootloader and the hp-sim kernel come from the fixture
# tests/fixtures/ia64-ski-payload (the ski emulators stage and the 6.1
# hp-sim kernel, from the mirror), unless TRILLIAN_SKI, TRILLIAN_SKI_BOOTLOADER
# and TRILLIAN_SKI_KERNEL name others.
. "$TOP/tests/lib.sh"
need ia64-linux-gnu-as ia64-linux-gnu-ld mke2fs
if [ -z "${TRILLIAN_SKI_KERNEL:-}" ]; then
    need_mirror
    mkdir -p "$TMP/sr"
    ln -s "$TOP/recipes/include" "$TMP/sr/include"
    sed '/^bootcheck = (/,$d' "$TOP/tests/fixtures/ia64-ski-payload/ia64-ski-payload.cfg" \
        >"$TMP/sr/ski.cfg"
    trl build "$TMP/sr/ski.cfg" --cache "$TRILLIAN_TEST_CACHE" -o "$TMP/sk" -j2
    expect_rc 0
    SKI=${TRILLIAN_SKI:-$TMP/sk/ski/bin/bski}
    BL=${TRILLIAN_SKI_BOOTLOADER:-$TMP/sk/ski/share/ski/ski-bootloader}
    KERNEL=$TMP/sk/kernel/vmlinux
else
    SKI=${TRILLIAN_SKI:-$(command -v bski || echo /opt/ski/bin/bski)}
    BL=${TRILLIAN_SKI_BOOTLOADER:-/opt/ski/ski-bootloader}
    KERNEL=$TRILLIAN_SKI_KERNEL
fi
[ -x "$SKI" ] || skip "no Ski simulator (bski) at $SKI"
[ -r "$BL" ] || skip "no ski-bootloader at $BL"
[ -r "$KERNEL" ] || skip "no hp-sim kernel at $KERNEL"
R=$TOP/tests/fixtures/bundle-ski-run.cfg

trl build "$R" --cache "$TMP/c" -o "$TMP/o" -j2 \
    --set "stages.kernel.argv=cp,$KERNEL,\${out}/vmlinux" --set "stages.kernel.inputs=$KERNEL"
expect_rc 0
ok "built the ski bundle with $KERNEL"

mkdir -p "$TMP/x"
tar -xf "$TMP/o/ski/ski.tar.zst" -C "$TMP/x" || fail "cannot unpack ski.tar.zst"
con=$TMP/console.txt
start=$(date +%s)
# its own session, so the cleanup below can stop exactly what it started
SKI=$SKI setsid sh "$TMP/x/ski/run-ski.sh" "$BL" </dev/null >"$con" 2>&1 &
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
