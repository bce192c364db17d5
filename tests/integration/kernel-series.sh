# kernel kind "source" with a patch series (kernel.series, a directory;
# kernel.series_urls, downloads pinned by sha256), on the fake tree of
# kernel-patch.sh with config_only builds, so it runs in seconds:
#  - a directory's *.patch files apply in name order; a `series` file
#    (quilt's format) sets the order and may leave files out
#  - series, then series_urls, then patches: the manifest lists every patch
#    applied with its sha256, in order
#  - a downloaded patch (file:// URL) with a wrong sha256 fails naming the
#    entry's setting and keeps nothing; with the right one it is kept under
#    CACHE/downloads and reused
#  - a series whose patch does not apply names the patch, the file and the
#    hunk, and keeps no half-patched tree
#  - plan-time errors name FILE:LINE: a series that is not a directory, an
#    empty one, a series file naming a missing patch, a series_urls entry
#    without sha256
. "$TOP/tests/lib.sh"
need patch make curl tar python3
F=$TOP/tests/fixtures
P=$F/kernel-patches
C=$TMP/cache
recipe() { fake_kernel_recipe "$1" kernel-series-test "$2"; } # file extra-kernel-settings
applied() { # the manifest's kernel patches: "name sha256" lines
    python3 -c '
import json, sys
m = json.load(open(sys.argv[1]))
k = [s for s in m["stages"] if s["name"] == "kernel"][0]
for p in k["details"]["patches"]:
    print(p["name"], p["sha256"])' "$1/manifest.json"
}

# a directory: its patches in name order
mkdir -p "$TMP/s1"
cp "$P/0002-foo.patch" "$P/0001-release.patch" "$TMP/s1/"
recipe "$TMP/dir.cfg" "series = \"s1\";"
trl build "$TMP/dir.cfg" --cache "$C" -o "$TMP/o1"
expect_rc 0
[ "$(cat "$TMP/o1/kernel/release")" = 6.1.0-patched ] || fail "the series did not apply"
[ "$(applied "$TMP/o1" | cut -d' ' -f1 | tr '\n' ' ')" = "0001-release.patch 0002-foo.patch " ] ||
    fail "not in name order: $(applied "$TMP/o1")"
[ "$(applied "$TMP/o1" | sed -n 1p | cut -d' ' -f2)" = "$(sha256sum "$P/0001-release.patch" | cut -d' ' -f1)" ] ||
    fail "the manifest's sha256 of 0001 is wrong"
ok "series directory: *.patch in name order, each with its sha256 in the manifest"

# a series file sets the order and leaves 0001 out
mkdir -p "$TMP/s2"
cp "$P/0001-release.patch" "$P/0002-foo.patch" "$TMP/s2/"
printf '# only foo\n0002-foo.patch -p1\n' > "$TMP/s2/series"
recipe "$TMP/sf.cfg" "series = \"s2\";"
trl build "$TMP/sf.cfg" --cache "$C" -o "$TMP/o2"
expect_rc 0
[ "$(applied "$TMP/o2" | cut -d' ' -f1)" = 0002-foo.patch ] || fail "series file ignored: $(applied "$TMP/o2")"
ok "a series file (quilt) sets what applies"

# series, then series_urls (file://), then patches
S2=$(sha256sum "$P/0002-foo.patch" | cut -d' ' -f1)
mkdir -p "$TMP/s3"; cp "$P/0001-release.patch" "$TMP/s3/"
recipe "$TMP/all.cfg" "series = \"s3\"; series_urls = ( { url = \"file://$P/0002-foo.patch\"; sha256 = \"$S2\"; } );"
trl build "$TMP/all.cfg" --cache "$C" -o "$TMP/o3"
expect_rc 0
[ "$(applied "$TMP/o3" | cut -d' ' -f1 | tr '\n' ' ')" = "0001-release.patch ${S2:0:16}-0002-foo.patch " ] ||
    fail "order series, series_urls: $(applied "$TMP/o3")"
