# The `emulators` kinds build from the project's mirror (../shared/mirror
# beside the checkout, as in CI): qemu-ia64 (recipes/include/ia64-qemu.cfg:
# qemu-system-ia64 and its EFI firmware, ~13 minutes cold on 2 cores) and
# ski (recipes/include/ia64-ski-sim.cfg: bski, ski-bootloader, ski-efi,
# ~3 minutes), with the default recipe's toolchain (same cache key). The
# outputs run: qemu-system-ia64 lists the itanium2-vpc machine, bski starts;
# the boot loaders are IA-64 ELF. Then the refusals: a wrong sha256 offline,
# and `git` without `commit`. The shared test cache makes later runs hits.
. "$TOP/tests/lib.sh"
need_mirror
need ia64-linux-gnu-as ia64-linux-gnu-readelf make gcc g++ ninja pkg-config flex bison gperf \
    autoconf automake libtoolize
[ -r /usr/src/gcc-12/gcc-12.2.0-dfsg.tar.xz ] || skip "gcc-12-source is not installed"
C=$TRILLIAN_TEST_CACHE O=$TMP/out
mkdir -p "$TMP/r"
ln -s "$TOP/recipes/include" "$TMP/r/include"
for e in qemu ski-sim; do
    {
        echo "name = \"emulators-$e\";"
        echo '@include "include/ia64-toolchain.cfg"'
        echo "@include \"include/ia64-$e.cfg\""
    } >"$TMP/r/$e.cfg"
done

t0=$SECONDS
trl build "$TMP/r/qemu.cfg" --cache "$C" -o "$O/qemu" -j2
grep -v '^  |' "$TMP/out.txt" | tail -n 8
expect_rc 0
Q=$O/qemu/qemu-ia64
"$Q/bin/qemu-system-ia64" -machine help >"$TMP/machines" 2>&1 ||
    fail "qemu-system-ia64 does not run: $(cat "$TMP/machines")"
grep -q '^itanium2-vpc' "$TMP/machines" || fail "no itanium2-vpc machine: $(cat "$TMP/machines")"
[ -s "$Q/share/qemu/ia64-firmware.bin" ] || fail "no share/qemu/ia64-firmware.bin"
grep -q '"from": "tarball"' "$Q/stage-manifest.json" || fail "manifest: $(cat "$Q/stage-manifest.json")"
ok "qemu-ia64 built (or found cached) in $((SECONDS - t0)) s: $(grep -c . "$TMP/machines") lines of -machine help, firmware $(wc -c <"$Q/share/qemu/ia64-firmware.bin") bytes"

t0=$SECONDS
trl build "$TMP/r/ski-sim.cfg" --cache "$C" -o "$O/ski" -j2
grep -v '^  |' "$TMP/out.txt" | tail -n 8
expect_rc 0
S=$O/ski/ski
# bski -help lists its options (the boot checks use -noconsole)
"$S/bin/bski" -help </dev/null >"$TMP/bski" 2>&1
grep -q -- '-noconsole' "$TMP/bski" || fail "bski does not start: $(cat "$TMP/bski")"
for l in ski-bootloader ski-efi; do
    ia64-linux-gnu-readelf -h "$S/share/ski/$l" | grep -q 'Intel IA-64' ||
        fail "share/ski/$l is not an IA-64 ELF"
done
ok "ski built (or found cached) in $((SECONDS - t0)) s; bski starts, boot loaders are IA-64"

# A tarball whose sha256 no mirror has, offline: the stage fails naming the
# setting and what to do, without trying the clone (the toolchain is cached,
# so this is quick).
trl build "$TMP/r/ski-sim.cfg" --cache "$C" -o "$O/bad" -j2 --offline \
    --set emulators.ski.sha256=0000000000000000000000000000000000000000000000000000000000000000
expect_rc 1
expect_out "emulators.ski.git: the tarball (sha256 0000000000000000000000000000000000000000000000000000000000000000) is in no mirror and --offline forbids cloning https://github.com/trofi/ski.git"
ok "a sha256 no mirror has, offline: the build fails naming the tarball and what to do"

# a commit that is not a full id: a recipe error at plan time
trl plan "$TMP/r/ski-sim.cfg" --cache "$C" --set emulators.ski.commit=dfc2902
expect_rc 2
expect_out "emulators.ski.commit: 'dfc2902' is not a full commit id"
ok "a commit that is not 40 hex digits: recipe error"
