# Boot checks against the fake emulator (tests/fixtures/fake-emulator) through
# the TRILLIAN_QEMU_X86_64 / TRILLIAN_QEMU_IA64 / TRILLIAN_SKI overrides (the
# qemu-ia64 row's argv: itanium2-vpc with NVRAM, -bios, disk): the debian-login profile
# passes and writes a transcript and JUnit report; a wrong expectation, a
# missing login prompt, a kernel panic and a guest that does not power off
# fail with exit 3 and show what was expected and the last console lines; a
# missing emulator fails (exit 3) or is skipped with optional = true; Ski's
# disk link, pty console and kill-after-halt; a bare kernel boot with the
# marker profile; recipe errors in steps; no emulator left behind on SIGTERM.
. "$TOP/tests/lib.sh"
FAKE=$TOP/tests/fixtures/fake-emulator
C=$TMP/cache
# Firmware stand-ins, so the test does not depend on the ovmf package.
printf 'code' > "$TMP/CODE.fd"
printf 'vars' > "$TMP/VARS.fd"
export TRILLIAN_QEMU_X86_64=$FAKE TRILLIAN_OVMF_CODE=$TMP/CODE.fd FAKE_EMU_ARGS=$TMP/args
unset FAKE_EMU_MODE FAKE_EMU_PASSWORD TRILLIAN_SKI TRILLIAN_SKI_BOOTLOADER

# recipe NAME ARCH BOOTCHECK-SETTINGS: a recipe with a fake disk, kernel and
# initramfs made by command stages, and one boot check named boot.
recipe() {
    cat > "$TMP/$1.cfg" <<CFG
name = "$1";
arch = "$2";
stages = (
  { name = "img"; kind = "command";
    argv = ["sh", "-c", "echo disk > \$TRILLIAN_OUT/img.img"]; outputs = ["img.img"]; },
  { name = "kernel"; kind = "command";
    argv = ["sh", "-c", "echo k > \$TRILLIAN_OUT/vmlinuz; echo k > \$TRILLIAN_OUT/vmlinux"];
    outputs = ["vmlinuz", "vmlinux"]; },
  { name = "initramfs"; kind = "command";
    argv = ["sh", "-c", "echo i > \$TRILLIAN_OUT/initrd.img"]; outputs = ["initrd.img"]; }
);
bootcheck = ( { kind = "boot"; name = "boot"; $3 } );
CFG
}
DISK='image = "img"; boot = "disk"; firmware_vars = "'"$TMP"'/VARS.fd";'

build() { # recipe: `check` boots even when a passing result is cached (the
    # fake emulator's behaviour comes from the environment, not the recipe)
    trl check "$TMP/$1.cfg" --cache "$C" -o "$TMP/out-$1" -j2
}

# 1. The debian-login profile passes.
recipe pass amd64 "$DISK"'profile = "debian-login"; password = "pw"; systemd = true;
                   os_release = "^VERSION_CODENAME=bookworm$";'
start=$(date +%s)
FAKE_EMU_PASSWORD=pw build pass
expect_rc 0
O=$TMP/out-pass/boot
[ -s "$O/boot.log" ] || fail "no transcript in OUT/boot/boot.log"
grep -q "fake login:" "$O/boot.log" || fail "transcript lacks the login prompt"
grep -q "VERSION_CODENAME=bookworm" "$O/boot.log" || fail "transcript lacks os-release"
grep -q 'tests="16" failures="0" errors="0" skipped="0"' "$O/boot.junit.xml" \
    || { cat "$O/boot.junit.xml"; fail "JUnit summary wrong"; }
[ "$(grep -c '<testcase ' "$O/boot.junit.xml")" -eq 16 ] || fail "not one testcase per step"
grep -q 'name="04 send password: send (secret)"' "$O/boot.junit.xml" || fail "secret not masked"
! grep -q '"pw"' "$TMP/out-pass/logs/boot.log" || fail "password in the stage log"
grep -q "boot: PASS: 16/16 steps" "$TMP/out-pass/logs/boot.log" || fail "no summary line"
grep -qx -- "-accel" "$TMP/args" && grep -qx tcg "$TMP/args" || fail "not -accel tcg"
grep -q "^file=$TMP/out-pass/.*img.img,format=raw,if=virtio,snapshot=on\$\|snapshot=on" "$TMP/args" \
    || fail "disk not attached with snapshot=on"
