# The apt-archive stage's refusals (docs/apt-archive.md#errors), each with
# a message naming the recipe's FILE:LINE where a setting is at fault, and
# none leaving an archive in OUT: two .debs of one package, version and
# architecture with different bytes; a signing key that is missing, not a
# file, public, not a key, or has a passphrase; a package for another
# architecture; a named stage that makes no .deb; a wrong sha256 for a
# Debian package; and plan-time mistakes in the settings.
. "$TOP/tests/lib.sh"
need dpkg-deb gpg gpgv gpgconf xz
. "$TOP/tests/fixtures/apt-archive.sh"

"$TMP/mkdeb.sh" "$TMP/mirror" debian-thing 1.2-3 all "from the mirror" || fail "mkdeb"
dsha=$(sha256sum "$TMP/mirror/debian-thing_1.2-3_all.deb" | cut -d' ' -f1)

# recipe FILE STAGES-TEXT ARCHIVE-SETTINGS: the archive stage is on line 6
recipe() {
    cat >"$1" <<CFG
name = "aptbad";
arch = "amd64";
source_date_epoch = 1700000000;
stages = ( $2 );
packages = (
  { name = "archive"; kind = "apt-archive"; $3 }
);
CFG
}
build() { # RECIPE: a build in the shared cache; the archive must not reach OUT
    rm -rf "$TMP/out"
    trl build "$1" --cache "$TMP/cache" -o "$TMP/out" --mirror "$TMP/mirror"
    [ "$rc" = 0 ] || [ ! -e "$TMP/out/archive" ] || fail "a failed archive stage left OUT/archive"
}

# ---- duplicates ------------------------------------------------------------------
recipe "$TMP/dup.cfg" "$(debs_stage one "same 1.0 amd64 first"),
  $(debs_stage two "same 1.0 amd64 second")" 'stages = ["one", "two"];'
build "$TMP/dup.cfg"
expect_rc 1
expect_out "two different files are same 1.0 (amd64): stage one's debs/same_1.0_amd64.deb"
expect_out "and stage two's debs/same_1.0_amd64.deb"
# the same bytes twice: kept once
recipe "$TMP/dup2.cfg" "$(debs_stage one "same 1.0 amd64 first"),
  $(debs_stage two "same 1.0 amd64 first")" 'stages = ["one", "two"];'
build "$TMP/dup2.cfg"
expect_rc 0
rm -rf "$TMP/out"
ok "two .debs of one package, version and architecture with different bytes: refused naming both stages and files (the same bytes: kept once)"

# ---- the key ---------------------------------------------------------------------
recipe "$TMP/k.cfg" "$(debs_stage debs "hello 1.0 amd64")" 'stages = ["debs"];
    key = "no-such.asc";'
build "$TMP/k.cfg"
expect_rc 2
expect_out "k.cfg:7"
expect_out "no-such.asc"
mkdir "$TMP/keydir"
recipe "$TMP/k.cfg" "$(debs_stage debs "hello 1.0 amd64")" 'stages = ["debs"];
    key = "keydir";'
build "$TMP/k.cfg"
expect_rc 2
expect_out "k.cfg:7: packages.archive.key: $TMP/keydir is not a file (expected an armored OpenPGP secret key"
echo "not a key" >"$TMP/junk.asc"
recipe "$TMP/k.cfg" "$(debs_stage debs "hello 1.0 amd64")" 'stages = ["debs"];
    key = "junk.asc";'
build "$TMP/k.cfg"
expect_rc 2
expect_out "k.cfg:7: packages.archive.key: $TMP/junk.asc is not an armored OpenPGP secret key"
# a public key, and a secret key with a passphrase, made in a short home
gh=$(mktemp -d /tmp/trl-aptk.XXXXXX) || fail mktemp
trap 'gpgconf --homedir "$gh" --kill gpg-agent 2>/dev/null; rm -rf "$gh"' EXIT
GNUPGHOME=$gh gpg --batch --quiet --pinentry-mode loopback --passphrase secret \
    --quick-gen-key "Trillian test <t@trillian.invalid>" ed25519 sign never 2>/dev/null || fail "gpg key"
GNUPGHOME=$gh gpg --batch --armor --export >"$TMP/public.asc"
GNUPGHOME=$gh gpg --batch --pinentry-mode loopback --passphrase secret --armor --export-secret-keys >"$TMP/locked.asc"
recipe "$TMP/k.cfg" "$(debs_stage debs "hello 1.0 amd64")" 'stages = ["debs"];
    key = "public.asc";'
build "$TMP/k.cfg"
expect_rc 2
expect_out "k.cfg:7: packages.archive.key: $TMP/public.asc is a public key, not a secret key"
recipe "$TMP/k.cfg" "$(debs_stage debs "hello 1.0 amd64")" 'stages = ["debs"];
    key = "locked.asc";'
