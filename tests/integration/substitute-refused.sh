# Nothing unverified enters the cache from a substituter. For each bad
# entry or server (signature missing, by an untrusted key, not matching; a
# payload with a byte changed, truncated, with a file too many or too few;
# paths escaping by ../, absolutely or through a symlink; metadata that is
# not JSON or names another key; a server answering 404 or 500, hanging
# (bounded by TRILLIAN_SUBSTITUTER_TIMEOUT) or closing mid-download; a
# substituter that is neither http(s) nor a directory): one line naming the
# substituter and why, the stage is built here, the build succeeds with the
# right bytes, and `cache verify` finds nothing wrong. The payload cases that
# a signed payload sha256 would already stop are also tried with metadata
# re-signed by the trusted key (a publisher's mistake or a stolen key), so
# the unpacked files' own checks are tested too.
. "$TOP/tests/lib.sh"
need ssh-keygen zstd curl python3 jq
cp "$TOP/tests/fixtures/core/chain.cfg" "$TMP/chain.cfg"
printf 'one\ntwo\nthree\n' > "$TMP/input.txt"
R=$TMP/chain.cfg P=$TMP/pub
ssh-keygen -q -t ed25519 -N '' -C trusted -f "$TMP/key" || fail "ssh-keygen"
ssh-keygen -q -t ed25519 -N '' -C other -f "$TMP/other" || fail "ssh-keygen"
trl build "$R" --cache "$TMP/c0" -o "$TMP/o0"
expect_rc 0
want_b=$(cat "$TMP/o0/second/b.txt")
K=$(jq -r '.stages[] | select(.name=="second") | .key' "$TMP/o0/manifest.json")
trl publish "$TMP/o0" --to "$P" --sign "$TMP/key" --cache "$TMP/c0"
expect_rc 0
export TRILLIAN_SUBSTITUTER_TIMEOUT=2

resign() { # DIR: signs DIR/cache/$K.json with the trusted key again
    rm -f "$1/cache/$K.json.sig"
    ssh-keygen -q -Y sign -f "$TMP/key" -n trillian "$1/cache/$K.json" >/dev/null 2>&1 \
        || fail "cannot re-sign"
}
set_payload() { # DIR TARZST: puts TARZST in as $K's payload, metadata re-signed to match
    cp "$2" "$1/cache/$K.tar.zst"
    local sha size
    sha=$(sha256sum < "$2" | cut -d' ' -f1) size=$(stat -c %s "$2")
    jq --arg s "$sha" --argjson n "$size" '.payload.sha256=$s | .payload.size=$n' \
        "$1/cache/$K.json" > "$TMP/m.json" && cp "$TMP/m.json" "$1/cache/$K.json"
    resign "$1"
}
make_tar() { # OUT.tar.zst PYTHON-LINES...: a tar built by python's tarfile, compressed
    local out=$1
    shift
    python3 - "$out.tar" "$@" <<'PY' || fail "cannot make a tar"
import io, sys, tarfile
t = tarfile.open(sys.argv[1], "w", format=tarfile.PAX_FORMAT)
def add(name, data=b"x", kind=tarfile.REGTYPE, link=""):
    i = tarfile.TarInfo(name); i.type = kind; i.linkname = link; i.mode = 0o444
    i.size = len(data) if kind == tarfile.REGTYPE else 0
    t.addfile(i, io.BytesIO(data) if kind == tarfile.REGTYPE else None)
for line in sys.argv[2:]:
    exec(line)
t.close()
PY
    zstd -q -f --rm "$out.tar" -o "$out" || fail "zstd"
}

