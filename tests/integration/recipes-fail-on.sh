# The shipped ia64 recipes' boot-check fail_on patterns against the lines
# they must and must not stop a check on: a kernel oops as ia64's die()
# prints it ("COMM[PID]: Oops ISR [N]") and a panic stop it; the timer
# interrupt's warning "Oops: timer tick before it's due", which
# qemu-system-ia64 under TCG on a loaded host can make the kernel print
# and which changes nothing, does not (it stopped ia64-debian's second
# stage once on a machine at load 5). Each pattern is matched as the check
# matches it: POSIX extended regular expressions, one alternative each.
. "$TOP/tests/lib.sh"
python3 - "$TOP/recipes" >"$TMP/patterns" <<'PY' || fail "cannot read the recipes' fail_on lists"
import glob, json, re, sys
top = sys.argv[1]
for f in sorted(glob.glob(top + "/*.cfg") + glob.glob(top + "/include/*.cfg")):
    for m in re.finditer(r'fail_on = \[([^\]]*(?:\][^;\]]*)*)\];', open(f).read()):
        items = json.loads("[" + m.group(1) + "]")
        print(f[len(top) + 1:] + "\t" + "|".join("(%s)" % p for p in items))
PY
n=$(wc -l <"$TMP/patterns")
[ "$n" -ge 10 ] || fail "found only $n fail_on lists in the recipes"
while IFS='	' read -r f re; do
    case $re in *Oops*) ;; *) continue ;; esac
    printf '%s\n' "Oops: timer tick before it's due (itc=dc3b60894,itm=dc3c8813d)" | grep -Eq -- "$re" &&
        fail "$f: fail_on stops a check on the timer's early-tick warning: $re"
    printf '%s\n' "modprobe[123]: Oops 11012296146944 [1]" | grep -Eq -- "$re" ||
        fail "$f: fail_on misses ia64's oops line: $re"
    printf '%s\n' "Kernel panic - not syncing: Attempted to kill init!" | grep -Eq -- "$re" ||
        fail "$f: fail_on misses a panic: $re"
done <"$TMP/patterns"
ok "$n fail_on lists: a real oops and a panic stop the check, the timer's early-tick warning does not"
