# kernel kind "source" with a pinned series manifest (kernel.series_file:
# "SHA256  NAME" lines; kernel.series_base: the URL the names are under) and
# kernel.fuzz, on the fake tree of kernel-patch.sh with config_only builds,
# so it runs in seconds (the default recipe's 136-patch ia64 series is given
# this way):
#  - the manifest's patches apply in its order, after `series` and before
#    `series_urls` and `patches`, each fetched like a series_urls entry (kept
#    in CACHE/downloads by sha256; a mirror's SHA256SUMS serves it when the
#    origin cannot)
#  - a manifest naming a patch neither the mirror nor the origin has, and a
#    patch whose sha256 differs: the build fails naming FILE:LINE of the
#    recipe, the manifest's line and what to do; nothing is kept
#  - fuzz = 0 and a patch that needs fuzz: fails naming kernel.fuzz, the
#    patch and the hunk, keeps no tree; unset, the same patch applies with a
#    warning; fuzz = 1 lets it apply
#  - plan-time errors at FILE:LINE: a bad manifest line, a name listed twice,
#    an empty manifest, series_file without series_base and the reverse, a
#    series_base not ending in /, a fuzz out of range
. "$TOP/tests/lib.sh"
need patch make curl tar python3
F=$TOP/tests/fixtures
P=$F/kernel-patches
export TRILLIAN_MIRRORS= # only the origin (file://) unless a test sets a mirror
recipe() { fake_kernel_recipe "$1" kernel-series-file-test "$2"; } # file extra-kernel-settings
applied() { # the manifest's kernel patches, names only, one line
    python3 -c '
import json, sys
m = json.load(open(sys.argv[1]))
k = [s for s in m["stages"] if s["name"] == "kernel"][0]
print(" ".join(p["name"] for p in k["details"]["patches"]))' "$1/manifest.json"
}
sha() { sha256sum "$1" | cut -d' ' -f1; }
no_tree() { # cache: no prepared or half-prepared source tree kept
    ! ls -d "$1"/keep/*/kernel/src-* >/dev/null 2>&1 || fail "a source tree was kept after a failure"
}

# the patches under a base URL (file://), a fuzzy one among them: its first
# context line differs from the tree's drivers/bar.c
O=$TMP/origin
mkdir -p "$O"
cp "$P/0001-release.patch" "$P/0002-foo.patch" "$O/"
printf 'bar returns 22; written against an older comment.\n--- a/drivers/bar.c\n+++ b/drivers/bar.c\n@@ -1,5 +1,5 @@\n /* bar: the old fake driver */\n int bar(void)\n {\n-\treturn 2;\n+\treturn 22;\n }\n' \
    > "$O/0005-bar-fuzz.patch"
S1=$(sha "$O/0001-release.patch") S2=$(sha "$O/0002-foo.patch") S5=$(sha "$O/0005-bar-fuzz.patch")
BASE="series_base = \"file://$O/\";"

# a manifest: its order, then series_urls, then patches
printf '# comment\n%s  0002-foo.patch\n\n%s  0001-release.patch   # trailing comment\n' "$S2" "$S1" > "$TMP/good.series"
cp "$P/0003-bar-conflict.patch" "$TMP/local.patch"
sed -i 's/a different driver/another fake driver/; s/return 20;/return 2;/; s/return 21;/return 21;/' "$TMP/local.patch"
recipe "$TMP/good.cfg" "series_file = \"good.series\"; $BASE fuzz = 0; patches = (\"local.patch\");"
C=$TMP/c1
trl build "$TMP/good.cfg" --cache "$C" -o "$TMP/o1"
expect_rc 0
[ "$(cat "$TMP/o1/kernel/release")" = 6.1.0-patched ] || fail "the manifest's patches did not apply"
[ "$(applied "$TMP/o1")" = "${S2:0:16}-0002-foo.patch ${S1:0:16}-0001-release.patch local.patch" ] ||
    fail "not the manifest's order, then patches: $(applied "$TMP/o1")"
ls "$C/downloads/${S1:0:16}-0001-release.patch" >/dev/null || fail "a manifest patch is not kept in CACHE/downloads"
ok "a series manifest applies in its order (comments skipped), fetched into CACHE/downloads, then patches"

# the origin gone: a mirror serves the patches by sha256 (SHA256SUMS, any name)
M=$TMP/mirror
mkdir -p "$M/pool"
cp "$O/0001-release.patch" "$M/pool/renamed-a"; cp "$O/0002-foo.patch" "$M/pool/renamed-b"
(cd "$M" && sha256sum pool/renamed-a pool/renamed-b > SHA256SUMS)
recipe "$TMP/mirror.cfg" "series_file = \"good.series\"; series_base = \"file://$TMP/gone/\";"
TRILLIAN_MIRRORS=$M trl build "$TMP/mirror.cfg" --cache "$TMP/c2" -o "$TMP/o2"
expect_rc 0
[ "$(cat "$TMP/o2/kernel/release")" = 6.1.0-patched ] || fail "the mirror's patches did not apply"
ok "with the origin gone, a mirror's SHA256SUMS serves the manifest's patches"

# where the patches come from, in OUT/manifest.json (the stage's
# patch_sources, from the recipe: the kernel's own details name patches
# without URLs) and in the matrix: a manifest's under a GitHub raw base (the
# mirror serves them by sha256) as OWNER/REPO@COMMIT12 with the manifest's
# name, a patch of the data directory as Trillian's, one beside the recipe
# as local; again when the stage is cached (no rebuild to say it)
printf '%s  0002-foo.patch\n' "$S2" > "$TMP/one.series"
recipe "$TMP/origins.cfg" "series_file = \"one.series\";
           series_base = \"https://raw.githubusercontent.com/test-owner/test-repo/0123456789abcdef0123456789abcdef01234567/patches/\";
           patches = (\"$P/0001-release.patch\", \"local.patch\");"
for o in o8 o9; do
    TRILLIAN_MIRRORS=$M trl build "$TMP/origins.cfg" --cache "$TMP/c8" -o "$TMP/$o"
    expect_rc 0
done
grep -q 'kernel .*cached' "$TMP/out.txt" || fail "the second build was not all cached: $(cat "$TMP/out.txt")"
python3 - "$TMP/o8/manifest.json" "$TMP/o9/manifest.json" "$(cd "$TMP" && pwd -P)" <<'PY' || fail "patch_sources"
import json, sys
for f in sys.argv[1:3]:
    k = [s for s in json.load(open(f))["stages"] if s["name"] == "kernel"][0]
    want = [{"origin": "test-owner/test-repo@0123456789ab", "series": "one.series", "patches": 1,
             "setting": "series_file"},
            {"origin": "Trillian (tests/fixtures/kernel-patches)", "patches": 1, "setting": "patches"},
            {"origin": "local (%s)" % sys.argv[3], "patches": 1, "setting": "patches"}]
    assert k["patch_sources"] == want, (f, k["status"], k.get("patch_sources"))
PY
trl report --matrix -o "$TMP/m.html" "$TMP/o9"
expect_rc 0
python3 - "$TMP/m.html" "$(cd "$TMP" && pwd -P)" <<'PY' || fail "the matrix's kernel patches"
import re, sys
t = open(sys.argv[1]).read().split('id="matrix-recipes"', 1)[1].split("</table>", 1)[0]
row = re.findall(r"<td[^>]*>(.*?)</td>", t.split("</tr>")[1])
assert row[4] == ("1 from test-owner/test-repo@0123456789ab (one.series)<br>1 from Trillian "
                  "(tests/fixtures/kernel-patches)<br>1 from local (%s)" % sys.argv[2]), row
PY
ok "patch_sources: a GitHub raw series as OWNER/REPO@COMMIT12 with the manifest's name, the data directory's patches as Trillian's, a local one; the same when cached; the matrix's kernel patches cell"

# a patch neither the mirror nor the origin has: FILE:LINE, the manifest line, what to do
GONE=1111111111111111111111111111111111111111111111111111111111111111
printf '%s  0002-foo.patch\n%s  0009-gone.patch\n' "$S2" "$GONE" > "$TMP/gone.series"
recipe "$TMP/gone.cfg" "series_file = \"gone.series\"; $BASE"
TRILLIAN_MIRRORS=$M trl build "$TMP/gone.cfg" --cache "$TMP/c3" -o "$TMP/o3"
expect_rc 1
expect_out "gone.cfg:4: kernel.series_file (0009-gone.patch, gone.series:2): no verified copy of 0009-gone.patch (sha256 $GONE)"
expect_out "mirror $M has no file with that sha256 or name"
expect_out "file://$O/0009-gone.patch"
expect_out "Put the file in a mirror"
ls "$TMP/c3/downloads/"*0009* >/dev/null 2>&1 && fail "something was kept for the missing patch"
no_tree "$TMP/c3"
ok "a manifest naming a patch nobody has: gone.cfg:4, gone.series:2, the places tried, what to do; nothing kept"

# a patch whose sha256 differs from the manifest's
BAD=2222222222222222222222222222222222222222222222222222222222222222
printf '%s  0001-release.patch\n' "$BAD" > "$TMP/badsha.series"
recipe "$TMP/badsha.cfg" "series_file = \"badsha.series\"; $BASE"
trl build "$TMP/badsha.cfg" --cache "$TMP/c4" -o "$TMP/o4"
expect_rc 1
expect_out "badsha.cfg:4: kernel.series_file (0001-release.patch, badsha.series:1): no verified copy of 0001-release.patch (sha256 $BAD)"
expect_out "file://$O/0001-release.patch has sha256 $S1"
expect_out "or fix the sha256 if the file really changed"
ls "$TMP/c4/downloads/"* >/dev/null 2>&1 && fail "a download with the wrong sha256 was kept"
no_tree "$TMP/c4"
[ -e "$TMP/o4/kernel/release" ] && fail "a failed kernel stage wrote its output"
ok "a patch whose sha256 differs: badsha.cfg:4, the manifest line, both sha256; nothing kept"

# fuzz = 0 and a patch that needs fuzz 1
printf '%s  0001-release.patch\n%s  0005-bar-fuzz.patch\n' "$S1" "$S5" > "$TMP/fuzzy.series"
recipe "$TMP/fuzz0.cfg" "series_file = \"fuzzy.series\"; $BASE
           fuzz = 0;"
trl build "$TMP/fuzz0.cfg" --cache "$TMP/c5" -o "$TMP/o5"
expect_rc 1
expect_out "fuzz0.cfg:5: kernel.fuzz: ${S5:0:16}-0005-bar-fuzz.patch applies only with more fuzz than 0: drivers/bar.c: Hunk #1 succeeded at 1 with fuzz 1."
expect_out "refresh the patch for this kernel, or raise kernel.fuzz"
no_tree "$TMP/c5"
ls -d "$TMP"/c5/keep/*/kernel/*.tmp >/dev/null 2>&1 && fail "a half-patched tree was left behind"
recipe "$TMP/fuzzdef.cfg" "series_file = \"fuzzy.series\"; $BASE"
trl build "$TMP/fuzzdef.cfg" --cache "$TMP/c5" -o "$TMP/o6"
expect_rc 0
grep -q "0005-bar-fuzz.patch applied with fuzz (refresh it)" "$TMP/o6/logs/kernel.log" ||
    fail "no fuzz warning in the log"
recipe "$TMP/fuzz1.cfg" "series_file = \"fuzzy.series\"; $BASE fuzz = 1;"
trl build "$TMP/fuzz1.cfg" --cache "$TMP/c5" -o "$TMP/o7"
expect_rc 0
ok "fuzz = 0 fails a patch that needs fuzz naming fuzz0.cfg:5, the patch and its hunk, keeping no tree; unset warns; fuzz = 1 applies"

# plan-time errors
printf '%s  0001-release.patch\nnot-a-sha  0002-foo.patch\n' "$S1" > "$TMP/e1.series"
recipe "$TMP/e1.cfg" "series_file = \"e1.series\"; $BASE"
trl plan "$TMP/e1.cfg" --cache "$TMP/c6"
expect_rc 2
expect_out "e1.cfg:4: kernel.series_file: e1.series:2: expected SHA256  NAME"
printf '%s  0001-release.patch\n%s  0001-release.patch\n' "$S1" "$S1" > "$TMP/e2.series"
recipe "$TMP/e2.cfg" "series_file = \"e2.series\"; $BASE"
trl plan "$TMP/e2.cfg" --cache "$TMP/c6"
expect_rc 2
expect_out "e2.series:2: 0001-release.patch is listed twice (also (0001-release.patch, e2.series:1))"
printf '%s  ../0001-release.patch\n' "$S1" > "$TMP/e3.series"
recipe "$TMP/e3.cfg" "series_file = \"e3.series\"; $BASE"
trl plan "$TMP/e3.cfg" --cache "$TMP/c6"
expect_rc 2
expect_out "e3.series:1: '../0001-release.patch' is not a plain file name"
printf '# nothing\n' > "$TMP/e4.series"
recipe "$TMP/e4.cfg" "series_file = \"e4.series\"; $BASE"
trl plan "$TMP/e4.cfg" --cache "$TMP/c6"
expect_rc 2
expect_out "e4.cfg:4: kernel.series_file: $TMP/e4.series lists no patches"
recipe "$TMP/e5.cfg" "series_file = \"good.series\";"
trl plan "$TMP/e5.cfg" --cache "$TMP/c6"
expect_rc 2
expect_out "e5.cfg:4: kernel.series_file: needs kernel.series_base"
recipe "$TMP/e6.cfg" "series_base = \"file://$O/\";"
trl plan "$TMP/e6.cfg" --cache "$TMP/c6"
expect_rc 2
expect_out "e6.cfg:4: kernel.series_base: only goes with kernel.series_file"
recipe "$TMP/e7.cfg" "series_file = \"good.series\"; series_base = \"file://$O\";"
trl plan "$TMP/e7.cfg" --cache "$TMP/c6"
expect_rc 2
expect_out "kernel.series_base: 'file://$O' must be an http(s), ftp or file URL ending in /"
recipe "$TMP/e8.cfg" "fuzz = -1;"
trl plan "$TMP/e8.cfg" --cache "$TMP/c6"
expect_rc 2
expect_out "e8.cfg:4: kernel.fuzz: must be 0 to 20"
[ ! -e "$TMP/c6/downloads" ] || fail "a plan error downloaded something"
ok "plan errors: a bad line, a name twice, a path for a name, an empty manifest, series_file/series_base alone, a base without /, fuzz < 0"
