# The build report: every build writes OUT/report.html (components with
# versions and cache keys, boot checks with steps and the transcript, a stage
# timeline with the critical path, artifacts with sha256) and OUT/junit.xml;
# `trillian report OUT` writes them again from the manifest; `trillian report
# --matrix` combines builds. The page is rendered in headless Chromium (where
# installed) and checked for its tables, the timeline and the boot results.
. "$TOP/tests/lib.sh"
need python3
FAKE=$TOP/tests/fixtures/fake-emulator
printf 'code' > "$TMP/CODE.fd"
printf 'vars' > "$TMP/VARS.fd"
export TRILLIAN_QEMU_X86_64=$FAKE TRILLIAN_OVMF_CODE=$TMP/CODE.fd FAKE_EMU_ARGS=$TMP/args
unset FAKE_EMU_MODE FAKE_EMU_PASSWORD TRILLIAN_SKI TRILLIAN_SKI_BOOTLOADER
# stages (the disk image slow, so it is on the critical path) and a boot check
cat > "$TMP/r.cfg" <<CFG
name = "rep";
arch = "amd64";
toolchain = { kind = "host"; };
stages = (
  { name = "img"; kind = "command";
    argv = ["sh", "-c", "sleep 2; echo disk > \$TRILLIAN_OUT/img.img"]; outputs = ["img.img"]; },
  { name = "kernel"; kind = "command";
    argv = ["sh", "-c", "echo k > \$TRILLIAN_OUT/vmlinuz; echo k > \$TRILLIAN_OUT/vmlinux"];
    outputs = ["vmlinuz", "vmlinux"]; },
  { name = "initramfs"; kind = "command"; after = ["img"];
    argv = ["sh", "-c", "sleep 1; echo '<i>&' > \$TRILLIAN_OUT/initrd.img"]; outputs = ["initrd.img"]; }
);
bootcheck = ( { kind = "boot"; name = "boot"; image = "img"; boot = "disk";
  firmware_vars = "$TMP/VARS.fd"; profile = "debian-login"; password = "pw"; systemd = true;
  os_release = "^VERSION_CODENAME=bookworm\$"; } );
CFG
O=$TMP/out
FAKE_EMU_PASSWORD=pw trl build "$TMP/r.cfg" --cache "$TMP/cache" -o "$O" -j2
expect_rc 0
H=$O/report.html
[ -s "$H" ] || fail "no report.html"
[ -s "$O/junit.xml" ] || fail "no junit.xml"
grep -q 'http' "$H" && grep -o 'src="http[^"]*"\|href="http[^"]*"' "$H" | grep -q . && fail "the page loads something from the network"
python3 - "$H" "$O/manifest.json" <<'PY' || fail "report.html content"
import html.parser, json, sys
page = open(sys.argv[1]).read()
m = json.load(open(sys.argv[2]))
class P(html.parser.HTMLParser):
    def __init__(s):
        super().__init__(); s.ids = set(); s.text = []
    def handle_starttag(s, tag, attrs):
        d = dict(attrs)
        if "id" in d: s.ids.add(d["id"])
    def handle_data(s, d): s.text.append(d)
p = P(); p.feed(page); text = "".join(p.text)
for i in ("components-table", "boot-table", "timeline-svg", "artifacts-table", "critical-path"):
    assert i in p.ids, i
# every artifact directly in a stage's directory, with its sha256 from the manifest
for a in m["artifacts"]:
    if a["path"].count("/") == 1:
        assert a["sha256"] in page, a
# the boot check: its result, a step, the transcript (escaped), the time to the marker
assert "pass" in text and "login" in text.lower(), "boot result"
assert "time to marker" in text and "time to shell" in text
# a check passed: the heading says the build was boot-verified, and by what
assert "build ok, boot-verified" in text and "boot PASS (shell at " in text, "verdict"
# the critical path: the boot check needs the slow disk image only
cp = page.split('id="critical-path">', 1)[1].split("</p>", 1)[0]
assert cp.index("img") < cp.index("boot"), cp
assert "kernel" not in cp and "initramfs" not in cp, cp
# the components: the host's gcc and binutils, with their versions and cache keys
comp = page.split('id="components-table"', 1)[1].split("</table>", 1)[0]
tc = next(st for st in m["stages"] if st["name"] == "toolchain")
assert tc["details"]["gcc_version"] in comp and tc["key"] in comp, comp
# binutils' version as the components list reads it ("2.40"), not its --version line
bu = next(c for c in m["components"] if c["component"] == "binutils")
assert "<td>binutils</td><td>%s</td>" % bu["version"] in comp, (bu, comp)
# the escaped artifact name never appears raw
assert "<i>&" not in page
# what was built here: the host's gcc, not built from source, in manifest.json
# and in the one components table, before the boot checks
gcc = [c for c in m["components"] if c["component"] == "gcc"]
assert len(gcc) == 1 and gcc[0]["origin"] == "host" and gcc[0]["built_here"] is False, m["components"]
assert gcc[0]["version"] == tc["details"]["gcc_version"] and gcc[0]["stage"] == "toolchain", gcc
assert "built-here-table" not in p.ids and page.count("<table id=\"components-table\"") == 1
assert page.index('id="components"') < page.index('id="boot"')
bh = page.split('id="components-table"', 1)[1].split("</table>", 1)[0]
assert "no: the host" in bh and gcc[0]["version"] in bh and "<script" not in page, bh
print("report ok")
PY
ok "report.html: components, boot checks with steps and transcript, timeline, critical path img -> boot, artifacts with sha256"

