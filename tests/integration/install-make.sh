# make install (DESTDIR, PREFIX): the installed trillian, run from another
# directory, finds its data beside it: --help, --version naming the data
# directory, the default recipe's plan with the checkout's keys, a recipe by
# name built into ./out/NAME, bash completion. A read-only DESTDIR fails
# before anything is copied; a data directory removed after the install
# gives one line naming it and what to do.
. "$TOP/tests/lib.sh"
D=$TMP/dest
make -s -C "$TOP" install DESTDIR="$D" PREFIX=/usr >"$TMP/inst.txt" 2>&1 ||
    { cat "$TMP/inst.txt"; fail "make install DESTDIR=$D PREFIX=/usr"; }
T=$D/usr/bin/trillian
for f in usr/bin/trillian usr/share/trillian/recipes/ia64-minimal.cfg \
         usr/share/trillian/recipes/include/ia64-toolchain-2026.cfg \
         usr/share/trillian/kernel-config/ia64-generic.config usr/share/trillian/overlays \
         usr/share/trillian/firmware/initramfs/init usr/share/man/man1/trillian.1 \
         usr/share/bash-completion/completions/trillian; do
    [ -e "$D/$f" ] || fail "make install did not install $f"
done
ls -a "$D/usr/bin" "$D/usr/share" "$D/usr/share/man/man1" | grep -q '\.install-' &&
    fail "make install left staged files: $(ls -a "$D/usr/bin" "$D/usr/share")"
ok "make install put the binary, data, man page and completion under DESTDIR/PREFIX"

mkdir -p "$TMP/home"
cd "$TMP/home"
env -u TRILLIAN_DATA "$T" --help >"$TMP/out.txt" 2>&1 || fail "installed trillian --help: $(cat "$TMP/out.txt")"
expect_out "now $D/usr/share/trillian)"
env -u TRILLIAN_DATA "$T" --version >"$TMP/out.txt" 2>&1 || fail "--version"
expect_out "data: $D/usr/share/trillian (installed: PREFIX/share/trillian beside PREFIX/bin/trillian)"
ok "--help and --version name the installed data directory"

# the default recipe by name: the same stages and keys as the checkout's
env -u TRILLIAN_DATA "$T" plan ia64-minimal --cache "$TMP/c" >"$TMP/plan-inst.txt" 2>&1 ||
    { cat "$TMP/plan-inst.txt"; fail "installed trillian plan ia64-minimal"; }
(cd "$TOP" && env -u TRILLIAN_DATA "$TRILLIAN" plan ia64-minimal --cache "$TMP/c") >"$TMP/plan-top.txt" 2>&1 ||
    { cat "$TMP/plan-top.txt"; fail "plan ia64-minimal from the checkout"; }
keys() { awk 'NR > 2 && /^[a-z]/ {print $1, $3}' "$1"; }
[ "$(keys "$TMP/plan-inst.txt" | wc -l)" -ge 10 ] || fail "the plan lists few stages: $(cat "$TMP/plan-inst.txt")"
[ "$(keys "$TMP/plan-inst.txt")" = "$(keys "$TMP/plan-top.txt")" ] ||
    fail "installed and checkout plans differ: $(diff <(keys "$TMP/plan-inst.txt") <(keys "$TMP/plan-top.txt"))"
ok "plan ia64-minimal from $TMP/home: the checkout's $(keys "$TMP/plan-inst.txt" | wc -l) stage keys"

# a recipe by name, built into ./out/NAME of the current directory
cat >"$D/usr/share/trillian/recipes/tiny.cfg" <<'CFG'
name = "tiny";
arch = "amd64";
stages = ( { name = "mark"; kind = "command"; argv = ["sh", "-c", "echo hi > ${out}/mark.txt"];
             outputs = ["mark.txt"]; } );
CFG
env -u TRILLIAN_DATA "$T" build tiny --cache "$TMP/c" >"$TMP/out.txt" 2>&1 ||
    { cat "$TMP/out.txt"; fail "installed trillian build tiny"; }
[ "$(cat "$TMP/home/out/tiny/mark/mark.txt")" = hi ] || fail "build tiny did not write ./out/tiny/mark/mark.txt"
ok "build tiny from another directory wrote ./out/tiny"

# the completion the package installs completes the installed recipes
words=$(env -u TRILLIAN_DATA bash -c '. "$1"; COMP_WORDS=("$2" plan ti); COMP_CWORD=2; _trillian; echo "${COMPREPLY[*]}"' \
    _ "$D/usr/share/bash-completion/completions/trillian" "$T")
case " $words " in *" tiny "*) ok "bash completion offers the installed recipes" ;;
*) fail "completion of 'trillian plan ti' gave '$words'" ;; esac

# a reinstall replaces the data directory whole (tiny.cfg is not shipped)
make -s -C "$TOP" install DESTDIR="$D" PREFIX=/usr >"$TMP/inst.txt" 2>&1 ||
    { cat "$TMP/inst.txt"; fail "make install again"; }
[ ! -e "$D/usr/share/trillian/recipes/tiny.cfg" ] || fail "the reinstall kept a file the source does not have"
ok "a reinstall replaces the data directory"

# a read-only DESTDIR: a clear error, nothing written (root passes
# permission checks, so a read-only bind mount; else a directory without w)
RO=$TMP/ro
mkdir -p "$RO"
if [ "$(id -u)" = 0 ]; then
    mount --bind "$RO" "$RO" && mount -o remount,bind,ro "$RO" || skip "cannot make a read-only bind mount"
    trap 'umount "$RO" 2>/dev/null' EXIT
else
    chmod 0555 "$RO"
fi
make -s -C "$TOP" install DESTDIR="$RO" PREFIX=/usr >"$TMP/out.txt" 2>&1 && fail "install into a read-only DESTDIR succeeded"
expect_out "make install: cannot write $RO/usr/bin ($RO is read-only, or not yours): nothing was installed"
[ -z "$(ls -A "$RO")" ] || fail "the read-only DESTDIR has: $(ls -A "$RO")"
# the binary's directory writable, the data's not: still nothing installed
make -s -C "$TOP" install BINDIR="$TMP/half/bin" DATADIR="$RO/share/trillian" \
    MANDIR="$TMP/half/man" BASHCOMPDIR="$TMP/half/comp" >"$TMP/out.txt" 2>&1 &&
    fail "install with a read-only DATADIR succeeded"
expect_out "cannot write $RO/share"
[ ! -e "$TMP/half" ] || fail "a failed install left $(find "$TMP/half" | head -5)"
ok "a read-only destination fails before anything is copied"

# the data directory removed after the install: one line, naming it
rm -rf "$D/usr/share/trillian"
env -u TRILLIAN_DATA "$T" plan ia64-minimal --cache "$TMP/c" >"$TMP/out.txt" 2>&1
rc=$?
expect_rc 2
[ "$(wc -l <"$TMP/out.txt")" -eq 1 ] || fail "more than one line: $(cat "$TMP/out.txt")"
expect_out "trillian: the data directory $D/usr/share/trillian (installed: PREFIX/share/trillian beside PREFIX/bin/trillian) is missing: reinstall Trillian"
env -u TRILLIAN_DATA "$T" --version >"$TMP/out.txt" 2>&1
expect_out "; missing)"
ok "a removed data directory: $(cat "$TMP/out.txt" | tail -n1)"
