# The from-source minimal root on amd64 (recipes/reference-amd64-minimal.cfg):
# a sysroot from bookworm's libc6 .debs (debian-libc, private apt checked
# against Debian's keyring), busybox from Debian's source package built with
# the host's gcc against it, the root assembled without root privileges and
# packed whole as the initramfs, then booted in qemu-system-x86_64 (TCG) to a
# shell that runs uname -m, ls and a dynamically linked busybox. Checks the
# tarball's device nodes, owners and modes, the component versions, the boot
# transcript, a cached rebuild, and bad inputs. Cold: about a minute
# (busybox, over allnoconfig, compiles for ~30 s); the shared test cache makes
# reruns a cache hit.
. "$TOP/tests/lib.sh"
need qemu-system-x86_64 x86_64-linux-gnu-gcc make apt-get apt-cache dpkg-source tar gzip
[ -r /usr/share/keyrings/debian-archive-keyring.gpg ] || skip "debian-archive-keyring is not installed"
apt-cache show --no-all-versions linux-image-cloud-amd64 >/dev/null 2>&1 \
    || skip "apt-cache knows no linux-image-cloud-amd64 (run apt-get update)"
C=${TRILLIAN_TEST_CACHE:-$TMP/cache} O=$TMP/out
R=reference-amd64-minimal

t0=$SECONDS
trl build "$R" --cache "$C" -o "$O" -j2
grep -v '^  |' "$TMP/out.txt" | tail -n 10
expect_rc 0
ok "built and boot-checked in $((SECONDS - t0)) s"

# ---- the tarball: device nodes, owners, modes --------------------------------
U=$O/userland
for f in rootfs.tar packages.tsv stage-manifest.json cmdline-extra; do
    [ -f "$U/$f" ] || fail "no userland/$f"
done
tar -tvf "$U/rootfs.tar" --numeric-owner >"$TMP/list" || fail "rootfs.tar does not list"
awk '$2 != "0/0"' "$TMP/list" >"$TMP/notroot"
[ ! -s "$TMP/notroot" ] || fail "entries not owned by root: $(head -n3 "$TMP/notroot")"
want() { grep -Eq "$1" "$TMP/list" || fail "rootfs.tar lacks: $2"; }
want '^crw------- 0/0 +5,1 .* dev/console$' "dev/console (char 5,1, 0600)"
want '^crw-rw-rw- 0/0 +1,3 .* dev/null$' "dev/null (char 1,3, 0666)"
want '^crw-rw---- 0/0 +4,64 .* dev/ttyS0$' "dev/ttyS0 (char 4,64)"
want '^-rw------- 0/0 .* etc/shadow$' "etc/shadow mode 0600"
want '^drwx------ 0/0 .* root/$' "root/ mode 0700"
want '^drwxrwxrwt 0/0 .* tmp/$' "tmp/ mode 1777"
want '^-rwxr-xr-x 0/0 .* bin/busybox$' "an executable bin/busybox"
want '^l.* sbin/init -> \.\./bin/busybox$' "sbin/init -> ../bin/busybox"
want '^l.* bin/sh -> busybox$' "the applet link bin/sh"
want '^l.* lib64/ld-linux-x86-64\.so\.2 -> \.\./lib/x86_64-linux-gnu/ld-linux-x86-64\.so\.2$' "the loader at /lib64"
want ' lib/x86_64-linux-gnu/libc\.so\.6$' "libc.so.6"
! grep -Eq ' usr/include/| usr/share/gdb/|\.a$| libc\.so$' "$TMP/list" || fail "headers, static libraries or gdb scripts in the root"
[ -z "$(awk '$4" "$5 != "2023-11-14 22:13"' "$TMP/list")" ] || fail "an mtime is not source_date_epoch"
[ "$(tar -xOf "$U/rootfs.tar" etc/hostname)" = trillian-minimal ] || fail "hostname"
tar -xOf "$U/rootfs.tar" etc/inittab | grep -q '^::respawn:/bin/cttyhack /bin/sh -l$' || fail "inittab: no autologin shell"
tar -xOf "$U/rootfs.tar" etc/shadow | grep -q '^root:\*:' || fail "root is not locked without root_password"
ok "rootfs.tar: $(wc -l <"$TMP/list") entries, all 0/0 and source_date_epoch; device nodes, modes, loader, applet links"

# a root password: SHA-512-crypt in shadow, the same hash on a rebuild, and
# openssl agrees it is the hash of that password with that salt
for n in 1 2; do
    trl build "$R" --cache "$C" -o "$TMP/pw$n" -j2 --set userland.root_password=s3cret --force userland
    expect_rc 0
    tar -xOf "$TMP/pw$n/userland/rootfs.tar" etc/shadow | sed -n 's/^root:\([^:]*\):.*/\1/p' >"$TMP/hash$n"
done
h=$(cat "$TMP/hash1")
case $h in '$6$'*) ;; *) fail "root's shadow entry is not SHA-512-crypt: $h" ;; esac
[ "$h" = "$(cat "$TMP/hash2")" ] || fail "two builds hashed the password differently"
salt=$(echo "$h" | cut -d'$' -f3)
[ "$(openssl passwd -6 -salt "$salt" s3cret)" = "$h" ] || fail "the hash is not of the password"
ok "root_password: reproducible SHA-512-crypt hash"