build "$TMP/k.cfg"
expect_rc 1
expect_out "k.cfg:7: packages.archive.key: gpg could not sign Release at SOURCE_DATE_EPOCH 1700000000"
ok "the key: missing, a directory, not a key, a public key (plan time, exit 2, naming FILE:LINE); one with a passphrase (run time)"

# ---- architecture ------------------------------------------------------------------
recipe "$TMP/arch.cfg" "$(debs_stage debs "hello 1.0 amd64" "armthing 1.0 arm64")" 'stages = ["debs"];'
build "$TMP/arch.cfg"
expect_rc 1
expect_out "stage debs's debs/armthing_1.0_arm64.deb: package armthing 1.0 is for architecture arm64, neither the archive's (amd64) nor all"
recipe "$TMP/arch.cfg" "$(debs_stage debs "hello 1.0 amd64")" 'stages = ["debs"];
    debian = ( { package = "debian-thing"; version = "1.2-3"; sha256 = "'"$dsha"'"; arch = "arm64"; } );'
build "$TMP/arch.cfg"
expect_rc 2
expect_out "arch.cfg:7"
expect_out "arch arm64 is neither the archive's (amd64) nor all"
ok "a package for another architecture: refused (a stage's at run time, a pinned Debian one at plan time)"

# ---- a stage without .debs -----------------------------------------------------------
recipe "$TMP/none.cfg" '{ name = "nodebs"; kind = "command"; argv = ["sh", "-c", "echo x > $TRILLIAN_OUT/o"]; outputs = ["o"]; }' \
    'stages = ["nodebs"];'
build "$TMP/none.cfg"
expect_rc 1
expect_out "none.cfg:6: packages.archive.stages: stage nodebs makes no .deb"
recipe "$TMP/none.cfg" "$(debs_stage debs "hello 1.0 amd64")" 'stages = ["debs", "missing"];'
build "$TMP/none.cfg"
expect_rc 2
expect_out "missing"
ok "a named stage that makes no .deb (run time) or does not exist (plan time): refused naming the setting"

# ---- a wrong sha256 -----------------------------------------------------------------
bad=$(echo "$dsha" | tr 0-9a-f 1-9a-f0)
recipe "$TMP/sha.cfg" "$(debs_stage debs "hello 1.0 amd64")" 'stages = ["debs"];
    debian_mirror = "file://'"$TMP"'/nowhere";
    debian = ( { package = "debian-thing"; version = "1.2-3"; sha256 = "'"$bad"'"; } );'
build "$TMP/sha.cfg"
expect_rc 1
expect_out "sha.cfg:8: archive.debian[1] (debian-thing 1.2-3): no verified copy of debian-thing_1.2-3_all.deb (sha256 $bad)"
expect_out "$TMP/mirror/debian-thing_1.2-3_all.deb has sha256 $dsha, not $bad"
! ls "$TMP/cache/downloads" 2>/dev/null | grep -q debian-thing || fail "a file with the wrong sha256 was kept"
# the right sha256 of another package's file
"$TMP/mkdeb.sh" "$TMP/mirror" other-thing 1.0 all || fail mkdeb
osha=$(sha256sum "$TMP/mirror/other-thing_1.0_all.deb" | cut -d' ' -f1)
recipe "$TMP/sha.cfg" "$(debs_stage debs "hello 1.0 amd64")" 'stages = ["debs"];
    debian = ( { package = "debian-thing"; version = "1.2-3"; sha256 = "'"$osha"'"; filename = "other-thing_1.0_all.deb"; } );'
build "$TMP/sha.cfg"
expect_rc 1
expect_out "the file with that sha256 is other-thing 1.0, not debian-thing 1.2-3"
recipe "$TMP/sha.cfg" "$(debs_stage debs "hello 1.0 amd64")" 'stages = ["debs"];
    debian = ( { package = "debian-thing"; version = "1.2-3"; sha256 = "12ab"; } );'
build "$TMP/sha.cfg"
expect_rc 2
expect_out "sha256 '12ab' is not 64 hex digits"
ok "a wrong sha256 for a Debian package: refused naming FILE:LINE and the file's real sha256; nothing kept; a file of another package, or a malformed sha256, refused"

# ---- other settings ---------------------------------------------------------------
recipe "$TMP/set.cfg" "$(debs_stage debs "hello 1.0 amd64")" 'stages = ["debs"]; suite = "a b";'
build "$TMP/set.cfg"
expect_rc 2
expect_out "set.cfg:6: packages.archive.suite: 'a b' is not a suite name"
recipe "$TMP/set.cfg" "$(debs_stage debs "hello 1.0 amd64")" 'stages = ["archive"];'
build "$TMP/set.cfg"
expect_rc 2
expect_out "names this stage itself"
ok "plan-time setting errors: a bad suite name, the stage naming itself"