python3 - "$O/junit.xml" <<'PY' || fail "junit.xml"
import sys, xml.etree.ElementTree as ET
t = ET.parse(sys.argv[1]).getroot()
suites = {s.get("name"): s for s in t.findall("testsuite")}
st = suites["trillian.rep.stages"]
assert {c.get("name") for c in st.findall("testcase")} == {"toolchain", "img", "kernel", "initramfs", "boot"}
bc = suites["bootcheck.boot"]
assert int(bc.get("tests")) >= 3 and bc.get("failures") == "0", bc.attrib
# the boot check's own suite, taken whole: its properties and console
assert bc.find("properties/property[@name='emulator']") is not None, "not the check's suite"
assert bc.find("system-out") is not None and "login" in bc.find("system-out").text
PY
ok "junit.xml: one test case per stage, and the boot check's own suite (a case per step)"

# regenerate from the manifest alone; the same page
cp "$H" "$TMP/first.html"
rm -f "$H" "$O/junit.xml"
trl report "$O"
expect_rc 0
cmp -s "$H" "$TMP/first.html" || fail "trillian report wrote a different page"
ok "trillian report OUT writes the same page again"

# a no-op rebuild (every stage cached) keeps the times of the build that
# made the entries: the timeline is the first build's, not bars of 0 s
cp "$O/manifest.json" "$TMP/first-manifest.json"
FAKE_EMU_PASSWORD=pw trl build "$TMP/r.cfg" --cache "$TMP/cache" -o "$O" -j2
expect_rc 0
python3 - "$TMP/first-manifest.json" "$O/manifest.json" "$H" <<'PY' || fail "the no-op rebuild's times"
import json, re, sys
first, again = (json.load(open(f)) for f in sys.argv[1:3])
page = open(sys.argv[3]).read()
f = {s["name"]: s for s in first["stages"]}
kept = 0
for s in again["stages"]:
    assert s["status"] == "cached", (s["name"], s["status"])
    if s["name"] in f and f[s["name"]]["status"] == "built":
        k = s["kept"]
        assert k["start"] == f[s["name"]]["start"] and k["end"] == f[s["name"]]["end"], (s, f[s["name"]])
        assert k["built_at"] == first["built_at"], k
        kept += 1
assert kept >= 3, kept
assert 'id="kept-times"' in page and first["built_at"] in page
# img slept 2 s in the first build: its bar and the critical path say so
t = re.search(r"<title>img: cached, ([0-9.]+)-([0-9.]+) s in the build of", page)
assert t and float(t.group(2)) - float(t.group(1)) >= 2, t
cp = re.search(r'id="critical-path">Critical path: (.*?)</p>', page).group(1)
assert "img (2 s)" in cp, cp
print(kept, "cached stages kept their times; critical path:", cp)
PY
ok "a no-op rebuild keeps the first build's stage times on the page"

# a failing build: the report says so, the failed step and its junit failure
FAKE_EMU_PASSWORD=wrong trl check "$TMP/r.cfg" --cache "$TMP/cache" -o "$TMP/bad"
expect_rc 3
grep -q 'build FAILED' "$TMP/bad/report.html" || fail "a failed build's report does not say so"
python3 - "$TMP/bad/junit.xml" <<'PY' || fail "no failure with its message in the failed build's junit.xml"
import sys, xml.etree.ElementTree as ET
t = ET.parse(sys.argv[1]).getroot()
f = t.findall("testsuite[@name='bootcheck.boot']/testcase/failure")
assert f and f[0].get("message"), "no step failure"
sf = t.findall("testsuite[@name='trillian.rep.stages']/testcase[@name='boot']/failure")
assert sf and "logs/boot.log" in sf[0].get("message") and sf[0].text, "no log tail in the stage failure"
PY
ok "a failed boot check: the report says FAILED, junit.xml has the failure"

