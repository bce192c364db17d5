# Binary packages in a minimal root (userland kind minimal, `debs`): two
# packages stages of the `package` kind built for amd64 with the host's gcc
# (a program tp with a symlink and a data file, split into tp and tp-doc;
# and tp2, which ships /usr/bin/tp too), over the amd64 reference minimal
# root (bookworm's libc6 as debian-libc, busybox from Debian's source: the
# settings and kernel of recipes/reference-amd64-minimal.cfg: the same keys,
# checked, so a cold run builds them once for this test and
# userland-minimal-amd64). Checks that the files land with the
# packages' modes and root's owners, that /var/lib/trillian/packages lists
# name, version and arch, that "STAGE/PACKAGE" takes one package, that a file
# two packages ship is an error naming both, as is a package's file over the
# C library stage's (while one over a busybox applet link replaces it, as
# dpkg would), that package stages stay out
# of the root unless named, that dpkg_database writes dpkg's database for them
# (the host's dpkg-query reads it, its dpkg configures them), that a program
# whose loader the root lacks fails,
# and a bad entry at plan time. About 10 s with
# the shared cache (busybox compiles for ~2 minutes without it).
. "$TOP/tests/lib.sh"
need x86_64-linux-gnu-gcc gcc make apt-get dpkg-source dpkg-deb tar gzip
[ "$(dpkg --print-architecture 2>/dev/null)" = amd64 ] || skip "needs an amd64 host (the host's gcc builds the packages)"
[ -r /usr/share/keyrings/debian-archive-keyring.gpg ] || skip "debian-archive-keyring is not installed"
C=${TRILLIAN_TEST_CACHE:-$TMP/cache}

S=$TMP/tp-1.0
mkdir -p "$S"
printf '#include <stdio.h>\nint main(void) { puts("tp here"); return 0; }\n' >"$S/main.c"
echo 'tp, a test program of Trillian. Public domain.' >"$S/COPYING"
echo 'some data' >"$S/data.txt"
cat >"$S/Makefile" <<'EOF'
tp: main.c
	gcc -O2 $(LDFLAGS) -o $@ main.c
install: tp
	install -d $(DESTDIR)/usr/bin $(DESTDIR)/usr/share/tp
	install -m 0755 tp $(DESTDIR)/usr/bin/
	ln -s tp $(DESTDIR)/usr/bin/tp-link
	install -m 0600 data.txt $(DESTDIR)/usr/share/tp/
EOF
(cd "$TMP" && tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -cf - tp-1.0 |
    gzip -n >tp-1.0.tar.gz)
SHA=$(sha256sum "$TMP/tp-1.0.tar.gz" | cut -d' ' -f1)
echo 'libc 6 libc6 (>= 2.36)' >"$TMP/libc.shlibs"

pkg() { # STAGE VERSION DEBS [MAKE-ARG] [SETTINGS]
    local extra=
    [ -z "${4:-}" ] || extra=", \"$4\""
    cat <<CFG
  { kind = "package"; name = "$1";
    source_url = "file://$TMP/tp-1.0.tar.gz"; source_sha256 = "$SHA";
    version = "$2"; maintainer = "Trillian Tests <tests@example.org>";
    steps = ( { label = "make"; argv = ["make"$extra]; },
              { label = "install"; argv = ["make", "install", "DESTDIR=\${kind:destdir}"]; } );
    shlibs = ["libc.shlibs"];
    ${5:-}
    debs = ( $3 ); },
CFG
}
echo 'not busybox' >"$TMP/clash"
R=$TMP/r.cfg
cat >"$R" <<CFG
name = "userland-debs";
arch = "amd64";
source_date_epoch = 1700000000;
toolchain = { kind = "host"; };
# reference-amd64-minimal's kernel too: the C library stage checks its ABI
# against the recipe's kernel (a dep of its key), so without it the libc and
# busybox stages would have keys of their own and build again
kernel = { kind = "package"; package = "linux-image-cloud-amd64"; };
packages = (
$(pkg tp 1.0-1 '{ name = "tp"; files = ["usr/bin"]; summary = "says it is here";
                 copyright = "${src:source}/COPYING"; },
               { name = "tp-doc"; files = ["usr/share/tp"]; summary = "its data";
                 copyright = "${src:source}/COPYING"; }')
$(pkg tp2 2.0-1 '{ name = "tp2"; files = ["usr"]; summary = "ships /usr/bin/tp as well";
                  copyright = "${src:source}/COPYING"; }')
$(pkg tpx 1.0-1 '{ name = "tpx"; files = ["usr"]; summary = "asks for a loader no root has";
                  copyright = "${src:source}/COPYING"; }' 'LDFLAGS=-Wl,--dynamic-linker=/lib/ld-trillian-none.so.1')
$(pkg tpc 1.0-1 '{ name = "tpc"; files = ["usr", "bin"]; summary = "ships /bin/ls over busybox'"'"'s applet link";
                  copyright = "${src:source}/COPYING"; }' '' 'install = ( { from = "clash"; to = "bin/ls"; } );')
$(pkg tpl 1.0-1 '{ name = "tpl"; files = ["usr", "lib"]; summary = "ships the C library over the root'"'"'s";
                  copyright = "${src:source}/COPYING"; }' '' 'install = ( { from = "clash"; to = "lib/x86_64-linux-gnu/libc.so.6"; } );')
  { kind = "debian-libc"; name = "libc"; },
  { kind = "busybox"; name = "busybox";
    base = "allnoconfig"; config = "$TOP/firmware/busybox/minimal.config"; }
);
userland = {
  kind = "minimal";
  hostname = "trillian-minimal";
  autologin = true;
  debs = ["tp"];
};
CFG

