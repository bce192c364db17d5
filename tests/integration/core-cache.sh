# Cache behaviour of the engine: a second build is all cache hits with the
# same manifest hashes; changing a setting, an input file or using --force
# rebuilds exactly the stage and what depends on it; plan says why.
. "$TOP/tests/lib.sh"
cp "$TOP/tests/fixtures/core/chain.cfg" "$TMP/chain.cfg"
printf 'one\ntwo\nthree\n' > "$TMP/input.txt"
R=$TMP/chain.cfg C=$TMP/cache O=$TMP/out

hashes() { grep -o '"path": "[^"]*", "size": [0-9]*, "sha256": "[0-9a-f]*"' "$O/manifest.json"; }

trl build "$R" --cache "$C" -o "$O"
expect_rc 0
expect_out "first: done"
[ "$(cat "$O/second/b.txt")" = "$(printf 'two\nthree\none')" ] || fail "second/b.txt is wrong"
[ -s "$O/logs/first.log" ] || fail "no log for first"
h1=$(hashes)
[ "$(echo "$h1" | wc -l)" -eq 3 ] || fail "manifest should list 3 artifacts: $h1"
# The hashes (from each stage's own sums file in its cache entry) are the files'.
echo "$h1" | sed 's/"path": "\([^"]*\)", "size": [0-9]*, "sha256": "\([0-9a-f]*\)"/\2  \1/' >"$TMP/want.sum"
(cd "$O" && sha256sum -c --quiet "$TMP/want.sum") || fail "a manifest hash is not its file's sha256"
[ "$(cat "$C"/objects/*/sums | wc -l)" -eq 3 ] || fail "the cache entries have no sums of their outputs"
# the stages' scratch directories, removed behind the build, are gone when it ends
[ -z "$(ls "$C/tmp")" ] || fail "scratch left in $C/tmp: $(ls "$C/tmp")"
ok "cold build; manifest hashes are the files' (the stages' own sums)"

trl build "$R" --cache "$C" -o "$O"
expect_rc 0
[ "$(grep -c ': cached' "$TMP/out.txt")" -eq 3 ] || fail "second build not all cached"
expect_no_out ": started"
[ "$(hashes)" = "$h1" ] || fail "manifest hashes changed on a cached rebuild"
grep -q '"cached": true' "$O/manifest.json" || fail "manifest does not record cache hits"
ok "warm build is all cache hits with the same manifest hashes"

