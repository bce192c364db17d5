# Slow tier: recipes/ia64-packages.cfg, Trillian's first ia64 Debian
# packages, built and booted by its gating check in qemu-system-ia64: the
# default's stages (gcc 16.2, glibc 2.43, gcc stage 2, busybox, Linux 7.2.8,
# GRUB 2.14, qemu-system-ia64: the same cache entries as slow/ia64-default-boot)
# plus glibc 2.43 and libgcc_s packaged from the glibc and gcc stages'
# outputs (libc6.1, libc-bin, libc-dev-bin, libc-devtools, libc6.1-dev,
# libgcc-s1), zlib 1.3.1 and GNU hello 2.12.3 from Debian's orig tarballs,
# built in target mode with the stage-2 gcc against glibc 2.43's sysroot, as
# zlib1g, zlib1g-dev and hello, libmd 1.1.0 and dpkg 1.23.3 (against
# libmd-dev and zlib1g-dev) as libmd0, libmd-dev, dpkg and libdpkg-dev,
# Dropbear 2025.89 (against zlib1g-dev) as dropbear-bin, libstdc++6 from gcc
# stage 2 with C++ (the gxx stage) and gperf 3.3 (C++) built by it, their apt
# archive (sid-trillian, ia64), and libc6.1, libc-bin, libgcc-s1, libstdc++6,
# zlib1g, hello, libmd0, dpkg, dropbear-bin and gperf unpacked into the root (userland.debs; the C
# library from the packages alone) with dpkg's database (each unpacked). In
# the guest, hello greets, libc.so.6.1 says 2.43, libc-bin's getconf and
# ldconfig run, ldconfig finds libz.so.1 at /usr/lib/ia64-linux-gnu,
# /var/lib/trillian/packages names the seven, dpkg --configure -a runs the
# deferred scripts (libc-bin's ldconfig trigger too), dpkg -s libc6.1 says
# installed, 2.43-0trillian1, dropbearkey prints an Ed25519 public key, and
# gperf --version runs; mawk, dash, debianutils (run-parts, ischroot, the
# which alternative, update-shells) and base-passwd (update-passwd) run and
# their postinsts ran; sed, grep, gzip, tar, coreutils (ls, sort, stat),
# findutils (find, xargs), diffutils (diff, cmp) and bash (on ncurses'
# libtinfo6) run, util-linux's mount, findmnt, blkid, lsblk, mkswap, swapon,
# dmesg, agetty and bsdutils' logger, renice and script run, e2fsprogs'
# mkfs.ext4, e2fsck, tune2fs, dumpe2fs, debugfs, resize2fs, e2label,
# badblocks, chattr, lsattr, filefrag and logsave run, kmod's depmod,
# modinfo, modprobe, lsmod and rmmod run over the kernel's modules, iproute2's
# ip (link, addr, route, netns on lo and a dummy link), ss, nstat and bridge
# run, dhcpcd runs with privilege separation as the dhcpcd user its postinst
# made, base-files' debian_version and
# os-release (the root's) are there. Then the .debs: the split,
# libc6.1's shlibs (libc 6.1 libc6.1 (>= 2.43)) and the Depends resolved
# against it (zlib1g, hello, libgcc-s1, libc-bin), IA-64 ELF, stripped, the
# loader 0755, the root's files the packages' own, lintian with the
# tolerated tags, and the archive's Packages index. After the default's
# stages, about 5 minutes (the glibc packages ~20 s, zlib ~15-30 s, hello
# ~25-40 s, libmd ~12 s, dpkg ~70 s, dropbear ~60 s, mawk ~40 s, dash ~30 s,
# debianutils and base-passwd ~10 s each, the boot ~1 min,
# lintian ~1 min); cold
# as slow/ia64-default-boot plus that.
. "$TOP/tests/lib.sh"
[ -r /usr/src/linux-source-6.1.tar.xz ] || skip "linux-source-6.1 is not installed"
need dpkg-deb ia64-linux-gnu-readelf xz
boot_shipped_recipe ia64-packages 7.2.8
L=$O/boot-qemu/boot-qemu.log
clean_console "$L" >"$TMP/console"
grep -qx 'Hello, world!' "$TMP/console" || fail "hello did not greet in the guest"
grep -qx 'zlib-present' "$TMP/console" || fail "no /usr/lib/ia64-linux-gnu/libz.so.1 in the guest"
grep -q '^GNU C Library (GNU libc) .*version 2\.43\.' "$TMP/console" || fail "libc.so.6.1 did not say 2.43 in the guest"
grep -qx 'glibc 2.43' "$TMP/console" || fail "getconf GNU_LIBC_VERSION did not say glibc 2.43"
grep -qx 'zlib-in-ld.so.cache' "$TMP/console" || fail "ldconfig did not find libz.so.1 in the guest"
grep -qx 'dpkg-configured' "$TMP/console" || fail "dpkg --configure -a did not succeed in the guest"
grep -qx 'Setting up libc-bin (2.43-0trillian1) ...' "$TMP/console" || fail "dpkg did not configure libc-bin"
grep -qx 'Status: install ok installed' "$TMP/console" && grep -qx 'Version: 2.43-0trillian1' "$TMP/console" ||
    fail "dpkg -s libc6.1 did not say installed, 2.43-0trillian1"
grep -qE '^ssh-ed25519 AAAA[A-Za-z0-9+/]+=* [^ ]+$' "$TMP/console" || fail "dropbearkey printed no Ed25519 public key in the guest"
grep -qx 'Setting up libstdc++6:ia64 (16.2.0-0trillian1) ...' "$TMP/console" || fail "dpkg did not configure libstdc++6"
grep -qx 'Processing triggers for libc-bin (2.43-0trillian1) ...' "$TMP/console" ||
    fail "dpkg ran no ldconfig trigger for libc-bin"
grep -qx 'GNU gperf 3.3' "$TMP/console" || fail "gperf (C++, on libstdc++6) did not run in the guest"
ok "in the guest: hello greets, libc6.1's libc.so.6.1 says 2.43, libc-bin's getconf and ldconfig run (libz.so.1 in ld.so.cache), /var/lib/trillian/packages names the seven, dpkg --configure -a runs the deferred scripts and libc-bin's ldconfig trigger, dpkg -s libc6.1: installed, 2.43-0trillian1, dropbearkey makes an Ed25519 key, gperf (C++) runs on libstdc++6"
# debootstrap's base set: mawk, dash, debianutils, base-passwd
grep -qx 'b' "$TMP/console" || fail "mawk did not print the second field in the guest"
grep -qx 'update-alternatives: using /usr/bin/mawk to provide /usr/bin/awk (awk) in auto mode' "$TMP/console" &&
    grep -qx 'awk=/usr/bin/mawk /etc/alternatives/awk' "$TMP/console" || fail "mawk's postinst did not make it the awk alternative"
grep -qx '42' "$TMP/console" || fail "dash did not compute 6*7 in the guest"
grep -qx 'Debian run-parts program, version 5.24' "$TMP/console" || fail "debianutils' run-parts did not run"
grep -qx 'ischroot=1' "$TMP/console" || fail "debianutils' ischroot did not say: not in a chroot"
grep -qx 'which=/etc/alternatives/which /usr/bin/which.debianutils' "$TMP/console" ||
    fail "debianutils' postinst did not make which.debianutils the which alternative"
grep -qx '/usr/bin/dash' "$TMP/console" || fail "update-shells did not put dash (its shells.d file) in /etc/shells"
grep -qx 'update-passwd 3.6.8' "$TMP/console" || fail "base-passwd's update-passwd did not run"
grep -qx 'Adding user "bin" (2)' "$TMP/console" || fail "update-passwd --dry-run did not read the master files"
grep -qx 'subids-made' "$TMP/console" || fail "base-passwd's postinst did not make /etc/subuid and /etc/subgid"
for p in 'mawk (1.3.4.20260302-0trillian1)' 'dash (0.5.12-0trillian1)' 'debianutils (5.24~trillian1)' \
    'base-passwd (3.6.8~trillian1)'; do
    grep -qxF "Setting up $p ..." "$TMP/console" || fail "dpkg did not configure $p"
done
ok "in the guest: mawk runs and is the awk alternative, dash computes, debianutils' run-parts and ischroot run, which.debianutils is which, update-shells put dash in /etc/shells, update-passwd runs, base-passwd's postinst ran"
grep -qx 'sed (GNU sed) 4.9' "$TMP/console" && grep -qx 'heLo' "$TMP/console" || fail "GNU sed did not run in the guest"
grep -qx 'grep (GNU grep) 3.12' "$TMP/console" && grep -qx 'abc' "$TMP/console" || fail "GNU grep or its egrep did not run in the guest"
grep -qx 'gzip 1.14' "$TMP/console" && grep -qx 'hi-gzip' "$TMP/console" || fail "GNU gzip or its zcat did not run in the guest"
grep -qx 'tar (GNU tar) 1.35' "$TMP/console" && grep -qx 'copyright' "$TMP/console" || fail "GNU tar did not make and list a .tgz in the guest"
grep -qx 'update-alternatives: using /usr/sbin/rmt-tar to provide /usr/sbin/rmt (rmt) in auto mode' "$TMP/console" ||
    fail "tar's postinst did not make rmt-tar the rmt alternative"
ok "in the guest: GNU sed, grep (and egrep), gzip (and zcat) and tar (a .tgz) run, tar's postinst sets the rmt alternative"
# the compression libraries dpkg and apt link in Debian, and their programs
grep -qx 'xz (XZ Utils) 5.8.1' "$TMP/console" && grep -qx 'hi-xz' "$TMP/console" || fail "xz did not round-trip in the guest"
grep -qx 'update-alternatives: using /usr/bin/xz to provide /usr/bin/lzma (lzma) in auto mode' "$TMP/console" ||
    fail "xz-utils' postinst did not make xz the lzma alternative"
grep -q '^\*\*\* Zstandard CLI (64-bit) v1\.5\.7' "$TMP/console" && grep -qx 'hi-zstd' "$TMP/console" ||
    fail "zstd did not round-trip in the guest"
grep -qx 'hi-zx' "$TMP/console" || fail "zstd's .xz (liblzma5) was not read back by xz"
grep -qx 'libzstd1-in-ld.so.cache' "$TMP/console" || fail "no libzstd.so.1 in the guest's ld.so.cache"
grep -qx 'hi-bzip2' "$TMP/console" || fail "bzip2 and bzcat did not round-trip in the guest"
grep -qx '44bc2cf5ad770999  stdin' "$TMP/console" || fail "xxh64sum did not give XXH64(abc) in the guest"
grep -qx 'hi-lz4' "$TMP/console" || fail "lz4 did not round-trip in the guest"
grep -qx 'debs: t t' "$TMP/console" || fail "dpkg-deb did not build and read .deb files with xz and zstd members in the guest"
ok "in the guest: xz (liblzma5), zstd (also .xz through liblzma5), bzip2 (libbz2-1.0) and lz4 (liblz4-1) round-trip, libzstd.so.1 and libbz2.so.1.0 in ld.so.cache, xxh64sum gives XXH64(abc), dpkg-deb builds and reads xz and zstd .debs"
grep -qx 'forky/sid' "$TMP/console" && grep -qx 'os-release=debian/trillian /usr/lib/os-release' "$TMP/console" ||
    fail "base-files' /etc/debian_version or /etc/os-release is not in the guest"
