# kernel kind "source", a whole build: Linux 6.1 from
# /usr/src/linux-source-6.1.tar.xz with tinyconfig + kernel-config/amd64-tiny,
# for amd64, through a fresh cache, twice. The first build compiles (a few
# minutes on 2 cores); the second is a cache hit with identical outputs.
# Checks: vmlinuz is an x86 bzImage with the EFI stub (MZ/PE header) and the
# release in its version string; vmlinux is an x86-64 ELF; System.map has
# start_kernel; config has amd64-tiny's options; modules/lib/modules/RELEASE
# has modules.dep listing the one module amd64-tiny builds (crc-itu-t) with
# the module in the tree and no links back to the build directory; headers/
# has linux/version.h; the uts version is fixed by source_date_epoch. If
# qemu-system-x86_64 is there, the kernel boots (TCG) with a one-file
# initramfs whose static /init prints a marker on ttyS0 and powers off.
. "$TOP/tests/lib.sh"
need make gcc flex bison bc file depmod
SRC=/usr/src/linux-source-6.1.tar.xz
[ -f "$SRC" ] || skip "$SRC is missing (apt-get install linux-source-6.1)"
export TRILLIAN_DATA=$TOP
C=$TMP/cache
cat > "$TMP/r.cfg" <<CFG
name = "kernel-source-amd64-test";
arch = "amd64";
source_date_epoch = 1700000000;
kernel = { kind = "source"; tarball = "$SRC"; defconfig = "tinyconfig";
           fragments = [ "amd64-tiny" ]; };
CFG

t0=$SECONDS
trl build "$TMP/r.cfg" --cache "$C" -o "$TMP/o1"
expect_rc 0
t1=$((SECONDS - t0))
expect_no_out "kernel: cached"
K=$TMP/o1/kernel
REL=$(cat "$K/release")
[ -n "$REL" ] || fail "empty release"
ok "first build compiled the kernel in ${t1}s, release $REL"

[ "$(dd if="$K/vmlinuz" bs=1 skip=514 count=4 2>/dev/null)" = HdrS ] || fail "vmlinuz has no x86 boot header"
file "$K/vmlinuz" | grep -q "bzImage, version $REL (trillian@trillian) #1 Tue Nov 14 22:13:20 UTC 2023" \
    || fail "file(1): $(file "$K/vmlinuz")"
[ "$(head -c 2 "$K/vmlinuz")" = MZ ] || fail "vmlinuz has no MZ header (EFI stub)"
peoff=$(od -An -tu4 -j 60 -N 4 "$K/vmlinuz" | tr -d ' ')
[ "$(dd if="$K/vmlinuz" bs=1 skip="$peoff" count=2 2>/dev/null)" = PE ] || fail "vmlinuz has no PE header (EFI stub)"
file "$K/vmlinux" | grep -q 'ELF 64-bit LSB executable, x86-64' || fail "vmlinux: $(file "$K/vmlinux")"
grep -q ' T start_kernel$' "$K/System.map" || fail "System.map lacks start_kernel"
for o in CONFIG_EFI_STUB=y CONFIG_SERIAL_8250_CONSOLE=y CONFIG_BLK_DEV_INITRD=y CONFIG_MODULES=y; do
    grep -qx "$o" "$K/config" || fail "config lacks $o"
done
ok "vmlinuz: bzImage with EFI stub, version $REL, build date from source_date_epoch; vmlinux, System.map, config"

M=$K/modules/lib/modules/$REL
grep -q '^kernel/lib/crc-itu-t.ko:' "$M/modules.dep" || fail "modules.dep lacks crc-itu-t: $(cat "$M/modules.dep")"
[ -f "$M/kernel/lib/crc-itu-t.ko" ] || fail "crc-itu-t.ko is not in the modules tree"
[ -e "$M/build" ] || [ -L "$M/build" ] && fail "modules tree links back to the build directory"
[ -f "$K/headers/include/linux/version.h" ] || fail "headers/include/linux/version.h missing"
ok "modules/lib/modules/$REL with modules.dep and crc-itu-t.ko; headers installed"

t0=$SECONDS
trl build "$TMP/r.cfg" --cache "$C" -o "$TMP/o2"
expect_rc 0
expect_out "kernel: cached"
for f in vmlinuz vmlinux System.map config release; do
    cmp -s "$K/$f" "$TMP/o2/kernel/$f" || fail "cached $f differs"
done
ok "second build is a cache hit ($((SECONDS - t0))s) with identical outputs"

if command -v qemu-system-x86_64 >/dev/null && command -v cpio >/dev/null && [ -f /usr/lib/x86_64-linux-gnu/libc.a ]; then
    mkdir -p "$TMP/initrd"
    cat > "$TMP/init.c" <<'C'
#include <sys/reboot.h>
#include <unistd.h>
int main(void)
{
    static const char msg[] = "TRILLIAN-KERNEL-SOURCE-OK\n";
    write(1, msg, sizeof msg - 1);
    sync();
    reboot(RB_POWER_OFF);
    return 0;
}
C
    gcc -static -Os -o "$TMP/initrd/init" "$TMP/init.c" || fail "cannot build the test init"
    (cd "$TMP/initrd" && echo init | cpio -o -H newc --quiet) > "$TMP/initrd.cpio"
    timeout 120 qemu-system-x86_64 -accel tcg -m 256 -nographic -no-reboot \
        -kernel "$K/vmlinuz" -initrd "$TMP/initrd.cpio" -append "console=ttyS0 panic=-1" \
        > "$TMP/boot.log" 2>&1 </dev/null
    grep -aq "Linux version $REL (trillian@trillian)" "$TMP/boot.log" || fail "no kernel banner on ttyS0: $(tail -5 "$TMP/boot.log")"
    grep -aq TRILLIAN-KERNEL-SOURCE-OK "$TMP/boot.log" || fail "/init did not run: $(tail -5 "$TMP/boot.log")"
    ok "boots under qemu-system-x86_64 (TCG), runs /init from the initramfs, prints on ttyS0"
else
    echo "note: qemu-system-x86_64, cpio or static libc missing: boot not tried"
fi
