# Every shipped recipe plans on a fresh checkout: `trillian plan` exits 0 for
# each with an empty cache and lists at least one boot check, and no recipe names a path outside the
# repository but Debian packages' (/usr/src, /usr/share, installed by
# tools/install-deps). With the mirror beside the checkout and --offline,
# the only inputs a fresh cache lacks are the kernel tarballs Debian's
# archive serves: every GitHub-hosted input (the ia64 patches) is found in
# the mirror by its sha256.
. "$TOP/tests/lib.sh"
n=0
for r in "$TOP"/recipes/*.cfg; do
    trl plan "$r" --cache "$TMP/cache"
    [ "$rc" -eq 0 ] || { cat "$TMP/out.txt" >&2; fail "$(basename "$r"): plan exit $rc"; }
    # every shipped recipe checks what it builds: at least one boot check
    grep -q 'has no boot checks' "$TMP/out.txt" && fail "$(basename "$r") has no boot check"
    grep -q '^boot-[^ ]* *bootcheck/' "$TMP/out.txt" || grep -q ' bootcheck/[a-z-]* ' "$TMP/out.txt" ||
        { cat "$TMP/out.txt" >&2; fail "$(basename "$r"): plan lists no bootcheck stage"; }
    n=$((n + 1))
done
[ "$n" -ge 10 ] || fail "only $n recipes"
[ ! -e "$TMP/cache/downloads" ] || fail "plan downloaded something"
ok "all $n shipped recipes plan with an empty cache, each with a boot check"

# paths in recipes: only the repository's own (relative) and Debian's; a boot
# check's `send` is typed into the guest, so its paths are the guest's; a
# string starting "/^" or "/@" is a sed expression, not a path
bad=$(grep -n '"/[A-Za-z0-9_]' "$TOP"/recipes/*.cfg "$TOP"/recipes/include/*.cfg "$TOP"/recipes/packages/*.cfg | grep -v '^[^:]*:[0-9]*: *#' |
      grep -v '^[^:]*:[0-9]*: *{ *send = ' |
      grep -v '"/usr/src/\|"/usr/share/\|"/usr/lib/\|"/dev/\|"/bin/\|"/sbin/\|"/etc/\|"/lib/' || true)
[ -z "$bad" ] || fail "recipes name absolute paths outside the repository and Debian packages: $bad"
ok "no recipe names a path outside the repository (but Debian packages')"

need_mirror
for r in "$TOP"/recipes/*.cfg; do
    trl plan "$r" --cache "$TMP/cache" --offline
    [ "$rc" -eq 0 ] && continue
    [ "$rc" -eq 2 ] || { cat "$TMP/out.txt" >&2; fail "$(basename "$r"): --offline plan exit $rc"; }
    other=$(grep -- '--offline: ' "$TMP/out.txt" | grep -v ': --offline: http://deb.debian.org/debian/pool/' || true)
    [ -z "$other" ] || fail "$(basename "$r"): the mirror lacks: $other"
done
ok "--offline with the mirror: only Debian archive tarballs are missing from a fresh cache"

# gcc stage 2's languages: C, or C and C++ (ia64-packages' gxx); nothing else
trl plan ia64-packages --cache "$TMP/cache" --set packages.gxx.languages=c,fortran
expect_rc 2
expect_out "packages.gxx.languages: 'c,fortran': known are \"c\" and \"c,c++\""
ok "a gcc stage's unknown languages are refused at plan time"
