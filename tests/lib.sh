# Helpers for the shell integration tests. Source it: . "$TOP/tests/lib.sh"
# The runner sets TRILLIAN (binary), TOP (repo) and TMP (fresh scratch dir).
set -u
: "${TRILLIAN:?run through tests/run}" "${TOP:?}" "${TMP:?}"

# The mirror beside the checkout (../shared/mirror, as the developers' machines
# and CI have it) serves the ia64 recipes' downloads offline: T2's and
# linux-ia64's patches, the emulators' sources. An explicit TRILLIAN_MIRRORS wins.
MIRROR=$(cd "$TOP/.." && pwd)/shared/mirror
if [ -z "${TRILLIAN_MIRRORS:-}" ] && [ -r "$MIRROR/SHA256SUMS" ]; then
    export TRILLIAN_MIRRORS=$MIRROR
fi
need_mirror() { # SKIP unless the mirror is there
    [ -r "$MIRROR/SHA256SUMS" ] || skip "no mirror at $MIRROR (../shared/mirror beside the checkout)"
}

fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "SKIP: $*"; exit 77; }
ok() { echo "ok: $*"; }

# trl ARGS...: runs trillian, stdout+stderr into $TMP/out.txt, exit code in $rc.
trl() {
    "$TRILLIAN" "$@" >"$TMP/out.txt" 2>&1
    rc=$?
    return 0
}

expect_rc() { # expected
    [ "$rc" -eq "$1" ] || { cat "$TMP/out.txt" >&2; fail "exit status $rc, expected $1"; }
}

expect_out() { # fixed-string pattern
    grep -qF -- "$1" "$TMP/out.txt" || { cat "$TMP/out.txt" >&2; fail "output lacks: $1"; }
}

expect_no_out() {
    ! grep -qF -- "$1" "$TMP/out.txt" || { cat "$TMP/out.txt" >&2; fail "output has: $1"; }
}

need() { # program... : SKIP unless all are present
    for p in "$@"; do
        command -v "$p" >/dev/null 2>&1 || PATH=$PATH:/usr/sbin:/sbin command -v "$p" >/dev/null 2>&1 \
            || skip "$p is not installed (tools/install-deps installs it)"
    done
}

# clean_console FILE: a console transcript without carriage returns and
# terminal escape sequences, one line per line, as the boot checks see it.
clean_console() {
    tr -d '\r' < "$1" | sed 's/\x1b\[[0-9;?]*[a-zA-Z]//g'
}

# serve_http DIR: a static HTTP server for DIR on 127.0.0.1 at a free port,
# in the background; sets $server (its pid, for the caller's cleanup trap)
# and $http_port. The request log goes to $TMP/http.log.
serve_http() {
    rm -f "$TMP/http-port"
    python3 - "$1" "$TMP/http-port" <<'PY' >"$TMP/http.log" 2>&1 &
import functools, http.server, os, sys
class H(http.server.SimpleHTTPRequestHandler):
    def log_message(self, fmt, *args):
        sys.stderr.write("%s\n" % (fmt % args))
s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(H, directory=sys.argv[1]))
with open(sys.argv[2] + ".tmp", "w") as f:
    f.write("%d\n" % s.server_address[1])
os.rename(sys.argv[2] + ".tmp", sys.argv[2])
s.serve_forever()
PY
    server=$!
    for _ in $(seq 100); do [ -s "$TMP/http-port" ] && break; sleep 0.1; done
    [ -s "$TMP/http-port" ] || fail "the HTTP server did not start: $(cat "$TMP/http.log")"
    http_port=$(cat "$TMP/http-port")
}

# fake_kernel_recipe FILE NAME SETTINGS: a config-only kernel recipe on the
# fake tree (tests/fixtures/kernel-fake-tree, packed into
# $TMP/linux-fake.tar.gz here), SETTINGS added to its kernel section
fake_kernel_recipe() {
    [ -e "$TMP/linux-fake.tar.gz" ] ||
        tar -C "$TOP/tests/fixtures" -czf "$TMP/linux-fake.tar.gz" kernel-fake-tree
    cat >"$1" <<CFG
name = "$2";
arch = "amd64";
kernel = { kind = "source"; tarball = "linux-fake.tar.gz"; defconfig = "tinyconfig";
           config_only = true; $3 };
CFG
}

