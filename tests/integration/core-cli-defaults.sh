# --help tells the truth: the default recipe it names is the one `build`
# picks (in a data directory with both candidates and with only the
# fallback, and in the real one), and every environment variable the code
# reads is named by --help and by the man page.
. "$TOP/tests/lib.sh"
D=$TMP/data
mkdir -p "$D/recipes"
for n in ia64-minimal reference-amd64; do
    cat > "$D/recipes/$n.cfg" <<CFG
name = "$n";
arch = "amd64";
stages = ( { name = "mark"; kind = "command"; argv = ["true"]; outputs = []; } );
CFG
done
for round in both fallback; do
    TRILLIAN_DATA=$D trl --help
    expect_rc 0
    expect_out "now $D)"
    named=$(sed -n 's/.*the default recipe (\(.*\)) is used\..*/\1/p' "$TMP/out.txt")
    [ -n "$named" ] || fail "--help names no default recipe"
    (cd "$TMP" && TRILLIAN_DATA=$D "$TRILLIAN" build --cache "$TMP/c" >"$TMP/build.txt" 2>&1) ||
        { cat "$TMP/build.txt"; fail "$round: build with the default recipe failed"; }
    built=$(ls "$TMP/out")
    [ "recipes/$built.cfg" = "$named" ] || fail "$round: --help names $named, build built $built"
    rm -rf "$TMP/out" "$D/recipes/ia64-minimal.cfg"
done
[ "$named" = recipes/reference-amd64.cfg ] || fail "the fallback is $named"
ok "--help names the recipe build picks, and the fallback"

# The shipped data: plan with no recipe plans the one --help names.
env -u TRILLIAN_DATA "$TRILLIAN" --help >"$TMP/out.txt" 2>&1
named=$(sed -n 's/.*the default recipe (\(.*\)) is used\..*/\1/p' "$TMP/out.txt")
[ "$named" = recipes/ia64-minimal.cfg ] || fail "--help names $named as the default"
(cd "$TMP" && env -u TRILLIAN_DATA "$TRILLIAN" plan --cache "$TMP/c") >"$TMP/plan.txt" 2>&1 ||
    { cat "$TMP/plan.txt"; fail "plan with the default recipe"; }
grep -q '^recipe ia64-minimal ' "$TMP/plan.txt" || fail "plan planned $(head -1 "$TMP/plan.txt")"
ok "the shipped default is ia64-minimal in --help and in plan"

# Every environment variable the code reads (its own TRILLIAN_*; those it
# sets for command stages are documented in docs/recipes.md) is in --help
# and trillian(1); so are the help's own.
trl --help
names=$(cd "$TOP/builder" && grep -rhoE '"TRILLIAN_[A-Z0-9_]+"' --include=*.c . | tr -d '"' | sort -u)
stage_env=$(grep -hoE 'setenv\("TRILLIAN_[A-Z0-9_]+"' "$TOP/builder/engine/runner.c" | sed 's/setenv("//;s/"//')
n=0
for v in $names SOURCE_DATE_EPOCH XDG_CACHE_HOME; do
    case " $(echo $stage_env) " in *" $v "*) continue ;; esac
    expect_out "$v"
    grep -q "$v" "$TOP/docs/trillian.1" || fail "trillian(1) does not name $v"
    n=$((n + 1))
done
[ $n -ge 15 ] || fail "only $n variables found in the source"
for v in $(grep -oE '^  (TRILLIAN_[A-Z0-9_]+|SOURCE_DATE_EPOCH)' "$TMP/out.txt"); do
    grep -rq "\"$v\"" "$TOP/builder" || fail "--help names $v, which the code does not read"
done
ok "$n environment variables, each in --help and trillian(1)"
