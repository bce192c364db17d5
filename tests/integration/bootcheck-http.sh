# A boot check's `http`: the guest fetches a stage's output over HTTP through
# its network card. qemu-system-x86_64 (TCG) boots Debian's cloud kernel
# with a busybox initramfs (as bootcheck-qemu-kernel.sh, whose downloads it
# shares) that loads virtio_net (a module in that kernel) and gives a root
# shell; the check's steps get an address by DHCP from QEMU's user-mode
# network, fetch files from http://10.0.2.100/ with busybox wget and check
# them against the hashes computed here, a percent-encoded name, a 404, and
# time 20 requests. The served stage is a `command` stage in a cache whose
# path has a space (the guestfwd command is split by sh's rules), and its
# request log must list what the guest asked. Then the plan-time errors.
# SKIPs when qemu, cpio, dpkg-deb or the packages are not available.
. "$TOP/tests/lib.sh"
need qemu-system-x86_64 cpio dpkg-deb apt-get apt-cache
unset TRILLIAN_QEMU_X86_64 FAKE_EMU_MODE
cloud_kernel_and_busybox

# The initramfs: busybox, virtio_net and the modules it needs (in load
# order: the cloud kernel has them as modules), a udhcpc script, a shell.
r=$x/root
mkdir -p "$r/bin" "$r/dev" "$r/proc" "$r/sys" "$r/lib/modules"
cp "$x/bb/bin/busybox" "$r/bin/busybox"
mods="virtio_ring virtio virtio_pci_modern_dev virtio_pci_legacy_dev virtio_pci failover
      net_failover virtio_net"
for m in $mods; do
    f=$(find "$x/k/lib/modules" -name "$m.ko*" | head -n1)
    [ -n "$f" ] || skip "$kpkg has no $m module"
    case $f in *.ko) cp "$f" "$r/lib/modules/$m.ko" ;;
               *.ko.xz) xz -dc "$f" > "$r/lib/modules/$m.ko" ;;
               *) skip "$m: cannot unpack $f" ;; esac
done
cat > "$r/bin/dhcp.sh" <<'EOF'
#!/bin/sh
[ "$1" = bound ] && ip addr add "$ip/$mask" dev "$interface" && echo "dhcp: bound $ip/$mask"
exit 0
EOF
cat > "$r/init" <<EOF
#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
for m in $(echo $mods); do insmod /lib/modules/\$m.ko || echo "insmod \$m failed"; done
ip link set lo up
ip link set eth0 up
echo TRILLIAN-INIT-READY
export PS1='trl# '
exec sh
EOF
chmod 755 "$r/init" "$r/bin/dhcp.sh"
(cd "$r" && find . | LC_ALL=C sort | cpio -o -H newc --quiet > "$TMP/initrd.img") \
    || fail "cpio"

# What is served: a 1 MiB random file, a name with a space and pluses.
S=$TMP/served
mkdir -p "$S/pool"
head -c 1048576 /dev/urandom > "$S/pool/blob.bin"
printf 'spaced file\n' > "$S/pool/a b++.txt"
printf 'small\n' > "$S/pool/small.txt"
blob=$(sha256sum < "$S/pool/blob.bin" | cut -d' ' -f1)

# recipe NAME BOOTCHECK-SETTINGS
recipe() {
    local aa="[\"cp\", \"-R\", \"$S/pool\", \"\${out}/pool\"]"
    [ -n "${archive_argv:-}" ] && aa=$archive_argv
    cat > "$TMP/$1.cfg" <<CFG
name = "$1";
arch = "amd64";
stages = (
  { name = "kernel"; kind = "command"; argv = ["cp", "$TMP/vmlinuz", "\${out}/vmlinuz"];
    inputs = ["$TMP/vmlinuz"]; outputs = ["vmlinuz"]; },
  { name = "initramfs"; kind = "command"; argv = ["cp", "$TMP/initrd.img", "\${out}/initrd.img"];
    inputs = ["$TMP/initrd.img"]; outputs = ["initrd.img"]; },
  { name = "archive"; kind = "command"; argv = $aa;
    inputs = ["$S"]; outputs = ["pool/blob.bin", "pool/small.txt"]; }
);
bootcheck = ( { kind = "boot"; name = "boot"; image = "kernel";
                append = "console=ttyS0 panic=-1 loglevel=3"; memory_mib = 512;
                $2 } );
CFG
}