# ia64_test_recipes DIR: writes the recipes of the ia64 fast tests into DIR/r
# (include/ and ../kernel-config linked so the shipped fragments and the
# kernel's O= patch resolve). One text for a test and for tests/prebuild,
# which builds the same stages in the background: same names and settings,
# same cache keys.
#   kernel.cfg       the bookworm chain's toolchain and its HP Integrity
#                    kernel (include/ia64-kernel-7.1.cfg), configured only
#                    (config_only: the fragments checked, nothing compiled),
#                    payload initramfs
#   qemu-disk.cfg    the test kernel (the same source and patches, built
#                    with the ia64-payload-test fragment: what the payload
#                    boot needs, a third of the hardware kernel's compile),
#                    GRUB, the payload on a lean GPT disk, qemu-ia64
#   qemu-disk-check.cfg  the same with the gating boot check through GRUB
#   qemu-bundle.cfg  the same with a qemu-bundle of the disk (the firmware from
#                    the qemu-ia64 stage), as bundle-ia64-qemu-run.sh runs it
#   elilo-disk.cfg   the same disk booted by elilo built from source
#   elilo-disk-check.cfg  the same with the gating boot check through elilo
#   grub-ski.cfg     GRUB and the ski stage (Ski, ski-efi), as ia64-grub-ski.sh
#                    boots them, without its check
#   qemu-iso-check.cfg  qemu-disk.cfg with a live ISO (GRUB ia64-efi from the
#                    grub packages stage, the payload as its initrd, no
#                    installer) and checks of it as a CD and as a disk
# Returns non-zero (nothing written) where the ia64 inputs are missing.
ia64_test_recipes() {
    local d=$1
    [ -r "$MIRROR/SHA256SUMS" ] && [ -r /usr/src/gcc-12/gcc-12.2.0-dfsg.tar.xz ] &&
        [ -r /usr/src/linux-source-6.1.tar.xz ] || return 1
    mkdir -p "$d/r"
    ln -sfn "$TOP/recipes/include" "$d/r/include"
    ln -sfn "$TOP/kernel-config" "$d/kernel-config"
    local hw kernel
    hw=$(sed -n '/^kernel = {/,/^};/p' "$TOP/recipes/include/ia64-kernel-7.1.cfg")
    # the boot tests' kernel: the hardware kernel's fragments list (which
    # may span lines) replaced by the payload's
    kernel=$(printf '%s\n' "$hw" | awk '
        /^  fragments = \[/ { skip = 1
            print "  fragments = [\"serial-console\", \"initramfs\", \"ia64-lean\", \"ia64-local-disk\","
            print "               \"ia64-kallsyms-text\", \"ia64-payload-test\"];" }
        !skip { print }
        skip && /\];/ { skip = 0 }')
    {
        echo 'name = "ia64-minimal";'
        echo '@include "include/ia64-toolchain.cfg"'
        printf '%s\n' "$hw" | sed 's/^};$/  config_only = true;\n};/'
        echo 'initramfs = { kind = "payload"; };'
    } >"$d/r/kernel.cfg"
    {
        echo 'name = "ia64-qemu-boot";'
        echo '@include "include/ia64-toolchain.cfg"'
        echo 'root_uuid = "7c1e3b52-9d4a-4f60-8e21-5a3b9c0d7e14";'
        echo "$kernel"
        cat <<'CFG'
initramfs = { kind = "payload"; };
packages = ( { kind = "grub"; } );
# no userland: an empty root (the disk stage adds the kernel's modules)
stages = (
  { name = "userland"; kind = "command";
    argv = ["tar", "-cf", "${out}/rootfs.tar", "--files-from", "/dev/null"];
    outputs = ["rootfs.tar"]; }
);
bootloader = { kind = "grub"; console = "ttyS0,115200"; label = "Trillian ia64 payload"; };
images = ( { kind = "disk"; name = "disk"; size_mib = 64; } );
@include "include/ia64-qemu.cfg"
CFG
    } >"$d/r/qemu-disk.cfg"
    {
        cat "$d/r/qemu-disk.cfg"
        cat <<'CFG'
bootcheck = (
  { kind = "boot"; name = "boot-qemu"; emulator = "qemu-ia64"; image = "disk"; boot = "disk";
    fail_on = ["Kernel panic", "]: Oops [0-9]+ \\[[0-9]+]"];
    steps = (
      { wait = "qemu-system-ia64 Firmware"; name = "the firmware starts"; timeout = 120; },
      { wait = "Welcome to GRUB!"; name = "GRUB starts"; timeout = 120; },
      { wait = "Linux version [0-9]"; name = "Linux starts"; timeout = 120; },
      { wait = "TRILLIAN-BOOT-OK release=[^ ]+ machine=ia64"; name = "the payload runs on ia64";
        timeout = 300; },
      { wait = "TRILLIAN-CPUINFO arch *: IA-64"; name = "cpuinfo"; timeout = 30; },
      { wait = "TRILLIAN-POWEROFF"; name = "power-off"; timeout = 30; },
      { exit = true; name = "qemu exits by itself"; timeout = 120; }
    ); }
);
CFG
    } >"$d/r/qemu-disk-check.cfg"
    sed 's|^images = ( { kind = "disk"; name = "disk"; size_mib = 64; } );$|images = ( { kind = "disk"; name = "disk"; size_mib = 64; },\
           { kind = "qemu-bundle"; name = "bundle"; disk = "disk"; } );|' \
        "$d/r/qemu-disk.cfg" >"$d/r/qemu-bundle.cfg"
    # the lean disk again, booted by elilo built from source (packages kind
    # elilo) instead of GRUB: the same kernel, payload and emulator stages
    sed -e 's/^name = "ia64-qemu-boot";/name = "ia64-elilo-boot";/' \
        -e 's/^packages = ( { kind = "grub"; } );/packages = ( { kind = "elilo"; } );/' \
        -e 's/^bootloader = { kind = "grub";/bootloader = { kind = "elilo"; timeout = 1;/' \
        "$d/r/qemu-disk.cfg" >"$d/r/elilo-disk.cfg"
    # its check is the GRUB disk's with elilo's prompt and the kernel's
    # unpacking in GRUB's place
    {
        cat "$d/r/elilo-disk.cfg"
        sed -n '/^bootcheck = (/,$p' "$d/r/qemu-disk-check.cfg" |
            sed 's/{ wait = "Welcome to GRUB!"; name = "GRUB starts"; timeout = 120; },/{ wait = "ELILO boot:"; name = "elilo starts"; timeout = 120; },\
      { wait = "Uncompressing Linux"; name = "elilo loads the kernel"; timeout = 120; },/'
    } >"$d/r/elilo-disk-check.cfg"
    sed '/^bootcheck = (/,$d' "$TOP/tests/fixtures/grub-ski-efi/grub-ski-efi.cfg" >"$d/r/grub-ski.cfg"
    # the lean disk's stages and a live ISO of them: the payload is the
    # initrd (with the squashfs of the empty root after it, unused), booted
    # as a CD (El Torito) and as a disk (the hybrid GPT)
    {
        sed 's|^images = ( { kind = "disk"; name = "disk"; size_mib = 64; } );$|images = ( { kind = "disk"; name = "disk"; size_mib = 64; },\
           { kind = "iso"; name = "iso"; loader = "grub"; installer = false;\
             squashfs_comp = "gzip"; } );|' "$d/r/qemu-disk.cfg"
        cat <<'CFG'
bootcheck = (
  { kind = "boot"; name = "iso-cd"; emulator = "qemu-ia64"; image = "iso"; boot = "iso";
    fail_on = ["Kernel panic", "]: Oops [0-9]+ \\[[0-9]+]"];
    steps = (
      { wait = "qemu-system-ia64 Firmware"; name = "the firmware starts"; timeout = 120; },
      { wait = "El Torito FAT image mapped"; name = "the firmware finds the El Torito image"; timeout = 60; },
      { wait = "Welcome to GRUB!"; name = "GRUB starts from the CD"; timeout = 120; },
      { wait = "Linux version [0-9]"; name = "Linux starts"; timeout = 120; },
      { wait = "TRILLIAN-BOOT-OK release=[^ ]+ machine=ia64"; name = "the payload runs on ia64";
        timeout = 300; },
      { wait = "TRILLIAN-POWEROFF"; name = "power-off"; timeout = 30; },
      { exit = true; name = "qemu exits by itself"; timeout = 120; }
    ); },
  { kind = "boot"; name = "iso-disk"; emulator = "qemu-ia64"; image = "iso"; boot = "disk";
    file = "iso.iso";
    fail_on = ["Kernel panic", "]: Oops [0-9]+ \\[[0-9]+]"];
    steps = (
      { wait = "qemu-system-ia64 Firmware"; name = "the firmware starts"; timeout = 120; },
      { wait = "BOOTIA64.EFI loaded"; name = "the firmware loads the EFI partition's loader"; timeout = 120; },
      { wait = "Welcome to GRUB!"; name = "GRUB starts"; timeout = 120; },
      { wait = "Linux version [0-9]"; name = "Linux starts"; timeout = 120; },
      { wait = "TRILLIAN-BOOT-OK release=[^ ]+ machine=ia64"; name = "the payload runs on ia64";
        timeout = 300; },
      { wait = "TRILLIAN-POWEROFF"; name = "power-off"; timeout = 30; },
      { exit = true; name = "qemu exits by itself"; timeout = 120; }
    ); }
);
CFG
    } >"$d/r/qemu-iso-check.cfg"
}

# boot_shipped_recipe NAME RELEASE_PREFIX: the slow tier's check of a shipped
# ia64 recipe: `trillian check` builds recipes/NAME.cfg into the shared test
# cache and runs its gating qemu-system-ia64 boot check (check, not build: a
# passing check is cached, and this one must boot). Fails unless the check
# passed and the console named the kernel release the recipe built.
boot_shipped_recipe() {
    local name=$1 want=$2 t0=$SECONDS
    need_mirror
    need ia64-linux-gnu-as make gcc g++ ninja pkg-config flex bison bc gawk mkfs.fat mke2fs
    [ -r /usr/src/gcc-12/gcc-12.2.0-dfsg.tar.xz ] || skip "gcc-12-source is not installed"
    O=$TMP/out-$name
    trl check "$TOP/recipes/$name.cfg" --cache "$TRILLIAN_TEST_CACHE" -o "$O" -j2
    grep -v '^  |' "$TMP/out.txt" | tail -n 14
    expect_rc 0
    expect_out "boot-qemu PASS"
    local rel
    rel=$(cat "$O/kernel/release")
    case $rel in "$want"*) ;; *) fail "$name built kernel release '$rel', expected $want*" ;; esac
    grep -q "Linux version $rel " "$O/boot-qemu/boot-qemu.log" ||
        fail "the console of $name's boot check never named Linux $rel"
    ok "$name: Linux $rel booted in qemu-system-ia64 and passed its gating check in $((SECONDS - t0)) s: $(grep -o 'boot-qemu: PASS.*' "$O/logs/boot-qemu.log" | head -n1)"
}