grep -q "^if=pflash,format=raw,readonly=on,file=$TMP/CODE.fd\$" "$TMP/args" || fail "no OVMF code"
grep -q '^if=pflash,format=raw,file=.*/VARS.fd$' "$TMP/args" || fail "no private OVMF vars"
! grep -q "file=$TMP/VARS.fd" "$TMP/args" || fail "OVMF vars not copied"
grep -q '"result": "pass"' "$O/stage-manifest.json" || fail "no stage manifest"
ok "debian-login profile passes in $(( $(date +%s) - start )) s; transcript, JUnit, argv"

# `trillian build` reuses a passing check; `trillian check` boots again.
trl build "$TMP/pass.cfg" --cache "$C" -o "$TMP/out-pass" -j2
expect_rc 0
expect_out "boot: cached"
rm -f "$TMP/args"
FAKE_EMU_PASSWORD=pw build pass
expect_rc 0
expect_out "boot: started (forced)"
[ -s "$TMP/args" ] || fail "check did not start the emulator again"
grep -q "fake login:" "$O/boot.log" || fail "second run has no transcript"
ok "a passing check is cached by build and rerun by check"

# 2. A wrong expectation fails with exit 3 and says what it expected.
recipe wrong amd64 "$DISK"'profile = "debian-login"; command_timeout = 2;'
FAKE_EMU_MODE=wrong-machine build wrong
expect_rc 3
expect_out "expected /^x86_64$/"
expect_out "| aarch64"
O=$TMP/out-wrong/boot
grep -q aarch64 "$O/boot.log" || fail "failed check left no transcript in OUT"
grep -q 'failures="1"' "$O/boot.junit.xml" || fail "JUnit lacks the failure"
grep -q '<skipped message=' "$O/boot.junit.xml" || fail "steps after the failure not skipped"
grep -A3 '<failure' "$O/boot.junit.xml" | grep -q "Last console lines" || fail "no console lines in JUnit"
ok "wrong uname -m: exit 3, expected vs. console lines"

# 3. No login prompt: the boot timeout fails it quickly.
recipe silent amd64 "$DISK"'boot_timeout = 2;'
start=$(date +%s)
FAKE_EMU_MODE=silent build silent
expect_rc 3
expect_out "waited for /login: ?/ for 2 s"
# not the default 300 s: a bound no loaded machine reaches, well under it
[ $(( $(date +%s) - start )) -lt 150 ] || fail "timeout took too long"
ok "no login prompt: timeout, exit 3"

# 4. A kernel panic fails at once, not at the timeout.
recipe panic amd64 "$DISK"'boot_timeout = 1000;'
start=$(date +%s)
FAKE_EMU_MODE=panic build panic
expect_rc 3
expect_out "Kernel panic - not syncing: VFS"
[ $(( $(date +%s) - start )) -lt 500 ] || fail "panic waited for the timeout"
grep -q 'Call Trace: fake_trace_after_the_panic' "$TMP/out-panic/boot/boot.log" ||
    fail "the lines after the panic's first one are not in the transcript"
ok "kernel panic: exit 3 at once, the lines after it in the transcript"

# 5. The guest does not power off (qemu row): the exit step fails.
recipe noexit amd64 "$DISK"'exit_timeout = 2;'
FAKE_EMU_MODE=no-exit build noexit
expect_rc 3
expect_out "did not exit within 2 s"
ok "no power-off: exit 3"

