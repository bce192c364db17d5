# Every class of recipe error is caught before any stage runs, reported as
# FILE:LINE: key.path: message (expected …), with exit status 2. The cases
# are data: each tests/fixtures/core/bad/*.cfg names its expected message in
# its first line ("# expect: LINE: text" or "# expect-file: FILE:LINE: text").
. "$TOP/tests/lib.sh"
n=0
for f in "$TOP"/tests/fixtures/core/bad/*.cfg; do
    head -n1 "$f" | grep -q '^# expect' || continue
    line=$(head -n1 "$f")
    case $line in
    "# expect-file: "*) want=${line#"# expect-file: "} ;;
    "# expect: "*) want="$f:${line#"# expect: "}" ;;
    esac
    trl plan "$f" --cache "$TMP/cache" -o "$TMP/out"
    expect_rc 2
    expect_out "$want"
    [ ! -e "$TMP/out" ] || fail "$f: plan created an output directory"
    n=$((n + 1))
done
[ $n -ge 12 ] || fail "only $n error fixtures ran"
ok "$n recipe error classes reported with file, line and key"

# --set goes through the same validation.
good=$TOP/tests/fixtures/core/hello.cfg
trl plan "$good" --cache "$TMP/cache" --set stages.greet.outptus=x
expect_rc 2
expect_out "--set stages.greet.outptus=x: unknown key 'outptus' (did you mean 'outputs'?)"
trl plan "$good" --cache "$TMP/cache" --set source_date_epoch=soon
expect_rc 2
expect_out "'soon' is not an integer"
trl plan "$good" --cache "$TMP/cache" --set arch=sparc
expect_rc 2
expect_out "--set arch=sparc: arch: 'sparc' is not allowed"
trl plan "$good" --cache "$TMP/cache" --set stages.nothere.argv=true
expect_rc 2
expect_out "no setting 'nothere'"
trl plan "$good" --cache "$TMP/cache" --set source_date_epoch=1800000000
expect_rc 0
ok "--set overrides are validated like the recipe"

# A stage that fails at run time is not a recipe error: exit 1, and no stage
# ran for a recipe error.
trl build "$TOP/tests/fixtures/core/bad/cycle.cfg" --cache "$TMP/cache" -o "$TMP/out2"
expect_rc 2
[ ! -e "$TMP/cache/objects" ] || fail "a stage ran despite a recipe error"
ok "recipe errors stop the build before any stage"