# from a manifest alone: a kernel with its tarball, series and patches (as the
# kernel stage records them), everything escaped
mkdir -p "$TMP/k"
cat > "$TMP/k/manifest.json" <<'JSON'
{"trillian": "0.1.0", "recipe": "/r/k.cfg", "name": "k<&>", "arch": "ia64",
 "source_date_epoch": 0, "result": 0, "overrides": [],
 "stages": [
  {"name": "toolchain", "kind": "toolchain/build", "key": "aaaa", "status": "cached",
   "cached": true, "wall_seconds": 0, "start": 0, "end": 0, "needs": [],
   "details": {"gcc_version": "12.2.0", "binutils": "system",
               "binutils_version": "GNU assembler (GNU Binutils for Debian) 2.40",
               "gcc_source": "/src/gcc-12.2.0-dfsg.tar.xz"}},
  {"name": "kernel", "kind": "kernel/source", "key": "bbbb", "status": "built",
   "cached": false, "wall_seconds": 100, "start": 0.1, "end": 100.1, "needs": ["toolchain"],
   "details": {"release": "6.12.8", "tarball": "http://x/linux_6.12.8.orig.tar.xz",
               "sha256": "1111111111111111111111111111111111111111111111111111111111111111",
               "series": "/k/series-6.12",
               "patches": [{"name": "0001-a<b>.patch", "sha256": "2222222222222222222222222222222222222222222222222222222222222222"},
                           {"name": "0002-c.patch", "sha256": "3333333333333333333333333333333333333333333333333333333333333333"}]}}],
 "artifacts": []}
JSON
trl report "$TMP/k"
expect_rc 0
python3 - "$TMP/k/report.html" <<'PY' || fail "the kernel's source, series and patches in the components"
import sys
page = open(sys.argv[1]).read()
comp = page.split('id="components-table"', 1)[1].split("</table>", 1)[0]
for s in ("6.12.8", "linux_6.12.8.orig.tar.xz", "1" * 64, "series-6.12", "2 patches",
          "0001-a&lt;b&gt;.patch", "2" * 64, "3" * 64, "12.2.0", "gcc-12.2.0-dfsg.tar.xz",
          "<td>binutils</td><td>2.40</td>", "aaaa", "bbbb"):
    assert s in comp, s
assert "k&lt;&amp;&gt;" in page and "<&>" not in page
cp = page.split('id="critical-path">', 1)[1].split("</p>", 1)[0]
assert cp.index("toolchain") < cp.index("kernel"), cp
PY
ok "trillian report from a manifest alone: kernel tarball sha256, series, patches with sha256; binutils"

# The components table from fixture stage manifests, as each kind records them: the
# toolchain (gcc from source, binutils from Debian's package), glibc, gcc
# stage 2, busybox and GRUB from Debian sources, elilo with gnu-efi, the
# kernel, qemu-system-ia64 and Ski; and a glibc entry from before its stage
# recorded the sha256 ("unknown"), a kernel from a Debian package
mkdir -p "$TMP/c" "$TMP/c2"
S1=$(printf 'a%.0s' $(seq 64)) S2=$(printf 'b%.0s' $(seq 64)) S3=$(printf 'c%.0s' $(seq 64))
cat > "$TMP/c/manifest.json" <<JSON
{"trillian": "0.1.0", "recipe": "/r/c.cfg", "name": "c", "arch": "ia64",
 "source_date_epoch": 0, "result": 0, "overrides": [], "artifacts": [],
 "stages": [
  {"name": "toolchain", "kind": "toolchain/build", "key": "k1", "status": "cached", "needs": [],
   "details": {"target": "ia64-linux-gnu", "gcc_version": "12.2.0", "binutils": "system",
     "binutils_version": "GNU assembler (GNU Binutils for Debian) 2.40",
     "binutils_package": "binutils-ia64-linux-gnu", "binutils_debian_version": "2.40-2",
     "gcc_source": "gcc-12.2.0-dfsg.tar.xz", "gcc_sha256": "$S1"}},
  {"name": "glibc", "kind": "packages/glibc", "key": "k2", "status": "built", "needs": [],
   "details": {"glibc": "2.36", "source": "glibc-2.36.tar.xz", "sha256": "$S2"}},
  {"name": "gcc", "kind": "packages/gcc", "key": "k3", "status": "built", "needs": [],
   "details": {"gcc_version": "12.2.0", "gcc_source": "gcc-12.2.0-dfsg.tar.xz", "gcc_sha256": "$S1"}},
  {"name": "busybox", "kind": "packages/busybox", "key": "k4", "status": "built", "needs": [],
   "details": {"busybox": "1.35.0", "debian_version": "1:1.35.0-4+deb12u1",
     "source": "busybox_1.35.0-4+deb12u1.dsc", "sha256": "$S3"}},
  {"name": "grub", "kind": "packages/grub", "key": "k5", "status": "built", "needs": [],
   "details": {"grub": "2.06", "debian_version": "2.06-13+deb12u2",
     "source": "grub2_2.06-13+deb12u2.dsc (Debian series: 206 patches)", "sha256": "$S2"}},
  {"name": "elilo", "kind": "packages/elilo", "key": "k6", "status": "built", "needs": [],
   "details": {"sources": [
     {"name": "gnu-efi", "version": "3.0.15", "file": "gnu-efi_3.0.15.orig.tar.bz2",
      "url": "http://deb.debian.org/debian/pool/main/g/gnu-efi/gnu-efi_3.0.15.orig.tar.bz2",
      "sha256": "$S3", "patches": []},
     {"name": "elilo", "version": "3.16", "file": "elilo-3.16-9351a61.tar.xz",
      "sha256": "$S1", "patches": ["x.patch"]}]}},
  {"name": "kernel", "kind": "kernel/source", "key": "k7", "status": "built", "needs": [],
   "patch_sources": [{"origin": "rxrbln/t2sde@115094e56d3a", "patches": 3, "setting": "patches"},
     {"origin": "o/r@87d6cde7d834", "series": "x<y>.series", "patches": 136, "setting": "series_file"},
     {"origin": "Trillian (kernel-config/patches)", "patches": 1, "setting": "patches"}],
   "details": {"release": "7.1.8", "tarball": "http://x/linux_7.1.8.orig.tar.xz",
     "sha256": "$S2", "patches": [{"name": "p", "sha256": "$S3"}]}},
  {"name": "bootloader", "kind": "bootloader/grub", "key": "k8", "status": "built", "needs": [],
   "details": {"loader": "grub", "loader_from": "built by Trillian for grub"}},
  {"name": "qemu-ia64", "kind": "emulators/qemu-ia64", "key": "k9", "status": "built", "needs": [],
   "details": {"source": "qemu-ia64-00c5484.tar.xz", "sha256": "$S1", "from": "tarball",
     "commit": "00c54849361fc91ee9f4bab5492ce8464f8390f5"}},
  {"name": "ski", "kind": "emulators/ski", "key": "k10", "status": "failed", "needs": [],
   "details": {"source": "ski-dfc2902.tar.xz", "sha256": "$S2", "from": "tarball"}}]}
