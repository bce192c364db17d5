# Slow tier: recipes/ia64-debian.cfg, a Debian root from Trillian's own
# signed ia64 archive: debootstrap --foreign from the archive stage (the
# keyring checked), debootstrap's second stage on the first boot in
# qemu-system-ia64, sysvinit, the serial getty's login, and the gating
# check's dpkg, apt and sysvinit steps; then the check's second boot of the
# same disk as the first left it (reboot_from = "image"): no first-boot step
# again, hello still installed and greeting; between them, dhcpcd's lease
# through the e1000 and apt over HTTP from the same archive (http =
# "archive"): gperf installed and run. Cold: every package of
# include/ia64-archive.cfg on top of the default's toolchain, glibc and
# kernel (the cache of recipes/ia64-packages.cfg has them all: the same
# keys); the boot check itself, the second stage under TCG, about 6 to 8
# minutes.
. "$TOP/tests/lib.sh"
[ -r /usr/src/linux-source-6.1.tar.xz ] || skip "linux-source-6.1 is not installed"
need debootstrap
boot_shipped_recipe ia64-debian 7.2.
# the transcript as the check reads it: with ncurses-base's terminfo, bash's
# readline wraps each command in bracketed-paste escapes
L=$TMP/console.txt
clean_console "$O/boot-qemu/boot-qemu.log" >"$L"
tar -tf "$O/userland/rootfs.tar" | grep -qx 'debootstrap/debootstrap' || fail "not a foreign first stage"
grep -q '^trillian-firstboot: step 2: debootstrap --second-stage' "$L" || fail "the second stage did not run on ia64"
grep -q '^I: Configuring libc6\.1:ia64\.\.\.' "$L" || fail "the second stage did not configure libc6.1"
grep -q '^I: Base system installed successfully' "$L" || fail "the second stage did not finish"
grep -q 'INIT: version 3\.18 booting' "$L" || fail "sysvinit 3.18 did not start"
grep -q 'login: root (automatic login)' "$L" || fail "the getty did not log root in"
grep -q '^audit=0' "$L" || fail "dpkg --audit did not come out clean"
grep -q '^apt 2\.6\.1 (ia64)' "$L" || fail "apt did not run"
grep -q '^Get:1 file:/trillian-archive sid-trillian InRelease' "$L" && grep -q '^update=0' "$L" ||
    fail "apt-get update did not read the archive in the root"
grep -q '^Setting up hello (2\.12\.3-0trillian1)' "$L" && grep -q '^Hello, world!' "$L" ||
    fail "apt-get did not install hello, or it did not run"
# the network: dhcpcd's lease through the e1000, then the same archive over
# HTTP from trillian __http-serve (its request log beside the transcript)
grep -qE '^[0-9]+: eth0 +inet 10\.0\.2\.15/24 ' "$L" || fail "dhcpcd did not lease 10.0.2.15 on eth0"
grep -q '^Get:1 http://10\.0\.2\.100 sid-trillian InRelease' "$L" || fail "apt-get update did not read the archive over HTTP"
grep -qE '^Get:[0-9]+ http://10\.0\.2\.100 sid-trillian/main ia64 gperf ia64 3\.3-0trillian1' "$L" &&
    grep -q '^Setting up gperf (3\.3-0trillian1)' "$L" && grep -q '^GNU gperf 3\.3' "$L" ||
    fail "apt-get did not download and install gperf over HTTP, or it did not run"
H=$O/boot-qemu/boot-qemu.http.log
grep -q '^GET /dists/sid-trillian/InRelease 200 ' "$H" && grep -qE '^GET /pool/.*/gperf_3\.3-0trillian1_ia64\.deb 200 ' "$H" ||
    fail "the HTTP server's log lacks the InRelease or gperf's .deb: $(head -n 5 "$H")"
# the second boot: the image again, as the first boot left it
R=$(sed -n "/^==== trillian: reboot: the image 'disk' again, as the first boot left it/,\$p" "$L")
[ -n "$R" ] || fail "no second boot of the image in the transcript"
grep -q 'image\.disk\.img,format=raw,snapshot=off' "$O/logs/boot-qemu.log" ||
    fail "the first boot did not run on the private writable copy of the image"
! printf '%s\n' "$R" | grep -q 'trillian-firstboot: \|debootstrap --second-stage' ||
    fail "the first boot's script ran again on the second boot"
printf '%s\n' "$R" | grep -q 'login: root (automatic login)' || fail "the second boot did not log root in"
printf '%s\n' "$R" | grep -q '^Status: install ok installed' && printf '%s\n' "$R" | grep -q '^Hello, world!' ||
    fail "hello was not installed, or did not run, on the second boot"
printf '%s\n' "$R" | grep -q '^GNU gperf 3\.3' || fail "gperf (installed over HTTP) did not run on the second boot"
printf '%s\n' "$R" | grep -q '^# trillian-firstboot has run;' && printf '%s\n' "$R" | grep -q '^state=gone' ||
    fail "/sbin/trillian-firstboot is not the stub, or its state is left, on the second boot"
# bad input in the guest: the index copy whose Packages does not match the
# signed InRelease is refused by its hash, and apt-get update exits 100
printf '%s\n' "$R" | grep -Eq '^E: Failed to fetch file:/root/bad/dists/sid-trillian/main/binary-ia64/Packages(\.xz)? +Hash Sum mismatch' &&
    printf '%s\n' "$R" | grep -q '^update=100' || fail "apt-get update in the guest did not refuse the changed Packages"
grep -q '"reboot_from": "image"' "$O/boot-qemu/stage-manifest.json" ||
    fail "the stage manifest does not name reboot_from = image"
tar -tf "$O/userland/rootfs.tar" | grep -qx 'trillian-archive/dists/sid-trillian/InRelease' ||
    fail "the archive is not in the root (archive_in_root)"
# the root is Debian's layout from the archive, signed: the keyring the
# stage used, the recorded source, and every package from the archive
tar -xOf "$O/userland/rootfs.tar" etc/apt/sources.list | grep -q ' sid-trillian main' ||
    fail "the root's sources.list does not name the archive's suite"
P=$O/archive/dists/sid-trillian/main/binary-ia64/Packages
while IFS='	' read -r p v a; do
    [ "$p" = package ] && continue
    awk -v p="$p" -v v="$v" '$1 == "Package:" { n = $2 } $1 == "Version:" && n == p && $2 == v { f = 1 } END { exit !f }' "$P" ||
        fail "the root's $p $v is not the archive's"
done <"$O/userland/packages.tsv"
ok "ia64-debian: debootstrap's second stage finished on ia64, sysvinit logged root in, dpkg --audit clean, apt-get installed hello from the signed archive in the root, dhcpcd leased an address through the e1000 and apt-get installed gperf over HTTP; the second boot of the same disk: no first-boot step, hello and gperf installed and running; every package of the root is the archive's ($(($(wc -l <"$O/userland/packages.tsv") - 1)))"
