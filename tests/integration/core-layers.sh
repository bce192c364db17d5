# The source's layers (docs/engine.md): tools/check-layers passes on builder/,
# and fails, naming the file and line, on a copy where a stage includes an
# engine header, a stage includes libconfig, a format reaches up to the
# stage API, or a file is in no layer. Also: no stage calls libconfig, no
# engine function is over 150 lines, and every struct buf starts as BUF_INIT.
. "$TOP/tests/lib.sh"
"$TOP/tools/check-layers" "$TOP/builder" >"$TMP/out" 2>&1 || fail "layers: $(cat "$TMP/out")"
ok "builder/ keeps its layers"

cp -r "$TOP/builder" "$TMP/b"
st=$(ls "$TMP/b/stages/"*.c | head -n 1); st=${st#"$TMP"/b/}
fmt=$(ls "$TMP/b/formats/"*.c | head -n 1); fmt=${fmt#"$TMP"/b/}
printf '#include "engine/engine.h"\n' >>"$TMP/b/$st"
printf '#include <libconfig.h>\n' >>"$TMP/b/stages/registry.c"
printf '#include "stage.h"\n' >>"$TMP/b/$fmt"
: >"$TMP/b/stray.c" # a file in no layer
if "$TOP/tools/check-layers" "$TMP/b" >"$TMP/out" 2>&1; then fail "a stage including engine.h passed"; fi
grep -q "^builder/$st:[0-9]*: includes \"engine/engine.h\"" "$TMP/out" || fail "engine include not named: $(cat "$TMP/out")"
grep -q '^builder/stages/registry.c:[0-9]*: includes <libconfig.h>' "$TMP/out" || fail "libconfig not named: $(cat "$TMP/out")"
grep -q "^builder/$fmt:[0-9]*: includes \"stage.h\"" "$TMP/out" || fail "format -> stage.h not named: $(cat "$TMP/out")"
grep -q '^builder/stray.c: in no layer' "$TMP/out" || fail "a file in no layer not named: $(cat "$TMP/out")"
[ "$(wc -l <"$TMP/out")" -eq 4 ] || fail "expected four findings: $(cat "$TMP/out")"
ok "violations are found and named"

calls=$(grep -ln 'config_setting_\|config_lookup' "$TOP"/builder/stages/*.c "$TOP"/builder/stages/*.h 2>/dev/null)
[ -z "$calls" ] || fail "stages calling libconfig: $calls"
ok "no stage calls libconfig"

# Functions over 150 lines in the engine: from a line that opens a function
# at column 0 to its closing brace at column 0.
long=$(awk 'FNR == 1 { cand = 0; infn = 0 }
            !infn && /^[a-zA-Z_].*[(]/ && !/;[ \t]*$/ { cand = FNR; name = $0 }
            !infn && cand && /;[ \t]*$/ { cand = 0 }
            !infn && cand && /[{][ \t]*$/ { infn = 1; start = cand }
            infn && /^[}]/ { if (FNR - start > 150) print FILENAME ": " FNR - start " lines: " name
                             infn = 0; cand = 0 }' "$TOP"/builder/engine/*.c)
[ -z "$long" ] || fail "engine functions over 150 lines: $long"
ok "no engine function over 150 lines"

# A buf is never NULL (base/util.h): every one starts as BUF_INIT.
zeroed=$(grep -rn 'struct buf [^;(]*= *{0}' "$TOP/builder" --include='*.c' --include='*.h')
[ -z "$zeroed" ] || fail "bufs not started with BUF_INIT: $zeroed"
ok "every buf starts as BUF_INIT"
