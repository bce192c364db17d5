# elilo built from source (packages kind "elilo": gnu-efi 3.0.15 and elilo
# 3.16, pinned by sha256, built by the toolchain stage's ia64 gcc) boots a
# lean ia64 disk in qemu-system-ia64: the default recipe's toolchain and
# kernel with the payload initramfs (the same stages as ia64-qemu-boot.sh,
# so the same cache entries), an ESP whose EFI/BOOT/BOOTIA64.EFI is that
# elilo.efi with elilo.conf beside it. elilo.efi is a PE32+ image for IA-64
# (machine 0x200) and an EFI application (subsystem 10). Bad inputs: elilo
# in a recipe without a toolchain stage is a plan-time error naming what to
# add; a wrong sha256 is refused before anything is unpacked, naming
# FILE:LINE and both hashes; a patch that does not apply fails the stage
# naming the patch and its first rejected file and hunk, and nothing is
# cached. Warm (toolchain, kernel, qemu-ia64 cached): elilo ~1-2 min and a
# boot of about a minute.
. "$TOP/tests/lib.sh"
need_mirror
need ia64-linux-gnu-as ia64-linux-gnu-objcopy make gcc patch mkfs.fat mke2fs python3
[ -r /usr/src/gcc-12/gcc-12.2.0-dfsg.tar.xz ] || skip "gcc-12-source is not installed"
C=$TRILLIAN_TEST_CACHE
ia64_test_recipes "$TMP/t" || skip "the ia64 inputs are missing (tools/install-deps, ../shared/mirror)"
GNU_EFI=http://deb.debian.org/debian/pool/main/g/gnu-efi/gnu-efi_3.0.15.orig.tar.bz2
ELILO_SHA=2fc32d2d24dbebdcffe672f47d1caa8449f6fe67714de007ed09d219dd3783bd
ls "$C"/downloads/931a257b9c5c1ba6-gnu-efi_3.0.15.orig.tar.bz2 >/dev/null 2>&1 ||
    curl -sfI --max-time 20 "$GNU_EFI" >/dev/null ||
    skip "gnu-efi's tarball is neither in the test cache nor reachable ($GNU_EFI)"
R=$TMP/t/r

# --- elilo without a toolchain stage: a plan-time error ----------------------
cat >"$R/no-toolchain.cfg" <<'CFG'
name = "elilo-no-toolchain";
arch = "ia64";
packages = (
  { kind = "elilo"; }
);
CFG
trl plan "$R/no-toolchain.cfg" --cache "$TMP/c0"
expect_rc 2
expect_out "no-toolchain.cfg:4: packages.elilo.kind: builds elilo with the recipe's ia64 cross compiler, but the recipe has no toolchain stage"
expect_out 'add @include "include/ia64-toolchain.cfg"'
ok "elilo without a toolchain stage: exit 2 at plan time, naming FILE:LINE and what to add"

# --- a wrong sha256: refused before anything is unpacked ---------------------
BAD=$(printf 'not elilo' | sha256sum | cut -d' ' -f1)
cat >"$R/bad-sha.cfg" <<CFG
name = "elilo-bad-sha";
@include "include/ia64-toolchain.cfg"
packages = (
  { kind = "elilo";
    elilo_sha256 = "$BAD"; }
);
CFG
trl build "$R/bad-sha.cfg" --cache "$C" -o "$TMP/o-sha" -j2
expect_rc 1
expect_out "bad-sha.cfg:5: packages.elilo.elilo_sha256: no verified copy of elilo-3.16-9351a61.tar.xz (sha256 $BAD)"
expect_out "elilo/elilo-3.16-9351a61.tar.xz has sha256 $ELILO_SHA"
! grep -q "unpacking" "$TMP/o-sha/logs/elilo.log" || fail "a source was unpacked before the hashes were checked"
ok "a wrong elilo_sha256: exit 1 before unpacking, naming bad-sha.cfg:5, the expected and the actual hash"

# --- a patch that does not apply: named with its first rejected hunk ----------
cat >"$R/bad.patch" <<'PATCH'
--- a/elilo.c
+++ b/elilo.c
@@ -1,3 +1,3 @@
-this line is not in elilo.c
+nor is this one
 and neither is this
 or this