grep -qx 'ls (GNU coreutils) 9.10' "$TMP/console" && grep -qx '9,10,100' "$TMP/console" &&
    grep -qx 'regular file 10' "$TMP/console" || fail "coreutils' ls, sort, paste or stat did not run in the guest"
grep -qx 'find (GNU findutils) 4.11.0' "$TMP/console" && grep -qx 'debian_version' "$TMP/console" ||
    fail "GNU find or xargs did not run in the guest"
grep -qx 'diff (GNU diffutils) 3.12' "$TMP/console" && grep -qx '2c2' "$TMP/console" &&
    grep -qx '/tmp/x /tmp/y differ: char 3, line 2' "$TMP/console" || fail "GNU diff or cmp did not run in the guest"
grep -qE '^GNU bash, version 5\.3\.[0-9]+\(1\)-release \(ia64-unknown-linux-gnu\)$' "$TMP/console" &&
    grep -qx 'bash=x 1024 5' "$TMP/console" || fail "bash did not run in the guest"
for p in 'base-files (14.2~trillian1)' 'coreutils (9.10-0trillian1)' 'findutils (4.11.0-0trillian1)' 'libtinfo6:ia64 (6.6+20260608-0trillian1)' 'diffutils (1:3.12-0trillian1)' 'bash (5.3-0trillian1)'; do
    grep -qxF "Setting up $p ..." "$TMP/console" || fail "dpkg did not configure $p"
done
grep -qx 'update-alternatives: using /usr/share/man/man7/bash-builtins.7.gz to provide /usr/share/man/man7/builtins.7.gz (builtins.7.gz) in auto mode' \
    "$TMP/console" || fail "bash's postinst did not run"
ok "in the guest: base-files' debian_version and os-release, coreutils' ls, sort, paste and stat, findutils' find and xargs, diffutils' diff and cmp, bash; dpkg configured them, bash's postinst ran"
# gpgv on libgcrypt20 and libgpg-error0: the archive's own signatures
grep -qx 'gpgv (GnuPG) 2.2.40' "$TMP/console" && grep -qx 'libgcrypt 1.11.0' "$TMP/console" ||
    fail "gpgv --version did not say 2.2.40 on libgcrypt 1.11.0 in the guest"
grep -q '^8 = (0, 8) = .*(Unspecified source, Bad signature)$' "$TMP/console" || fail "gpg-error did not name error 8"
grep -qx 'gpgv-release=0' "$TMP/console" && grep -qx 'gpgv-inrelease=0' "$TMP/console" ||
    fail "gpgv did not accept the archive's Release.gpg and InRelease in the guest"
[ "$(grep -c '^gpgv: Good signature from ' "$TMP/console")" = 2 ] || fail "gpgv printed no two Good signature lines"
grep -q '^gpgv: BAD signature from ' "$TMP/console" && grep -qx 'gpgv-tampered=1' "$TMP/console" ||
    fail "gpgv did not refuse the tampered Release in the guest"
ok "in the guest: gpgv 2.2.40 (libgcrypt 1.11.0) checks the archive's Release.gpg and InRelease with its keyring (Good signature) and refuses a tampered Release (BAD signature, exit 1); gpg-error runs"
# libxcrypt's libcrypt1, shadow's passwd and login (without PAM)
for p in 'libcrypt1:ia64 (1:4.4.33-0trillian1)' 'passwd (1:4.17.4-0trillian1)' 'login (1:4.17.4-0trillian1)'; do
    grep -qxF "Setting up $p ..." "$TMP/console" || fail "dpkg did not configure $p"
done
grep -qx -- '-rw-r-----' "$TMP/console" || fail "passwd's postinst did not make /etc/shadow 0640"
grep -qx 'uid=1000(tuser) gid=1000(tuser) groups=1000(tuser)' "$TMP/console" || fail "useradd made no user in the guest"
grep -qx 'tuser L [0-9-]* 0 99999 7 -1' "$TMP/console" || fail "usermod -L and passwd -S did not run in the guest"
grep -qx 'tuser tgroup' "$TMP/console" || fail "groupadd and usermod -aG did not run in the guest"
grep -qx 'Usage: login \[-p\] \[name\]' "$TMP/console" && grep -qx 'nologin=1' "$TMP/console" ||
    fail "login's usage or nologin's refusal is not in the guest's console"
grep -qx 'who=tuser home=/home/tuser' "$TMP/console" && grep -qx 'back=root' "$TMP/console" ||
    fail "login -f tuser did not run tuser's login shell in the guest"
grep -qx 'gone=0' "$TMP/console" || fail "userdel -r did not remove the user in the guest"
ok "in the guest: passwd's postinst made the shadow files, useradd, chpasswd (SHA-512 and yescrypt through libcrypt1), usermod -p and -L, passwd -S, chage -l, groupadd, userdel run, login -f runs a user's login shell, nologin refuses"
# apt 2.6.1: the archive as a file:// source, its InRelease checked by gpgv
grep -qx 'apt 2.6.1 (ia64)' "$TMP/console" && grep -qx 'APT::Architecture "ia64";' "$TMP/console" ||
    fail "apt-get --version or apt-config dump did not run in the guest"
grep -qx '_apt:65534:/nonexistent' "$TMP/console" || fail "apt's postinst did not add _apt"
grep -q 'Reading package lists... Done' "$TMP/console" && grep -qx 'apt-update=0 stderr=0' "$TMP/console" ||
    fail "apt-get update from the file:// archive failed or warned in the guest"
grep -q 'NO_PUBKEY' "$TMP/console" && fail "apt-get update: NO_PUBKEY in the guest"
grep -qx '  Candidate: 2.12.3-0trillian1' "$TMP/console" &&
    grep -qE '^ +500 file:/usr/share/trillian-archive-mirror sid-trillian/main ia64 Packages$' "$TMP/console" ||
    fail "apt-cache policy hello did not show the archive's candidate"
grep -q '^Setting up hello (2.12.3-0trillian1)' "$TMP/console" && grep -qx 'apt-install=0' "$TMP/console" ||
    fail "apt-get install --reinstall hello failed in the guest"
grep -q 'TLS support is not built in: this apt has no GnuTLS' "$TMP/console" && grep -qx 'https=100' "$TMP/console" ||
    fail "apt did not refuse an https:// URI with its no-TLS error"
ok "in the guest: apt 2.6.1 runs, its postinst added _apt, apt-get update reads the file:// archive (InRelease checked by gpgv, nothing on stderr), apt-cache policy and show know hello, apt-get reinstalls it, an https:// URI is refused (no TLS)"

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
ok "the .debs: IA-64 hello on ld-linux-ia64.so.2, Depends libc6.1 (>= 2.43) by libc6.1's shlibs, zlib1g-dev on zlib1g (= 1:1.3.1-0trillian1)"

# --- the C library and libgcc_s as packages -------------------------------------
G=$O/glibc-debs/debs V=2.43-0trillian1
LC=$G/libc6.1_${V}_ia64.deb LB=$G/libc-bin_${V}_ia64.deb LD=$G/libc6.1-dev_${V}_ia64.deb
GS=$O/libgcc-debs/debs/libgcc-s1_16.2.0-0trillian1_ia64.deb
for f in "$LC" "$LB" "$LD" "$G/libc-dev-bin_${V}_ia64.deb" "$G/libc-devtools_${V}_ia64.deb" "$GS"; do
    [ -f "$f" ] || fail "no $f"
