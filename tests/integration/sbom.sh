# Every build writes OUT/sbom.spdx.json, an SPDX 2.3 JSON document, from
# the components its manifest records; report.html links it; `trillian
# report OUT` writes it again. A manifest of the default recipe's shape (a
# disk with kernel, root and GRUB; glibc and busybox in the root; the
# toolchain; two emulators, Ski's licence unknown) gives the relations and
# licences expected, NOASSERTION for Ski. Validated by real validators:
# every licence expression by Debian's node-spdx-expression-parse, and the
# document by python3-jsonschema against SPDX's own 2.3 schema when
# TRILLIAN_SPDX_SCHEMA names it (spdx-spec, tag v2.3, schemas/spdx-schema.json).
. "$TOP/tests/lib.sh"
need python3 node
# Debian installs node modules there; a node from elsewhere does not look
export NODE_PATH=${NODE_PATH:+$NODE_PATH:}/usr/share/nodejs
node -e 'require("spdx-expression-parse")' 2>/dev/null ||
    skip "node-spdx-expression-parse is not installed (tools/install-deps installs it)"

# validate FILE: the licence expressions, then the schema
validate() {
    python3 - "$1" >"$TMP/licences.txt" <<'PY' || fail "$1 is not JSON"
import json, sys
d = json.load(open(sys.argv[1]))
for p in d["packages"]:
    for k in ("licenseConcluded", "licenseDeclared"):
        if p[k] not in ("NOASSERTION", "NONE"):
            print(p[k])
PY
    node -e '
const parse = require("spdx-expression-parse");
const lines = require("fs").readFileSync(process.argv[1], "utf8").split("\n").filter(Boolean);
for (const l of lines) parse(l);  // throws on an invalid expression
console.log(lines.length + " licence expressions parse");' "$TMP/licences.txt" ||
        fail "$1: a licence expression is not valid SPDX: $(cat "$TMP/licences.txt")"
    if [ -n "${TRILLIAN_SPDX_SCHEMA:-}" ]; then
        python3 - "$TRILLIAN_SPDX_SCHEMA" "$1" <<'PY' || fail "$1 does not validate against $TRILLIAN_SPDX_SCHEMA"
import json, sys, jsonschema
schema = json.load(open(sys.argv[1]))
jsonschema.validate(json.load(open(sys.argv[2])), schema)
print("valid against", schema.get("$id", sys.argv[1]))
PY
    else
        echo "note: TRILLIAN_SPDX_SCHEMA unset: the schema step did not run"
    fi
}

# a build writes it, and the page links it
cat >"$TMP/r.cfg" <<'CFG'
name = "sb";
arch = "amd64";
toolchain = { kind = "host"; };
stages = ( { name = "mark"; kind = "command"; argv = ["true"]; outputs = []; } );
CFG
trl build "$TMP/r.cfg" --cache "$TMP/c" -o "$TMP/o1"
expect_rc 0
[ -s "$TMP/o1/sbom.spdx.json" ] || fail "the build wrote no sbom.spdx.json"
grep -q '<a id="sbom-link" href="sbom.spdx.json">' "$TMP/o1/report.html" || fail "report.html does not link sbom.spdx.json"
validate "$TMP/o1/sbom.spdx.json"
ok "a build writes sbom.spdx.json and report.html links it"

# the default recipe's shape, from a manifest (trillian report remakes it)
O=$TMP/o2
mkdir -p "$O"
python3 - "$O/manifest.json" <<'PY'
import json, sys
S = lambda c: c * 64
def st(name, kind, details, status="built"):
    return {"name": name, "kind": kind, "status": status, "start": 0, "end": 1,
            "wall_seconds": 1, "details": details}
