# The debootstrap userland stage, through ./trillian: a native bookworm root
# (reference-amd64's debootstrap, with this test's host name and password), and
# with tests/fixtures/userland-minbase.cfg a wrong keyring and a foreign
# (first stage only) root with the first-boot init. Needs root, debootstrap
# and deb.debian.org (CI has all three).
. "$TOP/tests/lib.sh"
need debootstrap tar
[ "$(id -u)" = 0 ] || skip "native debootstrap needs root"
recipe=$TOP/tests/fixtures/userland-minbase.cfg

# ---- recipe errors (plan time, no network) -----------------------------------
plan_error() { # --set, expected text
    trl plan "$recipe" --cache "$TMP/plancache" --set "$1"
    expect_rc 2
    expect_out "$2"
}
plan_error arch=ia64 "userland.foreign: the recipe's arch is ia64 but this host runs amd64"
plan_error userland.mirror=ftp://example.org/debian "userland.mirror: 'ftp://example.org/debian' is not an archive URL"
plan_error userland.hostname=bad_name "userland.hostname: 'bad_name' is not a host name"
plan_error userland.variant=minibase "did you mean 'minbase'?"
plan_error root_uuid=nope "root_uuid: 'nope' is not a UUID"
plan_error userland.keyring=/nonexistent/keyring.gpg "userland.keyring"
ok "recipe errors name the userland key (arch without foreign, mirror, hostname, variant, root_uuid, keyring)"

getent hosts deb.debian.org >/dev/null 2>&1 || skip "deb.debian.org does not resolve (no network)"
# A fresh cache for the wrong keyring and the foreign roots, so those stages
# really run; the downloaded .debs are shared with other test runs through
# TRILLIAN_TEST_CACHE.
cache=$TMP/cache
if [ -n "${TRILLIAN_TEST_CACHE:-}" ]; then
    mkdir -p "$TRILLIAN_TEST_CACHE/downloads/debootstrap" "$cache/downloads"
    ln -s "$TRILLIAN_TEST_CACHE/downloads/debootstrap" "$cache/downloads/debootstrap"
fi

# ---- native ----------------------------------------------------------------
# reference-amd64's bookworm debootstrap (tests/fixtures/userland-bookworm.cfg:
# the same userland-base key) with this test's host name, root password and
# root UUID, in the shared test cache: reference-amd64.sh, earlier in the
# order, has run that debootstrap there, so a cold run does it once for
# both tests (about 35 CPU-seconds); the layer on top runs here
trl build "$TOP/tests/fixtures/userland-bookworm.cfg" --cache "${TRILLIAN_TEST_CACHE:-$cache}" \
    -o "$TMP/native" --set root_uuid=5f3a7c2e-6b1d-4e8a-9c47-2d0b8e1f6a35 \
    --set userland.hostname=trillian-test --set userland.root_password=trillian
expect_rc 0
d=$TMP/native/userland
for f in rootfs.tar packages.tsv stage-manifest.json cmdline-extra; do
    [ -f "$d/$f" ] || fail "native: no $f"
done
tar tvf "$d/rootfs.tar" --numeric-owner --full-time >"$TMP/list.txt" || fail "rootfs.tar does not list"
grep -q ' etc/os-release -> ../usr/lib/os-release$' "$TMP/list.txt" || fail "no etc/os-release link"
tar xOf "$d/rootfs.tar" usr/lib/os-release | grep -qx 'VERSION_CODENAME=bookworm' \
    || fail "os-release does not name bookworm"
ok "rootfs.tar has /etc/os-release naming bookworm"
grep -Eq '^d[rwx-]{9} 0/0 .* dev/$' "$TMP/list.txt" || fail "dev/ is not root-owned"
grep -Eq '^d[rwx-]{9} 0/0 .* usr/bin/$' "$TMP/list.txt" || fail "usr/bin/ is not root-owned"
grep -Eq '^-rw-r----- 0/42 .* etc/shadow$' "$TMP/list.txt" || fail "etc/shadow is not root:shadow 0640"
grep -Eq '^crw-rw-rw- 0/0 +5,1 .* dev/console$' "$TMP/list.txt" || fail "no dev/console device node"
ok "owners, modes and device nodes kept (dev/ 0/0, etc/shadow 0/42, dev/console c 5,1)"
others=$(awk '{print $4 " " $5}' "$TMP/list.txt" | sort -u)
[ "$others" = "2023-11-14 22:13:20" ] || fail "mtimes are not all source_date_epoch: $others"
ok "every mtime is source_date_epoch"
grep -Eq '^base-files	[0-9][^	]*	amd64$' "$d/packages.tsv" || fail "packages.tsv lacks base-files"
grep -q '"name": "base-files"' "$d/stage-manifest.json" || fail "stage-manifest.json lacks base-files"
ok "packages.tsv and stage-manifest.json list base-files ($(($(wc -l <"$d/packages.tsv") - 1)) packages)"
tar xOf "$d/rootfs.tar" etc/fstab | grep -qx 'UUID=5f3a7c2e-6b1d-4e8a-9c47-2d0b8e1f6a35 / ext4 defaults 0 1' \
    || fail "fstab does not mount the recipe's root_uuid"
