# Slow tier: recipes/ia64-6.12.cfg, the out-of-tree ia64 kernel on the 6.12
# LTS (Debian's linux 6.12.8 orig, checked by sha256) with the ia64
# restoration (T2's squashed patch and its hotfixes, from the mirror) and
# Trillian's O= build fix, configured from generic_defconfig with the
# ia64-generic, serial-console, initramfs, ext4, ia64-lean and
# ia64-kallsyms-text fragments, on the default's GRUB disk with the
# from-source root; built and booted by its own gating check in
# qemu-system-ia64 to the root shell, then the kernel's outputs are checked.
# Cold: the kernel (~15-25 min on 2 cores) on top of the shared test cache.
. "$TOP/tests/lib.sh"
boot_shipped_recipe ia64-6.12 6.12.
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
