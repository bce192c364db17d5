# Slow tier: the second stage failing in the guest. recipes/ia64-debian.cfg
# with one package more in its archive: trbroken, Priority required (so
# debootstrap takes it), whose postinst exits 1. The host's first stage
# succeeds; on the first boot in qemu-system-ia64 the second stage fails
# configuring it, trillian-firstboot shows the end of
# /debootstrap/debootstrap.log and says FAILED, and the gating check fails
# on that (its fail_on) with exit 3 and the failing package's lines in the
# transcript; the failed check is not cached. The toolchain, glibc, kernel,
# GRUB and packages come from ia64-debian's cache (the same keys); the
# archive, the root and the disk are rebuilt (a minute or two), and the boot
# fails a few minutes into the second stage.
. "$TOP/tests/lib.sh"
[ -r /usr/src/linux-source-6.1.tar.xz ] || skip "linux-source-6.1 is not installed"
need debootstrap dpkg-deb
need_mirror
t0=$SECONDS

# trbroken's .deb, made by a command stage of the recipe
printf '#!/bin/sh\necho "trbroken: this postinst fails on purpose" >&2\nexit 1\n' >"$TMP/trbroken.postinst"
deb_maker "$TMP/mkbroken.sh" trbroken "a package whose postinst fails, for a test" "" "$TMP/trbroken.postinst"

# the recipe: ia64-debian's, renamed, with the command stage; its archive
# (include/ia64-archive.cfg, found here before the data directory's) lists
# trbroken after the shipped packages
mkdir -p "$TMP/r/include"
# the recipe's relative paths (patches, fragments, series) as from recipes/
ln -s "$TOP/firmware" "$TMP/firmware"
ln -s "$TOP/kernel-config" "$TMP/kernel-config"
ln -s "$TOP/recipes/packages" "$TMP/r/packages"
sed 's/^name = "ia64-debian";/name = "ia64-debian-broken";/' "$TOP/recipes/ia64-debian.cfg" >"$TMP/r/ia64-debian-broken.cfg"
cat >>"$TMP/r/ia64-debian-broken.cfg" <<CFG
stages = (
  { name = "trbroken"; kind = "command"; argv = ["$TMP/mkbroken.sh", "\${out}/debs"];
    inputs = ["$TMP/mkbroken.sh", "$TMP/trbroken.postinst"]; outputs = ["debs"]; }
);
CFG
sed 's/"hostname"\];/"hostname", "trbroken"];/' "$TOP/recipes/include/ia64-archive.cfg" >"$TMP/r/include/ia64-archive.cfg"
grep -q '"trbroken"\]' "$TMP/r/include/ia64-archive.cfg" || fail "the archive's stage list did not take trbroken"

trl check "$TMP/r/ia64-debian-broken.cfg" --cache "$TRILLIAN_TEST_CACHE" -o "$TMP/out" -j2
grep -v '^  |' "$TMP/out.txt" | tail -n 14
expect_rc 3
expect_out "boot-qemu FAIL"
O=$TMP/out
zcat -f "$O/archive/dists/sid-trillian/main/binary-ia64/Packages" 2>/dev/null | grep -qx 'Package: trbroken' ||
    fail "trbroken is not in the archive's Packages"
tar -tf "$O/userland/rootfs.tar" | grep -q 'trbroken_1\.0_all\.deb$' || fail "debootstrap's first stage did not take trbroken"
L=$TMP/console.txt
clean_console "$O/boot-qemu/boot-qemu.log" >"$L"
grep -q '^trillian-firstboot: step 2: debootstrap --second-stage' "$L" || fail "the second stage did not start"
! grep -q '^I: Base system installed successfully' "$L" || fail "the second stage finished despite trbroken"
# debootstrap.log's lines for the failing package, as trillian-firstboot
# shows them (then the log's end)
show() { sed -n '/trillian-firstboot: step 2/,$p' "$L" | tail -n 60 >&2; }
grep -q 'trbroken: this postinst fails on purpose' "$L" || { show; fail "the postinst's own line is not in the transcript"; }
grep -q 'dpkg: error processing package trbroken (--configure)' "$L" || {
    show; fail "dpkg's error for trbroken (from debootstrap.log) is not in the transcript"; }
grep -q '^trillian-firstboot: FAILED: debootstrap --second-stage (log: /debootstrap/debootstrap.log)' "$L" ||
    fail "trillian-firstboot did not say the second stage failed"
grep -q '<failure' "$O/boot-qemu/boot-qemu.junit.xml" || fail "the JUnit report has no failure"
grep -q 'trillian-firstboot: FAILED' "$O/boot-qemu/boot-qemu.junit.xml" ||
    fail "the JUnit failure does not name the fail_on match"
ok "the second stage failed on trbroken's postinst: the check failed (exit 3) with dpkg's lines from debootstrap.log in the transcript, in $((SECONDS - t0)) s"

# a failed check is not cached: the plan builds it again
trl plan "$TMP/r/ia64-debian-broken.cfg" --cache "$TRILLIAN_TEST_CACHE"
expect_rc 0
grep -Eq '^boot-qemu +bootcheck/boot +[0-9a-f]+ build' "$TMP/out.txt" ||
    fail "the failed check is cached: $(grep '^boot-qemu' "$TMP/out.txt")"
grep -Eq '^userland +userland/debootstrap +[0-9a-f]+ cached' "$TMP/out.txt" ||
    fail "the root that built is not cached: $(grep '^userland ' "$TMP/out.txt")"
ok "the failed check is not cached (the plan runs it again); the root is"
