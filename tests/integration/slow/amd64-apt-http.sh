# Slow tier: apt in a booted Debian guest fetches from an apt archive the
# recipe built, through its network card (a boot check's `http`). The
# reference disk (recipes/reference-amd64.cfg: the same stages and keys, so
# after reference-amd64.sh only the archive and this check run) boots in
# qemu-system-x86_64 + OVMF (TCG) with a virtio-net NIC on QEMU's user-mode
# network; systemd-networkd takes the DHCP lease, apt-helper fetches the
# archive's keyring from http://10.0.2.100/, `apt-get update` must pass
# without a warning (the signature checked) and `apt-get install` must
# install a package of the archive. About 40 s warm.
. "$TOP/tests/lib.sh"
need qemu-system-x86_64 debootstrap dpkg-deb gpg gpgv xz
[ -r /usr/share/OVMF/OVMF_CODE.fd ] || skip "OVMF is not installed (package ovmf)"
. "$TOP/tests/fixtures/apt-archive.sh"

d=$TMP/h
mkdir -p "$d/recipes"
R=$d/recipes/reference-amd64.cfg
{
    sed '/^bootcheck = (/,$d' "$TOP/recipes/reference-amd64.cfg"
    cat <<CFG
stages = ( $(debs_stage debs "hello-amd 1.0-1 amd64" "libfoo-data 2.0 all") );
packages = ( { name = "archive"; kind = "apt-archive"; stages = ["debs"]; suite = "trixie-trl"; } );
CFG
    cat <<'CFG'
bootcheck = (
  { kind = "boot"; name = "boot-apt"; image = "disk"; emulator = "qemu-x86_64"; http = "archive";
    steps = (
      { wait = "trillian:[^ ]*# $"; name = "shell prompt"; timeout = 300; },
      { send = "for i in $(seq 60); do ip -4 -o addr | grep -q 10.0.2.15 && break; sleep 1; done; ip -4 -o addr | grep -o 'inet 10[.0-9]*/24'"; },
      { expect = "^inet 10[.]0[.]2[.]15/24$"; name = "DHCP (systemd-networkd)"; timeout = 90; },
      { send = "/usr/lib/apt/apt-helper download-file http://10.0.2.100/trillian-archive-keyring.gpg /etc/apt/trusted.gpg.d/trillian.gpg; echo key=$?"; },
      { expect = "^key=0$"; name = "the archive's keyring over HTTP (apt-helper)"; timeout = 60; },
      { send = "echo 'deb http://10.0.2.100/ trixie-trl main' > /etc/apt/sources.list; rm -f /etc/apt/sources.list.d/*; apt-get update > /tmp/u 2>&1; echo update=$? warn=$(grep -c '^[WE]:' /tmp/u)"; },
      { expect = "^update=0 warn=0$"; name = "apt-get update, signed, no warning"; timeout = 120; },
      { send = "apt-get install -y hello-amd > /tmp/i 2>&1; echo install=$?; dpkg -s hello-amd | grep '^Status'"; },
      { expect = "^install=0$"; name = "apt-get install hello-amd"; timeout = 120; },
      { expect = "^Status: install ok installed$"; },
      { send = "systemctl poweroff"; },
      { exit = true; timeout = 120; }
    ); }
);
CFG
} >"$R"
O=$TMP/out
t0=$SECONDS
trl build "$R" --cache "$TRILLIAN_TEST_CACHE" -o "$O" -j2
grep -v '^  |' "$TMP/out.txt" | tail -n 6
expect_rc 0
expect_out "boot-apt PASS"
H=$O/boot-apt/boot-apt.http.log
grep -qx 'GET /trillian-archive-keyring.gpg 200 [0-9]*' "$H" || { cat "$H"; fail "no keyring GET"; }
grep -qx 'GET /dists/trixie-trl/InRelease 200 [0-9]*' "$H" || { cat "$H"; fail "no InRelease GET"; }
grep -q '^GET /pool/main/h/hello-amd/hello-amd_1.0-1_amd64.deb 200 ' "$H" || { cat "$H"; fail "no .deb GET"; }
grep -qF -- "virtio-net-pci,netdev=h0,romfile=" "$O/logs/boot-apt.log" || fail "no virtio NIC on the emulator line"
ok "a bookworm guest (OVMF, TCG) ran apt-get update and install from the recipe's archive over HTTP: $(wc -l <"$H") requests; $((SECONDS - t0)) s: $(grep -o 'boot-apt: PASS.*' "$O/logs/boot-apt.log" | head -n1)"