JSON
cat > "$TMP/c2/manifest.json" <<JSON
{"trillian": "0.1.0", "recipe": "/r/c2.cfg", "name": "c2", "arch": "amd64",
 "source_date_epoch": 0, "result": 0, "overrides": [], "artifacts": [],
 "stages": [
  {"name": "glibc", "kind": "packages/glibc", "key": "k2", "status": "cached", "needs": [],
   "details": {"glibc": "2.36", "source": "glibc-2.36.tar.xz"}},
  {"name": "kernel", "kind": "kernel/package", "key": "k7", "status": "cached", "needs": [],
   "details": {"package": "linux-image-6.1.0-57-cloud-amd64", "version": "6.1.192-3",
     "sha256": "$S3", "release": "6.1.0-57-cloud-amd64"}},
  {"name": "bootloader", "kind": "bootloader/systemd-boot", "key": "k8", "status": "built",
   "needs": [], "details": {"loader": "systemd-boot", "loader_from": "systemd-boot-efi 252.39-1~deb12u2"}}]}
JSON
trl report "$TMP/c"
expect_rc 0
trl report "$TMP/c2"
expect_rc 0
python3 - "$TMP/c/report.html" "$TMP/c2/report.html" "$S1" "$S2" "$S3" <<'PY' || fail "the components table"
import sys, html.parser
class T(html.parser.HTMLParser):
    """the rows of table ID, each a list of its cells' text"""
    def __init__(s, id):
        super().__init__(); s.id = id; s.on = False; s.rows = []
    def handle_starttag(s, tag, attrs):
        if tag == "table": s.on = dict(attrs).get("id") == s.id
        elif s.on and tag == "tr": s.rows.append([])
        elif s.on and tag in ("td", "th"): s.rows[-1].append("")
    def handle_endtag(s, tag):
        if tag == "table": s.on = False
    def handle_data(s, d):
        if s.on and s.rows and s.rows[-1]: s.rows[-1][-1] += d
def table(path):
    t = T("components-table"); t.feed(open(path).read())
    return [[" ".join(c.split()) for c in r] for r in t.rows]
s1, s2, s3 = sys.argv[3:6]
rows = table(sys.argv[1])
assert rows[0] == ["component", "version", "built here", "source", "sha256", "stage",
                   "cache key"], rows[0]