# the C library and busybox are reference-amd64-minimal's (userland-minimal-amd64
# builds the same stages): the same keys, so a cold run builds them once
keys() { awk '$1 == "libc" || $1 == "busybox" { print $1, $3 }' "$TMP/out.txt"; }
trl plan "$TOP/recipes/reference-amd64-minimal.cfg" --cache "$C"
expect_rc 0
keys >"$TMP/keys.ref"
trl plan "$R" --cache "$C"
expect_rc 0
keys | diff -u "$TMP/keys.ref" - >&2 || fail "libc and busybox keys differ from reference-amd64-minimal's"
[ "$(wc -l <"$TMP/keys.ref")" -eq 2 ] || fail "plan lists no libc and busybox: $(cat "$TMP/out.txt")"

trl build "$R" --cache "$C" -o "$TMP/o" -j2
expect_rc 0
U=$TMP/o/userland
tar -tvf "$U/rootfs.tar" --numeric-owner >"$TMP/list" || fail "rootfs.tar does not list"
want() { grep -Eq "$1" "$TMP/list" || { grep -E 'tp|trillian' "$TMP/list" >&2; fail "rootfs.tar lacks: $2"; }; }
want '^-rwxr-xr-x 0/0 .* usr/bin/tp$' "usr/bin/tp, 0755, root's"
want '^lrwxrwxrwx 0/0 .* usr/bin/tp-link -> tp$' "the symlink usr/bin/tp-link -> tp"
# dh_fixperms's rule in the package (0644), kept in the root
want '^-rw-r--r-- 0/0 .* usr/share/tp/data\.txt$' "usr/share/tp/data.txt, 0644"
want '^-rw-r--r-- 0/0 .* usr/share/doc/tp/copyright$' "tp's copyright file"
want '^-rw-r--r-- 0/0 .* var/lib/trillian/packages$' "var/lib/trillian/packages"
awk '$2 != "0/0"' "$TMP/list" | grep . && fail "entries not owned by root"
want ' bin/busybox$' "busybox (the root is still there)"
# a merged /usr's view of the packages' programs: /bin/tp and /bin/tp-link
# point at usr/bin (the names were free); busybox's own /bin/ls is kept
want '^lrwxrwxrwx 0/0 .* bin/tp -> \.\./usr/bin/tp$' "the /bin/tp link to usr/bin/tp"
want '^lrwxrwxrwx 0/0 .* bin/tp-link -> \.\./usr/bin/tp-link$' "the /bin/tp-link link"
want '^lrwxrwxrwx 0/0 .* bin/ls -> busybox$' "busybox's /bin/ls, kept"
mkdir -p "$TMP/x"
tar -xf "$U/rootfs.tar" -C "$TMP/x" usr/bin/tp var/lib/trillian/packages || fail "rootfs.tar: no usr/bin/tp"
printf 'tp 1.0-1 amd64\ntp-doc 1.0-1 amd64\n' | diff -u - "$TMP/x/var/lib/trillian/packages" >&2 ||
    fail "/var/lib/trillian/packages"
cmp -s "$TMP/x/usr/bin/tp" <(dpkg-deb --fsys-tarfile "$TMP/o/tp/debs/tp_1.0-1_amd64.deb" |
    tar -xOf - ./usr/bin/tp) || fail "usr/bin/tp differs from the package's"
"$TMP/x/usr/bin/tp" | grep -qx 'tp here' || fail "usr/bin/tp does not run"
! grep -q 'usr/bin/tp2\|tp2' "$TMP/x/var/lib/trillian/packages" || fail "tp2 is in the root unasked"
grep -q '"package": "tp-doc"' "$U/stage-manifest.json" || fail "the manifest's debs lack tp-doc"
ok "tp and tp-doc unpacked over the busybox root (modes 0755/0644, a symlink, root's; /bin links to their programs where the name was free), listed in /var/lib/trillian/packages; tp2 left out"

