# `trillian kernel-bump RECIPE VERSION` on the fake kernel tree of
# kernel-patch.sh (a few files, so it runs in seconds), with file:// URLs:
#  - every patch applies: one line per patch, then kernel.url and
#    kernel.sha256 rewritten where the recipe's include sets them (the
#    recipe itself untouched), the tarball kept in CACHE/downloads, and the
#    recipe still plans
#  - a patch that needs fuzz: "applies with fuzz" and the hunk
#  - a patch that does not apply: "fails" with its first rejected hunk, exit
#    1 and nothing written; --force writes
#  - a version whose tarball is not served, a --sha256 that differs, a
#    kernel without url: exit 2 naming what was tried; nothing written
. "$TOP/tests/lib.sh"
need patch tar
F=$TOP/tests/fixtures
P=$F/kernel-patches
export TRILLIAN_MIRRORS=
C=$TMP/cache
version() { # N: a copy of the fake tree as linux-N/, edited by the caller, packed
    rm -rf "$TMP/linux-$1"; cp -r "$F/kernel-fake-tree" "$TMP/linux-$1"
}
pack() { tar -C "$TMP" -czf "$TMP/linux-$1.tar.gz" "linux-$1"; }
sha() { sha256sum "$1" | cut -d' ' -f1; }
version 1; pack 1
S1=$(sha "$TMP/linux-1.tar.gz")
mkdir -p "$TMP/r/include"
cp "$P/0002-foo.patch" "$TMP/r/"
printf 'bar returns 5.\n--- a/drivers/bar.c\n+++ b/drivers/bar.c\n@@ -1,5 +1,5 @@\n /* bar: another fake driver */\n int bar(void)\n {\n-\treturn 2;\n+\treturn 5;\n }\n' \
    > "$TMP/r/bar.patch"
cat > "$TMP/r/include/k.cfg" <<CFG
kernel = { kind = "source";
  url = "file://$TMP/linux-1.tar.gz";
  sha256 = "$S1";
  patches = ("0002-foo.patch", "bar.patch");
  defconfig = "tinyconfig"; config_only = true; };
CFG
cat > "$TMP/r/r.cfg" <<'CFG'
name = "kernel-bump-test";
arch = "amd64";
@include "include/k.cfg"
CFG
cp "$TMP/r/r.cfg" "$TMP/r.cfg.before"

# 2: RELEASE changed only: both patches apply; the include is rewritten
version 2; echo 6.1.1-fake > "$TMP/linux-2/RELEASE"; pack 2
S2=$(sha "$TMP/linux-2.tar.gz")
trl kernel-bump "$TMP/r/r.cfg" 6.1.1 --url "file://$TMP/linux-2.tar.gz" --cache "$C"
expect_rc 0
expect_out "linux 6.1.1: file://$TMP/linux-2.tar.gz (sha256 $S2)"
expect_out "  1 0002-foo.patch: applies"
expect_out "  2 bar.patch: applies"
expect_out "all 2 patches apply"
expect_out "wrote $TMP/r/include/k.cfg:2: kernel.url = \"file://$TMP/linux-2.tar.gz\""
expect_out "wrote $TMP/r/include/k.cfg:3: kernel.sha256 = \"$S2\""
grep -qF "url = \"file://$TMP/linux-2.tar.gz\";" "$TMP/r/include/k.cfg" || fail "kernel.url not rewritten"
grep -qF "sha256 = \"$S2\";" "$TMP/r/include/k.cfg" || fail "kernel.sha256 not rewritten"
grep -qF 'patches = ("0002-foo.patch", "bar.patch");' "$TMP/r/include/k.cfg" || fail "other lines changed"
cmp -s "$TMP/r/r.cfg" "$TMP/r.cfg.before" || fail "the recipe itself was changed"
[ -e "$C/downloads/${S2:0:16}-linux-2.tar.gz" ] || fail "the tarball is not in CACHE/downloads"
trl plan "$TMP/r/r.cfg" --cache "$C"
expect_rc 0
ok "all patches apply: one line each, kernel.url and kernel.sha256 rewritten in the include at k.cfg:2 and :3; it plans"

# 3: foo.c's first line changed: 0002-foo.patch applies only with fuzz
version 3; sed -i '1s/.*/\/* foo: a changed fake driver *\//' "$TMP/linux-3/drivers/foo.c"; pack 3
trl kernel-bump "$TMP/r/r.cfg" 6.1.2 --url "file://$TMP/linux-3.tar.gz" --cache "$C"
expect_rc 0
expect_out "  1 0002-foo.patch: applies with fuzz: drivers/foo.c: Hunk #1 succeeded at 1 with fuzz 1."
ok "a patch that needs fuzz: applies with fuzz, the hunk named"

# 4: bar.c rewritten: bar.patch fails; nothing written; --force writes
cp "$TMP/r/include/k.cfg" "$TMP/k.cfg.before"
version 4; printf '/* bar */\nint bar(void) { return 7; }\n' > "$TMP/linux-4/drivers/bar.c"; pack 4
S4=$(sha "$TMP/linux-4.tar.gz")
trl kernel-bump "$TMP/r/r.cfg" 6.1.3 --url "file://$TMP/linux-4.tar.gz" --cache "$C"
expect_rc 1
expect_out "  2 bar.patch: fails: drivers/bar.c: Hunk #1 FAILED at 1."
expect_out "nothing written: 1 patch does not apply on 6.1.3"
cmp -s "$TMP/r/include/k.cfg" "$TMP/k.cfg.before" || fail "a failed bump wrote the include"
trl kernel-bump "$TMP/r/r.cfg" 6.1.3 --url "file://$TMP/linux-4.tar.gz" --cache "$C" --force
expect_rc 0
grep -qF "sha256 = \"$S4\";" "$TMP/r/include/k.cfg" || fail "--force did not write"
cp "$TMP/k.cfg.before" "$TMP/r/include/k.cfg"
ok "a patch that does not apply: its first rejected hunk, exit 1, nothing written; --force writes"

# not served, a wrong --sha256, no url
trl kernel-bump "$TMP/r/r.cfg" 9.9.9 --url "file://$TMP/nowhere/linux_9.9.9.orig.tar.xz" --cache "$C"
expect_rc 2
expect_out "trillian kernel-bump: linux 9.9.9: no source at file://$TMP/nowhere/linux_9.9.9.orig.tar.xz ("
expect_out "or give --url"
BAD=0000000000000000000000000000000000000000000000000000000000000000
trl kernel-bump "$TMP/r/r.cfg" 6.1.1 --url "file://$TMP/linux-2.tar.gz" --sha256 $BAD --cache "$C"
expect_rc 2
expect_out "file://$TMP/linux-2.tar.gz has sha256 $S2, not $BAD (--sha256): nothing was written"
cmp -s "$TMP/r/include/k.cfg" "$TMP/k.cfg.before" || fail "a failed bump wrote the include"
sed "s|url = .*|tarball = \"$TMP/linux-1.tar.gz\";|; /sha256/d" "$TMP/k.cfg.before" > "$TMP/r/include/k.cfg"
trl kernel-bump "$TMP/r/r.cfg" 6.1.1 --url "file://$TMP/linux-2.tar.gz" --cache "$C"
expect_rc 2
expect_out "has no kernel built from a url + sha256"
trl kernel-bump "$TMP/r/r.cfg" --cache "$C"
expect_rc 2
expect_out "expected RECIPE VERSION"
ok "not served, a wrong --sha256, a kernel without url, no version: exit 2 naming what was tried; nothing written"