PATCH
cat >"$R/bad-patch.cfg" <<'CFG'
name = "elilo-bad-patch";
@include "include/ia64-toolchain.cfg"
packages = (
  { kind = "elilo";
    elilo_patches = ["bad.patch"]; }
);
CFG
trl plan "$R/bad-patch.cfg" --cache "$C" --json
key=$(python3 -c 'import json,sys; print([s["key"] for s in json.load(open(sys.argv[1]))["stages"] if s["name"] == "elilo"][0])' "$TMP/out.txt")
trl build "$R/bad-patch.cfg" --cache "$C" -o "$TMP/o-patch" -j2
expect_rc 1
expect_out "packages.elilo.elilo_patches: bad.patch does not apply: first rejected: elilo.c: Hunk #1 FAILED at 1."
grep -A1 "stage 'elilo' failed: exit status 1" "$TMP/out.txt" | grep -q '^  error: .*bad.patch does not apply' ||
    fail "the failure block does not name the patch first: $(grep -A3 "stage 'elilo' failed" "$TMP/out.txt")"
[ ! -e "$C/objects/$key" ] || fail "the failed elilo stage was cached ($C/objects/$key)"
ok "a patch that does not apply: exit 1 naming bad.patch and its first rejected hunk (elilo.c, hunk 1); nothing cached"

# --- the build and the boot -----------------------------------------------------
t0=$SECONDS
trl check "$R/elilo-disk-check.cfg" --cache "$C" -o "$TMP/out" -j2
grep -v '^  |' "$TMP/out.txt" | tail -n 14
expect_rc 0
efi=$TMP/out/elilo/elilo.efi
python3 - "$efi" <<'PY' || fail "elilo.efi is not a PE32+ IA-64 EFI application"
import struct, sys
d = open(sys.argv[1], "rb").read()
assert d[:2] == b"MZ", "no MZ header"
pe = struct.unpack_from("<I", d, 0x3c)[0]
assert d[pe:pe + 4] == b"PE\0\0", "no PE signature"
machine = struct.unpack_from("<H", d, pe + 4)[0]
magic, = struct.unpack_from("<H", d, pe + 24)
subsystem, = struct.unpack_from("<H", d, pe + 24 + 68)
print(f"machine 0x{machine:x} magic 0x{magic:x} subsystem {subsystem}")
assert machine == 0x200 and magic == 0x20b and subsystem == 10
PY
python3 - "$TMP/out/elilo/stage-manifest.json" "$ELILO_SHA" <<'PY' || fail "the manifest does not name both sources with versions and sha256"
import json, sys
m = json.load(open(sys.argv[1]))
s = {x["name"]: x for x in m["sources"]}
assert s["gnu-efi"]["version"] == "3.0.15" and s["gnu-efi"]["sha256"].startswith("931a257b")
assert s["elilo"]["version"] == "3.16" and s["elilo"]["sha256"] == sys.argv[2]
assert "timings" not in m
PY
mcopy -n -i "$TMP/out/bootloader/esp.img" ::/EFI/BOOT/BOOTIA64.EFI "$TMP/boot.efi" &&
    cmp -s "$TMP/boot.efi" "$efi" || fail "EFI/BOOT/BOOTIA64.EFI is not the elilo stage's elilo.efi"
mtype -i "$TMP/out/bootloader/esp.img" ::/EFI/BOOT/elilo.conf | grep -q '^image=/EFI/trillian/vmlinuz' ||
    fail "EFI/BOOT/elilo.conf does not name the kernel"
log=$TMP/out/boot-qemu/boot-qemu.log
grep -q 'TRILLIAN-BOOT-OK release=[0-9.]* machine=ia64' "$log" || fail "no boot marker in $log"
ok "elilo.efi (PE32+, IA-64 0x200, EFI application) is BOOTIA64.EFI and booted the disk to the payload in qemu-system-ia64 in $((SECONDS - t0)) s: $(grep -o 'boot-qemu: PASS.*' "$TMP/out/logs/boot-qemu.log" | head -n1)"
