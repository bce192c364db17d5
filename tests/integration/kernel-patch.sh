# kernel kind "source", without a real kernel: a fake tree (tests/fixtures/
# kernel-fake-tree, whose Makefile implements just tinyconfig, olddefconfig
# and kernelrelease) and config_only builds, so it runs in seconds.
#  - a tarball with a patch series: patches apply in order (the release the
#    tree reports changes), a fragment's option reaches the final .config
#  - a patch that does not apply fails naming the patch and the file, and
#    leaves no half-patched tree in the keep directory; so do a patch applied
#    twice (reversed) and one for a file the tree lacks
#  - a fragment option the tree's Kconfig lacks fails naming it
#  - url + sha256 (file://): a wrong sha256 fails naming kernel.sha256 and
#    keeps nothing in CACHE/downloads; the right one works and is kept
#  - git + ref (a local repository): a tag works and the manifest names the
#    commit, a commit id works, a missing ref fails naming kernel.ref
. "$TOP/tests/lib.sh"
need patch make curl git tar
F=$TOP/tests/fixtures
P=$F/kernel-patches
tar -C "$F" -czf "$TMP/linux-fake.tar.gz" kernel-fake-tree
printf '# test fragment\nCONFIG_FAKE_DRIVER=y\n' > "$TMP/frag.config"
C=$TMP/cache

