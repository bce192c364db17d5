# Downloads pinned by sha256 (builder/drivers/fetch.c), on the fake kernel tree with
# config_only builds, so it runs in seconds:
#  - a kernel patch given as { url; sha256; } whose origin cannot be reached
#    comes from a --mirror directory, found through its SHA256SUMS under
#    another name; the key is the same as for the same bytes given by path
#  - a mirror holding wrong bytes under the URL's name is skipped (reported)
#    and the next mirror (TRILLIAN_MIRRORS, after --mirror) is used
#  - --offline with the file in no mirror: plan fails at once (exit 2) with
#    FILE:LINE of the entry and its URL, and nothing is built or written
#  - a malformed entry (no sha256, short sha256, no scheme) is a recipe error
. "$TOP/tests/lib.sh"
need patch make curl tar
unset TRILLIAN_MIRRORS
F=$TOP/tests/fixtures
P=$F/kernel-patches
tar -C "$F" -czf "$TMP/linux-fake.tar.gz" kernel-fake-tree
S1=$(sha256sum "$P/0001-release.patch" | cut -d' ' -f1)
recipe() { # file patches-list
    cat > "$1" <<CFG
name = "fetch-test";
arch = "amd64";
kernel = { kind = "source"; tarball = "linux-fake.tar.gz"; defconfig = "tinyconfig";
           config_only = true;
           patches = ( $2 ); };
CFG
}
# the origin is a port nothing listens on: only a mirror can serve it
URL="http://127.0.0.1:9/t2/0001-release.patch"
recipe "$TMP/r.cfg" "{ url = \"$URL\"; sha256 = \"$S1\"; }"
recipe "$TMP/local.cfg" "\"$P/0001-release.patch\""

# a good mirror, the file under another name, found by its SHA256SUMS
mkdir -p "$TMP/m1"
cp "$P/0001-release.patch" "$TMP/m1/t2-abc-0001-release.patch"
(cd "$TMP/m1" && sha256sum t2-abc-0001-release.patch > SHA256SUMS)
trl build "$TMP/r.cfg" --cache "$TMP/c" -o "$TMP/o1" --mirror "$TMP/m1"
expect_rc 0
[ "$(cat "$TMP/o1/kernel/release")" = 6.1.0-patched ] || fail "the mirrored patch did not apply"
grep -q "got $TMP/m1/t2-abc-0001-release.patch" "$TMP/o1/logs/kernel.log" ||
    fail "the log does not say the mirror served it: $(grep -i got "$TMP/o1/logs/kernel.log")"
ls "$TMP/c/downloads/${S1:0:16}-0001-release.patch" >/dev/null || fail "not kept in CACHE/downloads"
ok "a pinned patch from a --mirror directory, by its SHA256SUMS"

k1=$("$TRILLIAN" plan "$TMP/r.cfg" --cache "$TMP/c" | awk '$1 == "kernel" { print $3 }')
k2=$("$TRILLIAN" plan "$TMP/local.cfg" --cache "$TMP/c" | awk '$1 == "kernel" { print $3 }')
[ -n "$k1" ] && [ "$k1" = "$k2" ] || fail "keys differ for the same bytes: url $k1, path $k2"
ok "the key is the content's: the same for the URL entry and the local file ($k1)"

# a bad mirror first (wrong bytes under the URL's name), the good one next
mkdir -p "$TMP/m0"
echo "not the patch" > "$TMP/m0/0001-release.patch"
rm -rf "$TMP/c"
TRILLIAN_MIRRORS="$TMP/m1" trl build "$TMP/r.cfg" --cache "$TMP/c" -o "$TMP/o2" --mirror "$TMP/m0"
expect_rc 0
grep -q "$TMP/m0/0001-release.patch has sha256 .* not $S1: not used" "$TMP/o2/logs/kernel.log" ||
    fail "the bad mirror's file was not reported"
grep -q "got $TMP/m1/" "$TMP/o2/logs/kernel.log" || fail "the second mirror was not used"
ok "a mirror with wrong bytes is reported and skipped; the next one serves"

# neither in a mirror nor cached: --offline refuses at plan time
rm -rf "$TMP/c"
trl build "$TMP/r.cfg" --cache "$TMP/c" -o "$TMP/o3" --offline --mirror "$TMP/m0"
expect_rc 2
expect_out "$TMP/r.cfg:5: kernel.patches[0]: --offline: $URL (sha256 $S1)"
[ ! -e "$TMP/o3" ] || fail "an offline build with a missing input wrote $TMP/o3"
[ ! -e "$TMP/c/downloads" ] || fail "an offline build with a missing input downloaded"
ok "--offline lists the missing input with FILE:LINE and builds nothing"

# and without --offline, the unreachable origin: the stage fails naming the entry
trl build "$TMP/r.cfg" --cache "$TMP/c" -o "$TMP/o4" --mirror "$TMP/m0"
expect_rc 1
expect_out "kernel.patches[0]: no verified copy of 0001-release.patch"
ls "$TMP/c/downloads/" 2>/dev/null | grep -q . && fail "something unverified was kept: $(ls "$TMP/c/downloads")"
ok "every place tried and failed: the error names the entry, nothing kept"

# malformed entries
for bad in "{ url = \"$URL\"; }|needs sha256" "{ url = \"$URL\"; sha256 = \"abc\"; }|is not 64 hex digits" \
           "{ url = \"t2/0001.patch\"; sha256 = \"$S1\"; }|must start with https://" \
           "{ sha256 = \"$S1\"; }|needs url" "{ url = \"$URL\"; sha256 = \"$S1\"; branch = \"x\"; }|unknown key 'branch'"; do
    recipe "$TMP/bad.cfg" "${bad%%|*}"
    trl plan "$TMP/bad.cfg" --cache "$TMP/c"
    expect_rc 2
    expect_out "${bad##*|}"
    grep -q "^$TMP/bad.cfg:[0-9]*: kernel.patches\[0\]: " "$TMP/out.txt" || fail "no FILE:LINE: $(cat "$TMP/out.txt")"
done
ok "malformed download entries are recipe errors with FILE:LINE"

# trillian fetch --to: a mirror for an offline machine, usable at once
trl fetch "$TMP/r.cfg" --cache "$TMP/cf" --mirror "$TMP/m1" --to "$TMP/carry"
expect_rc 0
expect_out "1 inputs, 0 failed"
(cd "$TMP/carry" && sha256sum -c --quiet SHA256SUMS) || fail "the written mirror does not check"
grep -q "^$S1  " "$TMP/carry/SHA256SUMS" || fail "SHA256SUMS lacks the patch: $(cat "$TMP/carry/SHA256SUMS")"
trl build "$TMP/r.cfg" --cache "$TMP/c5" -o "$TMP/o5" --offline --mirror "$TMP/carry"
expect_rc 0
ok "trillian fetch --to writes a mirror that an --offline build uses"
trl fetch "$TMP/r.cfg" --cache "$TMP/cg" --mirror "$TMP/m0" --offline
expect_rc 1
expect_out "1 inputs, 1 failed"
ok "trillian fetch exits 1 when an input cannot be had"
