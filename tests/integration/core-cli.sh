# The command line: help for every command, version, the recipe list, exit
# status 2 for usage errors, and install puts the binary, data and man page
# where PREFIX and DESTDIR say.
. "$TOP/tests/lib.sh"
trl --help
expect_rc 0
for c in build plan check list clean help; do expect_out "  $c "; done
expect_out "Exit status: 0 success, 1 a stage failed, 2 usage or recipe error,"
for c in build plan check list clean; do
    trl help $c
    expect_rc 0
    expect_out "Usage: trillian $c"
    trl $c --help
    expect_rc 0
    expect_out "Usage: trillian $c"
done
trl --version
expect_rc 0
grep -Eq '^trillian [0-9]+\.[0-9]+\.[0-9]+ \(commit ([0-9a-f]{7,}(-dirty)?|unknown)\)$' "$TMP/out.txt" ||
    fail "version line: $(cat "$TMP/out.txt")"
ok "help and version"

# --version names the commit the binary was built from: this checkout's HEAD
# (the tests run what `make` just built); outside a git checkout, "unknown".
if [ "$(git -C "$TOP" rev-parse --show-toplevel 2>/dev/null)" = "$TOP" ]; then
    commit=$(sed -n 's/.*(commit \([0-9a-f]*\).*/\1/p' "$TMP/out.txt")
    [ -n "$commit" ] && case $(git -C "$TOP" rev-parse HEAD) in "$commit"*) true ;; *) false ;; esac ||
        fail "--version says $(cat "$TMP/out.txt"), HEAD is $(git -C "$TOP" rev-parse --short HEAD)"
fi
mkdir -p "$TMP/src"
cp -r "$TOP/Makefile" "$TOP/builder" "$TMP/src/"
make -n -C "$TMP/src" build/builder/main.o 2>&1 | grep -qF -- '-DTRILLIAN_COMMIT=\"unknown\"' ||
    fail "outside a git checkout the Makefile does not pass commit unknown"
ok "--version names the git commit, or unknown outside a checkout"

trl list
expect_rc 0
for r in reference-amd64 reference-amd64-foreign ia64-minimal ia64-ski; do
    grep -q "^$r " "$TMP/out.txt" || fail "list lacks $r"
done
grep -q '^reference-amd64 .*amd64 .*Debian bookworm' "$TMP/out.txt" || fail "list lacks descriptions"
ok "list shows the shipped recipes with descriptions"

trl frobnicate
expect_rc 2
expect_out "unknown command 'frobnicate'"
trl build -j 0 x.cfg
expect_rc 2
trl build no-such-recipe.cfg --cache "$TMP/c"
expect_rc 2
expect_out "recipe not found"
ok "usage errors exit 2"

trl help stages
expect_rc 0
grep -q '^### `stages` kind `command`' "$TMP/out.txt" || fail "help stages lacks the command kind"
ok "help stages"

make -s -C "$TOP" install DESTDIR="$TMP/dest" PREFIX=/opt/tr >"$TMP/inst.txt" 2>&1 || { cat "$TMP/inst.txt"; fail "make install"; }
for f in bin/trillian share/trillian/recipes/reference-amd64.cfg share/trillian/kernel-config/ia64-generic.config \
         share/trillian/overlays share/trillian/firmware/initramfs/init share/man/man1/trillian.1 \
         share/bash-completion/completions/trillian; do
    [ -e "$TMP/dest/opt/tr/$f" ] || fail "install lacks $f"
done
env -u TRILLIAN_DATA "$TMP/dest/opt/tr/bin/trillian" list | grep -q '^ia64-minimal ' \
    || fail "the installed binary does not list the installed recipes"
ok "make install"
