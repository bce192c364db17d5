# `trillian publish` writes a static directory (index.html, builds/, signed
# SHA256SUMS that ssh-keygen checks by the documented command, cache/ by
# key) without the private key in it; publishing again adds and never
# rewrites an entry. A build from an empty cache takes the stages it needs
# from that directory, top down (a stage whose entry it takes needs no
# inputs), as a plain directory, a file:// URL and over HTTP from nginx on
# 127.0.0.1 with its own prefix; `plan` says "substitute" with the sizes; the
# outputs are the same bytes and `cache verify` finds nothing wrong.
. "$TOP/tests/lib.sh"
need ssh-keygen zstd curl nginx jq
cp "$TOP/tests/fixtures/core/chain.cfg" "$TMP/chain.cfg"
printf 'one\ntwo\nthree\n' > "$TMP/input.txt"
R=$TMP/chain.cfg C=$TMP/cache O=$TMP/out P=$TMP/pub
ssh-keygen -q -t ed25519 -N '' -C 'trillian test' -f "$TMP/key" || fail "ssh-keygen"
trl build "$R" --cache "$C" -o "$O"
expect_rc 0

trl publish "$O" --to "$P" --sign "$TMP/key" --cache "$C"
expect_rc 0
expect_out "3 cache entries added"
for f in index.html SHA256SUMS SHA256SUMS.sig signing-key.pub builds/chain/report.html builds/chain/sbom.spdx.json \
         builds/chain/manifest.json; do
    [ -s "$P/$f" ] || fail "publish wrote no $f"
