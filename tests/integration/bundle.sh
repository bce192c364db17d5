#!/bin/sh
# Fast tier: the ski-bundle and qemu-bundle image stages. A fixture recipe
# (tests/fixtures/bundle-ia64.cfg) stands in a tiny IA-64 ELF for the kernel
# (Trillian's boot payload, linked by command stages) and a 4 MiB file for
# the disk. Checks: the tarballs' entries (names, order, mtimes, owners,
# modes) and content, the run scripts' syntax and the exact argv they give
# bski and qemu-system-ia64 (fake emulators on PATH; the ia64 firmware from
# a stand-in stage, by default the bundled one), their messages without an
# emulator, a recipe with no firmware to bundle (exit 2), that they run from
# the output directory (copies, not the cache's files), that a non-IA-64
# kernel fails the stage with exit 1 naming the file, a recipe with nothing
# to boot fails with exit 2, and that two clean builds give byte-identical tarballs (.tar.zst,
# the same at -j1 and -j2); tarball = gzip or xz holds the same tar.
. "$TOP/tests/lib.sh"
need ia64-linux-gnu-as ia64-linux-gnu-ld qemu-img python3 truncate zstd xz gzip
R=$TOP/tests/fixtures/bundle-ia64.cfg

trl build "$R" --cache "$TMP/c1" -o "$TMP/o1" -j2
expect_rc 0
ok "built ski, ski-initrd and qemu bundles"

# ---- tarball listing: sorted, fixed mtimes, 0:0, modes ----------------------
listing() { # tarball.tar.zst -> "name mode uid gid mtime size" lines, in archive order
    zstd -dcq "$1" >"$TMP/listing.tar" || return 1
    python3 - "$TMP/listing.tar" <<'PY'
import sys, tarfile
with tarfile.open(sys.argv[1], "r:") as t:
    for m in t.getmembers():
        print(m.name + ("/" if m.isdir() else ""), oct(m.mode), m.uid, m.gid, m.mtime, m.size, m.uname or "-", m.gname or "-")
PY
}
check_tar() { # tarball expected-names...
    tb=$1; shift
    listing "$tb" >"$TMP/list" || fail "cannot read $tb"
    names=$(cut -d' ' -f1 "$TMP/list" | tr '\n' ' ')
    [ "$names" = "$* " ] || fail "$tb entries: '$names', expected '$* '"
    cut -d' ' -f1 "$TMP/list" | LC_ALL=C sort -c || fail "$tb entries are not sorted"
    awk '$5 != 1700000000 { exit 1 }' "$TMP/list" || fail "$tb: mtimes are not source_date_epoch: $(cat "$TMP/list")"
    awk '$3 != 0 || $4 != 0 || $7 != "-" || $8 != "-" { exit 1 }' "$TMP/list" ||
        fail "$tb: owners are not 0:0 without names: $(cat "$TMP/list")"
    awk '($1 ~ /\/$/ || $1 ~ /\.sh$/) && $2 != "0o755" { exit 1 }
         !($1 ~ /\/$/ || $1 ~ /\.sh$/) && $2 != "0o644" { exit 1 }' "$TMP/list" ||
        fail "$tb: modes are not 0755 (dirs, scripts) / 0644: $(cat "$TMP/list")"
    ok "$(basename "$tb"): $(wc -l <"$TMP/list") entries, sorted, mtime 1700000000, 0:0, modes 755/644"
}
check_tar "$TMP/o1/ski/ski.tar.zst" ski/ ski/README ski/initrd.img ski/run-ski.sh ski/sda \
    ski/ski-bootloader ski/ski-bootloader.COPYING ski/ski-bootloader.SOURCE ski/vmlinux
check_tar "$TMP/o1/ski-initrd/ski-initrd.tar.zst" ski-initrd/ ski-initrd/README \
    ski-initrd/initrd.img ski-initrd/run-ski.sh ski-initrd/ski-bootloader \
    ski-initrd/ski-bootloader.COPYING ski-initrd/ski-bootloader.SOURCE ski-initrd/vmlinux
check_tar "$TMP/o1/qemu/qemu.tar.zst" qemu/ qemu/README qemu/disk.qcow2 qemu/ia64-firmware.COPYING \
    qemu/ia64-firmware.SOURCE qemu/ia64-firmware.bin qemu/nvram.bin qemu/run-qemu.sh

