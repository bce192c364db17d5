# The ia64 netboot tree with its root served over TFTP (root_from = "tftp",
# root_image = "ext4"), on small fake inputs, and the server side of its
# boot check (trillian __netboot-serve) run directly:
#  - tftp/ holds the loader, elilo.conf with root=tftp:/root.ext4.gz, the
#    kernel, the initramfs byte for byte (no root appended) and
#    root.ext4.gz: an ext4 image whose /etc/trillian/netboot-root marker and
#    files come from the userland; two builds are byte-identical; with
#    root_image = "squashfs" (a kernel with squashfs) tftp/root.squashfs
#  - a kernel whose config lacks the file system (CONFIG_EXT4_FS, or
#    CONFIG_SQUASHFS for root_image = "squashfs") fails the stage naming
#    images.net.root_image; root_image without root_from = "tftp" is a recipe
#    error; a netboot check without dnsmasq is a plan-time error (the
#    tool lookup also searches /usr/sbin, so TRILLIAN_DNSMASQ names a
#    missing one)
#  - plan as uid 65534 foresees the check failing where that user cannot
#    open /dev/net/tun (and not where it can)
#  - the whole check (bootcheck.c's netboot path) with a fake
#    qemu-system-ia64: the stand-in GPT disk made from the tree, the emulator
#    run under the server with its e1000 on the tap trl0, the server's and
#    the guest's lines in one transcript, the image kind in the manifest and
#    junit.xml
#  - the server: a stand-in disk identical to the tree passes and the real
#    dnsmasq, in a network namespace of its own, serves the tree over TFTP
#    to a client there; a stand-in file that differs, or an extra file on
#    the stand-in, stops it before anything starts; dnsmasq that cannot
#    start (here a dhcp-range it rejects) is one line naming the cause, exit
#    4, in seconds, never a hang. (A port in use cannot happen: the server
#    has a network namespace of its own, where nothing else listens.)
. "$TOP/tests/lib.sh"
. "$TOP/tests/fixtures/image-lib.sh"
need gensquashfs unsquashfs dnsmasq ip mkfs.vfat mcopy mmd mdir sgdisk debugfs curl gzip timeout
PATH=$PATH:/usr/sbin:/sbin
image_inputs 200000
cat > "$TMP/in/config" <<'K'
CONFIG_IA64=y
CONFIG_EXT4_FS=y
CONFIG_BLK_DEV_LOOP=m
# CONFIG_SQUASHFS is not set
K
IMAGE_ARCH=ia64 image_recipe net "{ kind = \"netboot\"; name = \"net\"; root_from = \"tftp\";
    root_image = \"ext4\"; dhcp_range = \"192.168.100.100,192.168.100.200,1h\"; }"
# the kernel stage also gives its config
sed -i 's|argv = \["cp", "'"$TMP"'/in/vmlinuz", "\${out}/"\];|argv = ["cp", "'"$TMP"'/in/vmlinuz", "'"$TMP"'/in/config", "${out}/"];|;
        s|inputs = \["'"$TMP"'/in/vmlinuz"\]; outputs = \["vmlinuz"\];|inputs = ["'"$TMP"'/in/vmlinuz", "'"$TMP"'/in/config"]; outputs = ["vmlinuz", "config"];|' "$TMP/net.cfg"
grep -q '"config"\]' "$TMP/net.cfg" || fail "could not add the config to the fake kernel stage"
trl build "$TMP/net.cfg" --cache "$TMP/cache" -o "$TMP/out"
expect_rc 0
T=$TMP/out/net/tftp
for f in bootia64.efi elilo.conf vmlinuz initrd.img root.ext4.gz; do
    [ -s "$T/$f" ] || { ls -l "$T"; fail "tftp/$f is missing"; }
done
cmp "$T/initrd.img" "$TMP/in/initrd.img" || fail "the initrd is not the initramfs alone"
grep -q 'append=".*root=tftp:/root.ext4.gz' "$T/elilo.conf" || { cat "$T/elilo.conf"; fail "elilo.conf lacks root=tftp:/root.ext4.gz"; }
grep -q 'squashfs' "$T/elilo.conf" && fail "elilo.conf still names the initrd's squashfs"
gzip -dc "$T/root.ext4.gz" > "$TMP/root.ext4" || fail "root.ext4.gz is not gzip"
debugfs -R 'cat /etc/trillian/netboot-root' "$TMP/root.ext4" > "$TMP/marker" 2>/dev/null
[ "$(cat "$TMP/marker")" = "served over TFTP by the netboot tree 'net'" ] || fail "marker: '$(cat "$TMP/marker")'"
debugfs -R 'stat /etc/shadow' "$TMP/root.ext4" 2>/dev/null | grep -q 'Group:  *42' || fail "the root image lost /etc/shadow's group"
ok "tftp/: loader, elilo.conf (root=tftp:/root.ext4.gz), kernel, the initramfs alone, root.ext4.gz ($(stat -c %s "$T/root.ext4.gz") bytes, ext4 with the marker)"