ls "$C"/downloads/*0002-foo.patch >/dev/null 2>&1 || fail "the downloaded patch is not kept in CACHE/downloads"
ok "series, then series_urls (downloaded, kept in CACHE/downloads)"

# a wrong sha256: named, nothing kept
rm -rf "$C/downloads"
BAD=0000000000000000000000000000000000000000000000000000000000000000
recipe "$TMP/badsha.cfg" "series = \"s3\"; series_urls = ( { url = \"file://$P/0002-foo.patch\"; sha256 = \"$BAD\"; } );"
trl build "$TMP/badsha.cfg" --cache "$C" -o "$TMP/o4"
expect_rc 1
expect_out "kernel.series_urls[0]: no verified copy of 0002-foo.patch (sha256 $BAD): "
expect_out "file://$P/0002-foo.patch has sha256 $S2"
ls "$C"/downloads/* >/dev/null 2>&1 && fail "a download with the wrong sha256 was kept"
ok "a wrong sha256 names kernel.series_urls.[0].sha256 and keeps nothing"

# a series patch that does not apply: patch, file, hunk; nothing half-patched
mkdir -p "$TMP/s4"
cp "$P/0001-release.patch" "$P/0002-foo.patch" "$P/0003-bar-conflict.patch" "$TMP/s4/"
recipe "$TMP/conf.cfg" "series = \"s4\";"
trl build "$TMP/conf.cfg" --cache "$C" -o "$TMP/o5"
expect_rc 1
expect_out "0003-bar-conflict.patch does not apply: drivers/bar.c: Hunk #1 FAILED"
ls -d "$C"/keep/*/kernel/*.tmp >/dev/null 2>&1 && fail "a half-prepared tree was left behind"
ok "a series patch that does not apply names the patch, drivers/bar.c and the hunk"

# plan-time errors at FILE:LINE
recipe "$TMP/e0.cfg" "series = \"no-such-dir\";"
trl plan "$TMP/e0.cfg" --cache "$C"
expect_rc 2
expect_out "e0.cfg:4: kernel.series: file not found"
cp "$P/0001-release.patch" "$TMP/one.patch"
recipe "$TMP/e1.cfg" "series = \"one.patch\";"
trl plan "$TMP/e1.cfg" --cache "$C"
expect_rc 2
expect_out "e1.cfg:4: kernel.series: 'one.patch' is not a directory"
mkdir -p "$TMP/empty"
recipe "$TMP/e2.cfg" "series = \"empty\";"
trl plan "$TMP/e2.cfg" --cache "$C"
expect_rc 2
expect_out "kernel.series: $TMP/empty has no \`series\` file and no *.patch or *.diff files"
mkdir -p "$TMP/s5"; echo 0009-gone.patch > "$TMP/s5/series"
recipe "$TMP/e3.cfg" "series = \"s5\";"
trl plan "$TMP/e3.cfg" --cache "$C"
expect_rc 2
expect_out "names 0009-gone.patch, which is not a file"
recipe "$TMP/e4.cfg" "series_urls = ( { url = \"https://example.org/a.patch\"; } );"
trl plan "$TMP/e4.cfg" --cache "$C"
expect_rc 2
expect_out "kernel.series_urls: entry 1 needs url and sha256"
ok "plan errors: missing, not a directory, empty, a series file naming a missing patch, an entry without sha256"

# the kernel's minimum gcc (scripts/min-tool-version.sh) against the
# compiler: a newer demand stops the stage naming the setting
command -v x86_64-linux-gnu-gcc >/dev/null || skip "no x86_64-linux-gnu-gcc for the compiler check"
mintool() { # dir version: a series adding scripts/min-tool-version.sh
    mkdir -p "$TMP/$1/a" "$TMP/$1/b/scripts"
    printf '#!/bin/sh\ncase "$1" in gcc) echo %s ;; *) echo 0 ;; esac\n' "$2" >"$TMP/$1/b/scripts/min-tool-version.sh"
    (cd "$TMP/$1" && diff -Nu a/scripts/min-tool-version.sh b/scripts/min-tool-version.sh >"$TMP/$1/0001-min.patch")
    rm -rf "$TMP/$1/a" "$TMP/$1/b"
}
mintool m1 99.0.0
recipe "$TMP/old.cfg" "series = \"m1\"; cross_compile = \"x86_64-linux-gnu-\";"
trl build "$TMP/old.cfg" --cache "$C" -o "$TMP/o6"
expect_rc 1
expect_out "kernel.cross_compile: this kernel needs gcc 99.0.0 or newer (its scripts/min-tool-version.sh), but x86_64-linux-gnu-gcc is gcc"
mintool m2 5.1.0
recipe "$TMP/new.cfg" "series = \"m2\"; cross_compile = \"x86_64-linux-gnu-\";"
trl build "$TMP/new.cfg" --cache "$C" -o "$TMP/o7"
expect_rc 0
grep -q "meets the kernel's minimum 5.1.0" "$TMP/o7/logs/kernel.log" || fail "no compiler check in the log"
ok "a kernel that needs a newer gcc stops naming kernel.cross_compile; an older minimum passes"
