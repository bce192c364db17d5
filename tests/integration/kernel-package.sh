# kernel kind "package": linux-image-cloud-amd64 from Debian's archive through
# apt. The metapackage resolves to the real linux-image-*-cloud-amd64 (the
# manifest says which, with its version and sha256); vmlinuz is an x86 bzImage
# whose version string is the release; modules/lib/modules/RELEASE exists with
# a non-empty modules.dep that lists modules present in the tree; config and
# System.map come along; a second build is a cache hit and the .deb is kept
# under CACHE/downloads/apt; an unknown package or version is a recipe error
# (exit 2) naming kernel.package. Needs apt and Debian's archive (SKIP
# otherwise).
. "$TOP/tests/lib.sh"
need apt-get apt-cache depmod file
apt-cache show --no-all-versions linux-image-cloud-amd64 >/dev/null 2>&1 \
    || skip "apt knows no linux-image-cloud-amd64 (run apt-get update; needs bookworm's archive)"
[ "$(dpkg --print-architecture 2>/dev/null)" = amd64 ] || skip "needs an amd64 host"

cat > "$TMP/r.cfg" <<'CFG'
name = "kernel-package-test";
arch = "amd64";
kernel = { kind = "package"; package = "linux-image-cloud-amd64"; };
CFG
C=$TMP/cache
trl build "$TMP/r.cfg" --cache "$C" -o "$TMP/o"
expect_rc 0
K=$TMP/o/kernel
for f in vmlinuz System.map config release; do
    [ -s "$K/$f" ] || fail "no $f in the kernel output"
done
REL=$(cat "$K/release")
case $REL in *-cloud-amd64) ;; *) fail "release '$REL' is not a cloud-amd64 release" ;; esac
ok "outputs present, release $REL"

# vmlinuz: the x86 boot protocol's "HdrS" at 0x202, and file(1) agrees
[ "$(dd if="$K/vmlinuz" bs=1 skip=514 count=4 2>/dev/null)" = HdrS ] || fail "vmlinuz has no x86 boot header"
file "$K/vmlinuz" | grep -q 'Linux kernel x86 boot executable bzImage' || fail "file(1): $(file "$K/vmlinuz")"
file "$K/vmlinuz" | grep -qF "version $REL " || fail "vmlinuz's version is not $REL: $(file "$K/vmlinuz")"
ok "vmlinuz is an x86 bzImage of version $REL"

M=$K/modules/lib/modules/$REL
[ -d "$M" ] || fail "no modules/lib/modules/$REL (have: $(ls "$K/modules/lib/modules" 2>/dev/null))"
[ "$(ls "$K/modules/lib/modules")" = "$REL" ] || fail "more than one modules directory"
[ -s "$M/modules.dep" ] || fail "empty or missing modules.dep"
n=$(wc -l < "$M/modules.dep")
[ "$n" -gt 100 ] || fail "modules.dep lists only $n modules"
first=$(head -n1 "$M/modules.dep" | cut -d: -f1)
[ -f "$M/$first" ] || fail "modules.dep names $first, which is not in the tree"
grep -q '^CONFIG_VIRTIO_BLK=' "$K/config" || fail "config lacks CONFIG_VIRTIO_BLK"
ok "modules/lib/modules/$REL with modules.dep ($n modules), config"

SM=$K/stage-manifest.json
grep -q '"requested": "linux-image-cloud-amd64"' "$SM" || fail "stage manifest: $(cat "$SM")"
grep -qE '"package": "linux-image-6\.[0-9]+\.[0-9]+-[0-9]+-cloud-amd64"' "$SM" || fail "stage manifest: $(cat "$SM")"
grep -qE '"sha256": "[0-9a-f]{64}"' "$SM" || fail "stage manifest has no sha256: $(cat "$SM")"
grep -qF "\"release\": \"$REL\"" "$SM" || fail "stage manifest release: $(cat "$SM")"
grep -qF '"requested": "linux-image-cloud-amd64"' "$TMP/o/manifest.json" || fail "manifest.json lacks the stage details"
ls "$C"/downloads/apt/linux-image-6.*-cloud-amd64_*_amd64.deb >/dev/null 2>&1 || fail "no .deb kept in the cache's downloads/apt"
ok "manifest names the resolved package; the .deb is kept in downloads/apt"

trl build "$TMP/r.cfg" --cache "$C" -o "$TMP/o2"
expect_rc 0
expect_out "kernel: cached"
cmp -s "$K/vmlinuz" "$TMP/o2/kernel/vmlinuz" || fail "cached vmlinuz differs"
ok "second build is a cache hit"

trl build "$TMP/r.cfg" --cache "$C" -o "$TMP/o3" --set kernel.package=linux-image-trillian-no-such
expect_rc 2
expect_out "kernel.package"
expect_out "linux-image-trillian-no-such"
trl build "$TMP/r.cfg" --cache "$C" -o "$TMP/o3" --set kernel.version=0.0-trillian-none
expect_rc 2
expect_out "version 0.0-trillian-none"
ok "unknown package or version: exit 2 naming kernel.package"
