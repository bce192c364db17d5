# kernel kind "package" at plan time, against a fake apt-cache on PATH that
# logs its calls and answers from a fake lists directory (TRILLIAN_APT_STATE
# names it as apt's state): the first plan resolves the metapackage with two
# `apt-cache show`; a second plan starts no apt-cache and gives the same key;
# a new version in the lists (an apt-get update) is asked again and changes
# the key; lists only touched are asked again and keep it; a failed answer
# (an unknown package) is not remembered. No network, no real apt.
. "$TOP/tests/lib.sh"
need depmod
mkdir -p "$TMP/bin" "$TMP/lists"
echo 6.1.999-1 > "$TMP/lists/version"
cat > "$TMP/bin/apt-cache" <<'SH'
#!/bin/sh
echo "$*" >> "$FAKE_APT/../apt.log"
[ "$1" = --version ] && { echo "apt 2.6.1 (amd64)"; exit 0; }
v=$(cat "$FAKE_APT/version")
case ${3%:amd64} in
linux-image-cloud-amd64)
    printf 'Package: linux-image-cloud-amd64\nVersion: %s\nArchitecture: amd64\nDepends: linux-image-6.1.0-99-cloud-amd64 (= %s)\nFilename: pool/main/l/meta.deb\nSHA256: %064d\n' "$v" "$v" 1 ;;
"linux-image-6.1.0-99-cloud-amd64=$v"|"linux-image-6.1.0-99-cloud-amd64:amd64=$v")
    printf 'Package: linux-image-6.1.0-99-cloud-amd64\nVersion: %s\nArchitecture: amd64\nFilename: pool/main/l/image_%s.deb\nSHA256: %064d\n' "$v" "$v" 2 ;;
*) exit 100 ;;
esac
SH
printf '#!/bin/sh\necho "apt 2.6.1 (amd64)"\n' > "$TMP/bin/apt-get"
chmod +x "$TMP/bin/apt-cache" "$TMP/bin/apt-get"
export PATH=$TMP/bin:$PATH FAKE_APT=$TMP/lists TRILLIAN_APT_STATE=$TMP/lists
cat > "$TMP/r.cfg" <<'CFG'
name = "kernel-package-plan";
arch = "amd64";
kernel = { kind = "package"; package = "linux-image-cloud-amd64"; };
CFG
C=$TMP/cache

plan() { # -> $key; $shows: the apt-cache show calls it made
    : > "$TMP/apt.log"
    trl plan "$TMP/r.cfg" --cache "$C"
    expect_rc 0
    key=$(awk '$1 == "kernel" { print $3 }' "$TMP/out.txt")
    [ -n "$key" ] || { cat "$TMP/out.txt"; fail "plan shows no kernel stage"; }
    shows=$(grep -c '^show ' "$TMP/apt.log")
}

plan
[ "$shows" -eq 2 ] || fail "the first plan made $shows apt-cache show calls, expected 2: $(cat "$TMP/apt.log")"
k1=$key
plan
[ "$shows" -eq 0 ] || fail "a second plan ran apt-cache show $shows times: $(cat "$TMP/apt.log")"
[ "$key" = "$k1" ] || fail "the key changed without a change in apt: $k1 -> $key"
ok "second plan: no apt-cache, same key $k1"

echo 6.1.999-2 > "$TMP/lists/version.new" && mv "$TMP/lists/version.new" "$TMP/lists/version"
plan
[ "$shows" -eq 2 ] || fail "new lists: $shows apt-cache show calls, expected 2"
[ "$key" != "$k1" ] || fail "a new version in the lists kept the key $k1"
k2=$key
plan
[ "$shows" -eq 0 ] || fail "the plan after the update ran apt-cache show again"
touch "$TMP/lists/version"
plan
[ "$shows" -eq 2 ] || fail "touched lists: $shows apt-cache show calls, expected 2"
[ "$key" = "$k2" ] || fail "the same answer gave another key: $k2 -> $key"
ok "changed lists are asked again (new key); touched ones too (same key)"

for n in 1 2; do
    : > "$TMP/apt.log"
    trl plan "$TMP/r.cfg" --cache "$C" --set kernel.package=linux-image-trillian-none
    expect_rc 2
    expect_out "kernel.package"
    grep -q '^show .*linux-image-trillian-none' "$TMP/apt.log" || fail "plan $n did not ask apt about the unknown package"
done
ok "an unknown package is a recipe error each time, never remembered"