want = [
    ["gcc", "12.2.0", "yes", "gcc-12.2.0-dfsg.tar.xz", s1, "toolchain (toolchain/build)", "k1"],
    ["binutils", "2.40", "no: Debian package binutils-ia64-linux-gnu, version 2.40-2", "", "",
     "toolchain (toolchain/build)", "k1"],
    ["glibc", "2.36", "yes", "glibc-2.36.tar.xz", s2, "glibc (packages/glibc)", "k2"],
    ["gcc (stage 2)", "12.2.0", "yes", "gcc-12.2.0-dfsg.tar.xz", s1, "gcc (packages/gcc)", "k3"],
    ["busybox", "1.35.0", "yes", "busybox_1.35.0-4+deb12u1.dsc", s3, "busybox (packages/busybox)", "k4"],
    ["GRUB", "2.06", "yes", "grub2_2.06-13+deb12u2.dsc (Debian series: 206 patches)", s2,
     "grub (packages/grub)", "k5"],
    ["elilo", "3.16", "yes", "elilo-3.16-9351a61.tar.xz", s1, "elilo (packages/elilo)", "k6"],
    ["gnu-efi", "3.0.15", "yes", "gnu-efi_3.0.15.orig.tar.bz2", s3, "elilo (packages/elilo)", "k6"],
    ["Linux", "7.1.8", "yes", "linux_7.1.8.orig.tar.xz", s2, "kernel (kernel/source)", "k7"],
    # where its patches come from (the stage's patch_sources), then the folded
    # list: summary, then each patch
    ["", "patch sources: patches 3 from rxrbln/t2sde@115094e56d3a; series_file 136 from "
         "o/r@87d6cde7d834 (x<y>.series); patches 1 from Trillian (kernel-config/patches) "
         "1 patchesp sha256 " + s3],
    ["qemu-system-ia64", "git 00c54849361f", "yes", "qemu-ia64-00c5484.tar.xz", s1,
     "qemu-ia64 (emulators/qemu-ia64)", "k9"],
    ["Ski", "unknown", "no: stage failed", "ski-dfc2902.tar.xz", s2, "ski (emulators/ski)", "k10"],
    # the stages that assemble the rest, with their versions
    ["loader", "built by Trillian for grub", "yes", "", "", "bootloader (bootloader/grub)", "k8"],
]
assert rows[1:] == want, "\n".join(map(str, rows[1:]))
rows = table(sys.argv[2])
assert rows[1:] == [
    ["glibc", "2.36", "yes", "glibc-2.36.tar.xz", "unknown", "glibc (packages/glibc)", "k2"],
    ["Linux", "6.1.0-57-cloud-amd64",
     "no: Debian package linux-image-6.1.0-57-cloud-amd64, version 6.1.192-3",
     "linux-image-6.1.0-57-cloud-amd64", s3, "kernel (kernel/package)", "k7"],
    ["loader", "systemd-boot-efi 252.39-1~deb12u2", "yes", "", "", "bootloader (bootloader/systemd-boot)",
     "k8"]], rows
PY
ok "one components table, from fixture stage manifests: gcc, binutils (Debian package), glibc, gcc stage 2, busybox, GRUB, elilo, gnu-efi, Linux with its patches, qemu-system-ia64, Ski with version, source, sha256, stage and key, then the loader; unknown where an entry lacks it; a kernel package"

trl report --matrix -o "$TMP/m.html" "$O" "$TMP/bad" "$TMP/k" "$TMP/c" "$TMP/c2"
expect_rc 0
python3 - "$TMP/m.html" "$O" <<'PY' || fail "matrix"
import sys, html.parser
page = open(sys.argv[1]).read()
class T(html.parser.HTMLParser):
    """the rows of table ID, each a list of its cells' text"""
    def __init__(s, id):
        super().__init__(); s.id = id; s.on = False; s.rows = []
    def handle_starttag(s, tag, attrs):
        if tag == "table": s.on = dict(attrs).get("id") == s.id
        elif s.on and tag == "tr": s.rows.append([])
        elif s.on and tag in ("td", "th"): s.rows[-1].append("")
    def handle_endtag(s, tag):
        if tag == "table": s.on = False
    def handle_data(s, d):
        if s.on and s.rows and s.rows[-1]: s.rows[-1][-1] += d
def table(id):
    t = T(id); t.feed(page); return [[c.strip() for c in r] for r in t.rows]
m = table("matrix-table")
# kernels down (the stand-in builds have none: "?"), machine + loader across
assert [r[0] for r in m] == ["kernel", "?", "6.12.8", "7.1.8", "6.1.0-57-cloud-amd64"], m
# an ia64 kernel built for no simulator stands for HP Integrity hardware
# (and the image kind: what the check booted; "-" for a build without checks)
assert m[0][1:3] == ["qemu x86_64 + OVMFkernel directlydisk", "HP Integritykernel directly-"], m[0]
assert m[1][1].split() == ["pass", "fail"] and m[1][2] == "", m[1]
assert m[2][1] == "" and m[2][2].strip() == "built", m[2]
runs = table("matrix-runs")
assert len(runs) == 6, runs
assert runs[0][:2] == ["kernel", "kernel patches"] and runs[0][4] == "image kind", runs[0]
assert runs[1][4] == "disk", runs
# a row per build: its recipe's gcc, glibc, kernel, where the kernel's
# patches come from (the kernel stage's patch_sources, an origin a line;
# "-" for none or a kind without patch settings, "unknown" for a manifest
# from before patch_sources) and loader
rec = table("matrix-recipes")
assert rec[0] == ["recipe", "gcc", "glibc", "kernel", "kernel patches", "loader", "build"], rec[0]
gccv = rec[1][1]
assert gccv.endswith(" (host)") and rec[1][2:6] == ["-", "-", "-", "-"], rec[1]
assert rec[3][1:6] == ["12.2.0", "-", "6.12.8", "unknown", "-"], rec[3]
assert rec[4][1:6] == ["12.2.0", "2.36", "7.1.8",
                       "3 from rxrbln/t2sde@115094e56d3a136 from o/r@87d6cde7d834 (x<y>.series)"
                       "1 from Trillian (kernel-config/patches)", "GRUB 2.06"], rec[4]
