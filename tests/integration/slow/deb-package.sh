# The Debian package: dpkg-buildpackage -us -uc -b builds
# trillian_VERSION_amd64.deb from a copy of this tree, lintian finds no
# errors in it, and installed with its dependencies (apt, from Debian's
# archive) into a fresh bookworm root made by debootstrap it runs: --help,
# --version naming /usr/share/trillian, plan ia64-minimal from /root, the man
# page and completion in place. Needs the network (deb.debian.org, or
# TRILLIAN_TEST_DEBIAN_MIRROR) and root.
. "$TOP/tests/lib.sh"
[ "$(id -u)" = 0 ] || skip "needs root (debootstrap, chroot)"
need dpkg-buildpackage dh debootstrap chroot lintian
mirror=${TRILLIAN_TEST_DEBIAN_MIRROR:-http://deb.debian.org/debian}
t0=$SECONDS

# the tree as git has it (tracked and new files, not build outputs)
mkdir -p "$TMP/src/trillian"
(cd "$TOP" && git ls-files -co --exclude-standard | tar -cf - -T -) | tar -x -C "$TMP/src/trillian" ||
    fail "cannot copy the tree"
version=$(sed -n 's/^VERSION *:= *//p' "$TOP/Makefile")
(cd "$TMP/src/trillian" && dpkg-buildpackage -us -uc -b) >"$TMP/build.log" 2>&1 ||
    { tail -n 30 "$TMP/build.log"; fail "dpkg-buildpackage failed"; }
deb=$TMP/src/trillian_${version}_amd64.deb
[ -f "$deb" ] || fail "no $deb: $(ls "$TMP/src")"
ok "dpkg-buildpackage built $(basename "$deb") in $((SECONDS - t0)) s"
dpkg-deb -f "$deb" Depends | grep -q 'libconfig9' || fail "Depends lacks the shared libraries: $(dpkg-deb -f "$deb" Depends)"
for p in $("$TOP/tools/install-deps" --print runtime); do
    dpkg-deb -f "$deb" Depends | tr ',' '\n' | grep -qx " *$p" || fail "Depends lacks $p, which the default recipe runs"
done
ok "Depends: the shared libraries and every tool of install-deps' runtime list"
lintian --no-tag-display-limit "$TMP/src/trillian_${version}_amd64.changes" >"$TMP/lintian.txt" 2>&1
! grep '^E:' "$TMP/lintian.txt" || fail "lintian reports errors"
ok "lintian: no errors ($(grep -c '^W:' "$TMP/lintian.txt") warnings)"

# a fresh bookworm, the package installed with its dependencies
R=$TMP/root
t1=$SECONDS
debootstrap --variant=minbase bookworm "$R" "$mirror" >"$TMP/debootstrap.log" 2>&1 ||
    { tail -n 20 "$TMP/debootstrap.log"; fail "debootstrap bookworm from $mirror"; }
trap 'umount "$R/proc" 2>/dev/null' EXIT
mount -t proc proc "$R/proc"
cp /etc/resolv.conf "$R/etc/resolv.conf"
cp "$deb" "$R/tmp/"
chroot "$R" sh -c "apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends /tmp/$(basename "$deb")" \
    >"$TMP/apt.log" 2>&1 || { tail -n 30 "$TMP/apt.log"; fail "apt-get install ./$(basename "$deb") in a fresh bookworm"; }
ok "installed into a fresh bookworm with $(grep -c '^Setting up' "$TMP/apt.log") packages in $((SECONDS - t1)) s"

in_root() { chroot "$R" env -u TRILLIAN_DATA HOME=/root sh -c "cd /root && $1" >"$TMP/out.txt" 2>&1; rc=$?; }
in_root "trillian --help"
expect_rc 0
expect_out "now /usr/share/trillian)"
in_root "trillian --version"
expect_rc 0
expect_out "data: /usr/share/trillian (installed: PREFIX/share/trillian beside PREFIX/bin/trillian)"
in_root "trillian plan ia64-minimal"
expect_rc 0
expect_out "recipe ia64-minimal (ia64), 13 stages"
expect_out "boot-qemu          bootcheck/boot"
[ -f "$R/usr/share/man/man1/trillian.1.gz" ] || fail "no man page"
[ -f "$R/usr/share/bash-completion/completions/trillian" ] || fail "no bash completion"
ok "in the root: --help, --version, plan ia64-minimal from /root, man page, completion; $((SECONDS - t0)) s in all"
