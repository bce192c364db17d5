# headers kind "source" on the real Linux 6.1 tree
# (/usr/src/linux-source-6.1.tar.xz from linux-source-6.1; SKIP without it):
#  - make headers_install ARCH=ia64 from the partly unpacked tarball gives
#    ia64's asm/ headers (syscalls numbered from 1024) and linux/version.h,
#    a `version` equal to the tree's and to LINUX_VERSION_CODE; a rebuild
#    is a cache hit
#  - the headers' and glibc's keys do not depend on the kernel: two recipes
#    differing in kernel fragments and patches plan equal headers and glibc
#    keys, different kernel keys; the shipped ia64-bookworm and ia64-ski
#    plan equal headers, glibc, gcc and busybox keys (one root for both)
#  - patches (on a small stand-in kernel tree whose Makefile installs its
#    headers the way headers_install lays them out): applied to the whole
#    unpacked tree, in the installed headers, in the key; one that does not
#    apply fails naming it and its first rejected file and hunk
#  - a tarball path that does not exist is a recipe error at its FILE:LINE;
#    a tarball that holds no kernel tree fails the stage, nothing cached
. "$TOP/tests/lib.sh"
need make gcc tar xz rsync
SRC=/usr/src/linux-source-6.1.tar.xz
[ -f "$SRC" ] || skip "$SRC is missing (apt-get install linux-source-6.1)"
export TRILLIAN_DATA=$TOP
C=$TMP/cache

cat >"$TMP/h.cfg" <<EOF
name = "headers-test";
arch = "ia64";
source_date_epoch = 1700000000;
headers = { kind = "source"; tarball = "$SRC"; };
EOF
trl build "$TMP/h.cfg" --cache "$C" -o "$TMP/o1"
expect_rc 0
H=$TMP/o1/headers
for f in include/linux/version.h include/asm/unistd.h include/asm/unistd_64.h \
         include/asm-generic/errno-base.h include/linux/types.h version; do
    [ -f "$H/$f" ] || fail "headers lack $f"
done
# ia64 numbers its system calls from __NR_Linux = 1024 (x86-64's read is 0)
grep -q '^#define __NR_Linux[[:space:]]*1024' "$H/include/asm/unistd.h" \
    || fail "asm/unistd.h is not ia64's (no __NR_Linux 1024)"
grep -q '^#define __NR_read (__NR_Linux + 2)$' "$H/include/asm/unistd_64.h" \
    || fail "asm/unistd_64.h is not ia64's: $(grep __NR_read "$H/include/asm/unistd_64.h")"
V=$(cat "$H/version")
case $V in 6.1.*) ;; *) fail "version '$V', expected 6.1.*" ;; esac
IFS=. read -r a b c <<<"$V"
code=$(( (a << 16) + (b << 8) + (c > 255 ? 255 : c) ))
grep -q "^#define LINUX_VERSION_CODE $code\$" "$H/include/linux/version.h" \
    || fail "linux/version.h does not say $V ($code): $(grep CODE "$H/include/linux/version.h")"
! find "$H/include" -type f ! -name '*.h' | grep -q . || fail "non-header files installed"
grep -q '"version": "'"$V"'"' "$TMP/o1/manifest.json" || fail "manifest lacks the version"
grep -q 'headers_install' "$TMP/o1/logs/headers.log" || fail "log lacks make headers_install"
ok "Linux $V UAPI headers for ia64 (asm/unistd_64.h, linux/version.h $code)"
trl build "$TMP/h.cfg" --cache "$C" -o "$TMP/o1"
expect_rc 0
expect_out "headers: cached"
ok "rebuild is a cache hit"

# the key: the kernel's fragments and patches are not in it
printf -- '--- a/Makefile\n+++ b/Makefile\n@@ -1 +1,2 @@\n+# x\n' >"$TMP/k.patch"
touch "$TMP/glibc.tar.xz"
plan_keys() { # FRAGMENTS PATCHES: "headers KEY glibc KEY kernel KEY"
    cat >"$TMP/p.cfg" <<EOF
name = "headers-key";
arch = "ia64";
source_date_epoch = 1700000000;
stages = ( { name = "toolchain"; kind = "command"; outputs = ["target"];
             argv = ["sh", "-c", "echo ia64-linux-gnu > \$0/target", "\${out}"]; } );
headers = { kind = "source"; tarball = "$SRC"; };
kernel = { kind = "source"; tarball = "$SRC"; defconfig = "generic_defconfig";
           fragments = [$1]; patches = [$2]; };
packages = ( { kind = "glibc"; source = "$TMP/glibc.tar.xz"; } );
EOF
    trl plan "$TMP/p.cfg" --cache "$C"
    expect_rc 0
    awk '$1 == "headers" || $1 == "glibc" || $1 == "kernel" { printf "%s %s ", $1, $3 }' "$TMP/out.txt"
}
k1=$(plan_keys '"ia64-generic"' '')
k2=$(plan_keys '"ia64-generic", "serial-console", "ext4"' "\"$TMP/k.patch\"")
h1=$(echo "$k1" | sed 's/kernel [0-9a-f]* //') h2=$(echo "$k2" | sed 's/kernel [0-9a-f]* //')
[ "$(echo "$k1" | wc -w)" -eq 6 ] || fail "plan did not list headers, glibc and kernel: $k1"
[ "$h1" = "$h2" ] || fail "headers or glibc key depends on the kernel: '$k1' vs '$k2'"
[ "$k1" != "$k2" ] || fail "the kernel keys should differ: $k1"
ok "headers and glibc keys equal for different kernel fragments and patches ($h1)"
if [ -r /usr/src/gcc-12/gcc-12.2.0-dfsg.tar.xz ] && [ -r /usr/src/glibc/glibc-2.36.tar.xz ]; then
    keys() { awk '$1 ~ /^(headers|glibc|gcc|busybox)$/ { print $1, $3 }' "$TMP/out.txt"; }
    trl plan ia64-bookworm --cache "$C"
    expect_rc 0
    r1=$(keys)
    # the hp-sim patch is not shipped: any file stands in, plan applies nothing
    trl plan ia64-ski --cache "$C" --set "kernel.patches=$TOP/README.md"
    expect_rc 0
    [ "$(echo "$r1" | wc -l)" -eq 4 ] && [ "$r1" = "$(keys)" ] \
        || fail "ia64-bookworm and ia64-ski plan different roots: $r1 / $(keys)"
    ok "ia64-bookworm and ia64-ski share headers, glibc, gcc and busybox: $(echo $r1)"