# A sums line whose size or mtime no longer matches its file is not trusted.
for f in "$C"/objects/*/sums; do
    chmod u+w "$f" "$(dirname "$f")" 2>/dev/null
    sed -i 's/^[0-9a-f]\{64\} \([0-9]*\) [0-9]* /0000000000000000000000000000000000000000000000000000000000000000 \1 1 /' "$f"
done
trl build "$R" --cache "$C" -o "$O"
expect_rc 0
[ "$(hashes)" = "$h1" ] || fail "a stale sums line was trusted: $(hashes)"
ok "a stale sums line (other mtime) is not trusted: the file is hashed"

# A fresh cache gives byte-identical artifacts (reproducible outputs).
trl build "$R" --cache "$TMP/cache2" -o "$TMP/out2"
expect_rc 0
[ "$(grep -o '"sha256": "[0-9a-f]*"' "$TMP/out2/manifest.json")" = \
  "$(grep -o '"sha256": "[0-9a-f]*"' "$O/manifest.json")" ] || fail "a fresh build differs"
ok "fresh cache, same artifacts"

# An input file's content is part of the key.
echo four >> "$TMP/input.txt"
trl plan "$R" --cache "$C"
expect_rc 0
grep -E '^first .* build .*file:inputs\[0\] changed' "$TMP/out.txt" >/dev/null || { cat "$TMP/out.txt"; fail "plan does not name the changed input"; }
grep -E '^second .* build .*dep:first changed' "$TMP/out.txt" >/dev/null || fail "plan does not name the changed dependency"
grep -E '^alone .* cached' "$TMP/out.txt" >/dev/null || fail "alone should stay cached"
trl build "$R" --cache "$C" -o "$O"
expect_out "first: done"
expect_out "second: done"
expect_out "alone: cached"
ok "changed input rebuilds the stage and its dependents only"

# A setting change (through --set) is part of the key too.
trl build "$R" --cache "$C" -o "$O" --set 'stages.alone.argv=sh,-c,echo other > $TRILLIAN_OUT/c.txt'
expect_rc 0
expect_out "alone: done"
expect_out "first: cached"
[ "$(cat "$O/alone/c.txt")" = other ] || fail "override not applied"
grep -q 'stages.alone.argv=' "$O/manifest.json" || fail "manifest lacks the override"
ok "--set changes the key of the stage it touches"

# --force rebuilds one stage and what depends on it.
trl build "$R" --cache "$C" -o "$O" --force first
expect_rc 0
expect_out "first: started (forced)"
expect_out "second: started (forced)"
expect_out "alone: cached"
trl build "$R" --cache "$C" -o "$O" --force nosuch
expect_rc 2
expect_out "--force nosuch"
ok "--force"

# clean removes the output, --cache --older-than keeps fresh entries.
trl clean "$R" -o "$O"
expect_rc 0
[ ! -e "$O" ] || fail "clean left $O"
n=$(ls "$C/objects" | wc -l)
trl clean --cache "$C" --older-than 1
expect_rc 0
[ "$(ls "$C/objects" | wc -l)" -eq "$n" ] || fail "--older-than 1 removed fresh entries"
find "$C/objects" -name used -exec touch -d '3 days ago' {} +
trl clean --cache "$C" --older-than 2
[ "$(ls "$C/objects" | wc -l)" -eq 0 ] || fail "--older-than 2 kept old entries"
mkdir -p "$TMP/notours"; touch "$TMP/notours/precious"
trl clean "$R" -o "$TMP/notours"
expect_rc 2
[ -e "$TMP/notours/precious" ] || fail "clean removed a directory that is not a build output"
ok "clean"

# A tool's version line is remembered with its file's identity: a changed
# tool (new content, or the same file re-written so its --version differs)
# rebuilds; the same tool again is a hit without asking it.
mkdir -p "$TMP/bin"
tool() { printf '#!/bin/sh\n[ "$1" = --version ] && { echo "faketool %s"; echo asked >>"%s/asked"; exit 0; }\necho "%s" >"$TRILLIAN_OUT/t.txt"\n' "$1" "$TMP" "$1" >"$TMP/bin/faketool"; chmod +x "$TMP/bin/faketool"; }
tool 1
cat >"$TMP/tool.cfg" <<'CFG'
name = "tool"; arch = "amd64"; source_date_epoch = 1700000000;
stages = ( { name = "t"; kind = "command"; argv = ["faketool"]; outputs = ["t.txt"]; } );
CFG
PATH=$TMP/bin:$PATH trl build "$TMP/tool.cfg" --cache "$C" -o "$TMP/tout"
expect_rc 0
[ "$(cat "$TMP/tout/t/t.txt")" = 1 ] || fail "faketool 1 did not run"
rm -f "$TMP/asked"
PATH=$TMP/bin:$PATH trl build "$TMP/tool.cfg" --cache "$C" -o "$TMP/tout"
expect_out "t: cached"
[ ! -e "$TMP/asked" ] || fail "an unchanged tool was asked its version again"
tool 2
PATH=$TMP/bin:$PATH trl plan "$TMP/tool.cfg" --cache "$C" -o "$TMP/tout"
expect_out "tool:faketool"
[ -e "$TMP/asked" ] || fail "a changed tool was not asked its version"
PATH=$TMP/bin:$PATH trl build "$TMP/tool.cfg" --cache "$C" -o "$TMP/tout"
expect_out "t: started"
[ "$(cat "$TMP/tout/t/t.txt")" = 2 ] || fail "faketool 2 did not run"
ok "a tool's version is remembered with its file; a changed tool rebuilds"