done
grep -qx 'libc 6.1 libc6.1 (>= 2.43)' "$G/shlibs" || fail "glibc-debs's shlibs: $(cat "$G/shlibs")"
grep -qx 'ld-linux-ia64 2 libc6.1 (>= 2.43)' "$G/shlibs" || fail "glibc-debs's shlibs lack the loader"
[ "$(dpkg-deb --field "$GS" Depends)" = "libc6.1 (>= 2.43)" ] || fail "libgcc-s1's Depends: $(dpkg-deb --field "$GS" Depends)"
[ "$(dpkg-deb --field "$LC" Depends)" = "libgcc-s1" ] || fail "libc6.1's Depends: $(dpkg-deb --field "$LC" Depends)"
dpkg-deb --field "$LB" Depends | grep -q '^libc6.1 (>= 2.43), ' || fail "libc-bin's Depends: $(dpkg-deb --field "$LB" Depends)"
[ "$(dpkg-deb --field "$LB" Essential)" = yes ] || fail "libc-bin is not Essential"
[ "$(dpkg-deb --field "$LD" Provides)" = "libc-dev (= $V)" ] || fail "libc6.1-dev's Provides"
dpkg-deb -c "$LC" >"$TMP/libc6.1.list"
grep -q '^-rwxr-xr-x root/root .* \./lib/ld-linux-ia64\.so\.2$' "$TMP/libc6.1.list" || fail "libc6.1's loader is not 0755"
grep -q '^-rw-r--r-- root/root .* \./lib/libm\.so\.6\.1$' "$TMP/libc6.1.list" || fail "libc6.1's libm.so.6.1 is not 0644"
grep -q ' \./usr/lib/gconv/gconv-modules$' "$TMP/libc6.1.list" || fail "libc6.1 lacks the gconv modules"
grep -q ' \./etc/ld\.so\.conf\.d/ia64-linux-gnu\.conf$' "$TMP/libc6.1.list" || fail "libc6.1 lacks its ld.so.conf.d file"
dpkg-deb -c "$LB" >"$TMP/libc-bin.list"
grep -q ' \./sbin/ldconfig$' "$TMP/libc-bin.list" || fail "libc-bin lacks ldconfig"
dpkg-deb -c "$LD" >"$TMP/libc6.1-dev.list"
grep -q ' \./usr/include/stdio\.h$' "$TMP/libc6.1-dev.list" || fail "libc6.1-dev lacks stdio.h"
grep -q ' \./usr/lib/libm\.so -> /lib/libm\.so\.6\.1$' "$TMP/libc6.1-dev.list" || fail "libc6.1-dev's libm.so link"
grep -E ' \./usr/include/(linux|asm)/' "$TMP/libc6.1-dev.list" | head -n 1 | grep . && fail "libc6.1-dev ships the kernel's headers (linux-libc-dev's)"
for d in "$G"/*.deb; do dpkg-deb -c "$d"; done | grep -E ' \./(usr/sbin/nscd|etc/rpc|usr/share/locale/|usr/share/i18n/)' &&
    fail "a glibc package ships a file the recipe leaves out (not_installed)"
dpkg-deb -x "$LC" "$TMP/lc"
ia64-linux-gnu-readelf -h "$TMP/lc/lib/libc.so.6.1" | grep -q 'Machine: *Intel IA-64' || fail "libc.so.6.1 is not IA-64"
ia64-linux-gnu-readelf -SW "$TMP/lc/lib/libc.so.6.1" | grep -qE '\.(symtab|debug_info) ' && fail "libc.so.6.1 is not stripped"
ok "the glibc and libgcc packages: Debian's split, libc6.1's shlibs, Depends resolved against it, the loader 0755, stripped, the kernel's headers and Debian's other packages' files left out"

# the root's C library is the packages' own: every file of theirs as shipped
tar -xf "$O/userland/rootfs.tar" -C "$TMP" lib/libc.so.6.1 || fail "the root has no /lib/libc.so.6.1"
cmp -s "$TMP/lib/libc.so.6.1" "$TMP/lc/lib/libc.so.6.1" || fail "the root's libc.so.6.1 is not libc6.1's"
tar -xOf "$O/userland/rootfs.tar" var/lib/trillian/packages | grep -qx "libc6.1 $V ia64" ||
    fail "/var/lib/trillian/packages does not name libc6.1 $V"
ok "the root's libc.so.6.1 is libc6.1's; its package list names libc6.1 $V"

# libmd and dpkg, and dpkg's database in the root
MD=$O/libmd/debs/libmd0_1.1.0-0trillian1_ia64.deb DP=$O/dpkg/debs/dpkg_1.23.3~trillian1_ia64.deb
[ -f "$MD" ] && [ -f "$DP" ] || fail "no libmd0 or dpkg .deb"
[ "$(dpkg-deb --field "$DP" Pre-Depends)" = "libbz2-1.0 (>= 1.0.8-0trillian1), libc6.1 (>= 2.43), liblzma5 (>= 5.8.1-0trillian1), libmd0 (>= 1.1.0-0trillian1), libzstd1 (>= 1.5.5), zlib1g (>= 1:1.3.1-0trillian1)" ] ||
    fail "dpkg's Pre-Depends (Essential, as Debian's): $(dpkg-deb --field "$DP" Pre-Depends)"
dpkg-deb -c "$DP" >"$TMP/dpkg.list"
grep -q ' \./usr/bin/dpkg-query$' "$TMP/dpkg.list" || fail "dpkg lacks dpkg-query"
grep -q ' \./usr/share/perl5/' "$TMP/dpkg.list" && fail "dpkg ships the Perl modules (not_installed)"
mkdir -p "$TMP/root"
tar -xf "$O/userland/rootfs.tar" -C "$TMP/root" var/lib/dpkg || fail "the root has no var/lib/dpkg"
[ "$(dpkg-query --admindir="$TMP/root/var/lib/dpkg" -f '${Package} ${Version} ${Status}\n' -W libc6.1)" = \
    "libc6.1 $V install ok unpacked" ] || fail "the root's dpkg database: $(dpkg-query --admindir="$TMP/root/var/lib/dpkg" -W 2>&1)"
[ -f "$TMP/root/var/lib/dpkg/info/libc6.1:ia64.list" ] && [ -x "$TMP/root/var/lib/dpkg/info/libc-bin.postinst" ] ||
    fail "the root's dpkg database lacks libc6.1:ia64.list or libc-bin.postinst"
dpkg-deb -x "$DP" "$TMP/dp"
for l in liblzma.so.5 libzstd.so.1 libbz2.so.1.0; do
    ia64-linux-gnu-readelf -d "$TMP/dp/usr/bin/dpkg-deb" | grep -qF "Shared library: [$l]" ||
        fail "dpkg-deb does not link $l, as Debian's does"
done
ok "libmd0 and dpkg (Pre-Depends by shlibs, as Debian's Essential dpkg; dpkg-deb links liblzma, libzstd and libbz2), and the root's dpkg database: libc6.1 $V unpacked, libc-bin's postinst deferred"

# dropbear-bin: Debian's four programs, IA-64, Depends by shlibs (zlib1g's too)
DB=$O/dropbear/debs/dropbear-bin_2025.89-0trillian1_ia64.deb
[ -f "$DB" ] || fail "no $DB"
[ "$(dpkg-deb --field "$DB" Depends)" = "libc6.1 (>= 2.43), zlib1g (>= 1:1.3.1-0trillian1)" ] ||
    fail "dropbear-bin's Depends: $(dpkg-deb --field "$DB" Depends)"
dpkg-deb -c "$DB" >"$TMP/dropbear-bin.list"
for f in usr/sbin/dropbear usr/bin/dbclient usr/bin/dropbearkey usr/bin/dropbearconvert \
    usr/share/man/man8/dropbear.8.gz; do
    grep -q " \./$f\$" "$TMP/dropbear-bin.list" || fail "dropbear-bin lacks $f"
done
dpkg-deb -x "$DB" "$TMP/db"
ia64-linux-gnu-readelf -h "$TMP/db/usr/sbin/dropbear" | grep -q 'Machine: *Intel IA-64' || fail "dropbear is not IA-64"
ok "dropbear-bin: dropbear, dbclient, dropbearkey, dropbearconvert (IA-64), Depends libc6.1 and zlib1g by shlibs"

# libstdc++6 from the gxx stage (gcc 16.2 stage 2 with C++), and gperf (C++)
# on it: Depends by the shlibs of libc6.1, libgcc-s1 and libstdc++6
SC=$O/libstdcxx-debs/debs/libstdc++6_16.2.0-0trillian1_ia64.deb GP=$O/gperf/debs/gperf_3.3-0trillian1_ia64.deb
[ -f "$SC" ] && [ -f "$GP" ] || fail "no libstdc++6 or gperf .deb"
[ "$(dpkg-deb --field "$SC" Depends)" = "libc6.1 (>= 2.43), libgcc-s1 (>= 16.2.0-0trillian1)" ] ||
    fail "libstdc++6's Depends: $(dpkg-deb --field "$SC" Depends)"
[ "$(dpkg-deb --field "$GP" Depends)" = "libc6.1 (>= 2.43), libgcc-s1 (>= 16.2.0-0trillian1), libstdc++6 (>= 16.2.0-0trillian1)" ] ||
    fail "gperf's Depends: $(dpkg-deb --field "$GP" Depends)"
grep -qx 'libstdc++ 6 libstdc++6 (>= 16.2.0-0trillian1)' "$O/libstdcxx-debs/debs/shlibs" ||
    fail "libstdcxx-debs's shlibs: $(cat "$O/libstdcxx-debs/debs/shlibs")"
dpkg-deb -x "$SC" "$TMP/sc"
ia64-linux-gnu-readelf -d "$TMP/sc/usr/lib/ia64-linux-gnu/libstdc++.so.6" | grep -q 'SONAME.*\[libstdc++\.so\.6\]' ||
    fail "libstdc++6's library has no SONAME libstdc++.so.6"
dpkg-deb --ctrl-tarfile "$LB" | tar -xO ./triggers | grep -qx 'interest-noawait ldconfig' ||
    fail "libc-bin is not interested in the ldconfig trigger"
ok "libstdc++6 (libstdc++.so.6 of gcc 16.2 stage 2 with C++) and gperf on it, Depends by shlibs; libc-bin's ldconfig interest"

# mawk, dash, debianutils, base-passwd: Debian's names, Priority required,
# Essential as Debian's control says, Depends by shlibs (dash's debianutils
# too), the programs IA-64
MK=$O/mawk/debs/mawk_1.3.4.20260302-0trillian1_ia64.deb DA=$O/dash/debs/dash_0.5.12-0trillian1_ia64.deb
DU=$O/debianutils/debs/debianutils_5.24~trillian1_ia64.deb BP=$O/base-passwd/debs/base-passwd_3.6.8~trillian1_ia64.deb
for f in "$MK" "$DA" "$DU" "$BP"; do
    [ -f "$f" ] || fail "no $f"
    [ "$(dpkg-deb --field "$f" Priority)" = required ] || fail "$f: Priority $(dpkg-deb --field "$f" Priority)"
done
for f in "$DA" "$DU" "$BP"; do [ "$(dpkg-deb --field "$f" Essential)" = yes ] || fail "$f is not Essential"; done
dpkg-deb --field "$MK" | grep -q '^Essential:' && fail "mawk has an Essential field (Debian's has none)"
[ "$(dpkg-deb --field "$MK" Depends)" = "libc6.1 (>= 2.43)" ] || fail "mawk's Depends: $(dpkg-deb --field "$MK" Depends)"
# the Essential ones' libraries in Pre-Depends, as Debian's (shlibs_field)
for f in "$DA" "$DU" "$BP"; do
    [ "$(dpkg-deb --field "$f" Pre-Depends)" = "libc6.1 (>= 2.43)" ] || fail "$f: Pre-Depends $(dpkg-deb --field "$f" Pre-Depends)"
done
[ -z "$(dpkg-deb --field "$DU" Depends)" ] || fail "debianutils' Depends: $(dpkg-deb --field "$DU" Depends)"
[ "$(dpkg-deb --field "$DA" Depends)" = "debianutils (>= 5.6-0.1)" ] ||
    fail "dash's Depends: $(dpkg-deb --field "$DA" Depends)"
[ "$(dpkg-deb --field "$MK" Provides)" = awk ] || fail "mawk does not provide awk"
dpkg-deb -c "$DA" | grep -q ' \./usr/bin/sh -> dash$' || fail "dash lacks /usr/bin/sh -> dash"
dpkg-deb --ctrl-tarfile "$DU" | tar -xO ./triggers | grep -qx 'interest-noawait /usr/share/debianutils/shells.d' ||
    fail "debianutils is not interested in shells.d"
dpkg-deb --ctrl-tarfile "$BP" | tar -xO ./preinst | grep -q '^root:\*:0:0:root:/root:/bin/bash$' ||
    fail "base-passwd's preinst lacks passwd.master"
for f in mawk:usr/bin/mawk dash:usr/bin/dash debianutils:usr/bin/run-parts base-passwd:usr/sbin/update-passwd; do
    p=${f%%:*}; dpkg-deb -x "$O/$p/debs/"*.deb "$TMP/$p"
    ia64-linux-gnu-readelf -h "$TMP/$p/${f#*:}" | grep -q 'Machine: *Intel IA-64' || fail "${f#*:} is not IA-64"
done
ok "mawk, dash, debianutils, base-passwd: Priority required, dash, debianutils and base-passwd Essential (their libraries in Pre-Depends), mawk's Depends by shlibs, the programs IA-64, Debian's scripts and triggers"
# sed, grep, gzip and tar: Debian's Essential, Priority required packages,
# their programs IA-64 (not busybox's applets), Depends by libc6.1's shlibs
# (Debian's are Pre-Depends: the package kind writes shlibs as Depends)
SD=$O/sed/debs/sed_4.9-0trillian1_ia64.deb GR=$O/grep/debs/grep_3.12-0trillian1_ia64.deb
GZ=$O/gzip/debs/gzip_1.14-0trillian1_ia64.deb TR=$O/tar/debs/tar_1.35+dfsg-0trillian1_ia64.deb
for d in "$SD:sed" "$GR:grep" "$GZ:gzip" "$TR:tar"; do
    f=${d%:*} p=${d##*:}
    [ -f "$f" ] || fail "no $f"
    [ "$(dpkg-deb --field "$f" Essential)" = yes ] || fail "$p is not Essential"
    [ "$(dpkg-deb --field "$f" Priority)" = required ] || fail "$p's Priority: $(dpkg-deb --field "$f" Priority)"
    [ "$(dpkg-deb --field "$f" Pre-Depends)" = "libc6.1 (>= 2.43)" ] || fail "$p's Pre-Depends: $(dpkg-deb --field "$f" Pre-Depends)"
    dpkg-deb -x "$f" "$TMP/$p"
    ia64-linux-gnu-readelf -h "$TMP/$p/usr/bin/$p" | grep -q 'Machine: *Intel IA-64' || fail "/usr/bin/$p is not IA-64"
    [ -f "$TMP/$p/usr/share/doc/$p/copyright" ] || fail "$p lacks Debian's copyright file"
    tar -xOf "$O/userland/rootfs.tar" "usr/bin/$p" | cmp -s - "$TMP/$p/usr/bin/$p" || fail "the root's /usr/bin/$p is not $p's"
done
[ -f "$TMP/sed/usr/share/info/sed.info.gz" ] && [ ! -e "$TMP/sed/usr/share/info/dir" ] || fail "sed's info manual, or an info dir"
for f in usr/bin/egrep usr/bin/fgrep usr/bin/rgrep usr/share/man/man1/grep.1.gz usr/share/info/grep.info.gz; do
    [ -f "$TMP/grep/$f" ] || fail "grep lacks $f"
done
[ "$(readlink "$TMP/grep/usr/share/man/man1/rgrep.1.gz")" = grep.1.gz ] || fail "grep's rgrep.1.gz link"
[ "$(head -n 1 "$TMP/grep/usr/bin/egrep")" = '#!/bin/sh' ] || fail "egrep's #!: $(head -n 1 "$TMP/grep/usr/bin/egrep")"
[ "$(dpkg-deb --field "$GR" Provides)" = rgrep ] || fail "grep's Provides"
ia64-linux-gnu-readelf -d "$TMP/grep/usr/bin/grep" | grep -q 'libpcre' && fail "grep links libpcre2 (not packaged here)"
for f in usr/bin/gunzip usr/bin/zcat usr/bin/zgrep usr/share/info/gzip.info.gz usr/share/man/man1/gzip.1.gz; do
    [ -f "$TMP/gzip/$f" ] || fail "gzip lacks $f"
done
[ "$(readlink "$TMP/gzip/usr/bin/uncompress")" = gunzip ] || fail "gzip's uncompress link"
grep '^grep=' "$TMP/gzip/usr/bin/zgrep" | grep -q / && fail "zgrep runs grep by the build host's path, not the one in PATH"
dpkg-deb --ctrl-tarfile "$GZ" | tar -t | grep -qx './postinst' || fail "gzip lacks Debian's postinst"
for f in usr/sbin/rmt-tar usr/sbin/tarcat usr/share/man/man1/tar.1.gz usr/share/man/man8/rmt-tar.8.gz \
    usr/lib/mime/packages/tar; do
    [ -f "$TMP/tar/$f" ] || fail "tar lacks $f"
done
[ "$(readlink "$TMP/tar/etc/rmt")" = /usr/sbin/rmt ] || fail "tar's /etc/rmt link"
dpkg-deb --ctrl-tarfile "$TR" | tar -xO ./postinst | grep -q 'update-alternatives --install /usr/sbin/rmt rmt /usr/sbin/rmt-tar' ||
    fail "tar's postinst is not Debian's"
ok "sed, grep, gzip and tar: Essential, Priority required, IA-64 programs in the root, Pre-Depends libc6.1 (>= 2.43) by shlibs, Debian's files, links and scripts"
# liblzma5, libzstd1, libbz2-1.0: Debian's names, the library at the
# multiarch path, IA-64, its shlibs line for later packages; the programs'
# Depends by those shlibs
XL=$O/xz-utils/debs/liblzma5_5.8.1-0trillian1_ia64.deb XU=$O/xz-utils/debs/xz-utils_5.8.1-0trillian1_ia64.deb
ZL=$O/zstd/debs/libzstd1_1.5.7+dfsg-0trillian1_ia64.deb ZU=$O/zstd/debs/zstd_1.5.7+dfsg-0trillian1_ia64.deb
BL=$O/bzip2/debs/libbz2-1.0_1.0.8-0trillian1_ia64.deb BU=$O/bzip2/debs/bzip2_1.0.8-0trillian1_ia64.deb
HL=$O/xxhash/debs/libxxhash0_0.8.3-0trillian1_ia64.deb LL=$O/lz4/debs/liblz4-1_1.10.0-0trillian1_ia64.deb
for d in "$XL:usr/lib/ia64-linux-gnu/liblzma.so.5" "$ZL:usr/lib/ia64-linux-gnu/libzstd.so.1" \
    "$BL:usr/lib/ia64-linux-gnu/libbz2.so.1.0" "$HL:usr/lib/ia64-linux-gnu/libxxhash.so.0" \
    "$LL:usr/lib/ia64-linux-gnu/liblz4.so.1"; do
    f=${d%%:*} l=${d#*:}
    [ -f "$f" ] || fail "no $f"
    [ "$(dpkg-deb --field "$f" Multi-Arch)" = same ] || fail "$f is not Multi-Arch: same"
    dpkg-deb -x "$f" "$TMP/cl"
    ia64-linux-gnu-readelf -h "$TMP/cl/$l" | grep -q 'Machine: *Intel IA-64' || fail "$l is not IA-64"
done
grep -qx 'liblzma 5 liblzma5 (>= 5.8.1-0trillian1)' "$O/xz-utils/debs/shlibs" || fail "xz-utils' shlibs"
grep -qx 'libzstd 1 libzstd1 (>= 1.5.5)' "$O/zstd/debs/shlibs" || fail "zstd's shlibs (Debian's -V 1.5.5)"
grep -qx 'libbz2 1.0 libbz2-1.0 (>= 1.0.8-0trillian1)' "$O/bzip2/debs/shlibs" || fail "bzip2's shlibs"
dpkg-deb --field "$XU" Depends | grep -q 'liblzma5 (>= 5.8.1-0trillian1)' || fail "xz-utils' Depends: $(dpkg-deb --field "$XU" Depends)"
dpkg-deb --field "$ZU" Depends | grep -q 'liblzma5 (>= 5.8.1-0trillian1)' || fail "zstd's Depends: $(dpkg-deb --field "$ZU" Depends)"
dpkg-deb --field "$BU" Depends | grep -q 'libbz2-1.0 (>= 1.0.8-0trillian1)' || fail "bzip2's Depends: $(dpkg-deb --field "$BU" Depends)"
grep -qx 'libxxhash 0 libxxhash0 (>= 0.8.3-0trillian1)' "$O/xxhash/debs/shlibs" || fail "xxhash's shlibs"
grep -qx 'liblz4 1 liblz4-1 (>= 1.10.0-0trillian1)' "$O/lz4/debs/shlibs" || fail "lz4's shlibs"
dpkg-deb --field "$LL" Depends | grep -q 'libxxhash0 (>= 0.8.3-0trillian1)' ||
    fail "liblz4-1 does not link the system's xxhash (Debian's patch): $(dpkg-deb --field "$LL" Depends)"
ok "liblzma5, libzstd1, libbz2-1.0, libxxhash0 and liblz4-1: IA-64 libraries at /usr/lib/ia64-linux-gnu, Multi-Arch same, shlibs for later packages; xz-utils, zstd and bzip2 depend on them by shlibs, liblz4-1 on libxxhash0"
# GnuPG's libraries and gpgv: libgpg-error0, libgcrypt20, libassuan0 and
# libksba8 IA-64 at the multiarch path with their shlibs; gpgv depends by
# shlibs on libgcrypt20, libgpg-error0, zlib1g and libbz2-1.0 (as Debian's)
# and on neither libassuan0 nor libksba8 (configure needs them, gpgv does
# not link them); the root carries the archive's signed Release files
GE=$O/libgpg-error/debs/libgpg-error0_1.51-0trillian1_ia64.deb
GC=$O/libgcrypt20/debs/libgcrypt20_1.11.0-0trillian1_ia64.deb
AS=$O/libassuan/debs/libassuan0_2.5.5-0trillian1_ia64.deb KS=$O/libksba/debs/libksba8_1.6.7-0trillian1_ia64.deb
GV=$O/gnupg2/debs/gpgv_2.2.40-0trillian1_ia64.deb
for d in "$GE:usr/lib/ia64-linux-gnu/libgpg-error.so.0" "$GC:usr/lib/ia64-linux-gnu/libgcrypt.so.20" \
    "$AS:usr/lib/ia64-linux-gnu/libassuan.so.0" "$KS:usr/lib/ia64-linux-gnu/libksba.so.8" "$GV:usr/bin/gpgv"; do
    f=${d%%:*} l=${d#*:}
    [ -f "$f" ] || fail "no $f"
    dpkg-deb -x "$f" "$TMP/gp"
    ia64-linux-gnu-readelf -h "$TMP/gp/$l" | grep -q 'Machine: *Intel IA-64' || fail "$l is not IA-64"
done
grep -qx 'libgpg-error 0 libgpg-error0 (>= 1.51-0trillian1)' "$O/libgpg-error/debs/shlibs" || fail "libgpg-error's shlibs"
grep -qx 'libgcrypt 20 libgcrypt20 (>= 1.11.0-0trillian1)' "$O/libgcrypt20/debs/shlibs" || fail "libgcrypt20's shlibs"
GVD=$(dpkg-deb --field "$GV" Depends)
for p in 'libgcrypt20 (>= 1.11.0-0trillian1)' 'libgpg-error0 (>= 1.51-0trillian1)' 'zlib1g (>= ' 'libbz2-1.0 (>= '; do
    case "$GVD" in *"$p"*) ;; *) fail "gpgv's Depends lack $p: $GVD" ;; esac
done
case "$GVD" in *libassuan0* | *libksba8*) fail "gpgv links libassuan or libksba: $GVD" ;; esac
[ "$(dpkg-deb --field "$GV" Priority)" = important ] || fail "gpgv's Priority"
dpkg-deb -x "$O"/trillian-archive-release/debs/trillian-archive-release_1.0_ia64.deb "$TMP/rel"
for f in Release Release.gpg InRelease; do
    cmp -s "$O/archive/dists/sid-trillian/$f" "$TMP/rel/usr/share/trillian-archive/$f" || fail "trillian-archive-release's $f is not the archive's"
done
cmp -s "$O/archive/trillian-archive-keyring.gpg" "$TMP/rel/usr/share/trillian-archive/trillian-archive-keyring.gpg" ||
    fail "trillian-archive-release's keyring is not the archive's"
# apt: libapt-pkg6.0 IA-64 with shlibs, apt's programs IA-64 and its
# Depends by shlibs (libapt-pkg6.0, libstdc++6) and gpgv, not GnuTLS
AL=$O/apt/debs/libapt-pkg6.0_2.6.1-0trillian1_ia64.deb AP=$O/apt/debs/apt_2.6.1-0trillian1_ia64.deb
for d in "$AL:usr/lib/ia64-linux-gnu/libapt-pkg.so.6.0" "$AP:usr/bin/apt-get" "$AP:usr/lib/apt/methods/http"; do
    f=${d%%:*} l=${d#*:}
    [ -f "$f" ] || fail "no $f"
    dpkg-deb -x "$f" "$TMP/ap"
    ia64-linux-gnu-readelf -h "$TMP/ap/$l" | grep -q 'Machine: *Intel IA-64' || fail "$l is not IA-64"
done
grep -q '^libapt-pkg 6.0 libapt-pkg6.0 (>= ' "$O/apt/debs/shlibs" || fail "libapt-pkg6.0's shlibs"
APD=$(dpkg-deb --field "$AP" Depends)
for p in 'libapt-pkg6.0 (>= ' 'libstdc++6 (>= ' 'gpgv | gpgv2 | gpgv1'; do
    case "$APD" in *"$p"*) ;; *) fail "apt's Depends lack $p: $APD" ;; esac
done
case "$APD" in *gnutls*) fail "apt links GnuTLS: $APD" ;; esac
[ -x "$TMP/ap/usr/lib/apt/methods/gpgv" ] && [ -e "$TMP/ap/usr/lib/apt/methods/https" ] || fail "apt lacks its gpgv or https method"
ok "libapt-pkg6.0 IA-64 with shlibs; apt's programs and methods IA-64, Depends libapt-pkg6.0 and libstdc++6 by shlibs and gpgv, no GnuTLS"
ok "libgpg-error0, libgcrypt20, libassuan0, libksba8: IA-64 libraries with shlibs; gpgv IA-64, Depends libgcrypt20, libgpg-error0, zlib1g, libbz2-1.0 by shlibs (not libassuan0 or libksba8); trillian-archive-release carries the archive's Release, Release.gpg, InRelease and keyring"

# base-files, coreutils, diffutils and bash: Debian's Essential, Priority
# required packages; the programs IA-64 and in the root
BF=$O/base-files/debs/base-files_14.2~trillian1_ia64.deb CU=$O/coreutils/debs/coreutils_9.10-0trillian1_ia64.deb
DF=$O/diffutils/debs/diffutils_3.12-0trillian1_ia64.deb BA=$O/bash/debs/bash_5.3-0trillian1_ia64.deb
FU=$O/findutils/debs/findutils_4.11.0-0trillian1_ia64.deb
for f in "$BF" "$CU" "$FU" "$DF" "$BA"; do
    [ -f "$f" ] || fail "no $f"
    [ "$(dpkg-deb --field "$f" Essential)" = yes ] || fail "$f is not Essential"
    [ "$(dpkg-deb --field "$f" Priority)" = required ] || fail "$f: Priority $(dpkg-deb --field "$f" Priority)"
done
[ "$(dpkg-deb --field "$BF" Pre-Depends)" = awk ] || fail "base-files' Pre-Depends: $(dpkg-deb --field "$BF" Pre-Depends)"
[ -z "$(dpkg-deb --field "$BF" Depends)" ] || fail "base-files has Depends (it ships no ELF file)"
[ "$(dpkg-deb --field "$BA" Pre-Depends)" = "libc6.1 (>= 2.43), libtinfo6 (>= 6.6+20260608-0trillian1)" ] ||
    fail "bash's Pre-Depends (libtinfo6 by ncurses' shlibs): $(dpkg-deb --field "$BA" Pre-Depends)"
NC=$O/ncurses/debs V6=6.6+20260608-0trillian1
for p in libtinfo6 libncursesw6 libncurses-dev ncurses-bin; do [ -f "$NC/${p}_${V6}_ia64.deb" ] || fail "no $p .deb"; done
[ -f "$NC/ncurses-base_${V6}_all.deb" ] || fail "no ncurses-base .deb (Architecture all)"
grep -qx "libtinfo 6 libtinfo6 (>= $V6)" "$NC/shlibs" || fail "ncurses' shlibs: $(cat "$NC/shlibs")"
dpkg-deb -x "$NC/libtinfo6_${V6}_ia64.deb" "$TMP/tinfo"
ia64-linux-gnu-readelf -V "$TMP/tinfo/usr/lib/ia64-linux-gnu/libtinfo.so.6.6" | grep -q NCURSES6_TINFO_5.0.19991023 ||
    fail "libtinfo.so.6 lacks Debian's symbol versions (--with-versioned-syms)"
tar -tf "$O/userland/rootfs.tar" usr/lib/ia64-linux-gnu/libtinfo.so.6 >/dev/null || fail "the root lacks libtinfo6's libtinfo.so.6"
for f in "$CU" "$FU" "$DF"; do
    [ "$(dpkg-deb --field "$f" Pre-Depends)" = "libc6.1 (>= 2.43)" ] || fail "$f: Pre-Depends $(dpkg-deb --field "$f" Pre-Depends)"
done
[ "$(dpkg-deb --field "$DF" Version)" = 1:3.12-0trillian1 ] || fail "diffutils' Version (Debian's epoch)"
[ "$(dpkg-deb --field "$BA" Depends)" = "base-files (>= 2.1.12), debianutils (>= 5.6-0.1)" ] ||
    fail "bash's Depends: $(dpkg-deb --field "$BA" Depends)"
dpkg-deb -x "$BF" "$TMP/bf"
[ "$(cat "$TMP/bf/etc/debian_version")" = forky/sid ] || fail "base-files' debian_version"
grep -qx 'ID=debian' "$TMP/bf/usr/lib/os-release" && grep -qx 'VARIANT_ID=trillian' "$TMP/bf/usr/lib/os-release" ||
    fail "base-files' os-release"
grep -q '#OSNAME#' "$TMP/bf/etc/issue" "$TMP/bf/usr/lib/os-release" && fail "base-files' #OSNAME# not substituted"
[ "$(readlink "$TMP/bf/usr/share/common-licenses/GPL")" = GPL-3 ] || fail "base-files' GPL link"
dpkg-deb --ctrl-tarfile "$BF" | tar -xO ./conffiles | grep -qx /etc/debian_version || fail "base-files' conffiles"
tar -xOf "$O/userland/rootfs.tar" usr/lib/os-release | cmp -s - "$TMP/bf/usr/lib/os-release" &&
    [ "$(tar -tvf "$O/userland/rootfs.tar" etc/os-release | sed 's/.* -> //')" = /usr/lib/os-release ] ||
    fail "the root's /etc/os-release is not base-files' link to its /usr/lib/os-release"
for d in "$CU:usr/bin/ls" "$CU:usr/sbin/chroot" "$FU:usr/bin/find" "$FU:usr/bin/xargs" "$DF:usr/bin/diff" "$DF:usr/bin/cmp" "$BA:usr/bin/bash"; do
    f=${d%%:*} b=${d#*:} p=$(basename "$f" | cut -d_ -f1)
    dpkg-deb -x "$f" "$TMP/$p"
    ia64-linux-gnu-readelf -h "$TMP/$p/$b" | grep -q 'Machine: *Intel IA-64' || fail "/$b is not IA-64"
    tar -xOf "$O/userland/rootfs.tar" "$b" | cmp -s - "$TMP/$p/$b" || fail "the root's /$b is not $p's"
done
for f in usr/bin/kill usr/bin/uptime usr/bin/chroot; do [ -e "$TMP/coreutils/$f" ] && fail "coreutils ships /$f (Debian's does not)"; done
[ "$(readlink "$TMP/coreutils/usr/share/man/man1/[.1.gz")" = test.1.gz ] || fail "coreutils' [.1.gz link"
zcat "$TMP/coreutils/usr/share/man/man1/ls.1.gz" | grep -q 'list directory contents' || fail "coreutils' ls.1 is not help2man's page"
for f in usr/share/man/man1/diff.1.gz usr/share/info/diffutils.info.gz usr/bin/sdiff usr/bin/diff3; do
    [ -f "$TMP/diffutils/$f" ] || fail "diffutils lacks $f"
done
dpkg-deb -c "$FU" | grep -E ' \./usr/(bin/(locate|updatedb)|libexec/)' && fail "findutils ships locate's files (Debian's locate package)"
[ -f "$TMP/findutils/usr/share/info/find.info.gz" ] || fail "findutils lacks find.info.gz"
ia64-linux-gnu-readelf -d "$TMP/bash/usr/bin/bash" | grep -q 'NEEDED.*\[libtinfo\.so\.6\]' || fail "bash does not link libtinfo.so.6"
[ -f "$TMP/bash/usr/bin/clear_console" ] || fail "bash lacks Debian's clear_console"
[ ! -e "$TMP/bash/bin" ] && [ "$(readlink "$TMP/bash/usr/bin/rbash")" = bash ] || fail "bash's links (rbash; no /bin: Debian's merged-/usr layout)"
for f in etc/skel/.bashrc etc/bash.bashrc usr/share/debianutils/shells.d/bash usr/share/man/man7/bash-builtins.7.gz; do
    [ -f "$TMP/bash/$f" ] || fail "bash lacks $f"
done
grep -q '/root/\|/cache/' "$TMP/bash/usr/bin/bashbug" && fail "bashbug names the build's paths"
dpkg-deb --ctrl-tarfile "$BA" | tar -xO ./postinst | grep -q 'update-alternatives --install' || fail "bash's postinst is not Debian's"
ok "base-files, coreutils, findutils, diffutils, bash (on libtinfo6, ncurses' libtinfo.so.6 with Debian's symbol versions, in the root): Essential, Priority required, Pre-Depends (base-files: awk; the others libc6.1 by shlibs), Debian's files, links and scripts, IA-64 programs in the root, base-files' os-release the root's"

# sysvinit 3.18 (sysvinit-core, sysvinit-utils, sysv-rc, initscripts,
# bootlogd) and insserv 1.27.0: in the guest sysvinit-utils' pidof,
# fstab-decode and killall5 and insserv run; the .debs as Debian's
grep -qx 'pidof=1 /usr/sbin/killall5' "$TMP/console" || fail "sysvinit-utils' pidof did not find init (PID 1)"
grep -qx 'a b c' "$TMP/console" || fail "fstab-decode did not decode \\040"
grep -qx 'killall5=0 after=0' "$TMP/console" || fail "killall5 -15 did not end the sleep in another session"
grep -qx 'S:01:2 3 4 5:a S:02:2 3 4 5:b' "$TMP/console" || fail "insserv -s did not order b after a"
SV=$O/sysvinit/debs IS=$O/insserv/debs/insserv_1.27.0-0trillian1_ia64.deb
for p in sysvinit-core sysvinit-utils sysv-rc initscripts bootlogd; do
    [ -f "$SV/${p}_3.18-0trillian1_ia64.deb" ] || fail "no $p .deb"
done
SU=$SV/sysvinit-utils_3.18-0trillian1_ia64.deb SC=$SV/sysvinit-core_3.18-0trillian1_ia64.deb
[ "$(dpkg-deb --field "$SU" Essential)" = yes ] && [ "$(dpkg-deb --field "$SU" Priority)" = required ] ||
    fail "sysvinit-utils is not Essential, Priority required"
[ "$(dpkg-deb --field "$SC" Depends)" = "libc6.1 (>= 2.43), initscripts, sysv-rc | file-rc | openrc, sysvinit-utils (>= 2.86.ds1-66), mount, login" ] ||
    fail "sysvinit-core's Depends: $(dpkg-deb --field "$SC" Depends)"
[ "$(dpkg-deb --field "$SV/sysv-rc_3.18-0trillian1_ia64.deb" Depends)" = "insserv, sysvinit-utils (>= 3.05-1)" ] ||
    fail "sysv-rc's Depends (Debian's without startpar)"
dpkg-deb -x "$SC" "$TMP/sc"
ia64-linux-gnu-readelf -h "$TMP/sc/usr/sbin/init" | grep -q 'Machine: *Intel IA-64' || fail "/usr/sbin/init is not IA-64"
[ "$(readlink "$TMP/sc/usr/sbin/telinit")" = init ] && [ "$(readlink "$TMP/sc/usr/sbin/reboot")" = halt ] || fail "sysvinit-core's links"
grep -qx '#S0:23:respawn:/sbin/getty -L ttyS0 9600 vt100' "$TMP/sc/usr/share/sysvinit/inittab" || fail "sysvinit-core's inittab is not Debian's"
dpkg-deb --ctrl-tarfile "$SC" | tar -xO ./postinst | grep -q 'cp -p "$DPKG_ROOT/usr/share/sysvinit/inittab"' || fail "sysvinit-core's postinst is not Debian's"
dpkg-deb -x "$SV/sysv-rc_3.18-0trillian1_ia64.deb" "$TMP/rc"
grep -q 'command -v startpar' "$TMP/rc/usr/lib/init/rc" && [ "$(readlink "$TMP/rc/etc/init.d/rcS")" = /lib/init/rcS ] || fail "sysv-rc's rc and links"
dpkg-deb --ctrl-tarfile "$SV/initscripts_3.18-0trillian1_ia64.deb" | tar -xO ./conffiles | grep -qx /etc/init.d/mountall.sh || fail "initscripts' conffiles"
tar -xOf "$O/userland/rootfs.tar" usr/sbin/killall5 | cmp -s - <(dpkg-deb --fsys-tarfile "$SU" | tar -xO ./usr/sbin/killall5) || fail "the root's killall5 is not sysvinit-utils'"
dpkg-deb --fsys-tarfile "$IS" | tar -xO ./etc/insserv.conf | grep -q '^\$local_fs[[:space:]]*+mountall ' || fail "insserv's insserv.conf is not Debian's"
grep -qx 'service ver. 1.69+nmu3' "$TMP/console" || fail "init-system-helpers' service did not run"
# the count after service's version (the typed command's echo may wrap)
sed -n '/^service ver\. 1\.69+nmu3$/,$p' "$TMP/console" | grep -qx 4 ||
    fail "update-rc.d did not make trtest's S links in rc2.d to rc5.d"
IH=$O/init-system-helpers/debs/init-system-helpers_1.69+nmu3~trillian1_ia64.deb
[ "$(dpkg-deb --field "$IH" Essential)" = yes ] && [ "$(dpkg-deb --field "$IH" Priority)" = required ] ||
    fail "init-system-helpers is not Essential, Priority required"
dpkg-deb -c "$IH" | grep -q ' \./usr/sbin/update-rc\.d$' && dpkg-deb -c "$IH" | grep -q ' \./etc/rcS\.d/$' || fail "init-system-helpers' files"
ok "sysvinit (sysvinit-core, sysvinit-utils Essential, sysv-rc without startpar, initscripts, bootlogd) and insserv with Debian's insserv.conf: in the guest pidof finds init, fstab-decode decodes, killall5 ends another session's process, insserv orders two scripts; init-system-helpers (Essential): service runs, update-rc.d enables a script through insserv"
# util-linux: Debian's split (libraries, -dev, mount, util-linux, bsdutils
# with its epoch), the programs IA-64 and in the root, its libraries' shlibs
UO=$O/util-linux/debs UV=2.41.5-0trillian1
for p in libblkid1 libblkid-dev libmount1 libmount-dev libsmartcols1 libsmartcols-dev libuuid1 uuid-dev \
    mount util-linux bsdutils; do
    [ -f "$UO/${p}_${UV}_ia64.deb" ] || fail "no $p .deb"
done
[ "$(dpkg-deb --field "$UO/bsdutils_${UV}_ia64.deb" Version)" = "1:$UV" ] || fail "bsdutils' Version (Debian's epoch)"
for p in util-linux bsdutils; do
    [ "$(dpkg-deb --field "$UO/${p}_${UV}_ia64.deb" Essential)" = yes ] || fail "$p is not Essential"
done
for l in libblkid libmount libsmartcols libuuid; do
    grep -qx "$l 1 ${l}1 (>= $UV)" "$UO/shlibs" || fail "util-linux's shlibs lack $l: $(cat "$UO/shlibs")"
done
[ "$(dpkg-deb --field "$UO/mount_${UV}_ia64.deb" Pre-Depends)" = "libblkid1 (>= $UV), libc6.1 (>= 2.43), libmount1 (>= $UV), libsmartcols1 (>= $UV)" ] ||
    fail "mount's Pre-Depends: $(dpkg-deb --field "$UO/mount_${UV}_ia64.deb" Pre-Depends)"
dpkg-deb --field "$UO/util-linux_${UV}_ia64.deb" Pre-Depends | grep -q "libtinfo6 (>= " || fail "util-linux does not link libtinfo6 (more, setterm)"
dpkg-deb -x "$UO/util-linux_${UV}_ia64.deb" "$TMP/ul"
for f in usr/sbin/agetty usr/sbin/fsck usr/sbin/mkswap usr/bin/dmesg usr/bin/findmnt usr/bin/lsblk usr/bin/more usr/bin/rename.ul \
    usr/bin/partx usr/sbin/isosize usr/share/man/man8/agetty.8.gz; do
    [ -f "$TMP/ul/$f" ] || fail "util-linux lacks /$f"
done
[ "$(readlink "$TMP/ul/usr/sbin/getty")" = agetty ] || fail "util-linux's getty link"
for f in usr/bin/su usr/sbin/runuser usr/sbin/sulogin usr/bin/setpriv usr/bin/hexdump usr/sbin/fdisk usr/bin/uuidgen; do
    [ -e "$TMP/ul/$f" ] && fail "util-linux ships /$f (left out: PAM, libcrypt, libcap-ng, or another package's)"
done
dpkg-deb --ctrl-tarfile "$UO/util-linux_${UV}_ia64.deb" | tar -xO ./postinst | grep -q 'update-alternatives --install /usr/bin/pager pager /bin/more' ||
    fail "util-linux's postinst is not Debian's"
dpkg-deb -x "$UO/mount_${UV}_ia64.deb" "$TMP/mnt"
ia64-linux-gnu-readelf -h "$TMP/mnt/usr/bin/mount" | grep -q 'Machine: *Intel IA-64' || fail "/usr/bin/mount is not IA-64"
tar -xOf "$O/userland/rootfs.tar" usr/bin/mount | cmp -s - "$TMP/mnt/usr/bin/mount" || fail "the root's /usr/bin/mount is not mount's"
grep -qx 'ul-umounted' "$TMP/console" && grep -qx '/dev/sda2' "$TMP/console" ||
    fail "util-linux's mount, umount and blkid did not run in the guest"
ok "util-linux: libblkid1, libmount1, libsmartcols1, libuuid1 (shlibs), their -dev packages, mount (Pre-Depends by shlibs), util-linux and bsdutils (Essential; bsdutils 1:$UV) as Debian splits them; mount, umount, findmnt, blkid ran in the guest"

# e2fsprogs: Debian's split (e2fsprogs important, Pre-Depends by shlibs on
# util-linux's libblkid1 and libuuid1; libext2fs2t64, libcom-err2, libss2,
# logsave and the -dev packages, comerr-dev and ss-dev by their own
# versions), the programs IA-64 and in the root; what ran in the guest
EO=$O/e2fsprogs/debs EV=1.47.4-0trillian1
for d in e2fsprogs_$EV libext2fs2t64_$EV libcom-err2_$EV libss2_$EV logsave_$EV libext2fs-dev_$EV \
    comerr-dev_2.1-$EV ss-dev_2.0-$EV; do
    [ -f "$EO/${d}_ia64.deb" ] || fail "no $d .deb"
done
E2=$EO/e2fsprogs_${EV}_ia64.deb
[ "$(dpkg-deb --field "$E2" Priority)" = important ] || fail "e2fsprogs is not Priority important"
[ "$(dpkg-deb --field "$E2" Pre-Depends)" = "libblkid1 (>= 2.41.5-0trillian1), libc6.1 (>= 2.43), libcom-err2 (>= $EV), libext2fs2t64 (>= $EV), libss2 (>= $EV), libuuid1 (>= 2.41.5-0trillian1)" ] ||
    fail "e2fsprogs' Pre-Depends: $(dpkg-deb --field "$E2" Pre-Depends)"
[ "$(dpkg-deb --field "$E2" Depends)" = logsave ] || fail "e2fsprogs' Depends: $(dpkg-deb --field "$E2" Depends)"
for l in "libcom_err 2 libcom-err2" "libss 2 libss2" "libext2fs 2 libext2fs2t64" "libe2p 2 libext2fs2t64"; do
    grep -qx "$l (>= $EV)" "$EO/shlibs" || fail "e2fsprogs' shlibs lack $l: $(cat "$EO/shlibs")"
done
dpkg-deb --field "$EO/libext2fs2t64_${EV}_ia64.deb" Provides | grep -q "libext2fs2 (= $EV)" || fail "libext2fs2t64 does not provide libext2fs2"
dpkg-deb -x "$E2" "$TMP/e2"
ia64-linux-gnu-readelf -h "$TMP/e2/usr/sbin/e2fsck" | grep -q 'Machine: *Intel IA-64' || fail "/usr/sbin/e2fsck is not IA-64"
[ "$(readlink "$TMP/e2/usr/sbin/fsck.ext4")" = e2fsck ] && [ "$(readlink "$TMP/e2/usr/sbin/mkfs.ext4")" = mke2fs ] || fail "e2fsprogs' fsck.ext4 and mkfs.ext4 links"
for f in etc/mke2fs.conf usr/sbin/tune2fs usr/sbin/resize2fs usr/sbin/debugfs usr/sbin/dumpe2fs usr/sbin/badblocks usr/bin/chattr \
    usr/share/man/man8/e2fsck.8.gz usr/share/doc/e2fsprogs/NEWS.gz; do
    [ -f "$TMP/e2/$f" ] || fail "e2fsprogs lacks /$f"
done
for f in usr/sbin/fuse2fs usr/sbin/fsck usr/sbin/uuidd usr/lib/systemd lib/udev etc/cron.d; do
    [ -e "$TMP/e2/$f" ] && fail "e2fsprogs ships /$f (left out: FUSE, util-linux's fsck, systemd, udev, cron)"
done
tar -xOf "$O/userland/rootfs.tar" usr/sbin/e2fsck | cmp -s - "$TMP/e2/usr/sbin/e2fsck" || fail "the root's /usr/sbin/e2fsck is not e2fsprogs'"
grep -qx 'mkfs.ext4=0' "$TMP/console" && grep -qx 'e2fsck=0' "$TMP/console" && grep -qx 'Filesystem UUID: *3d1f6b2a-5c4e-4f8a-9b7d-2e6c0a1f8b39' "$TMP/console" &&
    grep -qx 'fsck=0' "$TMP/console" && grep -qx 'forky/sid' "$TMP/console" && grep -qx 'logsave=1' "$TMP/console" ||
    fail "e2fsprogs' mkfs.ext4, e2fsck, tune2fs, debugfs, fsck.ext4 or logsave did not run in the guest"
ok "e2fsprogs: e2fsprogs (important; Pre-Depends by shlibs), libext2fs2t64, libcom-err2, libss2, logsave and the -dev packages as Debian splits them; in the guest mkfs.ext4 makes an image, e2fsck -fn finds it clean, tune2fs shows the UUID given, debugfs writes and reads, resize2fs grows it, util-linux's fsck runs fsck.ext4"

# kmod: Debian's split (kmod important, libkmod2, libkmod-dev), the tools
# links to kmod, on liblzma5 and libzstd1 (modules compressed with xz or
# zstd); what ran in the guest over the kernel's modules
KO=$O/kmod/debs KV=30+20221128-0trillian1
for p in kmod libkmod2 libkmod-dev; do
    [ -f "$KO/${p}_${KV}_ia64.deb" ] || fail "no $p .deb"
done
[ "$(dpkg-deb --field "$KO/kmod_${KV}_ia64.deb" Priority)" = important ] || fail "kmod is not Priority important"
[ "$(dpkg-deb --field "$KO/kmod_${KV}_ia64.deb" Depends)" = "libc6.1 (>= 2.43), liblzma5 (>= 5.8.1-0trillian1), libzstd1 (>= 1.5.5)" ] ||
    fail "kmod's Depends: $(dpkg-deb --field "$KO/kmod_${KV}_ia64.deb" Depends)"
grep -qx 'libkmod 2 libkmod2 (>= 30)' "$KO/shlibs" || fail "libkmod2's shlibs: $(cat "$KO/shlibs")"
dpkg-deb -x "$KO/kmod_${KV}_ia64.deb" "$TMP/km"
ia64-linux-gnu-readelf -h "$TMP/km/usr/bin/kmod" | grep -q 'Machine: *Intel IA-64' || fail "/usr/bin/kmod is not IA-64"
for t in depmod insmod lsmod modinfo modprobe rmmod; do
    [ "$(readlink "$TMP/km/usr/sbin/$t")" = ../bin/kmod ] || fail "kmod's /usr/sbin/$t link"
done
[ -f "$TMP/km/lib/modprobe.d/aliases.conf" ] && [ -d "$TMP/km/etc/modprobe.d" ] || fail "kmod's modprobe.d"
[ -e "$TMP/km/etc/init.d/kmod" ] && fail "kmod ships /etc/init.d/kmod (initscripts' file)"
grep -qx 'kmod version 30' "$TMP/console" && grep -qx 'depmod=0' "$TMP/console" &&
    grep -qx '/lib/modules/7.2.8/kernel/fs/binfmt_misc.ko' "$TMP/console" && grep -qE '^loop +[0-9]+ +0$' "$TMP/console" &&
    grep -qx 'rmmod=0 loaded=0' "$TMP/console" || fail "kmod's depmod, modinfo, modprobe, lsmod or rmmod did not run in the guest"
ok "kmod: kmod (important; the tools links to kmod), libkmod2 (shlibs >= 30), libkmod-dev as Debian splits them; in the guest depmod -a, modinfo, modprobe -n -v, modprobe loop, lsmod, a loop mount of an ext4 image, rmmod"

# iproute2: Debian's bookworm file list (ip and ss in /bin, /sbin/ip a link,
# bridge and tc in /sbin, /etc/iproute2's conffiles), libc6.1 its only
# Depends (no libmnl, SELinux, libbpf, libelf, libcap, Berkeley DB); what
# ran in the guest over the loopback and a dummy link
IO=$O/iproute2/debs/iproute2_6.1.0-0trillian1_ia64.deb
[ -f "$IO" ] || fail "no iproute2 .deb"
[ "$(dpkg-deb --field "$IO" Priority)" = important ] || fail "iproute2 is not Priority important"
[ "$(dpkg-deb --field "$IO" Depends)" = "libc6.1 (>= 2.43)" ] || fail "iproute2's Depends: $(dpkg-deb --field "$IO" Depends)"
dpkg-deb -x "$IO" "$TMP/ip2"
for f in bin/ip bin/ss sbin/bridge sbin/tc usr/bin/nstat usr/sbin/genl etc/iproute2/rt_tables usr/lib/ia64-linux-gnu/tc/normal.dist \
    usr/share/man/man8/ip.8.gz; do
    [ -f "$TMP/ip2/$f" ] || fail "iproute2 lacks /$f"
done
[ "$(readlink "$TMP/ip2/sbin/ip")" = /bin/ip ] || fail "iproute2's /sbin/ip link"
ia64-linux-gnu-readelf -h "$TMP/ip2/bin/ip" | grep -q 'Machine: *Intel IA-64' || fail "/bin/ip is not IA-64"
[ "$(dpkg-deb --ctrl-tarfile "$IO" | tar -xO ./conffiles | grep -c '^/etc/iproute2/')" = 9 ] || fail "iproute2's conffiles"
for f in usr/sbin/arpd sbin/devlink sbin/ifstat; do
    [ -e "$TMP/ip2/$f" ] && fail "iproute2 ships /$f (left out: Berkeley DB, libmnl; ifstat as Debian's)"
done
grep -qx 'ip utility, iproute2-6.1.0' "$TMP/console" && grep -qx '    inet 10.9.8.7/24 scope global lo' "$TMP/console" &&
    grep -qE '^local 10\.9\.8\.7 dev lo proto kernel scope host src 10\.9\.8\.7 *$' "$TMP/console" &&
    grep -qE '^198\.51\.100\.0/24 via 192\.0\.2\.254 dev trdum0 *$' "$TMP/console" && grep -qx 'netns=0' "$TMP/console" &&
    grep -qE '^LISTEN +0 +[0-9]+ +10\.9\.8\.7:2222 ' "$TMP/console" ||
    fail "iproute2's ip addr, ip route, ip link add, ip netns or ss did not run in the guest"
ok "iproute2: Debian's bookworm file list (/bin/ip, /bin/ss, /sbin/bridge, /etc/iproute2 conffiles), Depends libc6.1 only; in the guest ip -V, ip link/addr/route on lo, a dummy link and a route via a gateway, ip netns, ss finds a listener"
# dhcpcd: Debian's dhcpcd-base (bookworm's dhcpcd5 9.4.1), IA-64, Depends by
# shlibs and passwd (useradd in the postinst: no adduser here), Provides
# dhcp-client, /etc/dhcpcd.conf its conffile, the hooks Debian ships; in the
# guest it runs, its postinst made the dhcpcd user, and its network proxy
# runs as that user
DO=$O/dhcpcd/debs DH=$O/dhcpcd/debs/dhcpcd-base_9.4.1-0trillian1_ia64.deb
[ -f "$DH" ] || fail "no dhcpcd-base_9.4.1-0trillian1_ia64.deb in $DO"
[ "$(dpkg-deb --field "$DH" Depends)" = "libc6.1 (>= 2.43), passwd" ] || fail "dhcpcd-base's Depends: $(dpkg-deb --field "$DH" Depends)"
[ "$(dpkg-deb --field "$DH" Provides)" = dhcp-client ] || fail "dhcpcd-base does not provide dhcp-client"
[ "$(dpkg-deb -I "$DH" conffiles)" = /etc/dhcpcd.conf ] || fail "dhcpcd-base's conffiles: $(dpkg-deb -I "$DH" conffiles)"
dpkg-deb -I "$DH" postinst | grep -q 'useradd --system' || fail "dhcpcd-base's postinst does not add the dhcpcd user"
dpkg-deb -x "$DH" "$TMP/dh"
ia64-linux-gnu-readelf -h "$TMP/dh/usr/sbin/dhcpcd" | grep -q 'Machine: *Intel IA-64' || fail "/usr/sbin/dhcpcd is not IA-64"
for h in 01-test 20-resolv.conf 30-hostname 60-ntp-common.conf 62-chrony.conf 64-timesyncd.conf 68-openntpd.conf; do
    [ -f "$TMP/dh/usr/lib/dhcpcd/dhcpcd-hooks/$h" ] || fail "dhcpcd-base lacks the hook $h"
done
grep -qx 'dhcpcd 9.4.1' "$TMP/console" && grep -qx 'dhcpcd:65534:/usr/lib/dhcpcd:/bin/false' "$TMP/console" &&
    grep -qx 'network-proxy-user=dhcpcd' "$TMP/console" && grep -qx 'dhcpcd-stopped' "$TMP/console" ||
    fail "dhcpcd did not run in the guest, or its postinst made no dhcpcd user, or privsep did not drop to it"
ok "dhcpcd: dhcpcd-base (Depends libc6.1 and passwd, Provides dhcp-client, /etc/dhcpcd.conf a conffile, Debian's hooks); in the guest dhcpcd --version, the dhcpcd user made by its postinst, a daemon whose network proxy runs as dhcpcd, stopped by dhcpcd -x"

# hostname, ncurses-base and ncurses-bin: Essential, Priority required (so
# debootstrap's minbase takes them from the archive), Debian's file lists
# (hostname's links, debian/ncurses-base.install's entries, ncurses-bin's
# programs and links), Pre-Depends by shlibs; what ran in the guest
HN=$O/hostname/debs/hostname_3.25-0trillian1_ia64.deb NB=$NC/ncurses-base_${V6}_all.deb NI=$NC/ncurses-bin_${V6}_ia64.deb
for d in "$HN" "$NB" "$NI"; do
    [ -f "$d" ] || fail "no $d"
    [ "$(dpkg-deb --field "$d" Essential) $(dpkg-deb --field "$d" Priority)" = "yes required" ] ||
        fail "$d is not Essential and Priority required"
done
[ "$(dpkg-deb --field "$NB" Architecture)" = all ] || fail "ncurses-base is not Architecture all, as Debian's"
[ "$(dpkg-deb --field "$HN" Pre-Depends)" = "libc6.1 (>= 2.43)" ] || fail "hostname's Pre-Depends: $(dpkg-deb --field "$HN" Pre-Depends)"
[ "$(dpkg-deb --field "$NI" Pre-Depends)" = "libc6.1 (>= 2.43), libtinfo6 (>= $V6)" ] ||
    fail "ncurses-bin's Pre-Depends: $(dpkg-deb --field "$NI" Pre-Depends)"
dpkg-deb -x "$HN" "$TMP/hn"; dpkg-deb -x "$NB" "$TMP/nb"; dpkg-deb -x "$NI" "$TMP/ni"
ia64-linux-gnu-readelf -h "$TMP/hn/usr/bin/hostname" | grep -q 'Machine: *Intel IA-64' || fail "hostname is not IA-64"
for l in dnsdomainname domainname nisdomainname ypdomainname; do
    [ "$(readlink "$TMP/hn/usr/bin/$l")" = hostname ] || fail "hostname's $l link"
done
for f in a/ansi d/dumb l/linux v/vt100 v/vt102 v/vt220 x/xterm x/xterm-256color s/screen r/rxvt-unicode h/hurd; do
    [ -f "$TMP/nb/usr/share/terminfo/$f" ] || fail "ncurses-base lacks /usr/share/terminfo/$f"
done
[ "$(readlink "$TMP/nb/usr/share/terminfo/x/xterm-debian")" = xterm ] || fail "ncurses-base's xterm-debian link"
[ "$(find "$TMP/nb/usr/share/terminfo" ! -type d | wc -l)" = 44 ] || fail "ncurses-base: not debian/ncurses-base.install's 44 entries"
for f in tic infocmp toe tput tset clear tabs; do
    ia64-linux-gnu-readelf -h "$TMP/ni/usr/bin/$f" | grep -q 'Machine: *Intel IA-64' || fail "ncurses-bin's $f is not IA-64"
done
[ "$(readlink "$TMP/ni/usr/bin/reset")" = tset ] && [ "$(readlink "$TMP/ni/usr/bin/captoinfo")" = tic ] || fail "ncurses-bin's links"
grep -qx 'hostname 3.25' "$TMP/console" && grep -qx 'trillian-test' "$TMP/console" &&
    grep -qE '^0000000 033 +\[ +H 033 +\[ +J *$' "$TMP/console" && grep -qx 'vt100|vt100-am|DEC VT100 (w/advanced video),' "$TMP/console" &&
    grep -qE '^0000000 033 +\[ +3 +1 +m *$' "$TMP/console" ||
    fail "hostname, tput, infocmp or setterm did not run in the guest"
ok "hostname 3.25, ncurses-base and ncurses-bin: Essential, required, Debian's files and links (44 terminfo entries), Pre-Depends by shlibs; in the guest hostname prints and sets the host name, tput writes vt100's clear, infocmp, tic and toe read ncurses-base, setterm finds it"

# lintian: only the tags below, each because
#   no-changelog: there is no Debian source package, so no changelog.Debian.gz;
#   arch-dependent-file-not-in-arch-specific-directory: the glibc stage builds
#     --prefix=/usr (/lib, /usr/lib), not Debian's multiarch directories;
#   shared-library-lacks-stack-section: ia64 objects have no PT_GNU_STACK (its
#     stack is not executable without one);
#   hardening-no-pie: the ia64 toolchain does not default to PIE;
#   no-manual-page: glibc installs no manual pages (Debian writes its own);
#     kmod's are DocBook, and no xsltproc is here;
#   shared-library-is-executable: libc.so.6.1 runs as a program (executables);
#   shared-library-lacks-prerequisites: ld-linux-ia64.so.2 needs nothing;
#   shared-library-lacks-version: libmemusage.so and libpcprofile.so are
#     preload libraries without a versioned SONAME (Debian overrides it too);
#   embedded-library: lintian takes libc's own math for an embedded libm,
#     and libbz2 for an embedded bzip2 (it spares Debian's by its Source);
#   unstripped-binary-or-object, unpack-message-for-deb-data: glibc installs an
#     object file (mcheck-init.o) as usr/lib/libmcheck.a, which ar cannot read;
#   no-code-sections: libdl.a, libpthread.a, librt.a, libutil.a and libanl.a
#     are empty since glibc 2.34, kept for old build systems;
#   maintscript-calls-ldconfig: libc-bin's postinst makes the cache, as
#     Debian's does (with an override);
#   maintainer-script-has-unexpanded-debhelper-token: gzip's, tar's and xz-utils'
#     maintainer scripts are Debian's debian/ files as they are; debhelper,
#     which would put its snippets at #DEBHELPER#, does not build them (the
#     token is a shell comment);
#   groff-message: coreutils' upstream manual pages (help2man's) use a
#     macro (mono) this groff does not define;
#   old-fsf-address-in-copyright-file: bash's copyright is Debian's as is;
#   mismatched-override (base-files): Debian's override file has lines for
#     lib64 and libx32 (amd64's and x32's merged-/usr links; ia64 has none)
#     and for a relative /etc/os-release link (the package kind writes links
#     between top-level directories absolute);
#   old-style-config-script-multiarch-path (libassuan-dev): libassuan
#     2.5.5's libassuan-config names the multiarch libdir, and Debian's
#     libassuan-dev 2.5.5-5 ships the same script;
#   depends-on-essential-package-without-using-version: sysvinit-core's
#     Depends are Debian's as they are (login, Essential in lintian's data);
#   missing-depends-on-sensible-utils: util-linux's dmesg runs sensible-pager
#     (Debian's patch); Debian's Recommends it, and the kind writes no Recommends;
#   groff-message (macro 'Aq'): util-linux's asciidoctor man pages (libblkid.3,
#     uuid*.3) use a macro this groff does not define;
#   groff-message (libcrypt-dev, passwd): libxcrypt's pages use tbl's TS and
#     TE without a preprocessor line, one translated vipw.8 of shadow's AQ;
#   excessive-priority-for-library-package: libcrypt1 is required as in
#     Debian's archive (its override file; its control says optional);
#   package-name-doesnt-match-sonames, missing-depends-on-sensible-utils
#     (apt): libapt-private is apt's own and has its own pager fallback;
#     Debian's apt.lintian-overrides says both;
#   missing-systemd-timer-for-cron-script (apt): Debian's apt ships the
#     apt-daily timers beside the cron script; systemd is left out here;
#   maintainer-script-needs-depends-on-adduser (apt): Debian's apt
#     depends on adduser, which is not built here; the postinst calls it
#     only when dpkg knows it, else adds _apt itself;
#   python3-script-but-no-python3-dep (iproute2): routel is Python; Debian's
#     iproute2 Suggests python3, and the kind writes no Suggests;
#   groff-message (ncurses-bin): captoinfo.1's table is wider than groff's
#     page, upstream's manual page as Debian ships it;
#   running with root privileges: the test may run as root.
command -v lintian >/dev/null 2>&1 || fail "lintian is not installed (tools/install-deps tests installs it)"
lintian --tag-display-limit 0 "$G"/*.deb "$GS" "$DB" "$MK" "$DA" "$DU" "$BP" "$SD" "$GR" "$GZ" "$TR" \
    "$O"/xz-utils/debs/*.deb "$O"/zstd/debs/*.deb "$O"/bzip2/debs/*.deb "$O"/xxhash/debs/*.deb "$O"/lz4/debs/*.deb \
    "$BF" "$CU" "$FU" "$DF" "$BA" "$NC"/*.deb "$O"/libgpg-error/debs/*.deb "$O"/libgcrypt20/debs/*.deb \
    "$O"/libassuan/debs/*.deb "$O"/libksba/debs/*.deb "$O"/gnupg2/debs/*.deb \
    "$SV"/*.deb "$IS" "$IH" "$O"/hostname/debs/*.deb "$UO"/*.deb "$O"/libxcrypt/debs/*.deb "$O"/shadow/debs/*.deb "$O"/apt/debs/*.deb "$EO"/*.deb "$KO"/*.deb "$IO" "$DH" >"$TMP/lintian.txt" 2>&1
grep -v -e ' no-changelog ' -e ' arch-dependent-file-not-in-arch-specific-directory ' \
    -e ' shared-library-lacks-stack-section ' -e ' hardening-no-pie ' -e ' no-manual-page ' \
    -e ' shared-library-is-executable ' -e ' shared-library-lacks-prerequisites ' \
    -e ' shared-library-lacks-version ' -e ' embedded-library ' \
    -e ' unstripped-binary-or-object \[usr/lib/libmcheck\.a\]' \
    -e ' unpack-message-for-deb-data ar failed for usr/lib/libmcheck\.a' -e ' no-code-sections ' \
    -e ' maintscript-calls-ldconfig ' -e ' maintainer-script-has-unexpanded-debhelper-token ' \
    -e " groff-message .*macro '/\\?mono' not defined" -e " groff-message .*macro 'Aq' not defined" \
    -e 'E: libassuan-dev: old-style-config-script-multiarch-path ' \
    -e ' missing-depends-on-sensible-utils sensible-pager ' \
    -e " libcrypt-dev: groff-message .*macro 'T[SE]' not defined" -e " passwd: groff-message .*macro 'AQ' not defined" \
    -e 'W: libcrypt1: excessive-priority-for-library-package required' \
    -e 'W: apt: package-name-doesnt-match-sonames ' -e 'E: apt: missing-depends-on-sensible-utils ' \
    -e 'W: apt: missing-systemd-timer-for-cron-script ' -e 'W: apt: maintainer-script-needs-depends-on-adduser ' \
    -e 'E: iproute2: python3-script-but-no-python3-dep ' \
    -e ' ncurses-bin: groff-message page 1: table text block will not fit on one page ' \
    -e 'W: bash: old-fsf-address-in-copyright-file' -e 'W: base-files: mismatched-override ' -e 'running with root privileges' \
    -e 'E: sysvinit-core: depends-on-essential-package-without-using-version Depends: login' "$TMP/lintian.txt" |
    grep -E '^[EWIX]:' && fail "lintian reports tags beyond the tolerated ones (above)"
ok "lintian over the glibc, libgcc, dropbear-bin, mawk, dash, debianutils, base-passwd, sed, grep, gzip, tar, base-files, coreutils, findutils, diffutils, ncurses, bash, sysvinit, insserv, init-system-helpers, util-linux, libxcrypt, shadow, apt, e2fsprogs, kmod, iproute2, dhcpcd-base and hostname packages, the compression libraries' (xz-utils, zstd, bzip2, xxhash, lz4) and GnuPG's (libgpg-error, libgcrypt20, libassuan, libksba, gpgv): only the tolerated tags ($(grep -cE '^[EWIX]:' "$TMP/lintian.txt") of them)"

P=$O/archive/dists/sid-trillian/main/binary-ia64/Packages
[ -f "$P" ] || fail "no $P"
for p in libc6.1 libc-bin libc6.1-dev libc-dev-bin libc-devtools libgcc-s1 zlib1g zlib1g-dev hello \
    libmd0 libmd-dev dpkg libdpkg-dev dropbear-bin libstdc++6 gperf mawk dash debianutils base-passwd \
    sed grep gzip tar base-files coreutils findutils diffutils libtinfo6 libncursesw6 libncurses-dev bash \
    liblzma5 liblzma-dev xz-utils libzstd1 libzstd-dev zstd libbz2-1.0 libbz2-dev bzip2 \
    libxxhash0 libxxhash-dev xxhash liblz4-1 liblz4-dev lz4 \
    libgpg-error0 libgpg-error-dev gpgrt-tools libgcrypt20 libgcrypt20-dev libassuan0 libassuan-dev \
    libksba8 libksba-dev gpgv sysvinit-core sysvinit-utils sysv-rc initscripts \
    bootlogd insserv init-system-helpers libblkid1 libblkid-dev libmount1 libmount-dev \
    libsmartcols1 libsmartcols-dev libuuid1 uuid-dev mount util-linux bsdutils \
    libcrypt1 libcrypt-dev passwd login login.defs uidmap libsubid5 libsubid-dev \
    libapt-pkg6.0 libapt-pkg-dev apt \
    e2fsprogs libext2fs2t64 libext2fs-dev libcom-err2 comerr-dev libss2 ss-dev logsave \
    kmod libkmod2 libkmod-dev iproute2 dhcpcd-base hostname ncurses-base ncurses-bin; do
    grep -qx "Package: $p" "$P" || fail "Packages lacks $p"
done
grep -q '^Architectures: ia64$' "$O/archive/dists/sid-trillian/Release" || fail "Release's Architectures"
ok "the apt archive (sid-trillian, ia64) lists the glibc and libgcc packages, zlib1g, zlib1g-dev, hello, libmd, dpkg, dropbear-bin, libstdc++6, gperf, mawk, dash, debianutils, base-passwd, sed, grep, gzip, tar, base-files, coreutils, findutils, diffutils, ncurses' five, hostname, bash, the compression libraries and programs, sysvinit's five, insserv, init-system-helpers, util-linux's eleven, e2fsprogs' eight, kmod's three, iproute2 and dhcpcd-base"