assert rec[5][1:6] == ["-", "2.36", "6.1.0-57-cloud-amd64 (Debian package)", "-",
                      "systemd-boot (systemd-boot-efi 252.39-1~deb12u2)"], rec[5]
cell = page.split('id="matrix-recipes"', 1)[1].split("</table>", 1)[0]
assert ('<td class="patch-sources">3 from rxrbln/t2sde@115094e56d3a<br>136 from o/r@87d6cde7d834 '
        "(x&lt;y&gt;.series)<br>1 from Trillian (kernel-config/patches)</td>") in cell, cell
# the runs say it too, beside the kernel
k = [r for r in runs if r[0] == "7.1.8"]
assert k and k[0][1] == rec[4][4], (k, rec[4])
assert 'class="pass" href="%s/report.html"' % sys.argv[2] in page, "no link to the build"
PY
ok "report --matrix: kernel x machine/loader/image kind with pass, fail and built-not-booted; every run listed"

# image kinds: a check of an ISO as a CD whose second boot (reboot_from) failed
# gives two runs, "ISO as CD" pass and "installed disk" fail; an iso image
# booted as a disk is "ISO as disk"
cp -r "$O" "$TMP/media"
python3 - "$TMP/media/manifest.json" <<'PY'
import json, sys
p = sys.argv[1]
m = json.load(open(p))
checks = [s for s in m["stages"] if s["kind"].startswith("bootcheck/")]
d = checks[0].setdefault("details", {})
d.update(boot="iso", image_kind="iso", result="fail", reboot_first_step=2,
         step_results=[{"name": "01 a", "status": "pass", "seconds": 1.0},
                       {"name": "02 after reboot: b", "status": "fail", "seconds": 2.0}])
json.dump(m, open(p, "w"))
PY
cp -r "$O" "$TMP/media2"
python3 - "$TMP/media2/manifest.json" <<'PY'
import json, sys
p = sys.argv[1]
m = json.load(open(p))
for s in m["stages"]:
    if s["kind"].startswith("bootcheck/"):
        s.setdefault("details", {}).update(boot="disk", image_kind="iso")
json.dump(m, open(p, "w"))
PY
cp -r "$O" "$TMP/media3"
python3 - "$TMP/media3/manifest.json" <<'PY'
import json, sys
p = sys.argv[1]
m = json.load(open(p))
for s in m["stages"]:  # a check's own report_kind wins
    if s["kind"].startswith("bootcheck/"):
        s.setdefault("details", {}).update(boot="disk", image_kind="disk", report_kind="netboot")
json.dump(m, open(p, "w"))
PY
cp -r "$O" "$TMP/media4"
python3 - "$TMP/media4/manifest.json" <<'PY'
import json, sys
p = sys.argv[1]
m = json.load(open(p))
for s in m["stages"]:  # reboot_from = "image": the same disk image booted twice
    if s["kind"].startswith("bootcheck/"):
        s.setdefault("details", {}).update(
            boot="disk", image_kind="disk", result="pass", reboot_from="image", reboot_first_step=2,
            step_results=[{"name": "01 a", "status": "pass", "seconds": 1.0},
                          {"name": "02 after reboot: b", "status": "fail", "seconds": 2.0}])
json.dump(m, open(p, "w"))
PY
trl report --matrix -o "$TMP/m4.html" "$TMP/media4"
expect_rc 0
python3 - "$TMP/m4.html" <<'PY' || fail "matrix: reboot_from = image"
import re, sys
page = open(sys.argv[1]).read()
rows = re.findall(r"<tr>(.*?)</tr>", page.split('id="matrix-runs"')[1].split("</table>")[0])
cells = [re.findall(r"<td[^>]*>(.*?)</td>", r) for r in rows]
kinds = sorted((c[4], c[5]) for c in cells if c)
assert kinds == [("disk", "fail"), ("disk", "pass")], kinds
PY
trl report --matrix -o "$TMP/m2.html" "$TMP/media" "$TMP/media2" "$TMP/media3"
expect_rc 0
python3 - "$TMP/m2.html" <<'PY' || fail "matrix image kinds"
import re, sys
page = open(sys.argv[1]).read()
rows = re.findall(r"<tr>(.*?)</tr>", page.split('id="matrix-runs"')[1].split("</table>")[0])
cells = [re.findall(r"<td[^>]*>(.*?)</td>", r) for r in rows]
kinds = [(c[4], c[5]) for c in cells if c]
assert ("ISO as CD", "pass") in kinds and ("installed disk", "fail") in kinds, kinds
assert any(k == "ISO as disk" for k, _ in kinds), kinds
assert any(k == "netboot" for k, _ in kinds), kinds
PY
ok "report --matrix: ISO as CD and installed disk from one check with reboot_from (each its own result), ISO as disk, a check's report_kind; reboot_from = image: two disk runs"
trl report "$TMP/nothing-here"
expect_rc 1
expect_out "cannot read"
trl report
expect_rc 2
ok "a directory without a manifest: exit 1 naming it; no directory: exit 2"