trl build "$TMP/net.cfg" --cache "$TMP/cache2" -o "$TMP/out2"
expect_rc 0
cmp "$T/root.ext4.gz" "$TMP/out2/net/tftp/root.ext4.gz" || fail "two builds give different root.ext4.gz"
ok "root.ext4.gz is reproducible (two caches, same bytes)"

# squashfs served on its own, for a kernel that has it
cp "$TMP/in/config" "$TMP/config-ext4"
sed 's/^# CONFIG_SQUASHFS is not set$/CONFIG_SQUASHFS=y/' "$TMP/config-ext4" > "$TMP/in/config"
trl build "$TMP/net.cfg" --cache "$TMP/cache" -o "$TMP/sq" --set images.net.root_image=squashfs
expect_rc 0
[ -s "$TMP/sq/net/tftp/root.squashfs" ] && [ ! -e "$TMP/sq/net/tftp/root.ext4.gz" ] || fail "no tftp/root.squashfs"
grep -q 'append=".*root=tftp:/root.squashfs' "$TMP/sq/net/tftp/elilo.conf" || fail "elilo.conf lacks root=tftp:/root.squashfs"
unsquashfs -cat "$TMP/sq/net/tftp/root.squashfs" etc/trillian/netboot-root > "$TMP/sqmarker" 2>/dev/null
[ "$(cat "$TMP/sqmarker")" = "served over TFTP by the netboot tree 'net'" ] || fail "squashfs marker: '$(cat "$TMP/sqmarker")'"
cmp "$TMP/sq/net/tftp/initrd.img" "$TMP/in/initrd.img" || fail "squashfs: the initrd is not the initramfs alone"
ok "root_image = \"squashfs\": tftp/root.squashfs with the marker, root=tftp:/root.squashfs"
cp "$TMP/config-ext4" "$TMP/in/config"

sed 's/^CONFIG_EXT4_FS=y$/# CONFIG_EXT4_FS is not set/' "$TMP/in/config" > "$TMP/config-noext4"
cp "$TMP/config-noext4" "$TMP/in/config"
trl build "$TMP/net.cfg" --cache "$TMP/cache" -o "$TMP/bad"
expect_rc 1
expect_out 'images.net.root_image = "ext4": the kernel stage'"'"'s config has no CONFIG_EXT4_FS'
trl build "$TMP/net.cfg" --cache "$TMP/cache" -o "$TMP/bad" --set images.net.root_image=squashfs
expect_rc 1
expect_out "has no CONFIG_SQUASHFS"
expect_out 'or set root_image = "ext4"'
trl build "$TMP/net.cfg" --cache "$TMP/cache" -o "$TMP/bad" --set images.net.root_from=initrd
expect_rc 2
expect_out "images.net.root_image: only a root served on its own"
# an initramfs whose init cannot fetch a root (the boot-check payload)
sed -e '/name = "initramfs"; argv/,+1d' "$TMP/net.cfg" > "$TMP/payload.cfg"
echo 'initramfs = { kind = "payload"; };' >> "$TMP/payload.cfg"
grep -q 'name = "initramfs"' "$TMP/payload.cfg" && fail "could not drop the fake initramfs"
trl plan "$TMP/payload.cfg" --cache "$TMP/cache"
expect_rc 2
expect_out "images.net.root_from: the initramfs stage is of kind payload, whose init does not fetch a root"
ok "a kernel without the root's file system fails naming images.net.root_image; root_image without root_from = \"tftp\", or an initramfs that cannot fetch the root, is a recipe error"

# a netboot check in qemu-system-ia64 needs dnsmasq: a plan-time error
cat >> "$TMP/net.cfg" <<'CFG'
bootcheck = ( { kind = "boot"; name = "boot-net"; emulator = "qemu-ia64"; image = "net";
  boot = "netboot"; binary = "/bin/true"; firmware = "/dev/null"; } );
CFG
TRILLIAN_DNSMASQ=$TMP/no/dnsmasq trl plan "$TMP/net.cfg" --cache "$TMP/cache"
expect_rc 2
expect_out "net.cfg:"
expect_out "needs the program '$TMP/no/dnsmasq', which is not on PATH"
ok "no dnsmasq: plan-time error naming it and the recipe line"