[ "$(tar xOf "$d/rootfs.tar" etc/hostname)" = trillian-test ] || fail "hostname"
tar xOf "$d/rootfs.tar" etc/shadow | grep -q '^root:\$6\$' || fail "root password not set"
grep -q ' etc/systemd/system/serial-getty@.service.d/autologin.conf$' "$TMP/list.txt" || fail "no autologin drop-in"
grep -q ' etc/systemd/system/getty.target.wants/serial-getty@ttyS0.service -> ' "$TMP/list.txt" \
    || fail "serial getty not enabled"
grep -q ' etc/motd$' "$TMP/list.txt" && tar xOf "$d/rootfs.tar" etc/motd | grep -q Trillian \
    || fail "overlays/common not applied (motd)"
! grep -Eq ' (etc/resolv.conf|var/cache/apt/archives/.*\.deb)$' "$TMP/list.txt" \
    || fail "host resolv.conf or .deb cache left in the root"
[ ! -s "$d/cmdline-extra" ] || fail "native cmdline-extra is not empty"
ok "fstab by UUID, hostname, root password, serial getty, overlays; caches removed"

# ---- wrong keyring ---------------------------------------------------------
: >"$TMP/empty.gpg"
trl build "$recipe" --cache "$cache" -o "$TMP/badkey" --set "userland.keyring=$TMP/empty.gpg"
expect_rc 1
expect_out "userland.keyring"
expect_out "is not signed by a key in $TMP/empty.gpg"
[ ! -e "$TMP/badkey/userland/rootfs.tar" ] || fail "a failed stage left rootfs.tar"
ok "a wrong keyring fails with exit 1 naming userland.keyring"

# ---- foreign ---------------------------------------------------------------
trl build "$recipe" --cache "$cache" -o "$TMP/foreign" --set userland.foreign=true
expect_rc 0
d=$TMP/foreign/userland
tar tvf "$d/rootfs.tar" --numeric-owner >"$TMP/flist.txt" || fail "foreign rootfs.tar does not list"
grep -Eq ' debootstrap/debootstrap$' "$TMP/flist.txt" || fail "no /debootstrap/debootstrap"
grep -Eq '^-rwxr-xr-x 0/0 .* (usr/)?sbin/trillian-firstboot$' "$TMP/flist.txt" \
    || fail "first-boot init not installed executable"
grep -Eq '^d[rwx-]{9} 0/0 .* proc/$' "$TMP/flist.txt" || fail "proc/ is not a directory"
[ "$(cat "$d/cmdline-extra")" = "init=/sbin/trillian-firstboot" ] || fail "cmdline-extra: $(cat "$d/cmdline-extra")"
tar xOf "$d/rootfs.tar" var/lib/trillian-firstboot/config | grep -qx "HOST_NAME='trillian-test'" \
    || fail "first-boot config lacks the host name"
grep -q ' var/lib/trillian-firstboot/overlay/etc/fstab$' "$TMP/flist.txt" || fail "first-boot overlay lacks fstab"
grep -Eq '^base-files	' "$d/packages.tsv" || fail "foreign packages.tsv lacks base-files"
grep -q '"foreign": true' "$d/stage-manifest.json" || fail "manifest does not say foreign"
# debootstrap --foreign leaves sources.list empty: the stage writes the line
[ "$(tar xOf "$d/rootfs.tar" etc/apt/sources.list)" = "deb http://deb.debian.org/debian bookworm main" ] ||
    fail "foreign sources.list: $(tar xOf "$d/rootfs.tar" etc/apt/sources.list)"
ok "foreign: /debootstrap, executable /sbin/trillian-firstboot, init= in cmdline-extra, packages from the .debs, sources.list"

# ---- foreign without root ----------------------------------------------------
# The first stage then runs under fakeroot and the owners come from its
# records: the archive must be the same bytes as the one built as root.
if command -v setpriv >/dev/null 2>&1 && command -v fakeroot >/dev/null 2>&1; then
    nr=$TMP/nonroot
    mkdir -p "$nr/cache/downloads"
    chown -R 65534:65534 "$nr"
    [ -L "$cache/downloads/debootstrap" ] || chown -R 65534:65534 "$cache/downloads/debootstrap"
    ln -s "$(readlink -f "$cache/downloads/debootstrap")" "$nr/cache/downloads/debootstrap"
    chmod 755 "$TMP"
    setpriv --reuid=65534 --regid=65534 --clear-groups env HOME="$nr" \
        "$TRILLIAN" build "$recipe" --cache "$nr/cache" -o "$nr/out" --set userland.foreign=true \
        >"$TMP/out.txt" 2>&1
    rc=$?
    expect_rc 0
    a=$(sha256sum <"$d/rootfs.tar") b=$(sha256sum <"$nr/out/userland/rootfs.tar")
    [ "$a" = "$b" ] || fail "foreign rootfs.tar differs between root and fakeroot builds"
    ok "foreign without root (fakeroot) gives the same rootfs.tar as with root"
else
    echo "not checked: foreign without root (needs setpriv and fakeroot)"
fi
