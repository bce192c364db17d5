# Shell completion (tools/trillian.bash, through `trillian __complete`):
# commands, help topics, shipped recipes, each command's options (every one
# of which the command accepts), stage names after --force and keys after
# --set from the recipe on the command line; plan --json and list --json
# carry the same names.
. "$TOP/tests/lib.sh"
need bash
hello=$TOP/tests/fixtures/core/hello.cfg
# comp WORD...: what completing the last word offers, one a line
comp() {
    bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _trillian
             printf "%s\n" "${COMPREPLY[@]}"' _ "$TOP/tools/trillian.bash" "$TRILLIAN" "$@" \
        >"$TMP/out.txt" 2>&1
}
lines() { tr '\n' ' ' < "$TMP/out.txt" | sed 's/ *$//'; }
comp bu
[ "$(lines)" = build ] || fail "commands: $(lines)"
comp he
[ "$(lines)" = help ] || fail "help: $(lines)"
comp help st
[ "$(lines)" = stages ] || fail "help topics: $(lines)"
comp cache v
[ "$(lines)" = verify ] || fail "cache: $(lines)"
comp build ia64-mi
[ "$(lines)" = ia64-minimal ] || fail "recipes: $(lines)"
comp build --keep
[ "$(lines)" = --keep-going ] || fail "options: $(lines)"
comp plan --js
[ "$(lines)" = --json ] || fail "plan options: $(lines)"
comp build "$hello" --force ""
[ "$(lines)" = "greet shout" ] || fail "--force stages: $(lines)"
comp plan "$hello" --set stages.greet.ar
[ "$(lines)" = "stages.greet.argv=" ] || fail "--set keys: $(lines)"
comp plan --set ""
grep -qx 'toolchain.kind=' "$TMP/out.txt" || fail "--set keys of the default recipe lack toolchain.kind="
ok "completion: commands, help topics, recipes, options, --force stages, --set keys"

# Every option completion offers is one the command accepts.
for cmd in build check plan fetch list clean report cache; do
    opts=$("$TRILLIAN" __complete options $cmd)
    [ -n "$opts" ] || fail "no options for $cmd"
    sub=
    [ $cmd = cache ] && sub=verify
    for o in $opts; do
        "$TRILLIAN" $cmd $sub $o 1 --help >"$TMP/o.txt" 2>&1
        ! grep -q "unrecognized option\|unknown option" "$TMP/o.txt" ||
            fail "completion offers $cmd $o, which $cmd does not take: $(cat "$TMP/o.txt")"
    done
done
ok "every option offered is accepted"

# Every --set key offered is one --set accepts (a wrong value is fine here).
for k in $("$TRILLIAN" __complete keys "$hello"); do
    trl plan "$hello" --cache "$TMP/c" --set "$k=1"
    ! grep -q "unknown key\|no setting" "$TMP/out.txt" || fail "--set $k=1: $(cat "$TMP/out.txt")"
done
ok "every --set key offered is accepted"

# The same names in plan --json and list --json.
trl plan "$hello" --cache "$TMP/c" --json
expect_rc 0
python3 - "$TMP/out.txt" <<'PY' || fail "plan --json: $(cat "$TMP/out.txt")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["recipe"] == "hello" and d["arch"] == "amd64" and d["bootchecks"] is False, d
assert [s["name"] for s in d["stages"]] == ["greet", "shout"], d["stages"]
s = d["stages"][1]
assert s["status"] == "build" and s["needs"] == ["greet"] and len(s["key"]) == 64, s
assert "stages.greet.argv" in d["set_keys"], d["set_keys"]
PY
trl plan "$hello" --cache "$TMP/c" --json --force gret
expect_rc 2
trl list --json
expect_rc 0
python3 - "$TMP/out.txt" <<'PY' || fail "list --json: $(cat "$TMP/out.txt")"
import json, sys
d = {r["name"]: r for r in json.load(open(sys.argv[1]))}
assert d["ia64-minimal"]["arch"] == "ia64" and d["ia64-minimal"]["file"].endswith("recipes/ia64-minimal.cfg"), d
assert "Debian bookworm" in d["reference-amd64"]["description"], d["reference-amd64"]
PY
trl build "$hello" --json
expect_rc 2
expect_out "trillian build: --json goes with \`trillian plan\` and \`trillian list\`"
trl __complete nonsense
expect_rc 2
ok "plan --json and list --json; --json elsewhere is an error"
