# Misuse of the command line: one line saying what was wrong and what would
# be right (a did-you-mean for misspelt commands, recipes, stages and --set
# keys), exit 2, and nothing built or written.
. "$TOP/tests/lib.sh"
hello=$TOP/tests/fixtures/core/hello.cfg
misuse() { # expected-line args...: exit 2, exactly that one line, no -o or --cache dir made
    local want=$1
    shift
    trl "$@" --cache "$TMP/c" -o "$TMP/o"
    expect_rc 2
    [ "$(wc -l < "$TMP/out.txt")" -eq 1 ] || { cat "$TMP/out.txt"; fail "$*: not one line"; }
    expect_out "$want"
    [ ! -e "$TMP/c" ] && [ ! -e "$TMP/o" ] || fail "$*: wrote something"
}
misuse "trillian: unknown command 'biuld' (did you mean 'build'? expected one of: build, plan, check, boot, fetch, list, report, kernel-bump, cache, publish, clean, help)" biuld
misuse "trillian: unknown command 'frobnicate' (expected one of: build, plan, " frobnicate
misuse "trillian: ia64-minmal: recipe not found: no such file, and no shipped recipe of that name (did you mean 'ia64-minimal'? \`trillian list\` shows them)" plan ia64-minmal
misuse "trillian: zzz-nothing: recipe not found: no such file, and no shipped recipe of that name (\`trillian list\`" build zzz-nothing
misuse "trillian: --force gret: recipe hello has no stage of that name (did you mean 'greet'? \`trillian plan\` lists them)" build "$hello" --force gret
misuse "trillian: --force gret: recipe hello has no stage of that name (did you mean 'greet'?" plan "$hello" --force gret
misuse "--set stagse.greet.argv=x: no setting 'stagse' in the recipe to set 'argv' under (did you mean 'stages'?)" build "$hello" --set stagse.greet.argv=x
misuse "--set stages.gret.argv=x: no setting 'gret' in the recipe to set 'argv' under (did you mean 'greet'?)" build "$hello" --set stages.gret.argv=x
misuse "--set stages.greet.agrv=x: unknown key 'agrv' (did you mean 'argv'?)" build "$hello" --set stages.greet.agrv=x
misuse "trillian build: --older-than goes with \`trillian clean --cache\`" build "$hello" --older-than 3
ok "misspelt commands, recipes, stages and --set keys: one line with a did-you-mean, exit 2"

trl help nonsense
expect_rc 2
expect_out "trillian help: no help on 'nonsense' (expected one of: build, plan, check, boot, fetch, list, report, kernel-bump, cache, publish, clean, help, stages)"
trl help stagse
expect_rc 2
expect_out "(did you mean 'stages'?"
mkdir -p "$TMP/keep"
(cd "$TMP/keep" && "$TRILLIAN" clean --older-than 3 >"$TMP/out.txt" 2>&1)
rc=$?
expect_rc 2
expect_out "trillian clean: --older-than goes with \`trillian clean --cache\`: it prunes cache entries, not output directories"
ok "help on an unknown topic and clean --older-than without --cache exit 2"
