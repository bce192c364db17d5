# packages kind glibc, without a real glibc build: the toolchain and the
# headers are command stages that fabricate a `target` file, UAPI headers and
# their kernel `version` (as headers kind source lays them out), and the
# "glibc source" is a tarball whose configure and make install an IA-64 ld.so
# and libc.so.6.1 (made with Debian's ia64 binutils) carrying a GNU ABI tag
# with the --enable-kernel minimum (3.2.18 without one, like glibc on ia64).
# Checks the stage's real logic: the sysroot, version and manifest; the
# after-build kernel check (libc's ABI tag against the headers' version)
# failing with both versions and nothing cached; the early enable_kernel
# check failing before configure; a libc for the wrong machine refused;
# CFLAGS (-O2 by default, no -O refused); a recipe without a headers stage
# taking the kernel stage's headers and release, or, with a kernel that has
# none, refused at plan time naming what to add.
. "$TOP/tests/lib.sh"
need ia64-linux-gnu-as ia64-linux-gnu-ld tar
C=$TMP/cache O=$TMP/out

# The fake glibc source: configure writes a Makefile; make install makes the
# ELF files with an ABI tag of --enable-kernel (default 3.2.18).
G=$TMP/glibc-2.36
mkdir -p "$G/scripts"
echo '#define VERSION "2.36"' >"$G/version.h"
printf '#!/bin/sh\necho x86_64-pc-linux-gnu\n' >"$G/scripts/config.guess"
cat >"$G/configure" <<'EOF'
#!/bin/sh
# fake glibc configure: records its arguments, writes the Makefile
echo "$@" >configure.args
k=3.2.18; as=ia64-linux-gnu-as
for a; do case $a in --enable-kernel=*) k=${a#--enable-kernel=} ;; esac; done
case " $* " in *" --fake-machine=x86 "*) as=as ;; esac
IFS=. read -r maj min pat <<EOV
$k
EOV
cat >Makefile <<EOM
all:
	printf '.section .note.ABI-tag,"a",@note\n.balign 4\n.long 4, 16, 1\n.asciz "GNU"\n.long 0, $maj, $min, ${pat:-0}\n' >abi.s
	$as -o abi.o abi.s
	echo built >built
install:
	mkdir -p \$(DESTDIR)/lib \$(DESTDIR)/usr/include \$(DESTDIR)/usr/lib
	ld_=\$\$(echo $as | sed 's/as\$\$/ld/'); \$\$ld_ -shared -soname ld-linux-ia64.so.2 -o \$(DESTDIR)/lib/ld-linux-ia64.so.2 abi.o
	ld_=\$\$(echo $as | sed 's/as\$\$/ld/'); \$\$ld_ -shared -soname libc.so.6.1 -o \$(DESTDIR)/lib/libc.so.6.1 abi.o
	echo '/* fake */' >\$(DESTDIR)/usr/include/stdio.h
EOM
EOF
chmod +x "$G/configure" "$G/scripts/config.guess"
tar -C "$TMP" -czf "$TMP/glibc-2.36.tar.gz" glibc-2.36

recipe() { # VERSION [glibc settings] [kernel]: headers from a headers stage,
            # or with "kernel" from a kernel stage (release, headers/include)
    local name=headers ver=version inc=include
    [ "${3:-}" = kernel ] && name=kernel ver=release inc=headers/include
    cat <<EOF
name = "glibc-check";
description = "glibc stage with a fabricated toolchain, headers and glibc source";
arch = "ia64";
source_date_epoch = 1700000000;
stages = (
  { name = "toolchain"; kind = "command"; outputs = ["target"];
    argv = ["sh", "-c", "echo ia64-linux-gnu > \$0/target", "\${out}"]; },
  { name = "$name"; kind = "command"; outputs = ["$ver", "$inc/linux/version.h"];
    argv = ["sh", "-c", "echo $1 > \$0/$ver && mkdir -p \$0/$inc/linux \$0/$inc/asm && echo '#define LINUX_VERSION_CODE 1' > \$0/$inc/linux/version.h && echo '/* asm */' > \$0/$inc/asm/unistd.h", "\${out}"]; }
);
packages = ( { kind = "glibc"; source = "$TMP/glibc-2.36.tar.gz"; ${2:-} } );
EOF
}

# 1. A kernel newer than glibc's minimum: a sysroot, its version, the check logged.
recipe 6.1.76 "" >"$TMP/ok.cfg"
trl build "$TMP/ok.cfg" --cache "$C" -o "$O"
expect_rc 0
S=$O/glibc/sysroot
for f in lib/ld-linux-ia64.so.2 lib/libc.so.6.1 usr/include/stdio.h usr/include/linux/version.h \
         usr/include/asm/unistd.h; do
    [ -e "$S/$f" ] || fail "sysroot lacks $f"
done
[ "$(cat "$O/glibc/version")" = 2.36 ] || fail "version file: $(cat "$O/glibc/version")"
grep -q '"glibc": "2.36"' "$O/manifest.json" || fail "manifest lacks the glibc version"
grep -q '"min_kernel": "3.2.18"' "$O/manifest.json" || fail "manifest lacks min_kernel 3.2.18"
grep -q 'needs Linux >= 3.2.18; the kernel is 6.1.76' "$O/logs/glibc.log" || fail "no kernel check in the log"
grep -q -- '--host=ia64-linux-gnu .*--with-headers=.*/include --disable-werror CFLAGS=-O2$' \
    "$O/logs/glibc.log" || fail "configure flags not as documented"