# ---- content ------------------------------------------------------------------
X=$TMP/x
mkdir -p "$X"
for b in ski ski-initrd qemu; do tar -xf "$TMP/o1/$b/$b.tar.zst" -C "$X" || fail "untar $b"; done
cmp "$X/ski/vmlinux" "$TMP/o1/kernel/vmlinux" || fail "ski/vmlinux is not the kernel stage's vmlinux"
cmp "$X/ski/sda" "$TMP/o1/disk/disk.img" || fail "ski/sda is not the disk stage's disk.img"
cmp "$X/ski/initrd.img" "$TMP/o1/initramfs/initrd.img" || fail "ski/initrd.img differs"
for f in "" .COPYING .SOURCE; do
    cmp "$X/ski/ski-bootloader$f" "$TMP/o1/fw-ski/share/ski/ski-bootloader$f" ||
        fail "ski/ski-bootloader$f is not the emulator stage's share/ski/ski-bootloader$f"
done
ok "ski bundle: vmlinux, sda and initrd.img are the stages' files; the boot loader with its licence and note from the emulator stage"
qemu-img info --output=json "$X/qemu/disk.qcow2" >"$TMP/qi" || fail "qemu-img info"
grep -q '"format": "qcow2"' "$TMP/qi" || fail "disk.qcow2 is not qcow2: $(cat "$TMP/qi")"
qemu-img compare -q -f raw -F qcow2 "$TMP/o1/disk/disk.img" "$X/qemu/disk.qcow2" ||
    fail "disk.qcow2 does not hold the disk stage's image"
[ "$(wc -c <"$X/qemu/nvram.bin")" -eq 65536 ] || fail "nvram.bin is not nvram_kib = 64 KiB"
[ -z "$(tr -d '\0' <"$X/qemu/nvram.bin" | head -c 1)" ] || fail "nvram.bin is not zeroed"
for f in bin COPYING SOURCE; do
    cmp "$X/qemu/ia64-firmware.$f" "$TMP/o1/fw/share/qemu/ia64-firmware.$f" ||
        fail "qemu/ia64-firmware.$f is not the emulator stage's share/qemu/ia64-firmware.$f"
done
ok "qemu bundle: disk.qcow2 holds disk.img, nvram.bin 64 KiB of zeros, the firmware with its licence and note from the emulator stage"
grep -q 'github.com/trofi/ski' "$X/ski/README" && grep -q 'OUT/ski/bin/bski' "$X/ski/README" &&
    grep -q 'ski-bootloader  *Ski.s boot loader for hp-sim kernels (from the fw-ski stage)' "$X/ski/README" ||
    fail "ski README does not say where Ski comes from or list the boot loader: $(cat "$X/ski/README")"
grep -q 'TRILLIAN-BOOT-OK' "$X/ski/README" || fail "ski README does not say what the payload prints"
grep -q 'not packaged by any distribution' "$X/qemu/README" &&
    grep -q 'trillian build. of a recipe that includes' "$X/qemu/README" &&
    grep -q 'ia64-firmware.bin  *qemu-system-ia64.s EFI firmware (from the fw stage)' "$X/qemu/README" &&
    grep -q 'ia64-firmware.COPYING' "$X/qemu/README" && grep -q 'TRILLIAN-BOOT-OK' "$X/qemu/README" ||
    fail "qemu README does not list the firmware, say the emulator is out of tree and how to build it, or what the payload prints: $(cat "$X/qemu/README")"
ok "READMEs: where to get Ski and qemu-system-ia64, the bundled firmware, the expected marker"

# ---- scripts ------------------------------------------------------------------
for s in "$X/ski/run-ski.sh" "$X/ski-initrd/run-ski.sh" "$X/qemu/run-qemu.sh"; do
    sh -n "$s" || fail "sh -n $s"
    [ -x "$s" ] || fail "$s is not executable"
done
ok "run-*.sh pass sh -n"

