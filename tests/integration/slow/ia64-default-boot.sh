# Slow tier: the default recipe (recipes/ia64-minimal.cfg) on the 2026
# generation, built and booted by its own gating check in qemu-system-ia64:
# gcc 16.2 and binutils 2.47 built here with T2 SDE's ia64 fixes, glibc 2.43
# with the glibc-ia64 set, GRUB 2.14, Linux 7.2.8 (the linux-ia64 autobuilds
# series and Trillian's TLB fix); the shell answers the bookworm chain's checks and ld.so names 2.43. Then the build's manifest
# must name every one of those versions as built here, with its source.
# Cold: the toolchain (~15 min), glibc (~25 min) beside the kernel (~20
# min), gcc stage 2, busybox, GRUB and qemu-system-ia64 on 2 cores.
. "$TOP/tests/lib.sh"
[ -r /usr/src/linux-source-6.1.tar.xz ] || skip "linux-source-6.1 is not installed"
boot_shipped_recipe ia64-minimal 7.2.8
L=$O/boot-qemu/boot-qemu.log
clean_console "$L" | grep -q 'release version 2\.43' || fail "ld.so in the guest did not name glibc 2.43"
"$O/toolchain/bin/ia64-linux-gnu-gcc" --version | head -n1 | grep -q ' 16\.2\.0' || fail "the toolchain is not gcc 16.2.0"
"$O/toolchain/bin/ia64-linux-gnu-as" --version | head -n1 | grep -q ' 2\.47' || fail "the toolchain's as is not binutils 2.47"
[ "$(ls "$O/toolchain/gcc-patches" | wc -l)" -eq 7 ] || fail "the toolchain kept $(ls "$O/toolchain/gcc-patches" | wc -l) gcc patches, expected 7"
python3 - "$O/manifest.json" <<'PY' || fail "the manifest's components do not name the 2026 generation"
import json, sys
m = json.load(open(sys.argv[1]))
got = {(c["component"], c.get("version")): c for c in m["components"]}
want = [("gcc", "16.2.0"), ("binutils", "2.47"), ("glibc", "2.43"), ("GRUB", "2.14"), ("Linux", "7.2.8")]
for w in want:
    c = got.get(w)
    if not c or not c.get("built_here") or not c.get("sha256"):
        sys.exit("missing or not built here with a sha256: %s %s (have %s)" % (w[0], w[1], sorted(got)))
PY
ok "the default's manifest names gcc 16.2.0, binutils 2.47, glibc 2.43, GRUB 2.14 and Linux 7.2.8, each built here with its source's sha256"
