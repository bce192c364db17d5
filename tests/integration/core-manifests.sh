# Stage manifests describe outputs, not the build (docs/engine.md): a recipe
# of the cheap kinds that write one (initramfs, systemd-boot, disk, and iso
# and netboot where GRUB's x86_64-efi modules are installed) built twice, into
# two empty caches and outputs, gives byte-identical stage-manifest.json files
# for every stage, and the same details in OUT/manifest.json; only that
# manifest's build facts (built_at; wall_seconds, cpu_seconds, start, end, kept) may differ. The expensive
# kinds (toolchain, gcc stage 2, glibc, busybox, GRUB, kernel headers,
# qemu-ia64, Ski) are not built here: a grep below keeps their run() from
# putting a clock reading into JSON, the way their step times once went.
. "$TOP/tests/lib.sh"
. "$TOP/tests/fixtures/image-lib.sh"
need mke2fs gensquashfs cpio python3
image_inputs 200000
cp -R "$TOP/tests/fixtures/initramfs-kernel" "$TMP/kernel"
images='{ kind = "disk"; name = "disk"; size_mib = 48; }'
if [ -d /usr/lib/grub/x86_64-efi ] && command -v grub-mkimage >/dev/null && command -v xorriso >/dev/null; then
    images="$images, { kind = \"iso\"; name = \"live\"; squashfs_comp = \"gzip\"; },
      { kind = \"netboot\"; name = \"net\"; squashfs_comp = \"gzip\"; }"
fi
cat > "$TMP/m.cfg" <<CFG
name = "manifests";
arch = "amd64";
source_date_epoch = 1700000000;
root_uuid = "$ROOT_UUID";
stages = (
  { kind = "command"; name = "userland"; argv = ["cp", "$TMP/in/rootfs.tar", "\${out}/"];
    inputs = ["$TMP/in/rootfs.tar"]; outputs = ["rootfs.tar"]; },
  { kind = "command"; name = "kernel"; argv = ["cp", "-R", "$TMP/kernel/.", "\${out}/"];
    inputs = ["$TMP/kernel"]; outputs = ["vmlinuz", "release", "modules"]; }
);
initramfs = { kind = "initramfs"; compression = "gzip"; modules = ["virtio-blk", "ext4"]; };
bootloader = { kind = "systemd-boot"; console = "ttyS0,115200"; label = "Trillian manifests";
  loader = "$TOP/tests/fixtures/esp-fake-loader.efi"; };
images = ( $images );
CFG
bb=$TMP/busybox # a stand-in static x86-64 busybox, as initramfs.sh makes
python3 - "$bb" <<'PY'
import struct, sys
hdr = b"\x7fELF" + bytes([2, 1, 1]) + bytes(9)
hdr += struct.pack("<HHIQQQIHHHHHH", 2, 62, 1, 0, 64, 0, 0, 64, 56, 1, 64, 0, 0)
ph = struct.pack("<IIQQQQQQ", 1, 5, 0, 0, 0, 0, 0, 8)
open(sys.argv[1], "wb").write(hdr + ph + b"BusyBox v9.9.9-fixture (Trillian test)\0")
PY
chmod 755 "$bb"

for n in 1 2; do
    trl build "$TMP/m.cfg" --cache "$TMP/c$n" -o "$TMP/o$n" --set initramfs.busybox="$bb"
    expect_rc 0
    [ $n = 1 ] && sleep 1.1 # a clock reading at any resolution differs in the second
done

n=0
for f in "$TMP"/o1/*/stage-manifest.json; do
    s=$(basename "$(dirname "$f")")
    cmp "$f" "$TMP/o2/$s/stage-manifest.json" ||
        { diff "$f" "$TMP/o2/$s/stage-manifest.json"; fail "$s: stage-manifest.json differs between two clean builds"; }
    n=$((n + 1))
done
[ "$n" -ge 3 ] || fail "only $n stage manifests to compare"
python3 - "$TMP/o1/manifest.json" "$TMP/o2/manifest.json" <<'PY' || fail "OUT/manifest.json differs beyond the build's own facts"
import json, sys
build_facts = {"wall_seconds", "cpu_seconds", "start", "end", "kept"}  # what one build did, not its outputs
def strip(m):
    m.pop("built_at")  # when the build ran
    for s in m["stages"]:
        for k in build_facts:
            s.pop(k, None)
    return m
a, b = (strip(json.load(open(p))) for p in sys.argv[1:])
assert a == b, (a, b)
PY
ok "$n stage manifests byte-identical between two clean builds; OUT/manifest.json differs only in times"

# The kinds too costly to build here: no clock reading reaches their JSON
# (their step times went there as json_fixed(seconds), the only decimals a
# stage but the boot check wrote).
if grep -n 'json_fixed\|now_seconds.*json\|json.*now_seconds' "$TOP"/builder/stages/*.c \
    "$TOP"/builder/drivers/*.c | grep -v '/bootcheck\.c:'; then
    fail "a stage puts a clock reading into its manifest (the lines above)"
fi
ok "no stage but the boot check writes a clock reading into JSON"
