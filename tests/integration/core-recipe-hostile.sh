# Recipes from strangers: every case of tests/fixtures/core/hostile/ (names
# that are paths or OUT's own files in any case, inputs that never end,
# numbers out of range, malformed forms, @include of a directory, a NUL in a
# string) is refused before anything runs: exit 2, one FILE:LINE line,
# nothing written, no hang. Each fixture's first line is "# expect: LINE:
# text". Then the same for raw NULs and @included ones, input trees past
# their bounds, --set, the command line and a recipe path that is a
# directory.
. "$TOP/tests/lib.sh"
H=$TMP/hostile
cp -r "$TOP/tests/fixtures/core/hostile" "$H"
mkfifo "$H/fifo"
refused() { # WHAT EXPECTED ARGS... : exit 2, one line with EXPECTED, nothing written
    local what=$1 want=$2
    shift 2
    timeout 20 "$TRILLIAN" "$@" >"$TMP/out.txt" 2>&1
    rc=$?
    [ $rc -ne 124 ] || fail "$what: hung (killed after 20 s)"
    expect_rc 2
    expect_out "$want"
    [ "$(wc -l < "$TMP/out.txt")" -eq 1 ] || { cat "$TMP/out.txt" >&2; fail "$what: more than one line"; }
    [ ! -e "$TMP/out" ] || fail "$what: the output directory was written"
    [ ! -e "$TMP/cache/objects" ] && [ ! -e "$TMP/cache/tmp" ] || fail "$what: the cache was written"
    [ -z "$(ls "$TMP" | grep -v '^hostile$\|^out.txt$\|^cache$')" ] || fail "$what: wrote $(ls "$TMP")"
    [ -z "$(ls -A "$H/.." | grep -v '^hostile$\|^out.txt$\|^cache$')" ] || fail "$what: wrote beside its dir"
}
n=0
for f in "$H"/*.cfg; do
    line=$(head -n1 "$f")
    refused "$(basename "$f")" "$f:${line#"# expect: "}" build "$f" --cache "$TMP/cache" -o "$TMP/out"
    n=$((n + 1))
done
[ $n -ge 33 ] || fail "only $n hostile fixtures ran"
ok "$n hostile recipes refused: exit 2, one FILE:LINE line, nothing written, no hang"

# A NUL that libconfig would lose without a word (a raw byte cuts the string:
# name "a<NUL>b" built as recipe "a"; \x00 is dropped), in the recipe or in a
# file it @includes; a raw NUL in a comment would also hide the next line
# from the @include checks (here an @include of a FIFO, which would hang).
stage='stages = ( { name = "a"; kind = "command"; argv = ["true"]; outputs = []; } );'
printf 'name = "a\0b";\narch = "amd64";\n%s\n' "$stage" >"$H/nul-raw.recipe"
refused "raw NUL" "$H/nul-raw.recipe:1: a NUL byte (expected text" \
    build "$H/nul-raw.recipe" --cache "$TMP/cache" -o "$TMP/out"
mkdir "$H/inc"
printf '# an included file\n# below: a NUL written \\x00\ndescription = "y\\x00";\n' >"$H/inc/esc.inc"
printf '# a comment \0 that hides\n@include "fifo"\n' >"$H/inc/raw.inc"
for inc in esc:3:"a string holds \\x00, a NUL" raw:1:"a NUL byte"; do
    IFS=: read -r base line want <<<"$inc"
    printf 'name = "h";\narch = "amd64";\n@include "inc/%s.inc"\n%s\n' "$base" "$stage" >"$H/nul-$base.recipe"
    refused "@include with a NUL ($base)" "$H/inc/$base.inc:$line: $want" \
        build "$H/nul-$base.recipe" --cache "$TMP/cache" -o "$TMP/out"
done
[ ! -e "$TMP/cache" ] || fail "a NUL: the cache directory was created"
ok "a NUL in a recipe string or an @include (raw or \\x00): exit 2, FILE:LINE, nothing written"

# Input trees are hashed whole into the key before anything runs, within
# bounds (engine.h): deeper than 64 directories is refused naming the tree
# (a directory mounted inside itself never ends; the other bound, 1,000,000
# entries, is test_engine's, at small bounds: a million files is no test). A
# symlink loop given as the input is refused; inside a tree, links are
# hashed, not followed (the plan at the end of this file).
input_recipe() { # NAME PATH: a recipe with one command stage whose input is PATH
    printf 'name = "h";\narch = "amd64";\nstages = ( { name = "a"; kind = "command"; argv = ["true"];\n  outputs = []; inputs = ["%s"]; } );\n' "$2" >"$H/$1.recipe"
}
mkdir -p "$H/deep/$(printf 'd/%.0s' $(seq 64))"
touch "$H/deep/$(printf 'd/%.0s' $(seq 64))f"
input_recipe deep deep
refused "a tree 65 deep" "$H/deep.recipe:3: stages.a: inputs[0]: the tree $H/deep is more than 64 directories deep" \
    build "$H/deep.recipe" --cache "$TMP/cache" -o "$TMP/out"
ln -s loop "$H/loop"
input_recipe loop loop
refused "a symlink loop" "$H/loop.recipe:3: stages.a: inputs[0]: cannot read $H/loop: Too many levels of symbolic links" \
    build "$H/loop.recipe" --cache "$TMP/cache" -o "$TMP/out"
[ ! -e "$TMP/cache" ] || fail "an input tree: the cache directory was created"
ok "an input tree deeper than 64 directories, a symlink loop as an input: exit 2, FILE:LINE, nothing written"

good=$TOP/tests/fixtures/core/hello.cfg
refused "--set name" "--set stages.greet.name=..: stages...: stage name '..' starts with a dot" \
    build "$good" --cache "$TMP/cache" -o "$TMP/out" --set stages.greet.name=..
refused "--set reserved name in another case" "--set stages.greet.name=Logs: stages.Logs: stage name 'Logs' is one of the output directory's own files, logs, where case is ignored" \
    build "$good" --cache "$TMP/cache" -o "$TMP/out" --set stages.greet.name=Logs
refused "--set leading dot" "--set .name=x: '.name' has an empty part" \
    build "$good" --cache "$TMP/cache" -o "$TMP/out" --set .name=x
refused "--set trailing dot" "--set stages.greet.=x: 'stages.greet.' has an empty part" \
    build "$good" --cache "$TMP/cache" -o "$TMP/out" --set stages.greet.=x
refused "--set sde" "--set source_date_epoch=-1: source_date_epoch: -1 is out of range" \
    build "$good" --cache "$TMP/cache" -o "$TMP/out" --set source_date_epoch=-1
refused "--set sde overflow" "'99999999999999999999' is not an integer" \
    build "$good" --cache "$TMP/cache" -o "$TMP/out" --set source_date_epoch=99999999999999999999
refused "-o ''" "-o '': expected a directory" build "$good" --cache "$TMP/cache" -o ""
refused "--cache ''" "--cache '': expected a directory" build "$good" --cache "" -o "$TMP/out"
refused "recipe directory" "$H:1: recipe: is a directory" build "$H" --cache "$TMP/cache" -o "$TMP/out"
refused "recipe FIFO" "$H/fifo:1: recipe: is a special file" build "$H/fifo" --cache "$TMP/cache" -o "$TMP/out"
{ echo 'name = "big"; arch = "amd64"; stages = ('
  for i in $(seq 30000); do echo "  { name = \"s$i\"; kind = \"command\"; argv = [\"true\"]; outputs = []; },"; done
  echo '  { name = "last"; kind = "command"; argv = ["true"]; outputs = []; } );'; } >"$H/big.recipe"
refused "2 MB recipe" "$H/big.recipe:1: recipe: is" build "$H/big.recipe" --cache "$TMP/cache" -o "$TMP/out"
ok "--set (a dot, a reserved name), -o '', --cache '', a recipe path that is a directory or a FIFO, a 2 MB recipe"

# An unusable cache or -o is a usage error naming the path; -o is not
# created when the cache cannot be written.
touch "$TMP/file"
trl build "$good" --cache "$TMP/file/cache" -o "$TMP/out"
expect_rc 2
expect_out "cannot write in the cache $TMP/file/cache"
[ ! -e "$TMP/out" ] || fail "-o was created though the cache is unusable"
trl build "$good" --cache "$TMP/cache" -o "$TMP/file/out"
expect_rc 2
expect_out "cannot create the output directory $TMP/file/out"
ok "an unwritable cache or -o: exit 2, the path named, -o not created"

# Bytes that are not UTF-8 (in a --set value, an output's file name) reach
# manifest.json as U+FFFD: it stays JSON.
printf 'name = "u"; arch = "amd64";\nstages = ( { name = "a"; kind = "command";\n  argv = ["sh", "-c", "touch \\"$TRILLIAN_OUT/f\\xff\\" $TRILLIAN_OUT/ok"]; outputs = ["ok"]; } );\n' >"$TMP/utf.cfg"
trl build "$TMP/utf.cfg" --cache "$TMP/c-utf" -o "$TMP/o-utf" --set "$(printf 'stages.a.description=caf\xc3\xa9 \xff \xe2\x82')"
expect_rc 0
python3 - "$TMP/o-utf/manifest.json" <<'PY' || fail "manifest.json is not UTF-8 JSON"
import json, sys
d = json.load(open(sys.argv[1], encoding="utf-8"))
assert "a/f\ufffd" in [a["path"] for a in d["artifacts"]], d["artifacts"]
assert d["overrides"] == ["stages.a.description=caf\u00e9 \ufffd \ufffd\ufffd"], d["overrides"]
PY
ok "bytes that are not UTF-8 reach manifest.json as U+FFFD"

# The same for plan --json and list --json: a recipe whose file name and
# description are not UTF-8 still gives JSON.
mkdir -p "$TMP/data/recipes"
ufile=$TMP/data/recipes/$(printf 'caf\xff').cfg
printf 'name = "u"; arch = "amd64"; description = "d\xff\xe2\x82";\nstages = ( { name = "a"; kind = "command"; argv = ["true"]; outputs = []; } );\n' >"$ufile"
"$TRILLIAN" plan "$ufile" --json --cache "$TMP/c-utf" >"$TMP/plan.json" 2>"$TMP/out.txt" ||
    { cat "$TMP/out.txt" >&2; fail "plan --json on a recipe with bytes that are not UTF-8 failed"; }
TRILLIAN_DATA=$TMP/data "$TRILLIAN" list --json >"$TMP/list.json" 2>"$TMP/out.txt" ||
    { cat "$TMP/out.txt" >&2; fail "list --json failed"; }
python3 - "$TMP/plan.json" "$TMP/list.json" <<'PY' || fail "plan/list --json is not UTF-8 JSON"
import json, sys
p = json.load(open(sys.argv[1], encoding="utf-8"))
assert p["description"] == "d\ufffd\ufffd\ufffd", p["description"]
assert p["file"].endswith("/caf\ufffd.cfg"), p["file"]
l = json.load(open(sys.argv[2], encoding="utf-8"))
assert [(r["name"], r["description"]) for r in l] == [("caf\ufffd", "d\ufffd\ufffd\ufffd")], l
PY
ok "plan --json and list --json stay UTF-8 JSON whatever bytes a recipe holds"

# Text that only looks like a NUL is kept: \0 is a backslash and a zero to
# libconfig, \\x00 a backslash and x00, and \x00 in a comment is a comment.
cat >"$TMP/esc.cfg" <<'CFG'
name = "esc"; arch = "amd64"; # "\x00" in a comment
stages = ( { name = "a"; kind = "command"; outputs = [];
  argv = ["echo", "<\0|\\x00>"]; } );
CFG
trl build "$TMP/esc.cfg" --cache "$TMP/c-esc" -o "$TMP/o-esc"
expect_rc 0
grep -qxF '<\0|\x00>' "$TMP/o-esc/logs/a.log" || { cat "$TMP/o-esc/logs/a.log" >&2; fail "a NUL look-alike was not kept as text"; }
ok "NUL look-alikes (a backslash and a zero, an escaped backslash before x00, x00 in a comment) are text: the recipe builds"

# At the bound a tree is hashed (64 directories deep), and links inside a
# tree that loop (to itself, its parent, each other) are hashed as links:
# the plan ends.
mkdir -p "$TMP/trees/deep/$(printf 'd/%.0s' $(seq 63))" "$TMP/trees/loops/sub"
touch "$TMP/trees/deep/$(printf 'd/%.0s' $(seq 63))f"
ln -s . "$TMP/trees/loops/self"
ln -s .. "$TMP/trees/loops/sub/up"
ln -s y "$TMP/trees/loops/x"
ln -s x "$TMP/trees/loops/y"
printf 'name = "t"; arch = "amd64";\nstages = ( { name = "a"; kind = "command"; argv = ["true"];\n  outputs = []; inputs = ["deep", "loops"]; } );\n' >"$TMP/trees/t.cfg"
timeout 20 "$TRILLIAN" plan "$TMP/trees/t.cfg" --cache "$TMP/c-trees" >"$TMP/out.txt" 2>&1
rc=$?
[ $rc -ne 124 ] || fail "a tree with symlink loops: plan hung (killed after 20 s)"
expect_rc 0
ok "a tree 64 deep and symlink loops inside a tree are hashed; the plan ends"