recipe() { # file source-settings patches-list [fragments-list]
    cat > "$1" <<CFG
name = "kernel-patch-test";
arch = "amd64";
kernel = { kind = "source"; $2 defconfig = "tinyconfig"; config_only = true;
           patches = [ $3 ]; fragments = [ ${4:-\"frag.config\"} ]; };
CFG
}
TARBALL='tarball = "linux-fake.tar.gz";'

recipe "$TMP/ok.cfg" "$TARBALL" "\"$P/0001-release.patch\", \"$P/0002-foo.patch\""
trl build "$TMP/ok.cfg" --cache "$C" -o "$TMP/o1"
expect_rc 0
[ "$(cat "$TMP/o1/kernel/release")" = 6.1.0-patched ] || fail "release is '$(cat "$TMP/o1/kernel/release")', the patch did not apply"
grep -qx CONFIG_FAKE_DRIVER=y "$TMP/o1/kernel/config" || fail "the fragment's option is not in config"
grep -q 'return 3' "$C"/keep/*/kernel/src-*/drivers/foo.c || fail "0002-foo.patch is not in the kept tree"
ok "tarball + two patches in order + a fragment: release 6.1.0-patched, CONFIG_FAKE_DRIVER=y"

recipe "$TMP/bad.cfg" "$TARBALL" \
    "\"$P/0001-release.patch\", \"$P/0002-foo.patch\", \"$P/0003-bar-conflict.patch\""
trl build "$TMP/bad.cfg" --cache "$C" -o "$TMP/o2"
expect_rc 1
expect_out "kernel.patches: $P/0003-bar-conflict.patch does not apply: drivers/bar.c: Hunk #1 FAILED"
n=$(ls -d "$C"/keep/*/kernel/src-* | wc -l)
[ "$n" -eq 1 ] || fail "$n source trees kept after a failed patch (expected only the good one)"
ls -d "$C"/keep/*/kernel/*.tmp >/dev/null 2>&1 && fail "a half-prepared tree was left behind"
ok "a conflicting patch fails naming 0003-bar-conflict.patch and drivers/bar.c; nothing half-patched kept"

recipe "$TMP/rev.cfg" "$TARBALL" "\"$P/0001-release.patch\", \"$P/0001-release.patch\""
trl build "$TMP/rev.cfg" --cache "$C" -o "$TMP/o3"
expect_rc 1
expect_out "0001-release.patch does not apply: RELEASE: Reversed (or previously applied) patch detected"
recipe "$TMP/miss.cfg" "$TARBALL" "\"$P/0004-missing-file.patch\""
trl build "$TMP/miss.cfg" --cache "$C" -o "$TMP/o4"
expect_rc 1
expect_out "0004-missing-file.patch does not apply: drivers/baz.c"
ok "a patch applied twice names RELEASE; one for a missing file names drivers/baz.c"

printf 'CONFIG_FAKE_DRIVER=y\nCONFIG_FAKE_NO_SUCH=y\n' > "$TMP/unknown.config"
recipe "$TMP/unk.cfg" "$TARBALL" "" '"unknown.config"'
trl build "$TMP/unk.cfg" --cache "$C" -o "$TMP/o5"
expect_rc 1
expect_out "CONFIG_FAKE_NO_SUCH=y (set by unknown.config:2) was dropped: FAKE_NO_SUCH is not a Kconfig symbol"
expect_no_out "CONFIG_FAKE_DRIVER=y (set by"
ok "a fragment option the tree does not define fails naming it and its line"

SHA=$(sha256sum "$TMP/linux-fake.tar.gz" | cut -d' ' -f1)
BAD=$(printf '%064d' 0)
recipe "$TMP/url-bad.cfg" "url = \"file://$TMP/linux-fake.tar.gz\"; sha256 = \"$BAD\";" ""
trl build "$TMP/url-bad.cfg" --cache "$C" -o "$TMP/o6"
expect_rc 1
expect_out "kernel.sha256: no verified copy of linux-fake.tar.gz (sha256 $BAD): "
expect_out "file://$TMP/linux-fake.tar.gz has sha256 $SHA"
[ -z "$(ls -A "$C/downloads" 2>/dev/null)" ] || fail "a download with the wrong hash was kept: $(ls -A "$C/downloads")"
recipe "$TMP/url.cfg" "url = \"file://$TMP/linux-fake.tar.gz\"; sha256 = \"$SHA\";" ""
trl build "$TMP/url.cfg" --cache "$C" -o "$TMP/o7"
expect_rc 0
[ "$(cat "$TMP/o7/kernel/release")" = 6.1.0-fake ] || fail "url build: release $(cat "$TMP/o7/kernel/release")"
ls "$C"/downloads/*-linux-fake.tar.gz >/dev/null 2>&1 || fail "the verified download is not kept in downloads/"
ok "url: a wrong sha256 fails naming kernel.sha256 and keeps nothing; the right one builds and is kept"

git init -q "$TMP/repo"
cp -r "$F/kernel-fake-tree/." "$TMP/repo/"
git -C "$TMP/repo" add -A
git -C "$TMP/repo" -c user.name=t -c user.email=t@example.org commit -qm fake
git -C "$TMP/repo" tag v6.1-fake
recipe "$TMP/git.cfg" "git = \"file://$TMP/repo\"; ref = \"v6.1-fake\";" "\"$P/0001-release.patch\""
trl build "$TMP/git.cfg" --cache "$C" -o "$TMP/o8"
expect_rc 0
[ "$(cat "$TMP/o8/kernel/release")" = 6.1.0-patched ] || fail "git build: release $(cat "$TMP/o8/kernel/release")"
grep -qF "\"commit\": \"$(git -C "$TMP/repo" rev-parse HEAD)\"" "$TMP/o8/kernel/stage-manifest.json" \
    || fail "stage manifest lacks the commit: $(cat "$TMP/o8/kernel/stage-manifest.json")"
echo changed > "$TMP/repo/RELEASE"
git -C "$TMP/repo" -c user.name=t -c user.email=t@example.org commit -qam later
FIRST=$(git -C "$TMP/repo" rev-parse HEAD~1)
recipe "$TMP/git-sha.cfg" "git = \"file://$TMP/repo\"; ref = \"$FIRST\";" ""
trl build "$TMP/git-sha.cfg" --cache "$C" -o "$TMP/o8b"
expect_rc 0
[ "$(cat "$TMP/o8b/kernel/release")" = 6.1.0-fake ] || fail "git commit build: release $(cat "$TMP/o8b/kernel/release")"
recipe "$TMP/git-bad.cfg" "git = \"file://$TMP/repo\"; ref = \"v9.9-none\";" ""
trl build "$TMP/git-bad.cfg" --cache "$C" -o "$TMP/o9"
expect_rc 1
expect_out "kernel.ref: file://$TMP/repo has no branch or tag named 'v9.9-none'"
ok "git: a tag clones, patches and configures (commit in the manifest); a commit id works; a missing ref fails naming kernel.ref"

recipe "$TMP/two.cfg" "$TARBALL git = \"file://$TMP/repo\"; ref = \"x\";" ""
trl build "$TMP/two.cfg" --cache "$C" -o "$TMP/o10"
expect_rc 2
expect_out "has more than one source"
ok "two sources at once: recipe error (exit 2)"