# debian_install_check RECIPE DISK UUID: the slow tier's check of a recipe
# whose install ISO's busybox live system installs a foreign Debian first
# stage onto DISK (the check install-cd, reboot_from its disk 'target'): it
# passes, the live system installs the root with UUID and does not run the
# second stage, and the installed disk's first boot runs it to the end.
# Leaves O (the build's output) and TMP/first.txt and TMP/second.txt (the
# two boots' consoles) for the caller's own checks.
debian_install_check() {
    local recipe=$1 disk=$2 uuid=$3 mark="==== trillian: reboot: the disk 'target' alone"
    O=$TMP/out
    trl check "$recipe" --cache "$TRILLIAN_TEST_CACHE" -o "$O" -j2
    grep -v '^  |' "$TMP/out.txt" | tail -n 8
    expect_rc 0
    expect_out "install-cd PASS"
    clean_console "$O/install-cd/install-cd.log" >"$TMP/console.txt"
    sed -n "1,/$mark/p" "$TMP/console.txt" >"$TMP/first.txt"
    sed -n "/$mark/,\$p" "$TMP/console.txt" >"$TMP/second.txt"
    ! grep -q 'debootstrap --second-stage' "$TMP/first.txt" ||
        fail "the live system ran the Debian root's first boot"
    grep -q "trillian-install: done: $disk holds the installed system (root UUID $uuid)" "$TMP/first.txt" ||
        fail "no finished install onto $disk in the first boot's transcript"
    [ -s "$TMP/second.txt" ] || fail "no second boot in the transcript"
    grep -q '^trillian-firstboot: step 2: debootstrap --second-stage' "$TMP/second.txt" ||
        fail "the installed disk's first boot did not run the second stage"
    grep -q '^I: Base system installed successfully' "$TMP/second.txt" || fail "the second stage did not finish"
}