# 6. A missing emulator fails with exit 3 and names the fix; optional skips.
recipe missing amd64 "$DISK"'profile = "marker";'
TRILLIAN_QEMU_X86_64=$TMP/no-such-qemu build missing
expect_rc 3
expect_out "TRILLIAN_QEMU_X86_64=$TMP/no-such-qemu is not an executable program"
expect_out "optional = true"
mkdir -p "$TMP/bin" && ln -sf "$(command -v sh)" "$TMP/bin/sh"
TRILLIAN_QEMU_X86_64= PATH=$TMP/bin \
    "$TRILLIAN" build "$TMP/missing.cfg" --cache "$C" -o "$TMP/out-missing" -j2 \
    >"$TMP/out.txt" 2>&1
rc=$?
expect_rc 3
expect_out "qemu-system-x86_64 is not on PATH"
expect_out "apt-get install qemu-system-x86"
recipe optional amd64 "$DISK"'profile = "marker"; optional = true;'
TRILLIAN_QEMU_X86_64=$TMP/no-such-qemu build optional
expect_rc 0
expect_out "SKIPPED"
TRILLIAN_OVMF_CODE=$TMP/no-such-ovmf build missing
expect_rc 3
expect_out "its firmware $TMP/no-such-ovmf is not readable (apt-get install ovmf)"
TRILLIAN_OVMF_CODE=$TMP/no-such-ovmf build optional
expect_rc 0
expect_out "SKIPPED"
ok "missing emulator or firmware: exit 3 naming the fix; optional = true skips"

# 6b. qemu-system-ia64 (not in Debian): the row's argv with the fake
# emulator: the itanium2-vpc machine with a private zeroed 64 KiB NVRAM file,
# the EFI firmware by -bios on the serial console, the disk (no virtio in
# that QEMU); without firmware, exit 3 naming how to give it; kernel and
# netboot modes are recipe errors saying why.
printf 'ia64 efi' > "$TMP/ia64-efi.fd"
recipe qia64 ia64 'image = "img"; boot = "disk"; emulator = "qemu-ia64"; profile = "debian-login";
                   password = "pw"; firmware = "'"$TMP"'/ia64-efi.fd";'
TRILLIAN_QEMU_IA64=$FAKE FAKE_EMU_MACHINE=ia64 FAKE_EMU_PASSWORD=pw build qia64
expect_rc 0
grep -qx -- "-machine" "$TMP/args" &&
    grep -qx "itanium2-vpc,nvram=$TMP/.*/nvram.bin,firmware-console=serial" "$TMP/args" ||
    { cat "$TMP/args"; fail "qemu-ia64: no -machine itanium2-vpc,nvram=FILE,firmware-console=serial"; }
[ "$(sed -n "/^-bios\$/{n;p}" "$TMP/args")" = "$TMP/ia64-efi.fd" ] || fail "qemu-ia64: firmware not given by -bios"
grep -q "^file=.*img.img,format=raw,snapshot=on\$" "$TMP/args" || fail "qemu-ia64: disk not attached"
grep -qx -- "-accel" "$TMP/args" && grep -qx tcg "$TMP/args" || fail "qemu-ia64: not -accel tcg"
grep -q "boot: PASS" "$TMP/out-qia64/logs/boot.log" || fail "qemu-ia64: the check did not pass"
recipe qia64nf ia64 'image = "img"; boot = "disk"; emulator = "qemu-ia64"; profile = "marker";'
TRILLIAN_QEMU_IA64=$FAKE TRILLIAN_QEMU_IA64_BIOS= build qia64nf
expect_rc 3
expect_out "TRILLIAN_QEMU_IA64_BIOS"
recipe qia64k ia64 'image = "img"; boot = "kernel"; emulator = "qemu-ia64"; profile = "marker";'
trl plan "$TMP/qia64k.cfg" --cache "$C"
expect_rc 2
expect_out "emulator qemu-ia64 cannot do a kernel boot: it has no -kernel loader"
recipe qia64n ia64 'image = "img"; boot = "netboot"; emulator = "qemu-ia64"; profile = "marker";'
# netboot: the loader from a stand-in disk and the tree served by dnsmasq
# (docs/ia64.md; tests netboot-root-tftp and slow/ia64-netboot), which the
# plan requires
trl plan "$TMP/qia64n.cfg" --cache "$C"
expect_rc 0
TRILLIAN_DNSMASQ=$TMP/no-dnsmasq trl plan "$TMP/qia64n.cfg" --cache "$C"
expect_rc 2
expect_out "needs the program '$TMP/no-dnsmasq'"
ok "qemu-ia64 row: -machine itanium2-vpc,nvram=,firmware-console=serial, -bios FIRMWARE, the disk, tcg; no firmware: exit 3 naming it; kernel refused at plan time; netboot planned, needing dnsmasq"

