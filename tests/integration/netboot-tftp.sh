# The ia64 netboot tree served for real: images kind "netboot" (elilo, EFI
# Itanium PXE) on small fake inputs, then, in a user + network namespace
# (unshare -rn: no root needed, nothing on the host network), a veth pair
# 10.9.0.1 (server) / 10.9.0.2 (client) and a real dnsmasq started with the
# generated dnsmasq.conf (tftp_root = the tree):
#  - every file of the tree fetched over TFTP (curl tftp://) has the tree's
#    sha256, including the per-client elilo configurations, named as elilo
#    asks for them (C0A80017.conf for 192.168.0.23; 52:54:00:12:34:56.conf)
#  - a DHCPDISCOVER with client architecture 2 (EFI Itanium, option 93) is
#    offered bootia64.efi from 10.9.0.1; the MAC,IP client gets its address;
#    an x64 UEFI client (arch 9) is offered an address but no boot file
#  - dnsmasq --test accepts the file; a bad clients entry is a recipe error
# No emulator here can PXE-boot ia64, so the client side is this test's.
. "$TOP/tests/lib.sh"
. "$TOP/tests/fixtures/image-lib.sh"
need gensquashfs dnsmasq unshare nsenter ip curl python3 sha256sum
unshare -rn true 2>/dev/null || skip "user and network namespaces are not permitted here (unshare -rn fails)"
unshare -rn ip link add v0 type veth peer name v1 2>/dev/null || skip "veth pairs cannot be made in a network namespace here"
image_inputs 200000
IMAGE_ARCH=ia64 image_recipe net64 "{ kind = \"netboot\"; name = \"net\"; squashfs_comp = \"gzip\";
    dhcp_range = \"10.9.0.10,10.9.0.50,1h\"; interface = \"veth0\"; tftp_root = \"$TMP/out/net/tftp\";
    clients = [\"192.168.0.23\", \"52:54:00:12:34:56,10.9.0.24\"]; }"
trl build "$TMP/net64.cfg" --cache "$TMP/cache" -o "$TMP/out"
expect_rc 0
T=$TMP/out/net/tftp
CONF=$TMP/out/net/dnsmasq.conf
for f in bootia64.efi elilo.conf C0A80017.conf 52:54:00:12:34:56.conf 0A090018.conf vmlinuz initrd.img; do
    [ -s "$T/$f" ] || { ls "$T"; fail "tftp/$f is missing"; }
done
cmp -s "$T/elilo.conf" "$T/C0A80017.conf" || fail "the per-client file is not a copy of elilo.conf"
grep -qx "dhcp-host=52:54:00:12:34:56,10.9.0.24" "$CONF" || fail "no dhcp-host line for the MAC,IP client"
grep -qx "dhcp-match=set:trillian-efi,option:client-arch,2" "$CONF" || fail "no EFI Itanium match"
dnsmasq --test --conf-file="$CONF" > "$TMP/test.txt" 2>&1 || { cat "$TMP/test.txt"; fail "dnsmasq --test rejects dnsmasq.conf"; }
ok "tree: bootia64.efi, elilo.conf and per-client C0A80017.conf, 52:54:00:12:34:56.conf, 0A090018.conf; dnsmasq --test OK"

trl build "$TMP/net64.cfg" --cache "$TMP/cache" -o "$TMP/bad" --set 'images.net.clients=["10.9.0.300"]'
expect_rc 2
expect_out "images.net.clients: '10.9.0.300' is not an IPv4 address"
ok "a bad clients entry is a recipe error naming images.net.clients"

(cd "$T" && find . -type f | sed 's|^\./||' | LC_ALL=C sort) > "$TMP/files.txt"
cat > "$TMP/dhcp.py" <<'PY'
# A DHCPDISCOVER from MAC with client architecture ARCH (option 93, and the
# PXE vendor class); prints "yiaddr siaddr file" of the OFFER.
import socket, struct, sys, time
mac = bytes.fromhex(sys.argv[1].replace(":", ""))
arch = int(sys.argv[2])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.setsockopt(socket.SOL_SOCKET, socket.SO_BROADCAST, 1)
s.setsockopt(socket.SOL_SOCKET, socket.SO_BINDTODEVICE, b"veth1")
s.bind(("", 68))
s.settimeout(10)
xid = 0x5452494c + arch
p = struct.pack("!BBBBIHH4s4s4s4s16s64s128s", 1, 1, 6, 0, xid, 0, 0x8000, bytes(4), bytes(4),
                bytes(4), bytes(4), mac + bytes(10), bytes(64), bytes(128))
vc = b"PXEClient:Arch:%05d:UNDI:003016" % arch
p += b"\x63\x82\x53\x63" + bytes([53, 1, 1, 93, 2]) + struct.pack("!H", arch)
p += bytes([94, 3, 1, 3, 16, 60, len(vc)]) + vc + bytes([255])
s.sendto(p, ("255.255.255.255", 67))
end = time.time() + 10
while time.time() < end:
    d, _ = s.recvfrom(2048)
    if len(d) < 240 or struct.unpack("!I", d[4:8])[0] != xid:
        continue
    i, kind = 240, None
    while i < len(d) and d[i] != 255:
        if d[i] == 0:
            i += 1
            continue
        if d[i] == 53:
            kind = d[i + 2]
        i += 2 + d[i + 1]
    if kind == 2:
        f = d[108:236].split(b"\0")[0].decode()
        print(socket.inet_ntoa(d[16:20]), socket.inet_ntoa(d[20:24]), f or "-")
        sys.exit(0)
sys.exit("no DHCPOFFER")
PY
cat > "$TMP/inner.sh" <<EOF
set -u
ip link set lo up
ip link add veth0 type veth peer name veth1
ip addr add 10.9.0.1/24 dev veth0
ip link set veth0 up
# The DHCP client in a namespace of its own: in one namespace, the server
# would drop packets from 10.9.0.2 as coming from its own address.
unshare -n sleep 120 &
cpid=\$!
sleep 0.2
ip link set veth1 netns \$cpid
client() { nsenter -t \$cpid -n "\$@"; }
client ip link set lo up
client ip addr add 10.9.0.2/24 dev veth1
client ip link set veth1 up
dnsmasq --no-daemon --conf-file="$CONF" --no-ping \
    --dhcp-leasefile="$TMP/leases" --log-facility="$TMP/dnsmasq.log" --log-dhcp &
pid=\$!
for i in \$(seq 50); do
    kill -0 \$pid 2>/dev/null || { echo "dnsmasq exited"; exit 1; }
    curl -s --max-time 2 -o /dev/null tftp://10.9.0.1/elilo.conf && break
    sleep 0.1
done
mkdir -p "$TMP/got"
rc=0
while read -r f; do
    curl -s --max-time 20 -o "$TMP/got/\$f" "tftp://10.9.0.1/\$f" || { echo "TFTP GET \$f failed"; rc=1; }
done < "$TMP/files.txt"
client python3 "$TMP/dhcp.py" 02:00:00:00:00:02 2 > "$TMP/offer-ia64.txt" || rc=1
client python3 "$TMP/dhcp.py" 52:54:00:12:34:56 2 > "$TMP/offer-pinned.txt" || rc=1
client python3 "$TMP/dhcp.py" 02:00:00:00:00:09 9 > "$TMP/offer-x64.txt" || rc=1
kill \$pid \$cpid
wait \$pid
exit \$rc
EOF
unshare -rn bash "$TMP/inner.sh" > "$TMP/inner.txt" 2>&1 ||
    { cat "$TMP/inner.txt"; tail -n 20 "$TMP/dnsmasq.log" 2>/dev/null; fail "serving the tree failed"; }
(cd "$T" && xargs -a "$TMP/files.txt" -d '\n' sha256sum) > "$TMP/want.sum"
(cd "$TMP/got" && xargs -a "$TMP/files.txt" -d '\n' sha256sum) > "$TMP/got.sum"
diff "$TMP/want.sum" "$TMP/got.sum" || fail "files fetched over TFTP differ from the tree"
ok "TFTP from dnsmasq: all $(wc -l < "$TMP/files.txt") files of the tree fetched, sha256 equal ($(du -sk "$TMP/got" | cut -f1) KiB)"
read -r ip sip file < "$TMP/offer-ia64.txt"
[ "$sip" = 10.9.0.1 ] && [ "$file" = bootia64.efi ] && case $ip in 10.9.0.*) true ;; *) false ;; esac ||
    fail "the EFI Itanium client's offer is '$(cat "$TMP/offer-ia64.txt")', expected an address, 10.9.0.1, bootia64.efi"
read -r ip sip file < "$TMP/offer-pinned.txt"
[ "$ip" = 10.9.0.24 ] && [ "$file" = bootia64.efi ] || fail "the MAC,IP client's offer is '$(cat "$TMP/offer-pinned.txt")'"
read -r ip sip file < "$TMP/offer-x64.txt"
[ "$file" = - ] || fail "an x64 UEFI client was offered a boot file: $(cat "$TMP/offer-x64.txt")"
ok "DHCP: arch 2 offered $(cat "$TMP/offer-ia64.txt"); 52:54:00:12:34:56 gets 10.9.0.24; arch 9 gets no boot file"