case_n=0
# refused CASE SUBSTITUTER PATTERN: a build from an empty cache says PATTERN
# about SUBSTITUTER in one line, builds second itself and ends well
refused() {
    local name=$1 sub=$2 pat=$3 c=$TMP/c-$case_n o=$TMP/o-$case_n
    case_n=$((case_n + 1))
    trl build "$R" --cache "$c" -o "$o" --substituter "$sub" --trust "$TMP/key.pub"
    expect_rc 0
    grep -E "^trillian: second: substituter .*${pat}" "$TMP/out.txt" >/dev/null \
        || { cat "$TMP/out.txt"; fail "$name: no line saying: $pat"; }
    [ "$(grep -c "^trillian: second: substituter " "$TMP/out.txt")" -eq 1 ] \
        || { cat "$TMP/out.txt"; fail "$name: more than one line about the substituter"; }
    expect_out "second: started"
    [ "$(cat "$o/second/b.txt")" = "$want_b" ] || fail "$name: second/b.txt is wrong"
    trl cache verify --cache "$c"
    expect_rc 0
    [ -z "$(ls "$c/bad" 2>/dev/null)" ] || fail "$name: an entry was moved aside"
    [ -z "$(ls "$c/tmp" 2>/dev/null | grep -v '^\.')" ] || fail "$name: left files in $c/tmp"
    ok "$name: refused in one line, built here, cache verify ok"
}
copy() { rm -rf "$TMP/p-$1"; cp -a "$P" "$TMP/p-$1"; echo "$TMP/p-$1"; }

d=$(copy nosig); rm "$d/cache/$K.json.sig"
refused "signature missing" "$d" "has no signature"

d=$(copy untrusted)
c=$TMP/c-untrusted
trl build "$R" --cache "$c" -o "$TMP/o-untrusted" --substituter "$d" --trust "$TMP/other.pub"
expect_rc 0
expect_out "second: substituter $d its entry's signature is refused"
expect_out "second: started"
trl cache verify --cache "$c"
expect_rc 0
ok "signed by an untrusted key: refused, built here, cache verify ok"

d=$(copy badsig); sed -i 's/"stage":"second"/"stage":"secone"/' "$d/cache/$K.json"
refused "signature not matching the metadata" "$d" "signature is refused"