else
    echo "note: gcc-12-source or glibc-source missing, ia64-bookworm/ia64-ski keys not compared"
fi

# patches, on a stand-in tree (the real one would take minutes unpacked whole)
F=$TMP/fake/linux-9.9
mkdir -p "$F/scripts" "$F/include/uapi/linux" "$F/arch/ia64/include/uapi/asm" "$F/drivers"
printf '#define LINUX_VERSION_CODE 1\n' >"$F/include/uapi/linux/version.h"
printf '/* ia64 */\n' >"$F/arch/ia64/include/uapi/asm/unistd.h"
printf 'old\n' >"$F/drivers/note"
cat >"$F/Makefile" <<'EOF'
headers_install:
	test "$(ARCH)" = ia64
	mkdir -p $(INSTALL_HDR_PATH)/include/linux $(INSTALL_HDR_PATH)/include/asm
	cp include/uapi/linux/version.h $(INSTALL_HDR_PATH)/include/linux/
	cp arch/ia64/include/uapi/asm/unistd.h $(INSTALL_HDR_PATH)/include/asm/
	cp drivers/note $(INSTALL_HDR_PATH)/include/linux/note.h
kernelversion:
	@echo 9.9.1
EOF
tar -C "$TMP/fake" -cJf "$TMP/fake.tar.xz" linux-9.9
printf -- '--- a/drivers/note\n+++ b/drivers/note\n@@ -1 +1 @@\n-old\n+patched\n' >"$TMP/p1.patch"
printf -- '--- a/drivers/note\n+++ b/drivers/note\n@@ -1 +1 @@\n-nothere\n+x\n' >"$TMP/bad.patch"
pcfg() { # PATCHES
    sed "s|tarball = \"$SRC\";|tarball = \"$TMP/fake.tar.xz\"; patches = [$1];|" "$TMP/h.cfg" >"$TMP/pt.cfg"
}
pcfg ''
trl plan "$TMP/pt.cfg" --cache "$C"
kp0=$(awk '$1 == "headers" { print $3 }' "$TMP/out.txt")
pcfg "\"$TMP/p1.patch\""
trl plan "$TMP/pt.cfg" --cache "$C"
kp1=$(awk '$1 == "headers" { print $3 }' "$TMP/out.txt")
[ -n "$kp0" ] && [ "$kp0" != "$kp1" ] || fail "the patch is not in the key ($kp0, $kp1)"
trl build "$TMP/pt.cfg" --cache "$C" -o "$TMP/o3"
expect_rc 0
[ "$(cat "$TMP/o3/headers/include/linux/note.h")" = patched ] || fail "the patch did not reach the headers"
[ "$(cat "$TMP/o3/headers/version")" = 9.9.1 ] || fail "version of the stand-in tree"
grep -q '^\$ tar .*fake.tar.xz.*--no-same-owner$' "$TMP/o3/logs/headers.log" \
    || fail "with patches the whole tree should be unpacked"
pcfg "\"$TMP/p1.patch\", \"$TMP/bad.patch\""
trl build "$TMP/pt.cfg" --cache "$C" -o "$TMP/o4"
expect_rc 1
expect_out "headers.patches: bad.patch does not apply: first rejected: drivers/note: Hunk #1 FAILED"
ok "patches: in the key, applied to the whole tree, in the headers; a bad one fails naming it"

# errors: a missing tarball at plan time, FILE:LINE; not a kernel tree at run time
sed "s|$SRC|$TMP/nope.tar.xz|" "$TMP/h.cfg" >"$TMP/bad.cfg"
trl plan "$TMP/bad.cfg" --cache "$C"
expect_rc 2
expect_out "$TMP/bad.cfg:4: headers.tarball:"
expect_out "nope.tar.xz is not a file"
mkdir -p "$TMP/notkernel/linux-x"
echo 'all:' >"$TMP/notkernel/linux-x/Makefile"
tar -C "$TMP/notkernel" -cJf "$TMP/notkernel.tar.xz" linux-x
sed "s|$SRC|$TMP/notkernel.tar.xz|" "$TMP/h.cfg" >"$TMP/nk.cfg"
trl build "$TMP/nk.cfg" --cache "$C" -o "$TMP/o2"
expect_rc 1
expect_out "headers.tarball: $TMP/notkernel.tar.xz holds no kernel source tree with arch/ia64"
trl build "$TMP/nk.cfg" --cache "$C" -o "$TMP/o2"
expect_no_out "headers: cached"
ok "a missing tarball is a recipe error at its line; a non-kernel tarball fails, nothing cached"
echo PASS
