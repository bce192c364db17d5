# The out-of-tree ia64 kernel on the 6.12 LTS for HP Integrity:
# recipes/ia64-6.12 builds Debian's linux 6.12.8 source (downloaded from
# Debian's archive, checked by sha256) with the ia64 restoration (T2's
# squashed patch and its hotfixes) and Trillian's O= build fix, configured
# from generic_defconfig with the ia64-generic, serial-console, initramfs,
# ext4, ia64-lean and ia64-kallsyms-text fragments. No emulator here boots
# it; the test checks what was built. Needs the patches in
# /opt/trillian-dev/patches (or TRILLIAN_IA64_PATCHES; none ship with
# Trillian, see recipes/ia64-ski-6.12.cfg for their URLs and sha256);
# otherwise SKIP. Cold: the root (~25 min, shared with ia64-minimal) and the
# kernel (~25 min) on 2 cores.
. "$TOP/tests/lib.sh"
[ -r /usr/src/gcc-12/gcc-12.2.0-dfsg.tar.xz ] || skip "gcc-12-source is not installed"
need_mirror # the patches, by their pinned URLs and sha256
C=$TRILLIAN_TEST_CACHE O=$TMP/out

trl build ia64-6.12 --cache "$C" -o "$O" -j2
grep -v '^  |' "$TMP/out.txt" | tail -n 12
expect_rc 0
K=$O/kernel
rel=$(cat "$K/release")
case $rel in 6.12.*) ;; *) fail "kernel release '$rel' is not 6.12.x" ;; esac
file "$K/vmlinux" | grep -q 'ELF 64-bit LSB executable, IA-64' || fail "vmlinux: $(file "$K/vmlinux")"
gzip -dc "$K/vmlinuz" | head -c 20 >"$TMP/hdr" || fail "vmlinuz is not gzip"
file "$TMP/hdr" | grep -q 'IA-64' || fail "vmlinuz does not hold an IA-64 ELF"
strings "$K/vmlinux" | grep -q "^Linux version $rel " || fail "vmlinux does not say release $rel"
[ -f "$K/modules/lib/modules/$rel/modules.dep" ] || fail "no modules.dep for $rel"
for o in CONFIG_FUSION_SPI=y CONFIG_SCSI_SYM53C8XX_2=y CONFIG_TIGON3=y CONFIG_EXT4_FS=y \
         CONFIG_SERIAL_8250_CONSOLE=y; do
    grep -qx "$o" "$K/config" || fail "$o is not in the kernel's config"
done
grep -qx '# CONFIG_KALLSYMS_ALL is not set' "$K/config" || fail "KALLSYMS_ALL is set (ia64-kallsyms-text)"
n=$(python3 -c '
import json, sys
m = json.load(open(sys.argv[1]))
k = [s for s in m["stages"] if s["name"] == "kernel"][0]
print(len(k["details"]["patches"]))' "$O/manifest.json")
[ "$n" = 5 ] || fail "the manifest lists $n patches, expected 5"
ok "Linux $rel (out-of-tree ia64) for HP Integrity: vmlinux, vmlinuz and $(find "$K/modules" -name '*.ko' | wc -l) modules, 5 patches in the manifest"