# The real ia64 entries, where the shared test cache holds them (tests/prebuild,
# ia64-qemu-boot.sh, elilo-build.sh, ia64-grub-ski.sh build them): a build of
# the elilo disk and of GRUB with Ski is then all cache hits, a second or two
# each; its report names the toolchain, kernel, loaders and emulators built
# here. A recipe with any stage to build is left out (no hour of compiling).
real_ia64() {
    ia64_test_recipes "$TMP/t" || { echo "SKIP-PART: the ia64 inputs are missing"; return 0; }
    local r n=0
    for r in elilo-disk grub-ski; do
        "$TRILLIAN" plan --json "$TMP/t/r/$r.cfg" --cache "$TRILLIAN_TEST_CACHE" >"$TMP/plan-$r.json" 2>/dev/null &&
            python3 -c 'import json, sys; sys.exit(any(s["status"] != "cached" for s in json.load(open(sys.argv[1]))["stages"]))' \
                "$TMP/plan-$r.json" || { echo "SKIP-PART: $r is not all in $TRILLIAN_TEST_CACHE"; continue; }
        trl build "$TMP/t/r/$r.cfg" --cache "$TRILLIAN_TEST_CACHE" -o "$TMP/ia64-$r" -j2
        expect_rc 0
        python3 - "$TMP/ia64-$r" "$r" <<'PY' || fail "$r: the components of the real ia64 entries"
import html.parser, json, re, sys
d, r = sys.argv[1:3]
m = json.load(open(d + "/manifest.json"))
c = {x["component"]: x for x in m["components"]}
det = {s["name"]: s.get("details", {}) for s in m["stages"]}
sha = lambda v: v is None or re.fullmatch("[0-9a-f]{64}", v)  # null: an entry from before the field
gcc, bu = c["gcc"], c["binutils"]
assert gcc["built_here"] and gcc["origin"] == "source" and gcc["version"] == det["toolchain"]["gcc_version"], gcc
assert gcc["source"].startswith("gcc-") and sha(gcc["sha256"]), gcc
assert not bu["built_here"] and bu["origin"] == "debian-package", bu
assert bu["package"] == "binutils-ia64-linux-gnu" and bu["version"], bu
want = {"elilo-disk": ["Linux", "elilo", "gnu-efi", "qemu-system-ia64"], "grub-ski": ["GRUB", "Ski"]}[r]
for n in want:
    x = c[n]
    assert x["built_here"] and x["origin"] == "source" and x["source"] and sha(x["sha256"]), x
if r == "elilo-disk":
    assert c["Linux"]["version"] == det["kernel"]["release"] and c["Linux"]["sha256"] == det["kernel"]["sha256"]
    assert (c["elilo"]["version"], c["gnu-efi"]["version"]) == ("3.16", "3.0.15"), c
    assert c["qemu-system-ia64"]["sha256"] == det["qemu-ia64"]["sha256"]
page = open(d + "/report.html").read()
bh = page.split('id="components-table"', 1)[1].split("</table>", 1)[0]
for n in ["gcc", "binutils"] + want:
    assert ">%s</td>" % n in bh, n
assert "no: Debian package <code>binutils-ia64-linux-gnu</code>" in bh, bh
print(r, ", ".join("%s %s" % (n, c[n]["version"] or "unknown") for n in ["gcc", "binutils"] + want))
PY
        n=$((n + 1))
    done
    [ "$n" = 0 ] || ok "the real ia64 entries ($n recipes, all cache hits): the components table names gcc and Linux from source, binutils from Debian's binutils-ia64-linux-gnu, the loaders and emulators, with versions and sha256"
}
real_ia64

# the default recipe's rows, each with a version: binutils built from the
# cache's download (its file name is not a version), the minimal root (its
# parts); whole 64-digit keys and sha256s and a long patch origin, which must not
# widen the page
W=$TMP/wide
mkdir -p "$W"
python3 - "$W/manifest.json" <<'PY'
import json, sys
K = lambda c: c * 64
st = lambda n, k, d, key: {"name": n, "kind": k, "key": K(key), "status": "built", "cached": False,
                          "wall_seconds": 1, "start": 0, "end": 1, "needs": [], "details": d}