mkdir -p "$TMP/bin"
cat >"$TMP/bin/fake-emu" <<'SH'
#!/bin/sh
# prints its arguments, one a line, and where it ran
pwd > "$FAKE_LOG"
for a in "$@"; do printf '%s\n' "$a"; done >> "$FAKE_LOG"
SH
chmod +x "$TMP/bin/fake-emu"
: >"$TMP/bootloader"
: >"$TMP/fw.fd"
export FAKE_LOG=$TMP/args
# the bundled boot loader by default
(cd "$TMP" && SKI=$TMP/bin/fake-emu SKI_BOOTLOADER= sh "$X/ski/run-ski.sh" extra=0 </dev/null) \
    >"$TMP/run.txt" 2>&1 || { cat "$TMP/run.txt"; fail "run-ski.sh with a fake bski failed"; }
printf '%s\n' "$X/ski" -nonet -noconsole -initramfs initrd.img "$X/ski/ski-bootloader" vmlinux \
    root=/dev/sda init=/init simscsi=./sd extra=0 >"$TMP/want"
diff "$TMP/want" "$TMP/args" || fail "run-ski.sh did not boot the bundled ski-bootloader (above: want vs got)"
(cd "$TMP" && SKI=$TMP/bin/fake-emu sh "$X/ski/run-ski.sh" bootloader extra=1 </dev/null) \
    >"$TMP/run.txt" 2>&1 || { cat "$TMP/run.txt"; fail "run-ski.sh with a fake bski failed"; }
printf '%s\n' "$X/ski" -nonet -noconsole -initramfs initrd.img "$TMP/bootloader" vmlinux \
    root=/dev/sda init=/init simscsi=./sd extra=1 >"$TMP/want"
diff "$TMP/want" "$TMP/args" || fail "run-ski.sh gave bski the wrong argv (above: want vs got)"
grep -q "kill [0-9]" "$TMP/run.txt" || fail "run-ski.sh does not say how to stop Ski: $(cat "$TMP/run.txt")"
ok "run-ski.sh: bski $(tail -n +2 "$TMP/args" | tr '\n' ' ')(in the bundle directory; prints how to stop Ski)"

(export SKI_BOOTLOADER=$TMP/bootloader PATH=$TMP/bin:$PATH && ln -sf fake-emu "$TMP/bin/bski" &&
    sh "$X/ski-initrd/run-ski.sh" </dev/null) >"$TMP/run.txt" 2>&1 || fail "run-ski.sh (bski on PATH) failed: $(cat "$TMP/run.txt")"
printf '%s\n' "$X/ski-initrd" -nonet -noconsole -initramfs initrd.img "$TMP/bootloader" vmlinux >"$TMP/want"
diff "$TMP/want" "$TMP/args" || fail "ski-initrd: wrong argv"
ok "run-ski.sh without a disk: bski from PATH, SKI_BOOTLOADER, no simscsi, empty command line"

SKI=$TMP/bin/fake-emu SKI_BOOTLOADER=$TMP/no-such-bootloader sh "$X/ski/run-ski.sh" </dev/null >"$TMP/run.txt" 2>&1 &&
    fail "run-ski.sh ran without a boot loader"
grep -q "cannot read the ski-bootloader $TMP/no-such-bootloader" "$TMP/run.txt" ||
    fail "no clear message for a missing boot loader: $(cat "$TMP/run.txt")"
(PATH=/usr/bin:/bin SKI= sh "$X/ski/run-ski.sh" "$TMP/bootloader" </dev/null) >"$TMP/run.txt" 2>&1 &&
    fail "run-ski.sh ran without bski"
grep -q 'bski not found' "$TMP/run.txt" &&
    grep -q 'trillian build of a recipe that includes include/ia64-ski-sim.cfg' "$TMP/run.txt" ||
    fail "no clear message without bski: $(cat "$TMP/run.txt")"
# OUT holds copies, never the cache's inodes (docs/engine.md): Ski may write
# OUT's disk, and run-ski.sh runs there.
SKI=$TMP/bin/fake-emu sh "$TMP/o1/ski/ski/run-ski.sh" "$TMP/bootloader" </dev/null >"$TMP/run.txt" 2>&1 ||
    fail "run-ski.sh refused OUT's own copy of the disk: $(cat "$TMP/run.txt")"
ok "run-ski.sh refuses: a missing boot loader, no bski (saying how to build it); runs from OUT's copy of the disk"