grep -q '"headers": "headers"' "$O/manifest.json" || fail "manifest does not name the headers stage"
grep -q '"kernel_release": "6.1.76"' "$O/manifest.json" || fail "manifest lacks the headers' version"
ok "sysroot, version 2.36 and min_kernel 3.2.18 for headers of 6.1.76"

# 2. The after-build check: libc's ABI tag (3.2.18) is newer than the kernel (3.2.0).
recipe 3.2.0 "" >"$TMP/old.cfg"
trl build "$TMP/old.cfg" --cache "$C" -o "$TMP/out2"
expect_rc 1
expect_out "kernel too old for this glibc"
expect_out "3.2.18"
expect_out "3.2.0"
expect_out "packages.glibc.enable_kernel"
expect_out "the headers stage's kernel version 3.2.0"
grep -q '^\$ make' "$TMP/out2/logs/glibc.log" || fail "the check should come after the build"
trl build "$TMP/old.cfg" --cache "$C" -o "$TMP/out2"
expect_rc 1
expect_no_out "glibc: cached"
ok "headers of 3.2.0 under libc's minimum 3.2.18: refused after the build, nothing cached"

# 3. enable_kernel newer than the kernel: refused before configure runs.
trl build "$TMP/ok.cfg" --cache "$C" -o "$TMP/out3" --set packages.glibc.enable_kernel=9.0.0
expect_rc 1
expect_out "enable_kernel = 9.0.0"
expect_out "6.1.76"
! grep -q 'glibc-2.36/configure' "$TMP/out3/logs/glibc.log" || fail "configure ran"
ok "enable_kernel 9.0.0 over headers of 6.1.76: refused before the build"

# 4. A lower enable_kernel reaches configure and the ABI tag.
trl build "$TMP/ok.cfg" --cache "$C" -o "$TMP/out4" --set packages.glibc.enable_kernel=5.10.0
expect_rc 0
grep -q -- '--enable-kernel=5.10.0' "$TMP/out4/logs/glibc.log" || fail "--enable-kernel not passed"
grep -q '"min_kernel": "5.10.0"' "$TMP/out4/manifest.json" || fail "min_kernel not 5.10.0"
ok "enable_kernel 5.10.0 passed to configure and read back from libc"

# 5. A libc for another machine is refused.
trl build "$TMP/ok.cfg" --cache "$C" -o "$TMP/out5" --set packages.glibc.configure=--fake-machine=x86
expect_rc 1
expect_out "x86-64 code"
ok "an x86-64 libc in an ia64 sysroot is refused"

# 6. CFLAGS: glibc must be optimised; debug info on request.
trl plan "$TMP/ok.cfg" --cache "$C" --set 'packages.glibc.cflags=-g'
expect_rc 2
expect_out "--set packages.glibc.cflags=-g: packages.glibc.cflags: '-g' has no -O option"
trl build "$TMP/ok.cfg" --cache "$C" -o "$TMP/out6" --set 'packages.glibc.cflags=-g -O2'
expect_rc 0
grep -qF -- "--disable-werror 'CFLAGS=-g -O2'" "$TMP/out6/logs/glibc.log" || fail "cflags not passed"
ok "cflags: -O2 by default, '-g' refused at plan time, '-g -O2' passed to configure"

# 7. No headers stage: the kernel stage's headers/include and release.
recipe 3.2.0 "" kernel >"$TMP/kold.cfg"
trl build "$TMP/kold.cfg" --cache "$C" -o "$TMP/out7"
expect_rc 1
expect_out "is newer than the kernel stage's release 3.2.0"
recipe 6.1.76 "" kernel >"$TMP/kok.cfg"
trl build "$TMP/kok.cfg" --cache "$C" -o "$TMP/out7"
expect_rc 0
grep -q -- '--with-headers=.*/headers/include ' "$TMP/out7/logs/glibc.log" \
    || fail "the kernel stage's headers/include not used"
grep -q '"headers": "kernel"' "$TMP/out7/manifest.json" || fail "manifest does not name the kernel"
ok "without a headers stage, the kernel stage's headers and release are used and checked"

# 8. Neither a headers stage nor a kernel that installs headers: a plan error.
grep -v 'name = "kernel"; kind = "command"\|headers/include/linux/version.h' "$TMP/kok.cfg" \
    | sed 's/"\${out}"\]; },$/"${out}"]; }/' >"$TMP/none.cfg"
echo 'kernel = { kind = "package"; package = "linux-image-cloud-amd64"; };' >>"$TMP/none.cfg"
trl plan "$TMP/none.cfg" --cache "$C"
expect_rc 2
expect_out "none.cfg:"
expect_out 'no headers section and no kernel of kind "source"'
expect_out 'headers = { kind = "source"; tarball ='
ok "no headers section and a packaged kernel: a plan error naming the section to add"
echo PASS