# 7. Ski: pty console, private copy of the disk as PREFIX+a, kernel and boot
# loader from the recipe; it spins after the guest halts and is killed.
printf 'bl' > "$TMP/bootloader"
recipe ski ia64 'image = "img"; boot = "disk"; emulator = "ski"; bootloader = "'"$TMP"'/bootloader";
                 append = "root=/dev/sda2 console=ttyS0"; profile = "debian-login"; exit_timeout = 1000;'
start=$(date +%s)
TRILLIAN_SKI=$FAKE FAKE_EMU_MODE=no-exit FAKE_EMU_MACHINE=ia64 build ski
expect_rc 0
grep -q "console on a pty" "$TMP/out-ski/logs/boot.log" || fail "Ski console not on a pty"
grep -q "stopping the emulator\|reboot: Power down" "$TMP/out-ski/logs/boot.log" || fail "no halt handling"
grep -qx -- "-noconsole" "$TMP/args" || fail "no -noconsole"
grep -qx "$TMP/bootloader" "$TMP/args" || fail "boot loader not passed"
grep -q '/vmlinux$' "$TMP/args" || fail "Ski not given vmlinux"
grep -q '^simscsi=.*/sd$' "$TMP/args" || fail "no simscsi=PREFIX"
grep -qx "root=/dev/sda2 console=ttyS0" "$TMP/args" || fail "append not one argument"
# killed at the power-off line, not at the 1000 s exit timeout
[ $(( $(date +%s) - start )) -lt 500 ] || fail "Ski run took too long"
ok "Ski row: pty, disk copy, killed after the power-off line"

# Ski kernel boot: -initramfs before the boot loader, vmlinux, marker profile.
recipe skik ia64 'emulator = "ski"; bootloader = "'"$TMP"'/bootloader"; image = "kernel";
                  profile = "marker";'
TRILLIAN_SKI=$FAKE FAKE_EMU_MODE=marker-hang build skik
expect_rc 0
[ "$(sed -n 2,5p "$TMP/args" | tr '\n' ' ')" = "-noconsole -initramfs $(sed -n 4p "$TMP/args") $TMP/bootloader " ] \
    || { cat "$TMP/args"; fail "Ski kernel argv order"; }
grep -q '/initrd.img$' "$TMP/args" && grep -q '/vmlinux$' "$TMP/args" || fail "Ski kernel files"
ok "Ski row: kernel + initramfs boot, marker, killed at the power-off line"

# A Ski guest that goes down before the prompt fails at once, not at the
# boot timeout.
start=$(date +%s)
TRILLIAN_SKI=$FAKE FAKE_EMU_MODE=halt-early build ski
expect_rc 3
expect_out "but the guest went down first"
[ $(( $(date +%s) - start )) -lt 150 ] || fail "halt before login waited for the 300 s boot timeout"
ok "Ski row: early power-off fails at once"

# Autologin (agetty --autologin root): no user name, no password is sent.
recipe auto amd64 "$DISK"'autologin = true; password = "unused";'
FAKE_EMU_MODE=autologin build auto
expect_rc 0
grep -q "login: root (automatic login)" "$TMP/out-auto/boot/boot.log" || fail "no autologin"
! grep -q 'send user' "$TMP/out-auto/boot/boot.junit.xml" || fail "sent a user name"
ok "autologin profile"

