# The first-boot init of a foreign userland, without a VM: builds the
# fixture recipe with userland.foreign = true, unpacks rootfs.tar and runs
# /sbin/trillian-firstboot as PID 1 of new mount, UTS and PID namespaces
# chrooted into it (what the kernel does with init=/sbin/trillian-firstboot,
# minus the kernel), on a read-only root. Checks that debootstrap's second stage ran, the build's
# configuration was applied and the script replaced itself by a stub.
# Needs root, unshare, debootstrap and deb.debian.org.
. "$TOP/tests/lib.sh"
need debootstrap tar unshare chroot
[ "$(id -u)" = 0 ] || skip "debootstrap and chroot need root"
getent hosts deb.debian.org >/dev/null 2>&1 || skip "deb.debian.org does not resolve (no network)"

cache=$TMP/cache
if [ -n "${TRILLIAN_TEST_CACHE:-}" ]; then
    mkdir -p "$TRILLIAN_TEST_CACHE/downloads/debootstrap" "$cache/downloads"
    ln -s "$TRILLIAN_TEST_CACHE/downloads/debootstrap" "$cache/downloads/debootstrap"
fi
trl build "$TOP/tests/fixtures/userland-minbase.cfg" --cache "$cache" -o "$TMP/out" \
    --set userland.foreign=true
expect_rc 0
r=$TMP/root
mkdir "$r"
tar xpf "$TMP/out/userland/rootfs.tar" -C "$r" --numeric-owner || fail "cannot unpack rootfs.tar"
[ -x "$r/sbin/trillian-firstboot" ] || fail "no executable /sbin/trillian-firstboot"
# The script logs to /dev/console; make that a file we can read.
rm -f "$r/dev/console" && : >"$r/dev/console"
# The kernel mounts the root read-only (`ro`): so does this, with a
# read-only bind mount that the script must remount read-write.
unshare --mount --uts --pid --fork sh -c 'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" &&
    exec chroot "$1" /sbin/trillian-firstboot' sh "$r" </dev/null >"$TMP/boot.txt" 2>&1
echo "first boot exit status $? (no /sbin/init in minbase: it ends in a shell)"
grep -q 'trillian-firstboot: second stage done' "$TMP/boot.txt" || { cat "$TMP/boot.txt"; fail "second stage did not finish"; }
grep -q 'trillian-firstboot: done; starting /sbin/init' "$TMP/boot.txt" || { cat "$TMP/boot.txt"; fail "did not finish"; }
! grep -q 'FAILED' "$TMP/boot.txt" || { cat "$TMP/boot.txt"; fail "a step failed"; }
ok "first boot ran $(grep -c 'trillian-firstboot: step' "$TMP/boot.txt") steps without a failure"
[ ! -e "$r/debootstrap" ] || fail "/debootstrap is still there"
n=$(grep -c '^Status: install ok installed' "$r/var/lib/dpkg/status")
[ "$n" -ge 50 ] || fail "only $n packages configured"
grep -q '^base-files	' "$TMP/out/userland/packages.tsv" || fail "packages.tsv lacks base-files"
ok "debootstrap --second-stage configured $n packages"
[ "$(cat "$r/etc/hostname")" = trillian-test ] || fail "hostname not applied"
grep -qx 'UUID=5f3a7c2e-6b1d-4e8a-9c47-2d0b8e1f6a35 / ext4 defaults 0 1' "$r/etc/fstab" || fail "fstab not applied"
grep -q '^root:\$6\$' "$r/etc/shadow" || fail "root password not set"
[ -f "$r/etc/systemd/system/serial-getty@.service.d/autologin.conf" ] || fail "autologin drop-in not applied"
ok "hostname, fstab, root password and overlays applied"
[ ! -e "$r/var/lib/trillian-firstboot" ] || fail "state directory not removed"
grep -q 'exec /sbin/init' "$r/sbin/trillian-firstboot" && [ "$(wc -l <"$r/sbin/trillian-firstboot")" -le 5 ] \
    || fail "/sbin/trillian-firstboot was not replaced by the stub"
! ls "$r"/var/cache/apt/archives/*.deb >/dev/null 2>&1 || fail "first-stage .debs left in the image"
ok "state removed, stub left for the next boots"