# deb_maker FILE NAME SUMMARY "DIR ..." [POSTINST]: writes FILE, a script (a
# command stage's argv) that makes NAME_1.0_all.deb, Priority required, with
# the DIRs and POSTINST as its postinst, in the directory it is given; the
# same bytes every time (root-owned, mtimes 1700000000). The values take no '.
deb_maker() {
    {
        echo '#!/bin/sh'
        printf "name='%s' summary='%s' dirs='%s' postinst='%s'\n" "$2" "$3" "$4" "${5:-}"
        cat <<'EOF'
set -e
t=$(mktemp -d)
mkdir -p "$t/DEBIAN" "$t/usr/share/doc/$name"
for d in $dirs; do mkdir -p "$t/$d"; done
printf 'Package: %s\nVersion: 1.0\nArchitecture: all\nMaintainer: Trillian Tests <tests@example.org>\nSection: admin\nPriority: required\nDescription: %s\n' \
    "$name" "$summary" >"$t/DEBIAN/control"
if [ -n "$postinst" ]; then
    cp "$postinst" "$t/DEBIAN/postinst"
    chmod 755 "$t/DEBIAN/postinst"
fi
echo "$name, a test package of Trillian. Public domain." >"$t/usr/share/doc/$name/copyright"
chmod -R go-w "$t" && chmod 755 "$t"
find "$t" -exec touch -h -d @1700000000 {} +
mkdir -p "$1"
SOURCE_DATE_EPOCH=1700000000 dpkg-deb --root-owner-group -Zxz --threads-max=1 --build "$t" "$1/${name}_1.0_all.deb" >/dev/null
rm -rf "$t"
EOF
    } >"$1"
    chmod 755 "$1"
}