# the bundled firmware by default, qemu-system-ia64 from PATH
(cd "$TMP" && export PATH=$TMP/bin:$PATH && ln -sf fake-emu "$TMP/bin/qemu-system-ia64" &&
    QEMU= QEMU_IA64_BIOS= sh "$X/qemu/run-qemu.sh" -smp 2 </dev/null) \
    >"$TMP/run.txt" 2>&1 || fail "run-qemu.sh with a fake qemu on PATH failed: $(cat "$TMP/run.txt")"
rm "$TMP/bin/qemu-system-ia64"
printf '%s\n' "$X/qemu" -machine itanium2-vpc,nvram=nvram.bin,firmware-console=serial \
    -bios "$X/qemu/ia64-firmware.bin" -smp 2 -accel tcg -m 1024 \
    -drive file=disk.qcow2,format=qcow2 -serial stdio -display none -monitor none \
    -no-reboot >"$TMP/want"
diff "$TMP/want" "$TMP/args" || fail "run-qemu.sh gave qemu the wrong argv (above)"
ok "run-qemu.sh: qemu-system-ia64 $(tail -n +2 "$TMP/args" | tr '\n' ' ')"
# QEMU and QEMU_IA64_BIOS (a relative path: from the caller's directory) override
(cd "$TMP" && QEMU=$TMP/bin/fake-emu QEMU_IA64_BIOS=fw.fd sh "$X/qemu/run-qemu.sh" </dev/null) \
    >"$TMP/run.txt" 2>&1 || fail "run-qemu.sh with QEMU and QEMU_IA64_BIOS failed: $(cat "$TMP/run.txt")"
grep -qx -- "$TMP/fw.fd" "$TMP/args" || fail "QEMU_IA64_BIOS=fw.fd did not replace the bundled firmware: $(cat "$TMP/args")"
(cd "$TMP" && QEMU=$TMP/bin/fake-emu sh "$X/qemu/run-qemu.sh" fw.fd </dev/null) \
    >"$TMP/run.txt" 2>&1 || fail "run-qemu.sh FIRMWARE failed: $(cat "$TMP/run.txt")"
grep -qx -- "$TMP/fw.fd" "$TMP/args" || fail "the first argument did not replace the bundled firmware"
QEMU=$TMP/bin/fake-emu QEMU_IA64_BIOS=$TMP/no-such.fd sh "$X/qemu/run-qemu.sh" </dev/null >"$TMP/run.txt" 2>&1 &&
    fail "run-qemu.sh ran with a missing firmware"
grep -q "cannot read the EFI firmware $TMP/no-such.fd" "$TMP/run.txt" ||
    fail "no clear message for a missing firmware: $(cat "$TMP/run.txt")"
# no qemu-system-ia64: the message says how to get one
(PATH=/usr/bin:/bin QEMU= sh "$X/qemu/run-qemu.sh" </dev/null) >"$TMP/run.txt" 2>&1 &&
    fail "run-qemu.sh ran without qemu-system-ia64"
grep -q 'qemu-system-ia64 not found: put it on PATH or set QEMU=' "$TMP/run.txt" &&
    grep -q 'trillian build of a recipe that includes include/ia64-qemu.cfg' "$TMP/run.txt" ||
    fail "no clear message without qemu-system-ia64: $(cat "$TMP/run.txt")"
ok "run-qemu.sh: QEMU and QEMU_IA64_BIOS (or FIRMWARE) override; without qemu-system-ia64 it says how to build it"

# ---- the firmware: a plan-time error without one --------------------------------
sed -e '/emulator = "fw"/s/ emulator = "fw";//' -e "s|\\.\\./\\.\\./firmware|$TOP/firmware|g" \
    -e 's|${recipe_dir}/||' "$R" >"$TMP/no-fw.cfg"
trl plan "$TMP/no-fw.cfg" --cache "$TMP/c1"
expect_rc 2
expect_out "no-fw.cfg:"
expect_out "a qemu-bundle for ia64 carries qemu-system-ia64's EFI firmware, share/qemu/ia64-firmware.bin of the emulators stage of kind qemu-ia64, and this recipe has none"
expect_out '@include "include/ia64-qemu.cfg"'
trl build "$R" --cache "$TMP/c1" -o "$TMP/o-bad" --set images.qemu.emulator=disk
expect_rc 2
expect_out "needs share/qemu/ia64-firmware.bin from stage 'disk'"
trl build "$R" --cache "$TMP/c1" -o "$TMP/o-bad" --set images.qemu.emulator=nosuch
expect_rc 2
expect_out "the recipe has no stage 'nosuch'"
sed -e '/emulator = "fw-ski"/s/ *emulator = "fw-ski";//' -e "s|\\.\\./\\.\\./firmware|$TOP/firmware|g" \
    -e 's|${recipe_dir}/||' "$R" >"$TMP/no-ski.cfg"