URL=http://10.0.2.100
recipe fetch "http = \"archive\"; steps = (
  { wait = \"TRILLIAN-INIT-READY\"; timeout = 300; name = \"boot\"; },
  { wait = \"trl# \$\"; name = \"shell prompt\"; },
  { send = \"udhcpc -i eth0 -n -q -t 5 -s /bin/dhcp.sh\"; },
  { expect = \"^dhcp: bound 10[.]0[.]2[.]15/24\$\"; name = \"DHCP from QEMU's user-mode network\"; },
  { send = \"wget -q -O - $URL/pool/blob.bin | sha256sum\"; },
  { expect = \"^$blob  -\$\"; name = \"1 MiB over HTTP, its sha256\"; },
  { send = \"wget -q -O - '$URL/pool/a%20b%2B%2B.txt'\"; },
  { expect = \"^spaced file\$\"; name = \"a percent-encoded name\"; },
  { send = \"wget -O /dev/null $URL/pool/nothing-here; echo rc=\$?\"; },
  { expect = \"404 Not Found\"; name = \"a missing file: 404\"; },
  { expect = \"^rc=1\$\"; },
  { send = \"time sh -c 'i=0; while [ \$i -lt 20 ]; do wget -q -O /dev/null $URL/pool/small.txt; i=\$((i+1)); done'\"; },
  { expect = \"^real\"; name = \"20 requests\"; timeout = 120; },
  { send = \"echo o > /proc/sysrq-trigger\"; },
  { exit = true; }
);"
C="$TMP/ca che" # a space in the served directory's path
start=$(date +%s.%N)
trl build "$TMP/fetch.cfg" --cache "$C" -o "$TMP/out-fetch" -j2
expect_rc 0
secs=$(awk "BEGIN { printf \"%.1f\", $(date +%s.%N) - $start }")
B=$TMP/out-fetch/boot
H=$B/boot.http.log
[ -f "$H" ] || fail "no boot.http.log in the check's output"
grep -qx "GET /pool/blob.bin 200 1048576" "$H" || { cat "$H"; fail "the log lacks the 1 MiB GET"; }
grep -qx "GET /pool/a%20b%2B%2B.txt 200 12" "$H" || { cat "$H"; fail "the log lacks the encoded name"; }
grep -qx "GET /pool/nothing-here 404 14" "$H" || { cat "$H"; fail "the log lacks the 404"; }
[ "$(grep -cx "GET /pool/small.txt 200 6" "$H")" = 20 ] || { cat "$H"; fail "not 20 small GETs"; }
grep -qF "http: 23 requests from the guest, 1 not answered with 200" "$TMP/out-fetch/logs/boot.log" \
    || fail "the stage log has no request summary"
grep -qF -- "guestfwd=tcp:10.0.2.100:80-cmd:" "$TMP/out-fetch/logs/boot.log" \
    || fail "the emulator line has no guestfwd"
real=$(clean_console "$B/boot.log" | awk '/^real/ { print $2, $3; exit }')
ok "the guest fetched 1 MiB (sha256), an encoded name and a 404 over HTTP, 23 requests logged; 20 requests took '$real' in the guest (TCG); ${secs}s in all"

# Trillian replaced while it runs (an upgrade, a `make`): the check must
# still serve with the program that runs it, not whatever the path names now.
# The served stage itself moves a failing stand-in over a copy of the binary
# before the check starts; the check's key is the first one's, so a new cache.
mkdir -p "$TMP/bin"
cp "$TRILLIAN" "$TMP/bin/trillian"
printf '#!/bin/sh\necho "the replacement, not the running trillian" >&2\nexit 1\n' > "$TMP/new"
chmod 755 "$TMP/new"
printf 'mv -f "%s" "%s" && cp -R "%s" "$1/pool"\n' "$TMP/new" "$TMP/bin/trillian" "$S/pool" \
    > "$TMP/replace.sh"
archive_argv="[\"sh\", \"$TMP/replace.sh\", \"\${out}\"]" \
    recipe replaced "http = \"archive\"; steps = (
  { wait = \"TRILLIAN-INIT-READY\"; timeout = 300; name = \"boot\"; },
  { wait = \"trl# \$\"; name = \"shell prompt\"; },
  { send = \"udhcpc -i eth0 -n -q -t 5 -s /bin/dhcp.sh\"; },
  { expect = \"^dhcp: bound 10[.]0[.]2[.]15/24\$\"; name = \"DHCP\"; },
  { send = \"wget -q -O - $URL/pool/blob.bin | sha256sum\"; },
  { expect = \"^$blob  -\$\"; name = \"1 MiB over HTTP after the binary was replaced\"; },
  { send = \"echo o > /proc/sysrq-trigger\"; },
  { exit = true; }
);"
TRILLIAN_DATA=$TOP "$TMP/bin/trillian" build "$TMP/replaced.cfg" --cache "$TMP/cache-replaced" \
    -o "$TMP/out-replaced" -j2 > "$TMP/out.txt" 2>&1
rc=$?
expect_rc 0
grep -q "the replacement, not the running trillian" "$TMP/bin/trillian" ||
    fail "the served stage did not replace the binary"
L=$TMP/out-replaced/logs/boot.log
grep -qF "its helpers run from a copy" "$L" || { tail -n 20 "$L"; fail "the log does not say the helper ran from a copy"; }
grep -qx "GET /pool/blob.bin 200 1048576" "$TMP/out-replaced/boot/boot.http.log" \
    || fail "the replaced binary's check did not serve the blob"
ok "trillian replaced during the build: the check's HTTP helper ran from a copy of the running program"

# The served stage is part of the check's key: a changed file boots again.
bootline() { trl plan "$TMP/fetch.cfg" --cache "$C" -o "$TMP/out-fetch"; expect_rc 0
             awk '$1 == "boot" { print $3, $4 }' "$TMP/out.txt"; }
before=$(bootline)
printf 'changed\n' > "$S/pool/small.txt"
after=$(bootline)
case $before in *" cached") ;; *) fail "the passed check is not cached: $before" ;; esac
case $after in *" build") ;; *) fail "the check would not run again after the served file changed: $after" ;; esac
[ "${before% *}" != "${after% *}" ] || fail "the check's key did not change"
ok "a changed served file changes the check's key ($before -> $after)"

# Plan-time errors at the recipe line.
recipe nostage 'http = "apt-archive"; profile = "marker";'
trl plan "$TMP/nostage.cfg" --cache "$TMP/cache"
[ "$rc" -ne 0 ] || fail "http naming no stage was accepted"
expect_out "nostage.cfg:"
expect_out "bootcheck.boot.http: no stage 'apt-archive' in the recipe"
recipe ski 'http = "archive"; emulator = "ski"; profile = "marker";'
trl plan "$TMP/ski.cfg" --cache "$TMP/cache"
[ "$rc" -ne 0 ] || fail "http on Ski was accepted"
expect_out "emulator ski gives the guest no network to serve HTTP on"
ok "plan-time errors: no such stage, an emulator without network"