# 8. Bare kernel + initramfs boot with the marker profile; a payload that
# spins after the marker is killed and passes.
recipe kernel amd64 'image = "kernel"; boot = "kernel"; profile = "marker";
                     marker = "TRILLIAN-BOOT-OK"; exit_timeout = 2;'
FAKE_EMU_MODE=marker-hang build kernel
expect_rc 0
grep -q '/vmlinuz$' "$TMP/args" && grep -q '/initrd.img$' "$TMP/args" || fail "no -kernel/-initrd"
grep -qx "console=ttyS0 panic=-1" "$TMP/args" || fail "default append missing"
! grep -q pflash "$TMP/args" || fail "kernel boot should not load OVMF"
grep -q 'tests="2" failures="0"' "$TMP/out-kernel/boot/boot.junit.xml" || fail "marker JUnit"
ok "kernel boot, marker profile, kill after timeout"

# Netboot: the TFTP root is the stage's tftp/ tree, the boot file found in it.
recipe net amd64 'image = "img"; boot = "netboot"; profile = "marker";'
sed -i 's|echo disk > \$TRILLIAN_OUT/img.img"\]; outputs = \["img.img"\]|mkdir -p $TRILLIAN_OUT/tftp/grub; echo efi > $TRILLIAN_OUT/tftp/BOOTX64.EFI"]; outputs = ["tftp/BOOTX64.EFI"]|' "$TMP/net.cfg"
FAKE_EMU_MODE=marker build net
expect_rc 0
grep -qx "user,id=n0,tftp=$TMP/.*/out/tftp,bootfile=BOOTX64.EFI" "$TMP/args" \
    || { cat "$TMP/args"; fail "netboot argv"; }
grep -qx "virtio-net-pci,netdev=n0" "$TMP/args" || fail "no virtio-net"
ok "netboot: tftp/ root and boot file"

# 9. Explicit steps; a wrong one is a recipe error (exit 2) before anything runs.
recipe steps amd64 "$DISK"'steps = ( { wait = "login: $"; timeout = 10; }, { send = "root"; },
                    { wait = "# $"; }, { send = "echo hello-trillian"; },
                    { expect = "^hello-trillian$"; timeout = 5; name = "echo"; },
                    { send = "poweroff"; }, { exit = true; timeout = 10; } );'
build steps
expect_rc 0
grep -q 'name="05 echo: expect /^hello-trillian$/"' "$TMP/out-steps/boot/boot.junit.xml" \
    || fail "named step missing in JUnit"
recipe badsteps amd64 "$DISK"'steps = ( { wiat = "login:"; } );'
build badsteps
expect_rc 2
expect_out "did you mean \`wait\`"
recipe badprofile amd64 "$DISK"'steps = ( { exit = true; } ); password = "x";'
build badprofile
expect_rc 2
expect_out "only a profile uses \`password\`"
ok "explicit steps; step errors are recipe errors"

# 9b. reboot_from = "image": the first boot runs on a private copy of the
# image in the check's work directory with snapshot=off, the second boots
# that copy again (snapshot=on) and reads what the first wrote; the image in
# the cache and in OUT is unchanged. The fake drops writes under snapshot=on
# (qemu's overlay), so a first boot on the image itself would fail the read.
LOGIN='{ wait = "login: $"; timeout = 10; }, { send = "root"; }, { wait = "# $"; timeout = 10; },'
recipe again amd64 "$DISK"'steps = ( '"$LOGIN"' { send = "disk-write written-by-the-first-boot"; },
                    { wait = "# $"; timeout = 10; }, { send = "poweroff"; }, { exit = true; timeout = 10; } );
                    reboot_from = "image";
                    reboot_steps = ( '"$LOGIN"' { send = "disk-read"; },
                      { expect = "^written-by-the-first-boot$"; name = "the first boot'"'"'s write"; timeout = 5; },
                      { send = "poweroff"; }, { exit = true; timeout = 10; } );'
build again
expect_rc 0
O=$TMP/out-again/boot
first=$(sed -n '/^==== trillian: reboot/q;s/^fake-emulator: disk \(.*\) snapshot=\(.*\)$/\1 \2/p' "$O/boot.log" | tr -d '\r')
second=$(sed -n '/^==== trillian: reboot/,$s/^fake-emulator: disk \(.*\) snapshot=\(.*\)$/\1 \2/p' "$O/boot.log" | tr -d '\r')
case $first in */work/image.img.img\ off) ;; *) fail "first boot not on a writable copy in the work directory: '$first'" ;; esac
[ "$second" = "${first% off} on" ] || fail "the reboot did not boot the first boot's copy: '$second' (first: '$first')"
grep -q "^==== trillian: reboot: the image 'img' again, as the first boot left it" "$O/boot.log" ||
    fail "no reboot banner in the transcript"