done
n=$(ls "$P"/cache/*.json | wc -l)
[ "$n" -eq 3 ] || fail "cache/ holds $n metadata files, not 3"
for k in $(jq -r '.stages[].key' "$O/manifest.json"); do
    [ -s "$P/cache/$k.tar.zst" ] && [ -s "$P/cache/$k.json.sig" ] || fail "entry $k is not complete"
    [ "$(jq -r .key "$P/cache/$k.json")" = "$k" ] || fail "metadata of $k names another key"
done
grep -q 'matrix-table' "$P/index.html" || fail "index.html has no matrix"
grep -q 'href="builds/chain/report.html"' "$P/index.html" || fail "index.html does not link the report"
! grep -qi '<script' "$P/index.html" || fail "index.html needs JavaScript"
# the private key: not one line of its body anywhere in DIR
sed -n '2,$p' "$TMP/key" | grep -v -- '-----' | while read -r line; do
    ! grep -rqF -- "$line" "$P" || fail "a line of the private key is in $P"
done
cmp -s <(cut -d' ' -f1,2 "$TMP/key.pub") <(cut -d' ' -f1,2 "$P/signing-key.pub") \
    || fail "signing-key.pub is not the key's public half"
# the documented check, without Trillian
( cd "$P" && echo "trillian $(cat signing-key.pub)" > "$TMP/allowed_signers" &&
  ssh-keygen -Y verify -f "$TMP/allowed_signers" -I trillian -n trillian -s SHA256SUMS.sig \
      < SHA256SUMS >/dev/null && sha256sum -c --quiet SHA256SUMS ) \
    || fail "SHA256SUMS does not verify by the documented command"
printf 'x' >> "$P/SHA256SUMS"
! ( cd "$P" && ssh-keygen -Y verify -f "$TMP/allowed_signers" -I trillian -n trillian \
      -s SHA256SUMS.sig < SHA256SUMS >/dev/null 2>&1 ) || fail "a changed SHA256SUMS still verifies"
ok "publish: index.html, builds/, signed SHA256SUMS (ssh-keygen -Y verify), cache/ by key, no private key"

# publishing again adds, never rewrites
k1=$(jq -r '.stages[] | select(.name=="first") | .key' "$O/manifest.json")
before=$(stat -c '%i %Y' "$P/cache/$k1.json" "$P/cache/$k1.tar.zst")
printf 'four\n' >> "$TMP/input.txt"
trl build "$R" --cache "$C" -o "$O"
expect_rc 0
trl publish "$O" --to "$P" --sign "$TMP/key" --cache "$C"
expect_rc 0
expect_out "2 cache entries added"
expect_out "1 already there"
[ "$(stat -c '%i %Y' "$P/cache/$k1.json" "$P/cache/$k1.tar.zst")" = "$before" ] \
    || fail "a second publish rewrote entry $k1"
n=$(ls "$P"/cache/*.json | wc -l)
[ "$n" -eq 5 ] || fail "cache/ holds $n entries after the second publish, not 5"
( cd "$P" && ssh-keygen -Y verify -f "$TMP/allowed_signers" -I trillian -n trillian \
      -s SHA256SUMS.sig < SHA256SUMS >/dev/null && sha256sum -c --quiet SHA256SUMS ) \
    || fail "SHA256SUMS does not verify after the second publish"
ok "a second publish adds the new entries and leaves the old ones as they were"

# from an empty cache: plan, then a build through each kind of substituter
trl plan "$R" --cache "$TMP/c-plan" --substituter "$P" --trust "$TMP/key.pub"
expect_rc 0
grep -Eq '^second +stages/command +[0-9a-f]{12} substitute from .*: download [0-9.]+ MiB' "$TMP/out.txt" \
    || { cat "$TMP/out.txt"; fail "plan does not say second is substituted, with its size"; }
grep -Eq '^first +stages/command +[0-9a-f]{12} unneeded' "$TMP/out.txt" \
    || { cat "$TMP/out.txt"; fail "plan does not say first is not needed"; }
[ ! -d "$TMP/c-plan/objects" ] || [ -z "$(ls "$TMP/c-plan/objects")" ] || fail "plan downloaded entries"
ok "plan: substitute with the download size, unneeded below it, nothing downloaded"

XDG_CONFIG_HOME=$TMP/no-config trl build "$R" --cache "$TMP/c-notrust" -o "$TMP/o-notrust" \
    --substituter "$P"
expect_rc 2
expect_out "substituters are set but no key is trusted"
[ ! -e "$TMP/o-notrust" ] || fail "a build without a trusted key ran"
ok "substituters without a trusted key: a usage error, nothing built"

want_b=$(sha256sum < "$O/second/b.txt")
substitute_build() { # NAME SUBSTITUTER
    local c=$TMP/c-$1 o=$TMP/o-$1
    trl build "$R" --cache "$c" -o "$o" --substituter "$2" --trust "$TMP/key.pub"
    expect_rc 0
    expect_out "second: substituted from "
    expect_out "alone: substituted from "
    expect_no_out "second: started"
    [ ! -e "$o/first" ] || fail "$1: first was fetched or built, though second came whole"
    [ "$(sha256sum < "$o/second/b.txt")" = "$want_b" ] || fail "$1: second/b.txt differs"
    [ "$(jq -r '.stages[] | select(.name=="second") | .substituted_from' "$o/manifest.json")" != null ] \
        || fail "$1: the manifest does not say where second came from"
    trl cache verify --cache "$c"
    expect_rc 0
    trl build "$R" --cache "$c" -o "$o" --substituter "$2" --trust "$TMP/key.pub"
    expect_rc 0
    expect_no_out "substituted"
}
substitute_build dir "$P"
substitute_build file "file://$P"
ok "a plain directory and a file:// URL substitute second and alone, top down; cache verify ok"

# a real server: nginx on 127.0.0.1, its own prefix and config, no root
N=$TMP/nginx
mkdir -p "$N/logs" "$N/tmp"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cat > "$N/nginx.conf" <<EOF
daemon off;
master_process off;
worker_processes 1;
pid $N/nginx.pid;
error_log $N/logs/error.log;
events { worker_connections 64; }
http {
    access_log $N/logs/access.log;
    client_body_temp_path $N/tmp/body;
    proxy_temp_path $N/tmp/proxy;
    fastcgi_temp_path $N/tmp/fastcgi;
    uwsgi_temp_path $N/tmp/uwsgi;
    scgi_temp_path $N/tmp/scgi;
    default_type application/octet-stream;
    server { listen 127.0.0.1:$port; root $P; }
}
EOF
NGINX=$(command -v nginx || PATH=$PATH:/usr/sbin command -v nginx)
"$NGINX" -p "$N" -e "$N/logs/error.log" -c "$N/nginx.conf" &
nginx_pid=$!
trap 'kill $nginx_pid 2>/dev/null; wait $nginx_pid 2>/dev/null' EXIT
for _ in $(seq 50); do curl -fs "http://127.0.0.1:$port/SHA256SUMS" >/dev/null && break; sleep 0.1; done
curl -fs "http://127.0.0.1:$port/SHA256SUMS" >/dev/null || fail "nginx did not start: $(cat "$N/logs/error.log")"
substitute_build http "http://127.0.0.1:$port"
grep -q "GET /cache/.*\.tar\.zst" "$N/logs/access.log" || fail "nginx served no payload"
ok "over HTTP from nginx: the same stages, the same bytes, cache verify ok"