m = {"trillian": "0.1.0", "recipe": "/r/ia64-minimal.cfg", "name": "ia64-minimal", "arch": "ia64",
     "source_date_epoch": 0, "result": 0, "overrides": [], "artifacts": [], "stages": [
  st("toolchain", "toolchain/build", {"gcc_version": "16.2.0", "gcc_source":
     "http://deb.debian.org/debian/pool/main/g/gcc-16/gcc-16_16.2.0.orig.tar.gz", "gcc_sha256": K("1"),
     "binutils": "ce42ea86f13688ad-binutils_2.47.orig.tar.xz", "binutils_sha256": K("2")}, "a"),
  dict(st("kernel", "kernel/source", {"release": "7.1.13", "tarball":
     "http://deb.debian.org/debian/pool/main/l/linux/linux_7.1.13.orig.tar.xz", "sha256": K("3")}, "b"),
     patch_sources=[{"origin": "johnny-mnemonic/linux-mainline-autobuilds@87d6cde7d834",
                     "series": "linux-7.2-autobuilds-87d6cde.series", "patches": 136,
                     "setting": "series_file"},
                    # no break opportunity: the cell must wrap it anyway
                    {"origin": "local (/srv/%s)" % ("0123456789abcdef" * 12), "patches": 2,
                     "setting": "patches"},
                    {"origin": "Trillian (kernel-config/patches)", "patches": 2, "setting": "patches"}]),
  st("userland", "userland/minimal", {"kind": "minimal", "components": [
     {"name": "glibc", "version": "2.43"}, {"name": "busybox", "version": "1.36.1"}]}, "c")]}
json.dump(m, open(sys.argv[1], "w"))
PY
trl report "$W"
expect_rc 0
python3 - "$W/report.html" <<'PY' || fail "a row of the components without its version"
import re, sys
page = open(sys.argv[1]).read()
comp = page.split('id="components-table"', 1)[1].split("</table>", 1)[0]
rows = re.findall(r"<tr><td>([^<]*)</td><td>([^<]*)", comp)
want = {"gcc": "16.2.0", "binutils": "2.47", "Linux": "7.1.13",
        "root file system": "glibc 2.43, busybox 1.36.1"}
got = dict(rows)
for k, v in want.items():
    assert got.get(k) == v, (k, got)
assert all(v for _, v in rows), rows
print("every row has a version:", got)
PY
ok "every components row has a version (binutils 2.47 from its file name, the root's parts)"

# headless Chromium renders the page: the tables, the timeline and the boot results
CHROME=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$CHROME" ]; then
    echo "SKIP-PART: no chromium: the page was not rendered in a browser"
    exit 0
fi
run_chrome() { timeout 120 "$CHROME" --headless --no-sandbox --disable-gpu --no-first-run \
    --user-data-dir="$TMP/chrome" "$@" 2>>"$TMP/chrome.log"; }
run_chrome --dump-dom "file://$H" >"$TMP/dom.html" || fail "chromium could not load the page: $(tail -n 5 "$TMP/chrome.log")"
for id in components-table boot-table timeline-svg artifacts-table; do
    grep -q "id=\"$id\"" "$TMP/dom.html" || fail "chromium's DOM lacks #$id"
done
grep -q '<rect' "$TMP/dom.html" || fail "no timeline bars in chromium's DOM"
run_chrome --screenshot="$TMP/shot.png" --window-size=1280,1400 "file://$H" >/dev/null ||
    fail "chromium took no screenshot"
[ -s "$TMP/shot.png" ] || fail "empty screenshot"
# at 1280 px nothing is cut off: the laid-out width of the page, read by a
# script in a frame around it, is at most the frame's
for page in "$H" "$W/report.html"; do
    cat >"$TMP/measure.html" <<HTML
<html><body style="margin:0"><iframe id="f" src="file://$page" style="width:1280px;height:900px;border:0"
 onload="var d=this.contentDocument.documentElement;document.body.setAttribute('data-width',d.scrollWidth)">
</iframe></body></html>
HTML
    run_chrome --allow-file-access-from-files --virtual-time-budget=5000 --dump-dom \
        "file://$TMP/measure.html" >"$TMP/measure.dom" || fail "chromium could not measure $page"
    w=$(sed -n 's/.*data-width="\([0-9]*\)".*/\1/p' "$TMP/measure.dom")
    [ -n "$w" ] || fail "no width measured for $page: $(head -c 300 "$TMP/measure.dom")"
    [ "$w" -le 1280 ] || fail "$page is $w px wide in a 1280 px window"
    echo "$(basename "$(dirname "$page")")/report.html: $w px wide at 1280"
done
ok "chromium rendered the page (DOM has the tables, timeline bars, boot results; screenshot taken; fits 1280 px)"