# src_tarball NAME: $TMP/NAME.tar.gz from the directory $TMP/NAME, the same
# bytes every time (sorted, mtime 0, owner 0, gzip without a name); prints its
# sha256, for a recipe's source_sha256
src_tarball() {
    (cd "$TMP" && tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -cf - "$1" |
        gzip -n >"$1.tar.gz") || fail "cannot pack $TMP/$1"
    sha256sum "$TMP/$1.tar.gz" | cut -d' ' -f1
}

# pkg_entry NAME PRESET SETTINGS SUMMARY: a packages entry of kind package
# building $TMP/NAME-1.0.tar.gz by PRESET into one .deb NAME (version 1.0-1,
# Depends through $TMP/libc.shlibs, which the test writes)
pkg_entry() {
    cat <<CFG
  { kind = "package"; name = "$1"; preset = "$2"; $3
    source_url = "file://$TMP/$1-1.0.tar.gz"; source_sha256 = "$(sha256sum "$TMP/$1-1.0.tar.gz" | cut -d' ' -f1)";
    version = "1.0-1"; maintainer = "Trillian Tests <tests@example.org>";
    shlibs = ["libc.shlibs"];
    debs = ( { name = "$1"; files = ["usr"]; summary = "$4";
               copyright = "\${src:source}/COPYING"; } ); }
CFG
}

# cloud_kernel_and_busybox: the kernel package behind Debian's
# linux-image-cloud-amd64 ($kpkg) and busybox-static, downloaded once into
# the shared test cache ($D) and unpacked under $x=$TMP/x (k/ and bb/);
# the kernel copied to $TMP/vmlinuz. SKIPs where apt cannot get them.
cloud_kernel_and_busybox() {
    D=${TRILLIAN_TEST_CACHE:-$TMP}/bootcheck-qemu-kernel
    mkdir -p "$D"
    kpkg=$(apt-cache depends linux-image-cloud-amd64 2>/dev/null |
           awk '/Depends: linux-image-[0-9]/ { print $2; exit }')
    [ -n "$kpkg" ] || skip "apt-cache knows no linux-image-cloud-amd64 (run apt-get update)"
    local p
    for p in "$kpkg" busybox-static; do
        ls "$D/${p}_"*.deb >/dev/null 2>&1 && continue
        (cd "$D" && apt-get download "$p" >/dev/null 2>&1) || skip "cannot download $p with apt-get"
    done
    x=$TMP/x
    mkdir -p "$x/k" "$x/bb"
    dpkg-deb -x "$(ls "$D/${kpkg}_"*.deb | head -n1)" "$x/k" || fail "cannot unpack $kpkg"
    dpkg-deb -x "$(ls "$D/busybox-static_"*.deb | head -n1)" "$x/bb" || fail "cannot unpack busybox-static"
    cp "$x"/k/boot/vmlinuz-* "$TMP/vmlinuz" || fail "no vmlinuz in $kpkg"
}
