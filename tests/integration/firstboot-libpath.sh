# The first boot's library path before the second stage (ld_conf_path in
# overlays/firstboot/trillian-firstboot): a foreign first stage has no
# /etc/ld.so.cache, and the ia64 loader searches only /lib and /usr/lib, so
# the directories of /etc/ld.so.conf.d/*.conf become LD_LIBRARY_PATH until
# libc-bin's ldconfig has run. Debian's two files (libc.conf, the
# multiarch one), an include line and comments; an empty directory gives
# nothing.
. "$TOP/tests/lib.sh"
F=$TOP/overlays/firstboot/trillian-firstboot
D=$TMP/ld.so.conf.d
mkdir -p "$D" "$TMP/empty"
printf '# libc default configuration\n/usr/local/lib\n' > "$D/libc.conf"
printf '# Multiarch support\n/usr/local/lib/ia64-linux-gnu\n/lib/ia64-linux-gnu\n/usr/lib/ia64-linux-gnu\ninclude /etc/other.d/*.conf\n' \
    > "$D/ia64-linux-gnu.conf"
echo 'ignored' > "$D/README"
got=$(TRILLIAN_FIRSTBOOT_LIB=1 F="$F" D="$D" sh -c '. "$F"; ld_conf_path "$D"')
[ "$got" = /usr/local/lib/ia64-linux-gnu:/lib/ia64-linux-gnu:/usr/lib/ia64-linux-gnu:/usr/local/lib ] ||
    fail "ld_conf_path: got '$got'"
got=$(TRILLIAN_FIRSTBOOT_LIB=1 F="$F" D="$TMP/empty" sh -c '. "$F"; ld_conf_path "$D"')
[ -z "$got" ] || fail "ld_conf_path of an empty directory: got '$got'"
ok "ld.so.conf.d's directories in file order (the multiarch ones first), comments and include lines skipped"
