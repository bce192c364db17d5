# Overlays are their own cached step (issue 20): adding an overlay file
# re-runs the userland stage (the configuration, on a copy of the base's
# root) but not userland-base (debootstrap, or the minimal root's assembly),
# `trillian plan` says so beforehand, and the file lands in rootfs.tar with
# the base's owners and modes kept. The debootstrap part uses
# tests/fixtures/userland-bookworm.cfg natively (root, network): the
# reference-amd64 recipe's userland with a root password, whose base
# reference-amd64.sh (earlier in the order) has built, so the cold fast tier
# debootstraps it once; the minimal part reference-amd64-minimal's stages up
# to the userland. Both share the
# test cache, so only the configuration step runs after the first time.
. "$TOP/tests/lib.sh"
need tar
C=${TRILLIAN_TEST_CACHE:-$TMP/cache}
stamp="$(date +%s.%N) $$" # the overlay differs on every run: userland really runs

# RECIPE LABEL EXTRA-SET...: build with an overlay, add a file, plan, rebuild.
check_overlay_step() {
    local recipe=$1 label=$2
    shift 2
    local ov=$TMP/ov-$label O=$TMP/out-$label
    mkdir -p "$ov/etc"
    echo "first $stamp" >"$ov/etc/trillian-first"
    trl build "$recipe" --cache "$C" -o "$O" -j2 "$@" --set "userland.overlays=$ov"
    expect_rc 0
    tar -tf "$O/userland/rootfs.tar" | grep -qx etc/trillian-first || fail "$label: overlay file not in the root"
    cp "$O/userland-base/rootfs.tar" "$TMP/base-$label.tar"

    echo "added $stamp" >"$ov/etc/trillian-added"
    trl plan "$recipe" --cache "$C" "$@" --set "userland.overlays=$ov"
    expect_rc 0
    grep -Eq '^userland-base +[^ ]+ +[0-9a-f]+ +cached' "$TMP/out.txt" \
        || { cat "$TMP/out.txt"; fail "$label: plan does not show userland-base cached"; }
    grep -Eq '^userland +[^ ]+ +[0-9a-f]+ +build' "$TMP/out.txt" \
        || { cat "$TMP/out.txt"; fail "$label: plan does not rebuild userland"; }
    ok "$label: plan after adding an overlay file: userland-base cached, userland to build"

    trl build "$recipe" --cache "$C" -o "$O" -j2 "$@" --set "userland.overlays=$ov"
    expect_rc 0
    grep -Eq '^\[[0-9:]*\] userland: done' "$TMP/out.txt" || { cat "$TMP/out.txt"; fail "$label: userland did not run"; }
    ! grep -Eq '^\[[0-9:]*\] userland-base: done' "$TMP/out.txt" || fail "$label: userland-base ran again"
    cmp -s "$TMP/base-$label.tar" "$O/userland-base/rootfs.tar" || fail "$label: the base's rootfs.tar changed"
    [ "$(tar -xOf "$O/userland/rootfs.tar" etc/trillian-added)" = "added $stamp" ] \
        || fail "$label: the added overlay file is not in the root"
    tar -tf "$O/userland/rootfs.tar" | grep -qx etc/trillian-first || fail "$label: the first overlay file went"
    ok "$label: the rebuild ran userland only, and the added file is in rootfs.tar"

    # every entry of the base is still there, with its owner and mode
    tar -tvf "$O/userland-base/rootfs.tar" --numeric-owner | awk '{print $1, $2, $6}' | sort >"$TMP/b.txt"
    tar -tvf "$O/userland/rootfs.tar" --numeric-owner | awk '{print $1, $2, $6}' | sort >"$TMP/u.txt"
    comm -23 "$TMP/b.txt" "$TMP/u.txt" >"$TMP/gone.txt"
    # the configuration replaces these (owners 0/0 kept, content and maybe mode new)
    grep -Ev ' (etc/(hostname|hosts|fstab|shadow|passwd|group|inittab|trillian-build|motd|issue)|etc/systemd/.*)$' \
        "$TMP/gone.txt" >"$TMP/lost.txt" || true
    [ ! -s "$TMP/lost.txt" ] || { head "$TMP/lost.txt"; fail "$label: base entries lost or changed owner/mode"; }
    ok "$label: the base's entries keep their owners and modes"
}

# ---- debootstrap --------------------------------------------------------------
if [ "$(id -u)" = 0 ] && command -v debootstrap >/dev/null && getent hosts deb.debian.org >/dev/null 2>&1; then
    check_overlay_step "$TOP/tests/fixtures/userland-bookworm.cfg" debootstrap \
        --set userland.root_password=trillian --set userland.autologin=false
    O=$TMP/out-debootstrap
    tar -tvf "$O/userland/rootfs.tar" --numeric-owner | grep -Eq '^-rw-r----- 0/42 .* etc/shadow$' \
        || fail "etc/shadow is not root:shadow 0640"
    tar -xOf "$O/userland/rootfs.tar" etc/shadow | grep -q '^root:\$6\$' || fail "root password not set"
    tar -tvf "$O/userland/rootfs.tar" | grep -Eq '^c.* dev/console$' || fail "no dev/console"
    [ ! -s "$O/userland/cmdline-extra" ] || fail "native cmdline-extra is not empty"
    ok "debootstrap: etc/shadow 0/42 with the password, device nodes, empty cmdline-extra"
else
    echo "not checked: debootstrap (needs root, debootstrap and deb.debian.org)"
fi

# ---- minimal ------------------------------------------------------------------
if command -v x86_64-linux-gnu-gcc >/dev/null && command -v dpkg-source >/dev/null &&
    [ -r /usr/share/keyrings/debian-archive-keyring.gpg ] &&
    apt-cache show --no-all-versions linux-image-cloud-amd64 >/dev/null 2>&1; then
    # reference-amd64-minimal up to its userland (same name: the same keys)
    # (its busybox fragment by an absolute path: the copy is elsewhere)
    sed -e '/^initramfs = /d' -e '/^bootcheck = (/,$d' \
        -e "s|\"\.\./firmware/|\"$TOP/firmware/|" "$TOP/recipes/reference-amd64-minimal.cfg" \
        >"$TMP/minimal.cfg"
    check_overlay_step "$TMP/minimal.cfg" minimal
    O=$TMP/out-minimal
    tar -xOf "$O/userland/rootfs.tar" etc/hostname | grep -qx trillian-minimal || fail "minimal: hostname"
    tar -tvf "$O/userland/rootfs.tar" --numeric-owner | grep -Eq '^-rw------- 0/0 .* etc/shadow$' \
        || fail "minimal: etc/shadow is not 0600"
    tar -tvf "$O/userland/rootfs.tar" | grep -Eq '^crw-------.* dev/console$' || fail "minimal: no dev/console"
    ok "minimal: hostname, etc/shadow 0600, dev/console"
else
    echo "not checked: minimal (needs x86_64-linux-gnu-gcc, dpkg-source, Debian's keyring, apt-cache)"
fi
