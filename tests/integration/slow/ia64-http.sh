# Slow tier: a boot check's `http` on the emulated Itanium. The default
# recipe's disk (recipes/ia64-minimal.cfg, the same stages and keys, so
# after ia64-default-boot.sh only this check runs: about 25 s) boots in
# qemu-system-ia64 with the board's e1000 on QEMU's user-mode network
# instead of `-nic none`; its busybox takes a DHCP lease, fetches the busybox
# stage's own binary from http://10.0.2.100/ (its sha256 must be the host's
# file's), a missing file (404), and times 20 requests. The check's request
# log must list them.
. "$TOP/tests/lib.sh"
need_mirror
need ia64-linux-gnu-as make gcc g++ ninja pkg-config flex bison bc gawk mkfs.fat mke2fs
[ -r /usr/src/gcc-12/gcc-12.2.0-dfsg.tar.xz ] || skip "gcc-12-source is not installed"
[ -r /usr/src/linux-source-6.1.tar.xz ] || skip "linux-source-6.1 is not installed"

# the default recipe beside the data it names (paths are the recipe's
# directory's), its gating check replaced by this one
d=$TMP/h
mkdir -p "$d/recipes"
for x in firmware kernel-config overlays; do ln -sfn "$TOP/$x" "$d/$x"; done
R=$d/recipes/ia64-minimal.cfg
grep -v '^@include "include/ia64-qemu-shell-check-2026.cfg"' "$TOP/recipes/ia64-minimal.cfg" >"$R"
grep -q '^name = "ia64-minimal";' "$R" || fail "the default recipe is not named ia64-minimal"
cat >>"$R" <<'CFG'
bootcheck = (
  { kind = "boot"; name = "boot-http"; emulator = "qemu-ia64"; image = "disk"; boot = "disk";
    http = "busybox"; fail_on = ["Kernel panic", "]: Oops [0-9]+ \\[[0-9]+]"];
    steps = (
      { wait = "trillian-ia64:[^ ]*# $"; name = "shell prompt"; timeout = 300; },
      { send = "printf '#!/bin/sh\\n[ \"$1\" = bound ] && ifconfig $interface $ip netmask $subnet up && echo dhcp-bound $ip\\n' > /d.sh; chmod +x /d.sh; ifconfig eth0 up; udhcpc -i eth0 -n -q -t 5 -s /d.sh"; },
      { expect = "^dhcp-bound 10[.]0[.]2[.]15$"; name = "DHCP from QEMU's user-mode network"; timeout = 60; },
      { send = "wget -q -O - http://10.0.2.100/root/bin/busybox | sha256sum"; },
      { expect = "^[0-9a-f]{64}  -$"; name = "busybox over HTTP"; timeout = 120; },
      { send = "wget -O /dev/null http://10.0.2.100/nothing; echo rc=$?"; },
      { expect = "404 Not Found"; name = "a missing file: 404"; },
      { expect = "^rc=1$"; },
      { send = "time sh -c 'i=0; while [ $i -lt 20 ]; do wget -q -O /dev/null http://10.0.2.100/stage-manifest.json; i=$((i+1)); done'"; },
      { expect = "^real"; name = "20 requests"; timeout = 300; },
      { send = "poweroff -f"; },
      { exit = true; timeout = 120; }
    ); }
);
CFG
O=$TMP/out
t0=$SECONDS
trl check "$R" --cache "$TRILLIAN_TEST_CACHE" -o "$O" -j2
grep -v '^  |' "$TMP/out.txt" | tail -n 6
expect_rc 0
expect_out "boot-http PASS"
L=$O/boot-http/boot-http.log
want=$(sha256sum <"$O/busybox/root/bin/busybox" | cut -d' ' -f1)
got=$(clean_console "$L" | grep -oE '^[0-9a-f]{64}  -$' | cut -d' ' -f1)
[ "$got" = "$want" ] || fail "the guest's busybox over HTTP has sha256 '$got', the stage's file $want"
H=$O/boot-http/boot-http.http.log
size=$(stat -c %s "$O/busybox/root/bin/busybox")
grep -qx "GET /root/bin/busybox 200 $size" "$H" || { cat "$H"; fail "the log lacks the busybox GET"; }
grep -qx "GET /nothing 404 14" "$H" || { cat "$H"; fail "the log lacks the 404"; }
[ "$(grep -c '^GET /stage-manifest.json 200 ' "$H")" = 20 ] || { cat "$H"; fail "not 20 small GETs"; }
grep -qF -- "model=e1000" "$O/logs/boot-http.log" || fail "not the board's e1000"
! grep -qF -- "-nic none" "$O/logs/boot-http.log" || fail "-nic none is still on the emulator line"
real=$(clean_console "$L" | awk '/^real/ { print $2, $3; exit }')
ok "qemu-system-ia64: DHCP, busybox ($size bytes, sha256 checked) and a 404 over HTTP through the e1000, 20 requests in '$real' (TCG); $((SECONDS - t0)) s: $(grep -o 'boot-http: PASS.*' "$O/logs/boot-http.log" | head -n1)"