[ "$(cat "$TMP/out-again/img/img.img")" = disk ] || fail "the image in OUT was written"
for f in "$C"/objects/*/out/img.img; do [ "$(cat "$f")" = disk ] || fail "the cached image $f was written"; done
grep -q 'name="[0-9]* after reboot: the first boot.s write' "$O/boot.junit.xml" || fail "JUnit lacks the reboot's step"
grep -q '"reboot_from": "image"' "$O/stage-manifest.json" && grep -q '"reboot_first_step": 8' "$O/stage-manifest.json" ||
    { cat "$O/stage-manifest.json"; fail "manifest lacks reboot_from or reboot_first_step"; }
grep -q 'sparse, copied in' "$TMP/out-again/logs/boot.log" || fail "the stage log does not say where the copy is"
ok "reboot_from = image: the first boot writes to a private copy (snapshot=off), the reboot reads it; cache and OUT untouched"

# reboot_from = "image" where it cannot work: refused at plan time.
refused() { # NAME ARCH SETTINGS MESSAGE
    recipe "$1" "$2" "$3"' steps = ( { exit = true; } ); reboot_from = "image"; reboot_steps = ( { exit = true; } );'
    trl plan "$TMP/$1.cfg" --cache "$C"
    expect_rc 2
    expect_out "$4"
    grep -q "$1.cfg:[0-9]*: bootcheck.boot.reboot_from\|$1.cfg:[0-9]*: bootcheck.boot.disks" "$TMP/out.txt" ||
        { cat "$TMP/out.txt"; fail "$1: no FILE:LINE: section.key"; }
}
refused againk amd64 'image = "kernel"; boot = "kernel";' "this check boots a bare kernel: boot a disk image"
refused againn amd64 'image = "img"; boot = "netboot";' "this check boots a netboot tree"
refused againd amd64 "$DISK"' disks = ["image:8"];' "a disk named 'image' cannot be told from reboot_from = \"image\""
refused agains ia64 'image = "img"; boot = "disk"; emulator = "ski"; bootloader = "'"$TMP"'/bootloader";' \
    "emulator ski cannot boot a second time in one check"
refused againe ia64 'image = "kernel"; emulator = "ski-efi"; kernel_file = "vmlinux";' "emulator ski-efi cannot boot a disk"
ok "reboot_from = image: a kernel, a netboot tree, a disk named image, Ski and ski-efi refused at plan time"

# 10. SIGTERM to trillian leaves no emulator behind.
recipe term amd64 "$DISK"'boot_timeout = 300;'
tag=term-$$-$RANDOM
ln -s "$FAKE" "$TMP/fake-$tag"
TRILLIAN_QEMU_X86_64=$TMP/fake-$tag FAKE_EMU_MODE=silent \
    "$TRILLIAN" build "$TMP/term.cfg" --cache "$C" -o "$TMP/out-term" -j2 >"$TMP/out.txt" 2>&1 &
tpid=$!
for _ in $(seq 50); do pgrep -f "fake-$tag" >/dev/null && break; sleep 0.2; done
pgrep -f "fake-$tag" >/dev/null || fail "the fake emulator never started"
kill -TERM $tpid
wait $tpid
rc=$?
expect_rc 130
sleep 0.5
! pgrep -f "fake-$tag" >/dev/null || fail "emulator left running after SIGTERM"
ok "interrupt stops the emulator"
