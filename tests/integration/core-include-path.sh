# The @include search path: the recipe's directory first, then the data
# directory's recipes/; a fragment found there reports errors at its real
# file and line; the links made for the parse are gone afterwards.
. "$TOP/tests/lib.sh"
export TMPDIR=$TMP/tmpdir
mkdir -p "$TMPDIR" "$TMP/r"
cat > "$TMP/r/r.cfg" <<'CFG'
name = "incl";
@include "include/ia64-toolchain.cfg"
@include "mine.cfg"
CFG
echo 'description = "from beside the recipe";' > "$TMP/r/mine.cfg"
trl plan "$TMP/r/r.cfg" --cache "$TMP/c"
expect_rc 0
expect_out "recipe incl (ia64), 1 stages"
expect_out "toolchain          toolchain/build"
ok "a recipe outside the data directory includes the shipped include/ia64-toolchain.cfg"

# The recipe's own directory wins over the data directory.
mkdir -p "$TMP/r/include"
cat > "$TMP/r/include/ia64-toolchain.cfg" <<'CFG'
arch = "amd64";
stages = ( { name = "own"; kind = "command"; argv = ["true"]; outputs = []; } );
CFG
trl plan "$TMP/r/r.cfg" --cache "$TMP/c"
expect_rc 0
expect_out "recipe incl (amd64), 1 stages"
expect_out "own "
rm -r "$TMP/r/include"
ok "a fragment beside the recipe wins"

# Errors in a fragment from the data directory, and in what it includes,
# name its real path and line.
D=$TMP/data
mkdir -p "$D/recipes/include"
printf 'arch = "amd64";\n@include "include/inner.cfg"\n' > "$D/recipes/include/outer.cfg"
printf '# inner\nfrobnicate = 1;\n' > "$D/recipes/include/inner.cfg"
printf 'name = "e";\n@include "include/outer.cfg"\n' > "$TMP/r/e.cfg"
TRILLIAN_DATA=$D trl plan "$TMP/r/e.cfg" --cache "$TMP/c"
expect_rc 2
expect_out "$D/recipes/include/inner.cfg:2: frobnicate: unknown key 'frobnicate'"
printf '# inner\nx = ;\n' > "$D/recipes/include/inner.cfg"
TRILLIAN_DATA=$D trl plan "$TMP/r/e.cfg" --cache "$TMP/c"
expect_rc 2
expect_out "$D/recipes/include/inner.cfg:2: syntax error"
printf 'name = "e";\n@include "include/nowhere.cfg"\n' > "$TMP/r/e.cfg"
TRILLIAN_DATA=$D trl plan "$TMP/r/e.cfg" --cache "$TMP/c"
expect_rc 2
expect_out "$TMP/r/e.cfg:2: syntax error: cannot open include file"
[ -z "$(ls -A "$TMPDIR")" ] || fail "left behind in TMPDIR: $(ls -A "$TMPDIR")"
ok "errors in data-directory fragments name their real file and line; nothing left behind"
