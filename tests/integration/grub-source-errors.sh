# packages kind grub at run time, without building GRUB (amd64: x86_64-efi
# with the host's gcc, no toolchain stage), on a tarball that is no GRUB
# source:
#  - `patches` are applied to the unpacked tree (pkg_build's patch applier,
#    before the version is read): the stage log says so, and the stage then
#    fails naming the tarball as not a GRUB source; nothing is cached
#  - a patch that does not apply fails the stage at its FILE:LINE, naming
#    the patch and its first rejected file and hunk
. "$TOP/tests/lib.sh"
need make gcc bison flex python3 autoreconf autopoint tar patch
C=$TMP/cache
mkdir -p "$TMP/t/notgrub-1.0"
echo hello >"$TMP/t/notgrub-1.0/README"
tar -C "$TMP/t" -czf "$TMP/notgrub-1.0.tar.gz" notgrub-1.0
printf -- '--- a/README\n+++ b/README\n@@ -1 +1 @@\n-hello\n+hello world\n' >"$TMP/good.patch"
printf -- '--- a/README\n+++ b/README\n@@ -1 +1 @@\n-goodbye\n+farewell\n' >"$TMP/bad.patch"
recipe() { # PATCHES
    cat >"$TMP/r.cfg" <<CFG
name = "grub-source-errors";
arch = "amd64";
packages = ( { kind = "grub"; source = "$TMP/notgrub-1.0.tar.gz";
               patches = [$1]; } );
CFG
}

recipe "\"$TMP/good.patch\""
trl build "$TMP/r.cfg" --cache "$C" -o "$TMP/o1"
expect_rc 1
expect_out "packages.grub.source: notgrub-1.0.tar.gz has no configure.ac with AC_INIT([GRUB],[VERSION]): not a GRUB source"
grep -q "grub: 1 patch applied" "$TMP/o1/logs/grub.log" || fail "the patch was not applied (see $TMP/o1/logs/grub.log)"
trl build "$TMP/r.cfg" --cache "$C" -o "$TMP/o1"
expect_rc 1
expect_no_out "grub: cached"
ok "patches applied to the unpacked tree; not a GRUB source: fails, nothing cached"

recipe "\"$TMP/good.patch\", \"$TMP/bad.patch\""
trl build "$TMP/r.cfg" --cache "$C" -o "$TMP/o2"
expect_rc 1
expect_out "$TMP/r.cfg:4: packages.grub.patches: bad.patch does not apply: first rejected: README: Hunk #1 FAILED"
ok "a patch that does not apply fails at its line, naming it and the rejected hunk"
echo PASS
