# Slow tier: the bookworm chain whole, recipes/ia64-bookworm.cfg (the default
# disk as it was on gcc 12.2 / glibc 2.36; the 2026 default is
# slow/ia64-default-boot.sh), with its
# from-source root (as recipes/include/ia64-minimal-root.cfg has it) and its
# GPT disk (GRUB ia64-efi, the root on ext4): glibc 2.36 for
# ia64 from source, a stage-2 gcc, busybox from Debian's source package built
# with it, assembled by the minimal userland kind. About 40 minutes the first
# time on 2 cores (glibc and gcc stage 2; the toolchain and kernel come from
# the shared test cache when the fast tier has built them), a cache hit
# after. Checks the root: IA-64 busybox whose program interpreter
# /lib/ld-linux-ia64.so.2 is in the root with libc.so.6.1 and libgcc_s.so.1,
# device nodes and owners, no headers or static libraries, the component
# versions in packages.tsv, and its compressed size (target: < 16 MiB).
# glibc is built against the headers stage (not the kernel): its manifest
# names the headers' version, and ia64-ski plans the same glibc, gcc and
# busybox keys (one root for both recipes).
. "$TOP/tests/lib.sh"
need ia64-linux-gnu-as ia64-linux-gnu-readelf make gcc g++ flex bison bc gawk dpkg-source apt-get xz sfdisk mcopy debugfs
for f in /usr/src/gcc-12/gcc-12.2.0-dfsg.tar.xz /usr/src/linux-source-6.1.tar.xz \
         /usr/src/glibc/glibc-2.36.tar.xz; do
    [ -r "$f" ] || skip "$f is missing (tools/install-deps installs it)"
done
need_mirror
C=${TRILLIAN_TEST_CACHE:-$TMP/cache} O=$TMP/out

t0=$SECONDS
trl build ia64-bookworm --cache "$C" -o "$O" -j2
grep -v '^  |' "$TMP/out.txt" | tail -n 12
expect_rc 0
ok "ia64-bookworm with its root built (or found cached) in $((SECONDS - t0)) s"
grep -h 'make: [0-9.]* s' "$O/logs/busybox.log" | sed 's/^/busybox: /' || true

U=$O/userland
x=$TMP/root
mkdir -p "$x"
tar -xf "$U/rootfs.tar" -C "$x" --no-same-owner 2>/dev/null || fail "rootfs.tar does not unpack"
ia64-linux-gnu-readelf -h "$x/bin/busybox" | grep -q 'Machine: *Intel IA-64' || fail "busybox is not IA-64"
interp=$(ia64-linux-gnu-readelf -l "$x/bin/busybox" | sed -n 's/.*interpreter: \(.*\)]$/\1/p')
[ "$interp" = /lib/ld-linux-ia64.so.2 ] || fail "busybox's interpreter is '$interp'"
for f in lib/ld-linux-ia64.so.2 lib/libc.so.6.1 lib/libm.so.6.1 lib/libgcc_s.so.1; do
    [ -e "$x/$f" ] || fail "the root has no /$f"
    ia64-linux-gnu-readelf -h "$x/$f" | grep -q 'Machine: *Intel IA-64' || fail "/$f is not IA-64"
done
ok "busybox is IA-64 with interpreter $interp; ld.so, libc.so.6.1, libm.so.6.1, libgcc_s.so.1 in the root"

tar -tvf "$U/rootfs.tar" --numeric-owner >"$TMP/list"
awk '$2 != "0/0"' "$TMP/list" | head -n 3 | grep . && fail "entries not owned by root"
grep -Eq '^crw------- 0/0 +5,1 .* dev/console$' "$TMP/list" || fail "no dev/console"
grep -Eq '^l.* sbin/init -> \.\./bin/busybox$' "$TMP/list" || fail "no sbin/init"
! grep -Eq ' usr/include/|\.a$' "$TMP/list" || fail "headers or static libraries in the root"
rel=$(cat "$O/kernel/release")
for c in "glibc	2.36" "busybox	1." "gcc	12" "grub	2.06-" "kernel	$rel"; do
    grep -q "^$c" "$U/packages.tsv" || fail "packages.tsv lacks '$c': $(cat "$U/packages.tsv")"
done
! grep -q unknown "$U/packages.tsv" || fail "a component without a version: $(cat "$U/packages.tsv")"
hv=$(cat "$O/headers/version")
grep -q "\"kernel_release\": \"$hv\"" "$O/manifest.json" && grep -q '"headers": "headers"' \
    "$O/manifest.json" || fail "glibc was not built against the headers stage ($hv)"
ok "tarball: $(wc -l <"$TMP/list") entries, all 0/0, device nodes; components: $(tail -n +2 "$U/packages.tsv" | cut -f1,2 | tr '\t\n' ' ')"