# plan foresees a server that cannot make its tap: a user other than root
# who cannot open /dev/net/tun (0600 on some machines, 0666 on Debian's)
trl plan "$TMP/net.cfg" --cache "$TMP/cache"
expect_rc 0
expect_no_out "netboot server"
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null 2>&1; then
    chmod 755 "$TMP"
    nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups env HOME="$TMP" "$@"; }
    nobody "$TRILLIAN" plan "$TMP/net.cfg" --cache "$TMP/nobody-cache" >"$TMP/out.txt" 2>&1
    if nobody sh -c 'exec 3<>/dev/net/tun' 2>/dev/null; then
        expect_no_out "netboot server"
        ok "plan as uid 65534, who can open /dev/net/tun here: no predicted failure"
    else
        expect_out "boot-net will FAIL: its netboot server: uid 65534 cannot open /dev/net/tun"
        ok "plan as uid 65534, who cannot open /dev/net/tun here: the check will FAIL, naming the device"
    fi
fi

# ---- the whole check with a fake qemu-system-ia64 ---------------------------
# bootcheck.c's netboot path in this tier: the stand-in GPT disk made from
# the tree, the emulator run under the server (its e1000 on the tap, the
# stand-in as its drive), the server's lines and the guest's in one
# transcript, the image kind on the manifest and junit.xml
probe=$(unshare -rn true 2>&1) || [ "$(id -u)" = 0 ] ||
    skip "no network namespace for the server here (unshare -rn: $probe)"
cp "$TMP/config-ext4" "$TMP/in/config" # the kernel has ext4 again
sed -i '/^bootcheck = (/,$d' "$TMP/net.cfg"
cat >> "$TMP/net.cfg" <<'CFG'
bootcheck = ( { kind = "boot"; name = "boot-net"; emulator = "qemu-ia64"; image = "net";
  boot = "netboot"; firmware = "/dev/null";
  steps = ( { wait = "stand-in disk: 4 files, each identical to the tree's"; timeout = 60; },
            { wait = "dnsmasq-tftp.*TFTP root is"; timeout = 60; },
            { wait = "FAKE-NETBOOT-GUEST"; timeout = 60; },
            { exit = true; timeout = 60; } ); } );
CFG
FAKE=$TOP/tests/fixtures/fake-emulator
TRILLIAN_QEMU_IA64=$FAKE FAKE_EMU_MODE=marker FAKE_EMU_MARKER_TEXT=FAKE-NETBOOT-GUEST \
    FAKE_EMU_ARGS=$TMP/args trl check "$TMP/net.cfg" --cache "$TMP/cache" -o "$TMP/chk"
expect_rc 0
expect_out "boot-net PASS"
grep -qx "tap,model=e1000,ifname=trl0,script=no,downscript=no,mac=52:54:00:12:34:56" "$TMP/args" ||
    { cat "$TMP/args"; fail "the fake emulator's NIC is not the e1000 on trl0"; }
d=$(grep '^file=.*standin.img,format=raw,snapshot=on$' "$TMP/args") || { cat "$TMP/args"; fail "no stand-in drive"; }
grep -q "netboot server: own network namespace, tap trl0 at 192.168.100.1/24" "$TMP/chk/boot-net/boot-net.log" ||
    fail "the transcript lacks the server's lines"
grep -q '"image_kind": "netboot (loader from a stand-in disk)"' "$TMP/chk/boot-net/stage-manifest.json" ||
    fail "the manifest lacks the image kind"
grep -q 'name="image_kind" value="netboot (loader from a stand-in disk)"' "$TMP/chk/boot-net/boot-net.junit.xml" ||
    fail "junit.xml lacks the image kind"
grep -q 'stand-in disk: 4 files' "$TMP/chk/junit.xml" || fail "the build's junit.xml lacks the transcript"
ok "the check's netboot path with a fake qemu-system-ia64: stand-in disk, e1000 on trl0, server and guest in one transcript, image kind in manifest and junit.xml"