# ---- component versions -------------------------------------------------------
libc=$(sed -n 's/.*"debian_version": "\([^"]*\)".*/\1/p' "$O/libc/stage-manifest.json")
bb=$(sed -n 's/.*"busybox": "\([^"]*\)".*/\1/p' "$O/busybox/stage-manifest.json")
rel=$(cat "$O/kernel/release")
case $libc in 2.36-*) ;; *) fail "libc6 version '$libc' is not bookworm's 2.36" ;; esac
[ "$(cat "$O/libc/version")" = 2.36 ] || fail "libc/version is not 2.36"
case $bb in 1.*) ;; *) fail "busybox version '$bb'" ;; esac
printf 'package\tversion\tarchitecture\nglibc\t%s\tamd64\nbusybox\t%s\tamd64\nkernel\t%s\tamd64\n' \
    "$libc" "$bb" "$rel" | diff -u - "$U/packages.tsv" >&2 || fail "packages.tsv"
grep -q "\"min_kernel\": \"3.2.0\"" "$O/libc/stage-manifest.json" || fail "libc manifest lacks min_kernel"
grep -q '"interp": "/lib64/ld-linux-x86-64.so.2"' "$O/busybox/stage-manifest.json" || fail "busybox is not dynamically linked"
tar -xOf "$U/rootfs.tar" etc/os-release | grep -q "busybox $bb" || fail "os-release does not name busybox $bb"
ok "components: glibc $libc, busybox $bb, kernel $rel (packages.tsv, manifests, os-release)"
# base = "allnoconfig": only minimal.config's applets (about 50; the defconfig
# has nearly 400), every one of them a link in the root
na=$(sed -n 's/.*"applets": \([0-9]*\).*/\1/p' "$O/busybox/stage-manifest.json")
[ -n "$na" ] && [ "$na" -ge 30 ] && [ "$na" -le 100 ] || fail "busybox has $na applets, not minimal.config's"
for a in bin/ls bin/mount sbin/getty bin/login bin/cttyhack sbin/mdev bin/hostname; do
    grep -Eq "^l.* $a -> " "$TMP/list" || fail "no applet link $a"
done
! grep -Eq '^l.* (usr/)?bin/vi -> ' "$TMP/list" || fail "vi is linked: the defconfig, not minimal.config"
ok "busybox over allnoconfig: $na applets, the boot's and the checks' linked, vi not"

# ---- the boot -------------------------------------------------------------------
L=$O/boot-shell/boot-shell.log
clean_console "$L" >"$TMP/console"
grep -qx 'x86_64' "$TMP/console" || fail "no uname -m output"
grep -qx '/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2' "$TMP/console" || fail "the loader is not mapped"
grep -q 'reboot: Power down' "$TMP/console" || fail "no power-off"
grep -q 'failures="0"' "$O/boot-shell/boot-shell.junit.xml" || fail "JUnit reports failures"
gz=$(gzip -9n <"$U/rootfs.tar" | wc -c)
ok "qemu boot: shell, x86_64, busybox, dynamic loader mapped; root $(stat -c %s "$U/rootfs.tar") bytes, $gz gzip -9, initrd $(stat -c %s "$O/initramfs/initrd.img")"

trl build "$R" --cache "$C" -o "$O" -j2
expect_rc 0
expect_out "8 cached"
ok "rebuild: all cached"

# ---- bad inputs -------------------------------------------------------------------
trl plan "$R" --cache "$C" -o "$TMP/bad" --set packages.busybox.config=/nonexistent/busybox.config
expect_rc 2
expect_out "packages.busybox.config"
expect_out "/nonexistent/busybox.config"
trl plan "$R" --cache "$C" -o "$TMP/bad" --set packages.busybox.base=allyesconfig
expect_rc 2
expect_out "packages.busybox.base"
trl plan "$R" --cache "$C" -o "$TMP/bad" --set packages.busybox.libc=nolibc
expect_rc 2
expect_out "packages.busybox.libc: no stage named 'nolibc' in the recipe"
trl plan "$R" --cache "$C" -o "$TMP/bad" --set userland.packages=libc,nothere
expect_rc 2
expect_out "userland.packages: no packages stage named 'nothere'"
ok "a missing config fragment, an unknown base, an unknown libc stage and an unknown packages stage are recipe errors naming the key"

# config_extra: a fragment merged after config. A missing one is a recipe
# error; one whose option busybox does not have is merged and then fails
# the check after oldconfig, naming the option and the file it came from,
# before anything compiles (the stage's other outputs stay cached)
trl plan "$R" --cache "$C" -o "$TMP/bad" --set packages.busybox.config_extra=/nonexistent/extra.config
expect_rc 2
expect_out "packages.busybox.config_extra"
expect_out "/nonexistent/extra.config"
printf '# an applet this busybox does not have\nCONFIG_TRILLIAN_NO_SUCH_APPLET=y\n' >"$TMP/extra.config"
trl build "$R" --cache "$C" -o "$TMP/bad" -j2 --set packages.busybox.config_extra="$TMP/extra.config"
expect_rc 1
expect_out "packages.busybox.config_extra[0]: CONFIG_TRILLIAN_NO_SUCH_APPLET=y (set by extra.config:2)"
expect_out "(fix the fragment $TMP/extra.config)"
! grep -q "busybox: done" "$TMP/out.txt" || fail "busybox was cached with an option it does not have"
trl plan "$R" --cache "$C" -o "$O"
expect_out "busybox"
grep -E '^busybox +[^ ]+ +[0-9a-f]+ +cached' "$TMP/out.txt" >/dev/null || fail "busybox without config_extra is not the cached entry: $(grep '^busybox' "$TMP/out.txt")"
ok "config_extra: a missing file is a recipe error; its options are merged and checked after oldconfig"
