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
# Then the bounds (issue 38): what a hostile or broken substituter cannot do
# (exhaust disk or memory, hang, leave unsafe modes, forge output lines,
# leak a password, leave files for the local build); each refused in one
# line in under 5 s, the build going on here, nothing outside the cache
# changed and the local entry the same as a clean build's.
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

# bounded_build ARGS...: trl build, but a hang fails the test instead of
# stalling it (the bounds under test are far shorter), with the time taken
# in $took (seconds, one decimal) and files limited to $FSIZE KiB when set
bounded_build() {
    local t0=$EPOCHREALTIME
    ( [ -z "${FSIZE:-}" ] || ulimit -f "$FSIZE"
      exec timeout -k 5 60 "$TRILLIAN" build "$@" ) >"$TMP/out.txt" 2>&1
    rc=$?
    took=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
}
sums_of() { # ENTRY: its files' sha256, size and path (not mtimes)
    cut -d' ' -f1,2,4- "$1/sums"
}

case_n=0
# refused CASE SUBSTITUTER PATTERN [TRUST]: a build from an empty cache says
# PATTERN about SUBSTITUTER in one line, builds second itself and ends well,
# in under 5 s, with second's entry as a clean build has it and nothing
# outside its cache and output changed
refused() {
    local name=$1 sub=$2 pat=$3 trust=${4:-$TMP/key.pub} c=$TMP/c-$case_n o=$TMP/o-$case_n
    case_n=$((case_n + 1))
    touch "$TMP/stamp"
    sleep 0.01
    bounded_build "$R" --cache "$c" -o "$o" --substituter "$sub" --trust "$trust"
    expect_rc 0
    changed=$(find "$TMP" -mindepth 1 -newer "$TMP/stamp" ! -path "$c" ! -path "$c/*" \
        ! -path "$o" ! -path "$o/*" ! -name out.txt ! -name said.txt ! -name lines.txt ! -name http.log)
    [ -z "$changed" ] || fail "$name: changed outside the cache: $changed"
    # under 5 s a refusal: the build may ask for several stages (all refused)
    local n
    cp "$TMP/out.txt" "$TMP/said.txt" # the build's output, for checks after this
    grep "^trillian: [a-z]*: substituter " "$TMP/said.txt" > "$TMP/lines.txt"
    n=$(grep -c '' "$TMP/lines.txt")
    awk -v t="$took" -v n="$n" 'BEGIN { exit !(t < 5 * (n > 1 ? n : 1)) }' \
        || { cat "$TMP/out.txt"; fail "$name: took $took s for $n refusals, not under 5 s each"; }
    [ "$(sums_of "$c/objects/$K")" = "$(sums_of "$TMP/c0/objects/$K")" ] \
        || fail "$name: second's entry is not a clean build's"
    [ "$(cd "$c/objects/$K/out" && find . | sort)" = "$(cd "$TMP/c0/objects/$K/out" && find . | sort)" ] \
        || fail "$name: second's entry holds other files than a clean build's"
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
    cut -c1-300 "$TMP/lines.txt"
    ok "$name: refused in one line in $took s ($n stages asked), built here, cache verify ok"
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

make_tar "$TMP/empty.tar.zst" 'pass'
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
import base64, http.server, os, sys, threading, time
root, portfile = sys.argv[1], sys.argv[2]
threading.Timer(600, lambda: os._exit(0)).start()  # bounded, whatever the test does
class H(http.server.BaseHTTPRequestHandler):
    def log_message(self, fmt, *args):
        sys.stderr.write("%s\n" % (fmt % args))
    def do_GET(self):
        mode, _, rest = self.path.lstrip("/").partition("/")
        if mode == "nocl":  # /nocl/NAME/...: the copy p-NAME, no Content-Length
            name, _, rest = rest.partition("/")
            path = os.path.join(os.path.dirname(root), "p-" + name, rest)
        else:
            path = os.path.join(root, rest)
        if mode == "h500":
            self.send_error(500); return
        if mode == "auth" and self.headers.get("Authorization") != \
                "Basic " + base64.b64encode(b"user:secret").decode():
            self.send_error(401); return
        if not os.path.isfile(path) or ".." in rest:
            self.send_error(404); return
        data = open(path, "rb").read()
        payload = rest.endswith(".tar.zst")
        if mode == "hang" and payload:
            time.sleep(60); return
        if mode == "big" and rest.endswith(".sig"):  # 64 MiB, no Content-Length
            self.send_response(200); self.end_headers()
            for _ in range(1024):
                self.wfile.write(b"A" * 65536)
            return
        if mode == "steady" and rest.endswith(".json"):  # 8 KiB/s for ever
            self.send_response(200); self.end_headers()
            for _ in range(1200):
                self.wfile.write(b" " * 4096); self.wfile.flush(); time.sleep(0.5)
            return
        self.send_response(200)
        if mode == "nocl":
            self.end_headers(); self.wfile.write(data); return
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if mode == "drip" and payload:  # a byte at a time
            for i in range(len(data)):
                self.wfile.write(data[i:i + 1]); self.wfile.flush(); time.sleep(0.3)
            return
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

# ---- bounds (issue 38) ----
# a compression bomb: 64 MiB of zeros as b.txt, 14 bytes in the signed list;
# with files limited to 16 MiB, unpacking it would kill the build
make_tar "$TMP/bomb.tar.zst" "add('b.txt', bytes(64 << 20))"
d=$(copy bomb); set_payload "$d" "$TMP/bomb.tar.zst"
rm -f "$TMP/bomb.tar.zst"
FSIZE=16384 refused "a zstd bomb (unpacks to 64 MiB, its list says 14 bytes)" "$d" \
    "b.txt: 67108864 bytes, not 14"

pad_metadata() { # DIR: the metadata made 17 MiB (valid JSON, then blanks), re-signed
    python3 - "$1/cache/$K.json" <<'PY' || fail "cannot pad the metadata"
import sys
t = open(sys.argv[1]).read()
open(sys.argv[1], "w").write(t.rstrip() + " " * (17 << 20) + "\n")
PY
    resign "$1"
}
d=$(copy bigmeta); pad_metadata "$d"
refused "17 MiB of metadata in a directory" "$d" \
    "metadata is refused .*more than the 16777216 bytes allowed"
refused "17 MiB of metadata over HTTP without Content-Length" "$U/nocl/bigmeta" \
    "metadata is refused .*more than the 16777216 bytes allowed"
refused "a 64 MiB signature over HTTP without Content-Length" "$U/big" \
    "signature is refused .*more than the 65536 bytes allowed"
d=$(copy bigsig); head -c 1048576 /dev/urandom > "$d/cache/$K.json.sig"
refused "a 1 MiB signature from a file:// URL" "file://$d" \
    "signature is refused .*more than the 65536 bytes allowed for it \(1048576 bytes\)"

d=$(copy fifo); rm "$d/cache/$K.json"; mkfifo "$d/cache/$K.json"
refused "a FIFO for the metadata (a directory)" "$d" "metadata is refused .*not a regular file"
d=$(copy fifosig); rm "$d/cache/$K.json.sig"; mkfifo "$d/cache/$K.json.sig"
refused "a FIFO for the signature (a file:// URL)" "file://$d" \
    "signature is refused .*not a regular file"

refused "a server that drips a byte every 0.3 s" "$U/drip" \
    "timed out \(less than 1024 bytes a second for 2 s\)"
TRILLIAN_SUBSTITUTER_MAX_TIME=3 refused "a server that sends 8 KiB/s of metadata for ever" \
    "$U/steady" "took more than the 3 s an entry may take in all"

make_tar "$TMP/nl.tar.zst" "add('b.txt', open('$TMP/tree/b.txt', 'rb').read())" \
    "add('b.txt\\ntree: substituted from https:/forged.example')"
d=$(copy newline); set_payload "$d" "$TMP/nl.tar.zst"
refused "a member name with a newline" "$d" 'a name an entry may not hold \(b\.txt\\ntree'
! grep -q '^tree:' "$TMP/said.txt" || fail "a member name forged an output line"

deep=$(python3 -c 'print("/".join(["ddd"] * 1600))')
make_tar "$TMP/deep.tar.zst" "add('b.txt', open('$TMP/tree/b.txt', 'rb').read())" \
    "add('$deep/f')"
d=$(copy deep); set_payload "$d" "$TMP/deep.tar.zst"
refused "1,600 nested directories (6.4 KB of path)" "$d" "a name an entry may not hold"

# made safe, not refused: setuid and setgid files, a world-writable directory
python3 - "$TMP/modes.tar" "$TMP/tree/b.txt" <<'PY' || fail "cannot make the modes payload"
import io, sys, tarfile
t = tarfile.open(sys.argv[1], "w", format=tarfile.PAX_FORMAT)
data = open(sys.argv[2], "rb").read()
i = tarfile.TarInfo("b.txt"); i.mode = 0o6644; i.size = len(data); t.addfile(i, io.BytesIO(data))
i = tarfile.TarInfo("sub"); i.type = tarfile.DIRTYPE; i.mode = 0o1777; t.addfile(i)
t.close()
PY
zstd -q -f --rm "$TMP/modes.tar" -o "$TMP/modes.tar.zst" || fail "zstd"
d=$(copy modes)
jq -c '.files += [{"path": "sub", "type": "directory"}] | .files |= sort_by(.path)' \
    "$d/cache/$K.json" > "$TMP/m.json" && cp "$TMP/m.json" "$d/cache/$K.json"
set_payload "$d" "$TMP/modes.tar.zst"
c=$TMP/c-modes o=$TMP/o-modes
bounded_build "$R" --cache "$c" -o "$o" --substituter "$d" --trust "$TMP/key.pub"
expect_rc 0
expect_out "second: substituted from $d"
[ -d "$c/objects/$K/out/sub" ] || fail "the modes entry was not unpacked"
unsafe=$(find "$c/objects" "$o" \( -perm /6000 -o -perm /0022 \) ! -type l)
[ -z "$unsafe" ] || fail "setuid, setgid or group/world-writable modes kept: $unsafe"
ok "setuid/setgid files and a 1777 directory in a trusted entry: unpacked without those bits"

# one_stage NAME ARGV OUTPUT: builds a recipe of one command stage "m"
# (ARGV a libconfig list) into $TMP/c-NAME and $TMP/o-NAME
one_stage() {
    printf 'name = "%s"; description = "one stage"; arch = "amd64"; source_date_epoch = 1700000000;\nstages = ( { name = "m"; kind = "command"; argv = %s; outputs = ["%s"]; } );\n' \
        "$1" "$2" "$3" > "$TMP/$1.cfg"
    bounded_build "$TMP/$1.cfg" --cache "$TMP/c-$1" -o "$TMP/o-$1"
    expect_rc 0
}
# a local build's entry is made the same way
one_stage lmodes '["sh", "-c", "cd \"$TRILLIAN_OUT\" && echo x > s && chmod 6755 s && mkdir d && chmod 1777 d && echo y > d/y && chmod 666 d/y"]' s
unsafe=$(find "$TMP/c-lmodes/objects" "$TMP/o-lmodes/m" \( -perm /6000 -o -perm /0022 \) ! -type l)
[ -z "$unsafe" ] || fail "a local build kept setuid, setgid or group/world-writable modes: $unsafe"
[ -x "$TMP/o-lmodes/m/s" ] || fail "the executable bit was dropped too"
ok "a local build's setuid file and 1777 directory: stored and published without those bits"

# a trusted key file others may write is not used: one line, the build goes on here
cp "$TMP/key.pub" "$TMP/loose.pub" && chmod 666 "$TMP/loose.pub"
bounded_build "$R" --cache "$TMP/c-loose" -o "$TMP/o-loose" --substituter "$P" --trust "$TMP/loose.pub"
expect_rc 0
expect_out "trusted key file $TMP/loose.pub is writable by others (mode 0666): not used"
[ "$(grep -c 'loose.pub' "$TMP/out.txt")" -eq 1 ] || fail "more than one line about loose.pub"
expect_out "second: started"
expect_no_out "substituted"
ok "a world-writable trusted key file: refused in one line in $took s, built here"

# a password in the URL: used for the request, written nowhere
c=$TMP/c-auth o=$TMP/o-auth
bounded_build "$R" --cache "$c" -o "$o" --substituter "http://user:secret@127.0.0.1:$port/auth" \
    --trust "$TMP/key.pub"
expect_rc 0
expect_out "second: substituted from http://127.0.0.1:$port/auth"
! grep -rqa secret "$TMP/out.txt" "$o" "$c" || fail "the password was written: $(grep -rla secret "$TMP/out.txt" "$o" "$c")"
[ "$(jq -r '.stages[] | select(.name=="second") | .substituted_from' "$o/manifest.json")" \
    = "http://127.0.0.1:$port/auth" ] || fail "the manifest does not name the substituter without its password"
refused "a password in the URL of a server that fails" "http://user:secret@127.0.0.1:$port/h500" \
    "127.0.0.1:$port/h500 .*HTTP 500"
! grep -qa secret "$TMP/said.txt" || fail "a refusal printed the password"
ok "a password in a substituter's URL: the request authenticated, the password in no output, log or manifest"

# allowed_signers lines with options, as OpenSSH writes them
echo "*@example.org namespaces=\"git,trillian\" $(cat "$TMP/key.pub")" > "$TMP/allowed"
bounded_build "$R" --cache "$TMP/c-allowed" -o "$TMP/o-allowed" --substituter "$P" --trust "$TMP/allowed"
expect_rc 0
expect_out "second: substituted from $P"
echo "git@example.org namespaces=\"git\" $(cat "$TMP/key.pub")" > "$TMP/gitonly"
bounded_build "$R" --cache "$TMP/c-gitonly" -o "$TMP/o-gitonly" --substituter "$P" --trust "$TMP/gitonly"
expect_rc 2
expect_out "holds no key for the namespace \"trillian\""
echo "x@example.org no-such-option $(cat "$TMP/key.pub")" > "$TMP/badopt"
bounded_build "$R" --cache "$TMP/c-badopt" -o "$TMP/o-badopt" --substituter "$P" --trust "$TMP/badopt"
expect_rc 2
expect_out "$TMP/badopt:1: an option Trillian does not know (no-such-option)"
ok "an allowed_signers line with namespaces=\"git,trillian\" is used; other namespaces and unknown options said"

# removal at any depth: a stage's work directory 1,600 directories deep goes
one_stage deep '["python3", "-c", "import os\nfor _ in range(1600):\n    os.mkdir(\"ddd\"); os.chdir(\"ddd\")\nopen(\"f\", \"w\").write(\"x\")\nopen(os.environ[\"TRILLIAN_OUT\"] + \"/ok\", \"w\").write(\"ok\")"]' ok
[ -z "$(ls "$TMP/c-deep/tmp" 2>/dev/null)" ] || fail "a deep work tree was left in the cache's tmp: $(ls "$TMP/c-deep/tmp")"
ok "a work tree deeper than PATH_MAX is removed after the build"

# cache verify sees a file that the entry's sums do not list (the leftover
# the deep payload once put in a local build)
c=$TMP/c-0
e=$c/objects/$K
chmod u+w "$e/out"
echo leftover > "$e/out/extra.txt"
python3 - "$e" <<'PY' || fail "cannot add an ids line"
import os, sys
st = os.lstat(sys.argv[1] + "/out/extra.txt")
with open(sys.argv[1] + "/ids", "a") as f:
    f.write("f %d %d %d %d extra.txt\n" % (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino))
PY
trl cache verify --cache "$c"
[ "$rc" -ne 0 ] || { cat "$TMP/out.txt"; fail "cache verify accepts a file its sums do not list"; }
expect_out "extra.txt is not in the sha256 sums its build recorded"
ok "cache verify: a file in an entry that its sums do not list is found"

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
