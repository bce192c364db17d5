# tools/install-deps leaves no daemon behind: every package each purpose
# (image, recipes, tests: they nest) would install on an empty system, dependencies
# included, is read for the units it ships (its files: dpkg's list when it is
# installed, else the .deb's contents); a system unit or init script of a
# package that is not on every Debian system already (Priority required or
# important) must be one install-deps stops and disables (--services) or one
# of the few kept below. Then the same check must flag dnsmasq's daemon.
. "$TOP/tests/lib.sh"
need apt-get apt-cache dpkg-query dpkg-deb
deps=$TOP/tools/install-deps

# Units that stay: no daemon on a network port, and turning them off would
# break the system (a shared bus, boot-time setup scripts).
kept="dbus:dbus.service dbus-system-bus-common:dbus.socket util-linux-extra:hwclock.sh.service"
kept="$kept x11-common:x11-common.service"
stopped=$("$deps" --services | tr '\n' ' ')
[ -n "$stopped" ] || fail "install-deps --services lists nothing"

# closure PACKAGES...: what apt would install on a system with nothing
# (dpkg's status empty), one name a line
closure() {
    apt-get -s -o Dir::State::status=/dev/null install --no-install-recommends "$@" \
        >"$TMP/sim.txt" 2>&1 || { tail -n 5 "$TMP/sim.txt" >&2
        fail "apt-get cannot resolve the list (apt-get update first?): $*"; }
    awk '/^Inst /{print $2}' "$TMP/sim.txt"
}

# unit_names: the system units and init scripts among the paths on stdin
unit_names() {
    sed -nE -e 's#^\.?/(usr/)?lib/systemd/system/([^/@]+\.(service|socket|timer|path))$#\2#p' \
        -e 's#^\.?/etc/init\.d/([^/]+)$#\1.service#p' | sort -u
}
# The installed packages' units, read once from dpkg's file lists.
declare -A shipped=() installed=()
for l in /var/lib/dpkg/info/*.list; do
    p=${l##*/}; p=${p%.list}; installed[${p%%:*}]=1
done
while IFS=: read -r l path; do
    p=${l##*/}; p=${p%.list}; p=${p%%:*}
    u=$(printf '%s\n' "$path" | unit_names)
    [ -n "$u" ] && shipped[$p]="${shipped[$p]:-} $u"
done < <(grep -E '^/(usr/)?lib/systemd/system/[^/]+$|^/etc/init\.d/' /var/lib/dpkg/info/*.list)

# units PACKAGE: its units (a package not installed is downloaded and read)
units() {
    if [ -n "${installed[$1]:-}" ]; then
        printf '%s\n' ${shipped[$1]:-}
        return
    fi
    mkdir -p "$TMP/debs"
    (cd "$TMP/debs" && apt-get download -q "$1" >/dev/null 2>&1) ||
        fail "cannot download $1 to read its files (network?)"
    dpkg-deb -c "$TMP"/debs/"$1"_*.deb | awk '{print $NF}' | unit_names
}

# check LISTNAME PACKAGES...: prints "PACKAGE:UNIT" for each unit neither
# stopped nor kept
check() {
    local pkgs p u base
    pkgs=$(closure "$@")
    [ -n "$pkgs" ] || fail "empty closure for $*"
    # shellcheck disable=SC2086
    base=" $(apt-cache show --no-all-versions $pkgs 2>/dev/null |
        awk '/^Package:/{p=$2} /^Priority: (required|important)$/{print p}' | tr '\n' ' ') "
    for p in $pkgs; do
        case $base in *" $p "*) continue ;; esac
        for u in $(units "$p"); do
            case " $stopped $kept " in *" $p:$u "*) ;; *) echo "$p:$u" ;; esac
        done
    done
}

# the purposes nest (image in recipes in tests), so the tests' list covers all
"$deps" --print tests | sort >"$TMP/tests.txt"
for purpose in image recipes; do
    "$deps" --print "$purpose" | sort | comm -23 - "$TMP/tests.txt" >"$TMP/extra.txt"
    [ ! -s "$TMP/extra.txt" ] || fail "install-deps $purpose lists what tests does not: $(cat "$TMP/extra.txt")"
done
# shellcheck disable=SC2046
bad=$(check $(cat "$TMP/tests.txt"))
[ -z "$bad" ] || fail "tools/install-deps installs a service it leaves enabled: $bad (add PACKAGE:UNIT to its SERVICES, or use the package without the daemon)"
ok "$(wc -l <"$TMP/tests.txt") packages and their dependencies: every unit shipped is stopped by install-deps or kept on purpose"
# every unit install-deps names is shipped by that package (a stale entry
# would stop nothing)
for s in $stopped; do
    units "${s%%:*}" | grep -qx "${s#*:}" || fail "install-deps stops $s, which ${s%%:*} does not ship"
done
ok "each of $stopped is shipped by its package"
# the check sees a daemon: dnsmasq (the package, not dnsmasq-base) enables one
bad=$(check dnsmasq)
case $bad in *dnsmasq:dnsmasq.service*) ok "dnsmasq's daemon flagged: $bad" ;;
*) fail "the check did not flag dnsmasq.service (got: '$bad')" ;; esac
