# toolchain, kind "external": recipe checks at plan time, and the compiler
# check before caching: a prefix (and a tarball of it) whose
# ia64-linux-gnu-gcc is really the host's x86-64 gcc is refused for
# arch = "ia64", with a message naming the setting and the machine, and
# nothing is cached.
. "$TOP/tests/lib.sh"
need gcc tar
C=$TMP/cache O=$TMP/out

recipe() { # file, toolchain settings
    cat >"$1" <<EOF
name = "toolchain-external-test";
description = "external toolchain check";
arch = "ia64";
source_date_epoch = 1700000000;
toolchain = { kind = "external"; $2 };
EOF
}

# A fake prefix: bin/ia64-linux-gnu-gcc is the host compiler.
mkdir -p "$TMP/fake/bin"
ln -s "$(command -v gcc)" "$TMP/fake/bin/ia64-linux-gnu-gcc"

# Plan-time (recipe) errors: exit 2, naming the key.
recipe "$TMP/none.cfg" 'prefix = "nowhere";'
trl build "$TMP/none.cfg" --cache "$C" -o "$O"
expect_rc 2
expect_out "toolchain.prefix"
ok "a missing prefix is a recipe error at toolchain.prefix"

mkdir -p "$TMP/empty"
recipe "$TMP/empty.cfg" 'prefix = "empty";'
trl build "$TMP/empty.cfg" --cache "$C" -o "$O"
expect_rc 2
expect_out "has no bin/ia64-linux-gnu-gcc"
ok "a prefix without bin/ia64-linux-gnu-gcc is a recipe error"

recipe "$TMP/both.cfg" 'prefix = "fake"; tarball = "x.tar";'
trl build "$TMP/both.cfg" --cache "$C" -o "$O"
expect_rc 2
expect_out "exactly one of prefix"
ok "prefix and tarball together are a recipe error"

recipe "$TMP/url.cfg" 'tarball = "https://example.invalid/tc.tar.xz";'
trl build "$TMP/url.cfg" --cache "$C" -o "$O"
expect_rc 2
expect_out "toolchain.sha256"
ok "a tarball URL without sha256 is a recipe error"

# The wrong-arch compiler is refused at run time, and not cached.
recipe "$TMP/fake.cfg" 'prefix = "fake";'
trl build "$TMP/fake.cfg" --cache "$C" -o "$O"
[ "$rc" -ne 0 ] || { cat "$TMP/out.txt"; fail "a host (x86-64) gcc was accepted as an ia64 toolchain"; }
[ "$rc" -ne 2 ] || { cat "$TMP/out.txt"; fail "refusal reported as a recipe error"; }
all=$(cat "$TMP/out.txt" "$O"/logs/toolchain.log 2>/dev/null)
echo "$all" | grep -q "refusing the toolchain" || { echo "$all"; fail "no refusal message"; }
echo "$all" | grep -q "x86-64 code (ELF e_machine 62" || { echo "$all"; fail "refusal does not name the machine"; }
echo "$all" | grep -q "toolchain.prefix" || { echo "$all"; fail "refusal does not name the setting"; }
ok "prefix with the host gcc refused: $(echo "$all" | grep -o 'refusing the toolchain[^.]*' | head -n1)"
trl build "$TMP/fake.cfg" --cache "$C" -o "$O"
[ "$rc" -ne 0 ] || fail "second build succeeded"
expect_no_out "toolchain: cached"
ok "nothing was cached"

# The same through a tarball (unpacked with libarchive; single top dir).
tar -C "$TMP" -czf "$TMP/fake.tar.gz" fake
sha=$(sha256sum "$TMP/fake.tar.gz" | cut -d' ' -f1)
recipe "$TMP/tarball.cfg" "tarball = \"fake.tar.gz\"; sha256 = \"$sha\";"
trl build "$TMP/tarball.cfg" --cache "$C" -o "$O"
all=$(cat "$TMP/out.txt" "$O"/logs/toolchain.log 2>/dev/null)
[ "$rc" -ne 0 ] && echo "$all" | grep -q "x86-64 code (ELF e_machine 62" \
    || { echo "$all"; fail "tarball with the host gcc not refused (rc $rc)"; }
ok "tarball with the host gcc refused"

# A wrong sha256 for a tarball path is caught before unpacking.
recipe "$TMP/badsha.cfg" "tarball = \"fake.tar.gz\"; sha256 = \"$(printf '%064d' 0)\";"
trl build "$TMP/badsha.cfg" --cache "$C" -o "$O"
all=$(cat "$TMP/out.txt" "$O"/logs/toolchain.log 2>/dev/null)
[ "$rc" -ne 0 ] && echo "$all" | grep -q "has SHA-256 $sha" \
    || { echo "$all"; fail "a wrong sha256 was not reported (rc $rc)"; }
ok "wrong tarball sha256 refused"
echo PASS
