# The `rootfs` initramfs kind: the userland's whole root as a newc cpio with
# /init pointing at the root's init, owners and device nodes kept, made
# without root; a missing init and a relative init are refused.
. "$TOP/tests/lib.sh"
need cpio
R=$TOP/tests/fixtures/rootfs-initramfs/rootfs-initramfs.cfg
trl build "$R" --cache "$TMP/c" -o "$TMP/o"
expect_rc 0
img=$TMP/o/initramfs/initrd.img
zcat "$img" | cpio -itv --numeric-uid-gid 2>/dev/null > "$TMP/list" || fail "not a gzip cpio: $img"
cat "$TMP/list"
grep -Eq '^lrwxrwxrwx +1 0 +0 .* init -> /sbin/init$' "$TMP/list" || fail "no /init -> /sbin/init"
grep -Eq '^crw------- +1 0 +0 +5, +1 .* dev/console$' "$TMP/list" || fail "dev/console lost"
grep -Eq '^-rw-r----- +1 1000 +1000 .* home/user/notes$' "$TMP/list" || fail "owner 1000 lost"
grep -Eq 'sbin/init -> \.\./bin/sh$' "$TMP/list" || fail "the root's own symlink changed"
ok "cpio has /init, the device node and owners"

# same inputs, fresh cache: the same bytes
trl build "$R" --cache "$TMP/c2" -o "$TMP/o2"
expect_rc 0
cmp "$img" "$TMP/o2/initramfs/initrd.img" || fail "two builds differ"
ok "reproducible"

trl build "$R" --cache "$TMP/c" -o "$TMP/o3" --set initramfs.init=/sbin/nothere
expect_rc 1
expect_out "the root has no /sbin/nothere (initramfs.init)"
[ ! -e "$TMP/o3/initramfs/initrd.img" ] || fail "an initrd was published after the failure"
trl build "$R" --cache "$TMP/c" -o "$TMP/o4" --set initramfs.init=sbin/init
expect_rc 2
expect_out "initramfs.init: 'sbin/init' is not an absolute path"
ok "bad init settings refused"