size=$(stat -c %s "$U/rootfs.tar")
gz=$(gzip -9n <"$U/rootfs.tar" | wc -c)
xzs=$(xz -9 <"$U/rootfs.tar" | wc -c)
echo "root: $size bytes, gzip -9 $gz, xz -9 $xzs"
[ "$gz" -lt $((16 * 1024 * 1024)) ] || fail "the root is $gz bytes gzipped, over 16 MiB"
ok "root size: $((size / 1024)) KiB, $((gz / 1024)) KiB gzip -9, $((xzs / 1024)) KiB xz -9 (target < 16 MiB)"

# the bootable disk: GPT with the ESP (GRUB ia64-efi as the fallback
# loader, grub.cfg naming the kernel and the root by partition GUID) and the
# root on ext4 (the from-source busybox)
IMG=$O/disk/disk.img
[ -f "$IMG" ] || fail "no disk/disk.img"
sfdisk --json "$IMG" >"$TMP/pt.json" || fail "sfdisk cannot read the disk's GPT"
rguid=$(sed -n 's/.*root = "PARTUUID=\([0-9a-f-]*\)".*/\1/p' "$TOP/recipes/include/ia64-grub-disk.cfg")
python3 - "$TMP/pt.json" "$rguid" >"$TMP/parts" <<'PY' || fail "the disk's partitions: $(cat "$TMP/pt.json")"
import json, sys
p = json.load(open(sys.argv[1]))["partitiontable"]["partitions"]
assert p[0]["type"].upper() == "C12A7328-F81F-11D2-BA4B-00A0C93EC93B", p[0]
assert p[1]["type"].upper() == "0FC63DAF-8483-4772-8E79-3D69D8477DE4", p[1]
assert p[1]["uuid"].lower() == sys.argv[2].lower(), (p[1], sys.argv[2])
for q in p[:2]:
    print(q["start"] * 512, q["size"] * 512)
PY
read -r esp_off esp_len <<<"$(sed -n 1p "$TMP/parts")"
read -r root_off root_len <<<"$(sed -n 2p "$TMP/parts")"
dd if="$IMG" of="$TMP/esp.fat" bs=512 skip=$((esp_off / 512)) count=$((esp_len / 512)) status=none
mcopy -n -i "$TMP/esp.fat" ::/EFI/BOOT/BOOTIA64.EFI "$TMP/boot.efi" || fail "no EFI/BOOT/BOOTIA64.EFI"
mcopy -n -i "$TMP/esp.fat" ::/EFI/BOOT/grub.cfg "$TMP/grub.cfg" || fail "no EFI/BOOT/grub.cfg"
python3 - "$TMP/boot.efi" <<'PY' || fail "BOOTIA64.EFI is not an IA-64 PE image"
import struct, sys
d = open(sys.argv[1], "rb").read()
pe = struct.unpack_from("<I", d, 0x3c)[0]
assert d[pe:pe + 4] == b"PE\0\0" and struct.unpack_from("<H", d, pe + 4)[0] == 0x200
PY
grep -q "root=PARTUUID=$rguid" "$TMP/grub.cfg" || fail "grub.cfg does not name the root: $(cat "$TMP/grub.cfg")"
grep -q 'linux ' "$TMP/grub.cfg" || fail "grub.cfg loads no kernel"
dd if="$IMG" of="$TMP/root.ext4" bs=512 skip=$((root_off / 512)) count=$((root_len / 512)) status=none
debugfs -R "dump /bin/busybox $TMP/busybox.disk" "$TMP/root.ext4" >/dev/null 2>&1
cmp -s "$TMP/busybox.disk" "$x/bin/busybox" || fail "the disk's root has not the built busybox"
ok "disk.img: GPT, ESP with GRUB ia64-efi (PE machine 0x200) and grub.cfg root=PARTUUID=$rguid, ext4 root with the from-source busybox"

keys() { awk '$1 ~ /^(headers|glibc|gcc|busybox)$/ { print $1, $3 }' "$TMP/out.txt"; }
trl plan ia64-bookworm --cache "$C"
k1=$(keys)
# the hp-sim patch is not shipped: any file stands in, plan applies nothing
trl plan ia64-ski --cache "$C" --set "kernel.patches=$TOP/README.md"
expect_rc 0
[ "$(echo "$k1" | wc -l)" -eq 4 ] && [ "$k1" = "$(keys)" ] \
    || fail "ia64-bookworm and ia64-ski plan different roots: $k1 / $(keys)"
ok "ia64-ski shares the root's cache entries: $(echo $k1)"

trl build ia64-bookworm --cache "$C" -o "$O" -j2
expect_rc 0
expect_out "busybox: cached"
expect_out "userland: cached"
ok "second build is a cache hit"