m = {"trillian": "0.1.0", "recipe": "/r/ia64-minimal.cfg", "name": "ia64-minimal", "arch": "ia64",
     "source_date_epoch": 1700000000, "result": 0, "overrides": [],
     "stages": [
        st("toolchain", "toolchain/build", {"gcc_version": "16.2.0", "gcc_source":
           "http://deb.debian.org/debian/pool/main/g/gcc-16/gcc-16_16.2.0.orig.tar.gz",
           "gcc_sha256": S("1"), "binutils": "binutils_2.47.orig.tar.xz", "binutils_sha256": S("2")}),
        st("glibc", "packages/glibc", {"glibc": "2.43", "source": "glibc_2.43.orig.tar.xz", "sha256": S("3")}),
        st("busybox", "packages/busybox", {"busybox": "1.35.0", "source": "busybox_1.35.0-4.dsc", "sha256": S("4")}),
        st("grub", "packages/grub", {"grub": "2.14", "source": "grub2_2.14.orig.tar.xz", "sha256": S("5")}),
        st("kernel", "kernel/source", {"release": "7.1.13", "tarball":
           "http://deb.debian.org/debian/pool/main/l/linux/linux_7.1.13.orig.tar.xz", "sha256": S("6"),
           "patches": ["a", "b"]}),
        st("userland-base", "userland/minimal-base", {}),
        st("userland", "userland/minimal", {}),
        st("disk", "images/disk", {}),
        st("qemu-ia64", "emulators/qemu-ia64", {"commit": "00c54849361fc91ee9f4bab5492ce8464f8390f5",
           "source": "qemu-ia64-00c5484.tar.xz", "sha256": S("7")}),
        st("ski", "emulators/ski", {"commit": "dfc2902" + "0" * 33, "source": "ski-dfc2902.tar.xz",
           "sha256": S("8")}),
     ],
     "artifacts": [{"stage": "userland", "path": "userland/rootfs.tar", "sha256": S("9"), "size": 1},
                   {"stage": "disk", "path": "disk/disk.img", "sha256": S("a"), "size": 1}],
     "images": [{"stage": "disk", "kind": "disk", "path": "disk/disk.img", "sha256": S("a"),
                 "primary": True}]}
json.dump(m, open(sys.argv[1], "w"), indent=1)
PY
trl report "$O"
expect_rc 0
validate "$O/sbom.spdx.json"
python3 - "$O/sbom.spdx.json" <<'PY' || fail "the SBOM's content"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["spdxVersion"] == "SPDX-2.3" and d["dataLicense"] == "CC0-1.0", d
assert d["creationInfo"]["created"] == "2023-11-14T22:13:20Z", d["creationInfo"]
ids = {p["SPDXID"]: p for p in d["packages"]}
assert len(ids) == len(d["packages"]), "SPDX ids repeat"
by = {}
for p in d["packages"]:
    by.setdefault(p["name"], p)
rel = {(r["spdxElementId"], r["relationshipType"], r["relatedSpdxElement"]) for r in d["relationships"]}
for r in rel:
    assert r[0] in ids or r[0] == "SPDXRef-DOCUMENT", r
    assert r[2] in ids, r
disk, root = by["disk"]["SPDXID"], by["root file system"]["SPDXID"]
build = by["ia64-minimal"]["SPDXID"]
assert ("SPDXRef-DOCUMENT", "DESCRIBES", build) in rel
assert (build, "CONTAINS", disk) in rel
for part in ("Linux", "GRUB"):
    assert (disk, "CONTAINS", by[part]["SPDXID"]) in rel, part
assert (disk, "CONTAINS", root) in rel
for part in ("glibc", "busybox"):
    assert (root, "CONTAINS", by[part]["SPDXID"]) in rel, part
assert (by["gcc"]["SPDXID"], "BUILD_TOOL_OF", build) in rel
assert (by["qemu-system-ia64"]["SPDXID"], "TEST_TOOL_OF", build) in rel
assert by["disk"]["checksums"] == [{"algorithm": "SHA256", "checksumValue": "a" * 64}]
assert by["root file system"]["checksums"][0]["checksumValue"] == "9" * 64
k = by["Linux"]
assert k["versionInfo"] == "7.1.13" and k["licenseDeclared"] == "GPL-2.0-only WITH Linux-syscall-note", k
assert k["downloadLocation"].endswith("/linux_7.1.13.orig.tar.xz") and k["checksums"][0]["checksumValue"] == "6" * 64
g = by["glibc"]
assert g["downloadLocation"] == "NOASSERTION" and g["packageFileName"] == "glibc_2.43.orig.tar.xz", g
# a component whose licence is not recorded: NOASSERTION, not a guess
assert by["Ski"]["licenseDeclared"] == "NOASSERTION", by["Ski"]
assert all(p["licenseConcluded"] == "NOASSERTION" for p in d["packages"])
print("relations and licences as expected;", len(d["packages"]), "packages")
PY
# reproducible: the same manifest gives the same document
cp "$O/sbom.spdx.json" "$TMP/first.json"
trl report "$O"
cmp -s "$O/sbom.spdx.json" "$TMP/first.json" || fail "a second report wrote a different SBOM"
ok "the default recipe's shape: disk CONTAINS kernel, root, loader; Ski NOASSERTION; reproducible"
