# kernel kind "source" for ia64: Linux 6.1 from /usr/src/linux-source-6.1
# with allnoconfig + ia64-qemu-vpc + serial-console + initramfs + ext4 and a
# one-module fragment, cross-compiled. Needs an ia64 gcc: the prefix in
# TRILLIAN_IA64_CROSS_COMPILE (e.g. /opt/x/bin/ia64-linux-gnu-) or
# ia64-linux-gnu-gcc on PATH (SKIP otherwise; Debian has no ia64 gcc package,
# the toolchain stage builds one). Checks: every fragment option survives for
# ARCH=ia64; vmlinuz is the gzip -9n of the stripped vmlinux (an IA-64 ELF,
# what elilo loads); vmlinux is an IA-64 ELF with start_kernel in System.map;
# modules/lib/modules/RELEASE has modules.dep listing crc-itu-t.ko, an IA-64
# module; a second build is a cache hit.
. "$TOP/tests/lib.sh"
need make gcc flex bison bc file depmod gzip
SRC=/usr/src/linux-source-6.1.tar.xz
[ -f "$SRC" ] || skip "$SRC is missing (apt-get install linux-source-6.1)"
CC=${TRILLIAN_IA64_CROSS_COMPILE:-}
if [ -z "$CC" ]; then
    command -v ia64-linux-gnu-gcc >/dev/null || skip "no ia64 gcc (set TRILLIAN_IA64_CROSS_COMPILE or put ia64-linux-gnu-gcc on PATH)"
    CC=ia64-linux-gnu-
fi
export TRILLIAN_DATA=$TOP
C=$TMP/cache
printf '# one module, so modules_install and depmod have work\nCONFIG_MODULES=y\nCONFIG_CRC_ITU_T=m\n' > "$TMP/mod.config"
cat > "$TMP/r.cfg" <<CFG
name = "kernel-source-ia64-test";
arch = "ia64";
source_date_epoch = 1700000000;
kernel = { kind = "source"; tarball = "$SRC"; defconfig = "allnoconfig"; cross_compile = "$CC";
           fragments = [ "ia64-qemu-vpc", "serial-console", "initramfs", "ext4", "mod.config" ]; };
CFG

t0=$SECONDS
trl build "$TMP/r.cfg" --cache "$C" -o "$TMP/o1"
expect_rc 0
K=$TMP/o1/kernel
REL=$(cat "$K/release")
grep -q "configured in .*: all .* options the fragments set are in the final .config" "$TMP/o1/logs/kernel.log" \
    || fail "no fragment check in the log"
ok "built for ia64 in $((SECONDS - t0))s, release $REL, all fragment options kept"

file "$K/vmlinux" | grep -q 'ELF 64-bit LSB executable, IA-64' || fail "vmlinux: $(file "$K/vmlinux")"
[ "$(head -c 2 "$K/vmlinuz" | od -An -tx1 | tr -d ' ')" = 1f8b ] || fail "vmlinuz is not gzip"
gzip -dc "$K/vmlinuz" > "$TMP/vmlinuz.elf" || fail "vmlinuz does not decompress"
file "$TMP/vmlinuz.elf" | grep -q 'ELF 64-bit LSB executable, IA-64.*stripped' || fail "vmlinuz holds: $(file "$TMP/vmlinuz.elf")"
# -n: no name or time stamp in the gzip header (bytes 4-7 are zero)
[ "$(od -An -tx1 -j 4 -N 4 "$K/vmlinuz" | tr -d ' ')" = 00000000 ] || fail "vmlinuz's gzip header has a time stamp"
grep -q ' start_kernel$' "$K/System.map" || fail "System.map lacks start_kernel"
ok "vmlinuz is gzip -9n of the stripped IA-64 vmlinux; vmlinux and System.map"

M=$K/modules/lib/modules/$REL
grep -q '^kernel/lib/crc-itu-t.ko:' "$M/modules.dep" || fail "modules.dep: $(cat "$M/modules.dep")"
file "$M/kernel/lib/crc-itu-t.ko" | grep -q 'IA-64' || fail "module: $(file "$M/kernel/lib/crc-itu-t.ko")"
[ -f "$K/headers/include/linux/version.h" ] || fail "no headers"
ok "modules.dep lists the IA-64 module crc-itu-t.ko; headers installed"

trl build "$TMP/r.cfg" --cache "$C" -o "$TMP/o2"
expect_rc 0
expect_out "kernel: cached"
cmp -s "$K/vmlinuz" "$TMP/o2/kernel/vmlinuz" || fail "cached vmlinuz differs"
ok "second build is a cache hit"
