# Outputs are never the cache's inodes, and reuse is verified: a byte
# appended to a published file leaves the cache and a fresh -o untouched
# (and OUT is restored); a deleted output comes back; a cache object altered
# in place (even with its mtime put back) is noticed, moved aside and built
# again, and `plan` says "changed, will rebuild" for it first; `trillian cache
# verify` finds and --repair moves bad entries.
. "$TOP/tests/lib.sh"
cp "$TOP/tests/fixtures/core/chain.cfg" "$TMP/chain.cfg"
printf 'one\ntwo\nthree\n' > "$TMP/input.txt"
R=$TMP/chain.cfg C=$TMP/cache O=$TMP/out
trl build "$R" --cache "$C" -o "$O"
expect_rc 0
want=$(cat "$O/first/a.txt")
entry=$(dirname "$(dirname "$(ls "$C"/objects/*/out/a.txt)")")
[ -s "$entry/ids" ] || fail "no ids recorded beside sums in $entry"

# what booting an image without snapshot=on does to OUT
printf 'X' >> "$O/first/a.txt"
[ "$(cat "$entry/out/a.txt")" = "$want" ] || fail "a write into OUT changed the cache object"
[ "$(stat -c %h "$O/first/a.txt")" -eq 1 ] || fail "OUT's file is a hard link"
trl build "$R" --cache "$C" -o "$TMP/fresh"
expect_rc 0
[ "$(cat "$TMP/fresh/first/a.txt")" = "$want" ] || fail "a fresh -o got the altered bytes"
trl build "$R" --cache "$C" -o "$O"
expect_rc 0
expect_out "first/a.txt was changed since it was published"
[ "$(cat "$O/first/a.txt")" = "$want" ] || fail "OUT was not restored from the cache"
ok "a byte appended in OUT reaches neither the cache nor a fresh -o; OUT is restored"

rm "$O/second/b.txt"
trl build "$R" --cache "$C" -o "$O"
expect_rc 0
expect_out "second/b.txt was deleted since it was published"
[ -s "$O/second/b.txt" ] || fail "a deleted output was not restored"
trl build "$R" --cache "$C" -o "$O"
expect_no_out "since it was published"
ok "a deleted output is restored on the next build; then a quiet no-op"

# OUT published by an older trillian: hard links into the cache
ln -f "$entry/out/a.txt" "$O/first/a.txt"
trl build "$R" --cache "$C" -o "$O"
expect_rc 0
expect_out "first/a.txt is the cache's own file (a hard link)"
[ "$(stat -c %h "$O/first/a.txt")" -eq 1 ] || fail "OUT still shares the cache's inode"
ok "an OUT file hard-linked to the cache is published again as a copy"

# The cache object itself, altered in place with its size and mtime put back.
f=$entry/out/a.txt
chmod u+w "$f"
mt=$(stat -c %y "$f")
printf 'ONE\ntwo\nthree\n' > "$f"
touch -d "$mt" "$f"
trl cache verify --cache "$C"
expect_rc 1
expect_out "$(basename "$entry") BAD: a.txt"
# plan makes the build's check: not "cached" for an entry the build rebuilds
trl plan "$R" --cache "$C"
expect_rc 0
grep -E "^first +stages/command +[0-9a-f]{12} build +changed, will rebuild \(a.txt: its sha256" \
    "$TMP/out.txt" >/dev/null || { cat "$TMP/out.txt"; fail "plan does not say the altered entry will be rebuilt"; }
grep -E "^second .* cached" "$TMP/out.txt" >/dev/null || { cat "$TMP/out.txt"; fail "plan: the intact entry is not cached"; }
trl plan "$R" --cache "$C" --json
python3 -c 'import json,sys; s={x["name"]: x for x in json.load(open(sys.argv[1]))["stages"]}; assert s["first"]["status"] == "build" and s["first"]["why"].startswith("changed, will rebuild"), s["first"]' \
    "$TMP/out.txt" || fail "plan --json: the altered entry is not status build"
[ -e "$entry" ] || fail "plan moved the entry aside (only a build does)"
trl build "$R" --cache "$C" -o "$O"
expect_rc 0
expect_out "first: cache entry"
expect_out "changed after it was built (a.txt"
expect_out "first: done"
[ "$(cat "$entry/out/a.txt")" = "$want" ] || fail "the stage was not built again"
ls "$C"/bad/"$(basename "$entry")".* >/dev/null 2>&1 || fail "the altered entry was not kept in $C/bad"
trl cache verify --cache "$C"
expect_rc 0
trl plan "$R" --cache "$C"
expect_no_out "changed, will rebuild"
touch "$entry/out/a.txt" # a new mtime, the same bytes: reused, as a build would
trl plan "$R" --cache "$C"
expect_no_out "changed, will rebuild"
grep -E "^first .* cached" "$TMP/out.txt" >/dev/null || { cat "$TMP/out.txt"; fail "plan: a touched entry is not cached"; }
ok "an altered cache object is noticed by its ids, moved aside and rebuilt; plan says so first"

# verify --repair, and a key prefix
e2=$(dirname "$(dirname "$(ls "$C"/objects/*/out/c.txt)")")
chmod u+w "$e2/out/c.txt"; echo tampered > "$e2/out/c.txt"
k=$(basename "$e2")
trl cache verify --cache "$C" --repair "${k:0:12}"
expect_rc 1
expect_out "$k BAD: c.txt"
expect_out "moved aside to"
[ ! -e "$e2" ] || fail "--repair left the bad entry in objects/"
trl cache verify --cache "$C" nosuchkey
expect_rc 2
trl cache verify --cache "$C"
expect_rc 0
ok "cache verify finds bad entries, --repair moves them aside, exit codes"

# Names are whatever a stage makes: one that begins with a space is the same
# file on the next reuse; one with a newline (no line records it) is not
# taken for an added file.
cat >"$TMP/sp.cfg" <<'CFG'
name = "sp"; arch = "amd64"; source_date_epoch = 1700000000;
stages = ( { name = "a"; kind = "command";
  argv = ["sh", "-c", "echo x > \"$TRILLIAN_OUT/ lead\"; echo z > \"$TRILLIAN_OUT/new\nline\"; echo y > \"$TRILLIAN_OUT/ok\""];
  outputs = ["ok"]; } );
CFG
trl build "$TMP/sp.cfg" --cache "$C" -o "$TMP/sp"
expect_rc 0
trl build "$TMP/sp.cfg" --cache "$C" -o "$TMP/sp"
expect_rc 0
expect_out "a: cached"
expect_no_out "changed"
ok "file names with a leading space or a newline do not make a reuse fail"