trl build "$R" --cache "$C" -o "$TMP/o1" -j2 --set userland.debs=tp/tp
expect_rc 0
tar -tf "$TMP/o1/userland/rootfs.tar" >"$TMP/list1"
grep -q 'usr/bin/tp$' "$TMP/list1" || fail "tp/tp: no usr/bin/tp"
! grep -q 'usr/share/tp' "$TMP/list1" || fail "tp/tp took tp-doc's files too"
[ "$(tar -xOf "$TMP/o1/userland/rootfs.tar" var/lib/trillian/packages)" = 'tp 1.0-1 amd64' ] ||
    fail "tp/tp: the list is not just tp"
ok "STAGE/PACKAGE takes one package of the stage"

# dpkg's database for them: the host's dpkg-query reads it, and its dpkg
# configures them (no scripts: tp has none; its libc6 is the debian-libc
# stage's, no package, hence --force-depends)
trl build "$R" --cache "$C" -o "$TMP/od" -j2 --set userland.dpkg_database=true
expect_rc 0
X=$TMP/xd
mkdir -p "$X"
tar -xf "$TMP/od/userland/rootfs.tar" -C "$X" var/lib/dpkg usr || fail "rootfs.tar has no var/lib/dpkg"
A=$X/var/lib/dpkg
[ "$(dpkg-query --admindir="$A" -f '${Package} ${Version} ${Status}\n' -W)" = "tp 1.0-1 install ok unpacked
tp-doc 1.0-1 install ok unpacked" ] || fail "dpkg-query -W: $(dpkg-query --admindir="$A" -W 2>&1)"
dpkg-query --admindir="$A" -L tp | grep -qx /usr/bin/tp || fail "dpkg-query -L tp lacks /usr/bin/tp"
[ -f "$A/info/tp.md5sums" ] && [ -d "$A/updates" ] && [ -f "$A/available" ] ||
    fail "var/lib/dpkg lacks info/tp.md5sums, updates/ or available"
dpkg --admindir="$A" --instdir="$X" --force-script-chrootless --force-not-root --force-depends --configure -a \
    >"$TMP/configure.txt" 2>&1 || { cat "$TMP/configure.txt" >&2; fail "the host's dpkg cannot configure the root's packages"; }
[ "$(dpkg-query --admindir="$A" -f '${Status}' -W tp)" = "install ok installed" ] || fail "tp is not configured"
ok "dpkg_database: /var/lib/dpkg lists tp and tp-doc as unpacked (dpkg-query -W, -L), and dpkg --configure -a configures them"

trl build "$R" --cache "$C" -o "$TMP/o2" -j2 --set userland.debs=tp,tp2
expect_rc 1
expect_out "/usr/bin/tp is in two packages: tp (tp/tp_1.0-1_amd64.deb) and tp2 (tp2/tp2_2.0-1_amd64.deb)"
[ ! -e "$TMP/o2/userland/rootfs.tar" ] || fail "a root was written despite the clash"
ok "a file two packages ship fails the root, naming both"

trl build "$R" --cache "$C" -o "$TMP/o4" -j2 --set userland.debs=tpl
expect_rc 1
expect_out "/lib/x86_64-linux-gnu/libc.so.6 of tpl (tpl/tpl_1.0-1_amd64.deb) is in the root already, from a C library or compiler stage"
[ ! -e "$TMP/o4/userland/rootfs.tar" ] || fail "a root was written despite the clash with the C library"
trl build "$R" --cache "$C" -o "$TMP/o5" -j2 --set userland.debs=tpc
expect_rc 0
tar -tvf "$TMP/o5/userland/rootfs.tar" | grep -q '^-rw-r--r-- .* bin/ls$' ||
    fail "tpc's /bin/ls did not replace busybox's applet link"
ok "a package's file over the C library stage's fails the root, naming it; one over busybox's applet link replaces it, as dpkg would"

trl build "$R" --cache "$C" -o "$TMP/o3" -j2 --set userland.debs=tpx
expect_rc 1
expect_out "/usr/bin/tp of tpx (tpx/tpx_1.0-1_amd64.deb) asks for the loader /lib/ld-trillian-none.so.1"
ok "a program whose loader the root lacks fails the root"

trl plan "$R" --cache "$C" --set userland.debs=nothere
expect_rc 2
expect_out "userland.debs: no packages stage named 'nothere'"
trl plan "$R" --cache "$C" --set userland.debs=tp/
expect_rc 2
expect_out "'tp/' is not STAGE or STAGE/PACKAGE"
ok "an unknown stage and a malformed entry are recipe errors naming userland.debs"