trl plan "$TMP/no-ski.cfg" --cache "$TMP/c1"
expect_rc 2
expect_out "images.ski: a ski-bundle for ia64 carries Ski's boot loader for hp-sim kernels, share/ski/ski-bootloader of the emulators stage of kind ski, and this recipe has none"
expect_out '@include "include/ia64-ski-sim.cfg"'
ok "no firmware to bundle: exit 2 at plan time, naming the qemu-ia64 or ski emulators stage (or the stage given as emulator)"

# ---- refusals -----------------------------------------------------------------
trl build "$R" --cache "$TMP/c1" -o "$TMP/o-bad" -j2 --set 'stages.kernel.argv=cp,/bin/true,${out}/vmlinux'
expect_rc 1
expect_out "stage ski: "
expect_out "the kernel stage's vmlinux is an ELF for x86-64 (e_machine 62), not IA-64: Ski boots only an IA-64 kernel ("
ok "an x86-64 vmlinux: exit 1, $(grep -o 'stage ski: .*vmlinux is an ELF[^:]*' "$TMP/out.txt" | head -n1 | sed 's|/[^ ]*/||')"

trl build "$R" --cache "$TMP/c1" -o "$TMP/o-bad2" -j2 --set images.ski-initrd.initramfs=false
expect_rc 2
expect_out "nothing to boot"
ok "a ski-bundle with neither disk nor initramfs: exit 2 (nothing to boot)"

# ---- reproducible -------------------------------------------------------------
trl build "$R" --cache "$TMP/c2" -o "$TMP/o2" -j2
expect_rc 0
for b in ski ski-initrd qemu; do
    cmp "$TMP/o1/$b/$b.tar.zst" "$TMP/o2/$b/$b.tar.zst" || fail "$b.tar.zst differs between two clean builds"
done
ok "two clean builds (separate caches): identical tarballs ($(sha256sum "$TMP/o1/qemu/qemu.tar.zst" | cut -c1-16)… for qemu)"

# ---- tarball = gzip / xz: the same tar, other compression; -j1 = -j2 -----------
for c in gzip:gz:gzip xz:xz:xz; do
    IFS=: read -r comp ext tool <<<"$c"
    trl build "$R" --cache "$TMP/c1" -o "$TMP/o-$comp" -j1 --set images.qemu.tarball=$comp
    expect_rc 0
    [ ! -e "$TMP/o-$comp/qemu/qemu.tar.zst" ] || fail "tarball = $comp also wrote qemu.tar.zst"
    mkdir -p "$TMP/x-$comp"
    "$tool" -dc "$TMP/o-$comp/qemu/qemu.tar.$ext" | tar -xf - -C "$TMP/x-$comp" ||
        fail "qemu.tar.$ext is not a $comp-compressed tar"
    cmp "$TMP/x-$comp/qemu/disk.qcow2" "$X/qemu/disk.qcow2" || fail "qemu.tar.$ext has another disk"
    grep -q "tar -xf qemu.tar.$ext" "$TMP/x-$comp/qemu/README" || fail "the README does not name qemu.tar.$ext"
done
trl build "$R" --cache "$TMP/c3" -o "$TMP/o3" -j1
expect_rc 0
cmp "$TMP/o1/qemu/qemu.tar.zst" "$TMP/o3/qemu/qemu.tar.zst" || fail "-j1 and -j2 give different qemu.tar.zst"
trl build "$R" --cache "$TMP/c1" -o "$TMP/o-bad" --set images.qemu.tarball=bzip2
expect_rc 2
expect_out "tarball"
ok "tarball = gzip and xz: the same disk, the README names the tarball; -j1 (one zstd thread) gives the same .tar.zst as -j2; bzip2 is a recipe error"
echo PASS