# ---- the server, run directly ----------------------------------------------
S=$TMP/standin.img
standin() { # files for EFI/BOOT: loader elilo.conf vmlinuz initrd.img
    rm -f "$S"
    mkfs.vfat -C -i 7e7b0071 "$S" 20480 >/dev/null || fail "mkfs.vfat"
    MTOOLS_SKIP_CHECK=1 mmd -i "$S" ::EFI ::EFI/BOOT || fail "mmd"
    MTOOLS_SKIP_CHECK=1 mcopy -i "$S" "$1" ::EFI/BOOT/BOOTIA64.EFI || fail "mcopy"
    for f in "${@:2}"; do MTOOLS_SKIP_CHECK=1 mcopy -i "$S" "$f" "::EFI/BOOT/${f##*/}" || fail "mcopy $f"; done
}
serve() { # CONF CLIENT-ARGV...: the server with the tree's four files
    local conf=$1
    shift
    mkdir -p "$TMP/w"
    timeout 60 "$TRILLIAN" __netboot-serve --work "$TMP/w" --tftp "$T" --conf "$conf" --standin "$S" \
        --file "EFI/BOOT/BOOTIA64.EFI=$T/bootia64.efi" --file "EFI/BOOT/elilo.conf=$T/elilo.conf" \
        --file "EFI/BOOT/vmlinuz=$T/vmlinuz" --file "EFI/BOOT/initrd.img=$T/initrd.img" \
        -- "$@" > "$TMP/serve.txt" 2>&1
    rc=$?
}
probe=$(unshare -rn true 2>&1) || [ "$(id -u)" = 0 ] ||
    skip "no network namespace for the server here (unshare -rn: $probe)"
C=$TMP/out/net/dnsmasq.conf
standin "$T/bootia64.efi" "$T/elilo.conf" "$T/vmlinuz" "$T/initrd.img"
# (then a second for dnsmasq's log queue, which a SIGTERM does not flush)
serve "$C" sh -c 'curl -s --max-time 20 -o "$1" tftp://192.168.100.1/root.ext4.gz && sleep 1' sh "$TMP/got.gz"
[ "$rc" = 0 ] || { cat "$TMP/serve.txt"; fail "the server with a good stand-in exited $rc"; }
grep -q "stand-in disk: 4 files, each identical to the tree's, and nothing else on it" "$TMP/serve.txt" || { cat "$TMP/serve.txt"; fail "no stand-in summary"; }
grep -q "dnsmasq-tftp.*sent $T/root.ext4.gz to 192.168.100.1" "$TMP/serve.txt" || { cat "$TMP/serve.txt"; fail "dnsmasq did not log the TFTP send"; }
cmp "$TMP/got.gz" "$T/root.ext4.gz" || fail "the root fetched over TFTP differs from the tree's"
ip link show trl0 >/dev/null 2>&1 && fail "the tap trl0 appeared on the host's network"
ok "server: stand-in compared, dnsmasq in its own namespace served root.ext4.gz over TFTP (same bytes); the host has no trl0"

printf 'other kernel\n' > "$TMP/vmlinuz"
standin "$T/bootia64.efi" "$T/elilo.conf" "$TMP/vmlinuz" "$T/initrd.img"
serve "$C" true
[ "$rc" = 4 ] || { cat "$TMP/serve.txt"; fail "a differing stand-in gave exit $rc, expected 4"; }
grep -q "stand-in disk: EFI/BOOT/vmlinuz (13 bytes) differs from the tree's $T/vmlinuz" "$TMP/serve.txt" || { cat "$TMP/serve.txt"; fail "no 'differs' line"; }
grep -q dnsmasq "$TMP/serve.txt" && fail "dnsmasq started although the stand-in differs"
standin "$T/bootia64.efi" "$T/elilo.conf" "$T/vmlinuz" "$T/initrd.img" "$T/root.ext4.gz"
serve "$C" true
[ "$rc" = 4 ] || fail "a stand-in with the root on it gave exit $rc, expected 4"
grep -q "stand-in disk: it holds 5 files, expected exactly the 4 above" "$TMP/serve.txt" || { cat "$TMP/serve.txt"; fail "no 'holds 5 files' line"; }
ok "a stand-in file that differs, or the root on the stand-in, stops the check before the server starts"

standin "$T/bootia64.efi" "$T/elilo.conf" "$T/vmlinuz" "$T/initrd.img"
sed 's/^dhcp-range=.*/dhcp-range=192.168.100.100,192.168.100.300,1h/' "$C" > "$TMP/bad-range.conf"
t0=$SECONDS
serve "$TMP/bad-range.conf" true
[ "$rc" = 4 ] || { cat "$TMP/serve.txt"; fail "a dnsmasq that cannot start gave exit $rc, expected 4"; }
grep -q "netboot server: FAILED: dnsmasq exited (status [0-9]*) before serving" "$TMP/serve.txt" || { cat "$TMP/serve.txt"; fail "no one-line failure"; }
grep -qi "dnsmasq: .*bad dhcp-range" "$TMP/serve.txt" || { cat "$TMP/serve.txt"; fail "dnsmasq's own message is not in the transcript"; }
[ $((SECONDS - t0)) -lt 20 ] || fail "the failing start took $((SECONDS - t0)) s"
ok "dnsmasq that cannot start (a bad dhcp-range): one line naming it, its own message above, exit 4, in $((SECONDS - t0)) s"
