#!/bin/sh
# Fast tier: an ia64 ski-bundle's own run-ski.sh, unmodified, with the built
# bski on PATH and the boot loader the bundle carries (the ski stage's
# ski-bootloader, with its GPL text and source note). A booting hp-sim
# kernel needs a second kernel build, which the fast tier does not afford
# (slow/bundle-ski-run.sh boots one to the payload); here the "kernel" is a
# static IA-64 ELF stand-in (Trillian's payload, linked by command stages, as
# bundle.sh does), so the run goes as far as Ski's boot loader loading it and
# the initramfs and starting it: "loading vmlinux...", "initramfs loaded",
# "starting kernel...". Then the test stops Ski with the `kill PID` the
# script prints. Ski comes from the mirror (include/ia64-ski-sim.cfg: the
# stage tests/prebuild's grub-ski recipe builds, same key); about 3 minutes
# cold, seconds warm.
. "$TOP/tests/lib.sh"
need_mirror
need ia64-linux-gnu-as ia64-linux-gnu-ld setsid
[ -r /usr/src/gcc-12/gcc-12.2.0-dfsg.tar.xz ] || skip "gcc-12-source is not installed"
mkdir -p "$TMP/r"
ln -s "$TOP/recipes/include" "$TMP/r/include"
R=$TMP/r/bundle-ski.cfg
cat >"$R" <<CFG
name = "bundle-ia64-ski";
@include "include/ia64-toolchain.cfg"
@include "include/ia64-ski-sim.cfg"
initramfs = { kind = "payload"; };
stages = (
  { kind = "command"; name = "kernel-obj";
    argv = ["ia64-linux-gnu-as", "-x", "-o", "\${out}/init.o", "$TOP/firmware/payload/ia64/init.S"];
    inputs = ["$TOP/firmware/payload/ia64/init.S"]; outputs = ["init.o"]; },
  { kind = "command"; name = "kernel";
    argv = ["ia64-linux-gnu-ld", "-static", "-e", "_start", "-o", "\${out}/vmlinux", "\${stage:kernel-obj}/init.o"];
    outputs = ["vmlinux"]; }
);
images = ( { kind = "ski-bundle"; name = "bundle"; } );
CFG

t0=$SECONDS
trl build "$R" --cache "$TRILLIAN_TEST_CACHE" -o "$TMP/o" -j2
grep -v '^  |' "$TMP/out.txt" | tail -n 10
expect_rc 0
ok "built the ski bundle in $((SECONDS - t0)) s"

mkdir -p "$TMP/x"
tar -xf "$TMP/o/bundle/bundle.tar.zst" -C "$TMP/x" || fail "cannot unpack bundle.tar.zst"
B=$TMP/x/bundle
cmp "$B/ski-bootloader" "$TMP/o/ski/share/ski/ski-bootloader" ||
    fail "the bundle's ski-bootloader is not the ski stage's"
grep -q 'GNU GENERAL PUBLIC LICENSE' "$B/ski-bootloader.COPYING" &&
    grep -q 'Version 2, June 1991' "$B/ski-bootloader.COPYING" ||
    fail "ski-bootloader.COPYING is not the GPL version 2"
sha=$(sed -n 's/.*sha256 = "\([0-9a-f]*\)".*/\1/p' "$TOP/recipes/include/ia64-ski-sim.cfg")
for want in 'GPL-2.0' "$sha" 'ski-bootloader/' 'ski-dfc2902.tar.xz' 'github.com/trofi/ski'; do
    grep -qF -- "$want" "$B/ski-bootloader.SOURCE" ||
        fail "ski-bootloader.SOURCE does not name $want: $(cat "$B/ski-bootloader.SOURCE")"
done
grep -q 'OUT/ski/bin/bski' "$B/README" || fail "the README does not say how to get bski"
ok "the bundle carries the ski stage's ski-bootloader, the GPL-2 text and a source note ($(sed -n 's/^\(GPL[^,]*\), as its sources say.*/\1/p' "$B/ski-bootloader.SOURCE"))"

con=$TMP/console.txt
start=$SECONDS
# its own session, so the cleanup can stop exactly what it started; no
# SKI, no SKI_BOOTLOADER, no arguments: bski from PATH, the bundled loader
(unset SKI SKI_BOOTLOADER; PATH=$TMP/o/ski/bin:$PATH exec setsid sh "$B/run-ski.sh") \
    </dev/null >"$con" 2>&1 &
sid=$!
cleanup() { kill -KILL -- "-$sid" 2>/dev/null || :; }
trap cleanup EXIT
limit=${TRILLIAN_SKI_TIMEOUT:-120}
while ! grep -qa 'starting kernel\.\.\.' "$con"; do
    kill -0 "$sid" 2>/dev/null || { tail -n 20 "$con"; fail "run-ski.sh ended before the boot loader started the kernel"; }
    [ $((SECONDS - start)) -lt "$limit" ] || { tail -n 20 "$con"; fail "no 'starting kernel...' within ${limit}s"; }
    sleep 1
done
grep -qa 'loading vmlinux\.\.\.' "$con" && grep -qa 'initramfs loaded' "$con" ||
    { tail -n 20 "$con"; fail "the boot loader did not load vmlinux and the initramfs"; }
ok "run-ski.sh: bski ran the bundled ski-bootloader, which loaded vmlinux and the initramfs and started the kernel, in $((SECONDS - start)) s"

pid=$(sed -n 's/.*stop it with  kill \([0-9][0-9]*\).*/\1/p' "$con" | head -n1)
[ -n "$pid" ] || fail "run-ski.sh did not print the kill command"
kill "$pid" 2>/dev/null || :
n=0
while kill -0 "$sid" 2>/dev/null && [ $n -lt 20 ]; do sleep 0.5; n=$((n + 1)); done
kill -0 "$sid" 2>/dev/null && fail "run-ski.sh still running 10 s after kill $pid"
ok "kill $pid (as run-ski.sh says) ended the script"
echo PASS