d=$(copy byte)
python3 - "$d/cache/$K.tar.zst" <<'PY'
import sys
b = bytearray(open(sys.argv[1], "rb").read()); b[len(b) // 2] ^= 1
open(sys.argv[1], "wb").write(b)
PY
refused "payload with one byte changed" "$d" "payload is not what its metadata says"

d=$(copy trunc); truncate -s -10 "$d/cache/$K.tar.zst"
refused "payload truncated" "$d" "payload is not what its metadata says"

mkdir -p "$TMP/tree" && tar -C "$TMP/tree" -xf <(zstd -dc "$P/cache/$K.tar.zst")
d=$(copy extra); cp -a "$TMP/tree" "$TMP/tree-extra"; chmod u+w "$TMP/tree-extra"
echo evil > "$TMP/tree-extra/evil.txt"
tar -C "$TMP/tree-extra" -cf - . | zstd -q > "$TMP/extra.tar.zst"
cp "$TMP/extra.tar.zst" "$d/cache/$K.tar.zst"
refused "payload with an extra file" "$d" "payload is not what its metadata says"
d=$(copy extra-signed); set_payload "$d" "$TMP/extra.tar.zst"
refused "payload with an extra file, metadata re-signed" "$d" "evil.txt: in the payload but not in its metadata"

make_tar "$TMP/empty.tar.zst" 'add("other.txt", b"two\n")'
d=$(copy missing-signed); set_payload "$d" "$TMP/empty.tar.zst"
refused "payload without its file, metadata re-signed" "$d" "b.txt: missing from the payload"

make_tar "$TMP/dotdot.tar.zst" "add('b.txt', open('$TMP/tree/b.txt', 'rb').read())" 'add("../escaped.txt")'
d=$(copy dotdot); set_payload "$d" "$TMP/dotdot.tar.zst"
refused "a ../ path in the payload" "$d" "leaves the entry"
[ ! -e "$TMP/c-$((case_n - 1))/tmp/escaped.txt" ] && [ ! -e "$TMP/escaped.txt" ] \
    || fail "a ../ path was written"

make_tar "$TMP/abs.tar.zst" "add('b.txt', open('$TMP/tree/b.txt', 'rb').read())" "add('$TMP/absolute.txt')"
d=$(copy abs); set_payload "$d" "$TMP/abs.tar.zst"
refused "an absolute path in the payload (read relative, as tar does, so it stays inside; then not in the list)" "$d" "leaves the entry|in the payload but not in its metadata"
[ ! -e "$TMP/absolute.txt" ] || fail "an absolute path was written"

make_tar "$TMP/link.tar.zst" "add('b.txt', open('$TMP/tree/b.txt', 'rb').read())" \
    "add('out', kind=tarfile.SYMTYPE, link='$TMP')"
d=$(copy link); set_payload "$d" "$TMP/link.tar.zst"
refused "a symlink pointing out of the entry" "$d" "symlink pointing outside the entry"
make_tar "$TMP/link2.tar.zst" "add('b.txt', open('$TMP/tree/b.txt', 'rb').read())" \
    "add('up', kind=tarfile.SYMTYPE, link='../../..')"
d=$(copy link2); set_payload "$d" "$TMP/link2.tar.zst"
refused "a relative symlink climbing out of the entry" "$d" "symlink pointing outside the entry"

d=$(copy notjson); echo 'this is not json {' > "$d/cache/$K.json"; resign "$d"
refused "metadata that is not JSON" "$d" "metadata is not a JSON object"

d=$(copy otherkey)
jq '.key="0000000000000000000000000000000000000000000000000000000000000000"' "$d/cache/$K.json" \
    > "$TMP/m.json" && cp "$TMP/m.json" "$d/cache/$K.json"; resign "$d"
refused "metadata naming another key" "$d" "metadata names another key"

# servers that misbehave: MODE in the URL's first component
rm -f "$TMP/port"
python3 - "$P" "$TMP/port" <<'PY' >"$TMP/http.log" 2>&1 &
import http.server, os, sys, time
root, portfile = sys.argv[1], sys.argv[2]
class H(http.server.BaseHTTPRequestHandler):
    def log_message(self, fmt, *args):
        sys.stderr.write("%s\n" % (fmt % args))
    def do_GET(self):
        mode, _, rest = self.path.lstrip("/").partition("/")
        path = os.path.join(root, rest)
        if mode == "h500":
            self.send_error(500); return
        if not os.path.isfile(path) or ".." in rest:
            self.send_error(404); return
        data = open(path, "rb").read()
        payload = rest.endswith(".tar.zst")
        if mode == "hang" and payload:
            time.sleep(60); return
        self.send_response(200)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if mode == "cut" and payload:
            self.wfile.write(data[: len(data) // 2]); self.wfile.flush()
            self.close_connection = True
            return
        self.wfile.write(data)
s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
s.daemon_threads = True
open(portfile + ".tmp", "w").write("%d\n" % s.server_address[1])
os.rename(portfile + ".tmp", portfile)
s.serve_forever()
PY
server=$!
trap 'kill $server 2>/dev/null' EXIT
for _ in $(seq 100); do [ -s "$TMP/port" ] && break; sleep 0.1; done
port=$(cat "$TMP/port") || fail "the test server did not start"
U=http://127.0.0.1:$port
d=$(copy none); rm "$d/cache/$K".*
refused "no such entry (a directory)" "$d" "has no entry for it"
refused "HTTP 404" "$U/ok/nothing-here" "has no entry for it .*HTTP 404"
refused "HTTP 500" "$U/h500" "HTTP 500"
t0=$SECONDS
refused "a server that hangs" "$U/hang" "timed out"
[ $((SECONDS - t0)) -lt 60 ] || fail "the hang was not bounded by the timeout"
refused "a server that closes mid-download" "$U/cut" "closed the connection|connection broke"

c=$TMP/c-scheme
trl build "$R" --cache "$c" -o "$TMP/o-scheme" --substituter "ftp://127.0.0.1/x" \
    --substituter "$TMP/no-such-dir" --trust "$TMP/key.pub"
expect_rc 0
expect_out "substituter ftp://127.0.0.1/x: not an http(s) URL, a file:// URL or a directory; not used"
expect_out "substituter $TMP/no-such-dir: not an http(s) URL, a file:// URL or a directory; not used"
expect_out "second: started"
trl cache verify --cache "$c"
expect_rc 0
ok "a substituter that is neither http(s) nor a directory: said, not used, built here"

# and a good one still works after all that: the test can tell
trl build "$R" --cache "$TMP/c-good" -o "$TMP/o-good" --substituter "$U/ok" --trust "$TMP/key.pub"
expect_rc 0
expect_out "second: substituted from $U/ok"
ok "the same server's good entry is taken"
