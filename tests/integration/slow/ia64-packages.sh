# Slow tier: recipes/ia64-packages.cfg, Trillian's first ia64 Debian
# packages, built and booted by its gating check in qemu-system-ia64: the
# default's stages (gcc 16.2, glibc 2.43, gcc stage 2, busybox, Linux 7.2.8,
# GRUB 2.14, qemu-system-ia64: the same cache entries as slow/ia64-default-boot)
# plus zlib 1.3.1 and GNU hello 2.12.3 from Debian's orig tarballs, built in
# target mode with the stage-2 gcc against glibc 2.43's sysroot, as zlib1g,
# zlib1g-dev and hello, their apt archive (sid-trillian, ia64), and zlib1g and
# hello unpacked into the root (userland.debs). In the guest, hello greets,
# libz.so.1 is at /usr/lib/ia64-linux-gnu and /var/lib/trillian/packages
# names both. Then the .debs: IA-64 ELF, Depends from shlibs (libc6.1 by the
# recipe's firmware/glibc/libc6.1-ia64.shlibs, zlib1g-dev on zlib1g), and the
# archive's Packages index lists the three. After the default's stages, about
# 3 minutes (zlib ~30 s, hello ~40 s, the boot ~1 min); cold as
# slow/ia64-default-boot plus that.
. "$TOP/tests/lib.sh"
[ -r /usr/src/linux-source-6.1.tar.xz ] || skip "linux-source-6.1 is not installed"
need dpkg-deb ia64-linux-gnu-readelf xz
boot_shipped_recipe ia64-packages 7.2.8
L=$O/boot-qemu/boot-qemu.log
clean_console "$L" >"$TMP/console"
grep -qx 'Hello, world!' "$TMP/console" || fail "hello did not greet in the guest"
grep -qx 'zlib-present' "$TMP/console" || fail "no /usr/lib/ia64-linux-gnu/libz.so.1 in the guest"
ok "in the guest: hello greets, zlib1g's libz.so.1 is there, /var/lib/trillian/packages names both"

# `check` publishes what the check needs; `build` (all cached now) the rest
trl build "$TOP/recipes/ia64-packages.cfg" --cache "$TRILLIAN_TEST_CACHE" -o "$O" -j2
expect_rc 0
D=$O/zlib/debs H=$O/hello/debs
Z=$D/zlib1g_1.3.1-0trillian1_ia64.deb ZD=$D/zlib1g-dev_1.3.1-0trillian1_ia64.deb
HB=$H/hello_2.12.3-0trillian1_ia64.deb
for f in "$Z" "$ZD" "$HB"; do [ -f "$f" ] || fail "no $f"; done
[ "$(dpkg-deb --field "$HB" Depends)" = "libc6.1 (>= 2.43)" ] || fail "hello's Depends: $(dpkg-deb --field "$HB" Depends)"
[ "$(dpkg-deb --field "$Z" Depends)" = "libc6.1 (>= 2.43)" ] || fail "zlib1g's Depends: $(dpkg-deb --field "$Z" Depends)"
dpkg-deb --field "$ZD" Depends | grep -q '^zlib1g (= 1:1.3.1-0trillian1)' || fail "zlib1g-dev's Depends"
[ "$(dpkg-deb --field "$Z" Version)" = 1:1.3.1-0trillian1 ] || fail "zlib1g's Version"
grep -qx 'libz 1 zlib1g (>= 1:1.3.1-0trillian1)' "$D/shlibs" || fail "zlib's shlibs: $(cat "$D/shlibs")"
dpkg-deb -x "$HB" "$TMP/h"
ia64-linux-gnu-readelf -h "$TMP/h/usr/bin/hello" | grep -q 'Machine: *Intel IA-64' || fail "hello is not IA-64"
ia64-linux-gnu-readelf -l "$TMP/h/usr/bin/hello" | grep -q 'interpreter: /lib/ld-linux-ia64.so.2' || fail "hello's interpreter"
dpkg-deb -c "$Z" >"$TMP/zlib1g.list"
grep -q ' \./usr/lib/ia64-linux-gnu/libz\.so\.1\.3\.1$' "$TMP/zlib1g.list" || fail "zlib1g lacks libz.so.1.3.1"
ok "the .debs: IA-64 hello on ld-linux-ia64.so.2, Depends libc6.1 (>= 2.43) by shlibs, zlib1g-dev on zlib1g (= 1:1.3.1-0trillian1)"

P=$O/archive/dists/sid-trillian/main/binary-ia64/Packages
[ -f "$P" ] || fail "no $P"
[ "$(grep -c '^Package: ' "$P")" -ge 3 ] || fail "the archive's Packages lists $(grep -c '^Package: ' "$P") packages"
for p in zlib1g zlib1g-dev hello; do grep -qx "Package: $p" "$P" || fail "Packages lacks $p"; done
grep -q '^Architectures: ia64$' "$O/archive/dists/sid-trillian/Release" || fail "Release's Architectures"
ok "the apt archive (sid-trillian, ia64) lists zlib1g, zlib1g-dev and hello"
