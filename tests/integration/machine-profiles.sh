# Machine profiles (firmware/machines.cfg, builder/engine/machine.c) and the
# recipe's top-level `machine`:
#  - every profile in the shipped file is accepted by `trillian plan` with its
#    arch; an unknown name is a recipe error at FILE:LINE: machine listing the
#    known ones; a profile for another arch is one too
#  - malformed data files (unknown key, missing console, a name twice) are
#    refused naming the data file's line
#  - the ESP's kernel command line takes the profile's console and words
#    unless bootloader.console is set
#  - the kernel source stage merges the profile's fragments: their content
#    enters its key only when the recipe names the machine; a profile naming
#    a fragment that does not exist is a recipe error
. "$TOP/tests/lib.sh"
need mkfs.vfat mmd mcopy fsck.fat python3
PATH=$PATH:/usr/sbin:/sbin
export TRILLIAN_DATA=$TOP

plain() { # FILE ARCH [MACHINE]: a recipe with one command stage
    { echo "name = \"mp\";"; echo "arch = \"$2\";"; [ -n "${3:-}" ] && echo "machine = \"$3\";"
      echo 'stages = ( { kind = "command"; name = "x"; argv = ["touch", "${out}/f"]; outputs = ["f"]; } );'; } > "$1"
}

# --- the shipped profiles -----------------------------------------------------
names=$(python3 - "$TOP/firmware/machines.cfg" <<'PY'
import re, sys
t = open(sys.argv[1]).read()
for name, arch in re.findall(r'name = "([^"]+)"; arch = "([^"]+)";', t):
    print(name, arch)
PY
)
[ "$(echo "$names" | wc -l)" -ge 8 ] || fail "machines.cfg has fewer than 8 profiles: $names"
for want in rx2600 rx2620 rx4640 rx2660 rx8640 ski qemu-ia64-vpc qemu-x86_64; do
    echo "$names" | grep -q "^$want " || fail "machines.cfg has no profile $want"
done
echo "$names" | while read -r n a; do
    plain "$TMP/p.cfg" "$a" "$n"
    trl plan "$TMP/p.cfg" --cache "$TMP/c"
    expect_rc 0
done || exit 1
ok "all $(echo "$names" | wc -l) shipped profiles are accepted with their arch"

plain "$TMP/bad.cfg" ia64 rx2700
trl plan "$TMP/bad.cfg" --cache "$TMP/c"
expect_rc 2
expect_out "$TMP/bad.cfg:3: machine: no machine profile 'rx2700' (known: qemu-ia64-vpc, qemu-x86_64, rx2600, rx2620, rx2660, rx4640, rx8640, ski"
plain "$TMP/bad.cfg" amd64 rx2600
trl plan "$TMP/bad.cfg" --cache "$TMP/c"
expect_rc 2
expect_out "$TMP/bad.cfg:3: machine: 'rx2600' is a profile for arch ia64, and the recipe's arch is amd64"
plain "$TMP/bad.cfg" ia64
trl plan "$TMP/bad.cfg" --cache "$TMP/c" --set machine=nope
expect_rc 2
expect_out "--set machine=nope: machine: no machine profile 'nope'"
ok "unknown profile, wrong arch, --set: recipe errors (exit 2) at machine, listing the known profiles"

# --- a data directory of our own ---------------------------------------------
D=$TMP/data
mkdir -p "$D/firmware"
cp -R "$TOP/kernel-config" "$D/"
cp -R "$TOP/firmware/." "$D/firmware/"
export TRILLIAN_DATA=$D
profiles() { # the machines list's entries
    printf 'machines = (\n%s\n);\n' "$1" > "$D/firmware/machines.cfg"
}
profiles '  { name = "box"; arch = "amd64"; description = "test";
    console = "ttyS3,9600"; cmdline = "earlycon=uart8250,io,0x3e8"; fragments = ["t1"]; },
  { name = "box2"; arch = "amd64"; description = "test"; console = ""; fragments = ["no-such-fragment"]; }'
printf '# t1\nCONFIG_SERIAL_8250=y\n' > "$D/kernel-config/t1.config"

for bad in 'unknown key '"'"'consol'"'"'|{ name = "b"; arch = "amd64"; description = "d"; consol = "x"; }' \
    "a profile needs 'console'|{ name = \"b\"; arch = \"amd64\"; description = \"d\"; }" \
    "profile 'b' is given twice|{ name = \"b\"; arch = \"amd64\"; description = \"d\"; console = \"\"; }, { name = \"b\"; arch = \"amd64\"; description = \"d\"; console = \"\"; }"; do
    cp "$D/firmware/machines.cfg" "$TMP/good-machines.cfg"
    profiles "  ${bad#*|}"
    plain "$TMP/p.cfg" amd64 b
    trl plan "$TMP/p.cfg" --cache "$TMP/c"
    expect_rc 2
    expect_out "machine: $D/firmware/machines.cfg:2: ${bad%%|*}"
    cp "$TMP/good-machines.cfg" "$D/firmware/machines.cfg"
done
ok "a data file with an unknown key, a missing console or a name twice is refused at its line"

# ESP: the profile's console and words, unless bootloader.console is set
mkdir -p "$TMP/esp"
cp -R "$TOP/tests/fixtures/initramfs-kernel" "$TOP/tests/fixtures/esp-fake-loader.efi" "$TMP/esp/"
grep -v '^ *console = ' "$TOP/tests/fixtures/esp-recipe.cfg" > "$TMP/esp/r.cfg"
trl build "$TMP/esp/r.cfg" --cache "$TMP/c" -o "$TMP/o1" --set machine=box
expect_rc 0
grep -q ' earlycon=uart8250,io,0x3e8 console=ttyS3,9600 ' "$TMP/o1/bootloader/cmdline" ||
    fail "the ESP command line lacks the profile's words and console: $(cat "$TMP/o1/bootloader/cmdline")"
grep -q 'ttyS0' "$TMP/o1/bootloader/cmdline" && fail "the default console is still there"
trl build "$TMP/esp/r.cfg" --cache "$TMP/c" -o "$TMP/o2" --set machine=box --set bootloader.console=ttyS1,115200
expect_rc 0
grep -q 'console=ttyS1,115200' "$TMP/o2/bootloader/cmdline" && ! grep -q 'ttyS3' "$TMP/o2/bootloader/cmdline" ||
    fail "bootloader.console does not override the profile: $(cat "$TMP/o2/bootloader/cmdline")"
trl build "$TMP/esp/r.cfg" --cache "$TMP/c" -o "$TMP/o3"
expect_rc 0
grep -q 'console=ttyS0,115200' "$TMP/o3/bootloader/cmdline" || fail "without a machine the default console is gone"
ok "ESP: machine = box gives '... earlycon=… console=ttyS3,9600 ...'; bootloader.console overrides it; none: ttyS0,115200"

# kernel source: the profile's fragments enter the key, only with the machine
mkdir -p "$TMP/src/linux"
tar -C "$TMP/src" -cJf "$TMP/linux.tar.xz" linux
kr() { # FILE [MACHINE]
    { echo 'name = "mk";'; echo 'arch = "amd64";'; [ -n "${2:-}" ] && echo "machine = \"$2\";"
      echo "kernel = { kind = \"source\"; tarball = \"$TMP/linux.tar.xz\"; defconfig = \"tinyconfig\"; fragments = [\"serial-console\"]; config_only = true; };"; } > "$1"
}
key() { "$TRILLIAN" plan "$1" --cache "$TMP/c" 2>&1 | awk '$1 == "kernel" { print $3 }'; }
kr "$TMP/k-box.cfg" box
kr "$TMP/k-none.cfg"
k1=$(key "$TMP/k-box.cfg"); n1=$(key "$TMP/k-none.cfg")
[ -n "$k1" ] && [ -n "$n1" ] || { "$TRILLIAN" plan "$TMP/k-box.cfg" --cache "$TMP/c"; fail "no kernel key in plan"; }
printf '# t1\nCONFIG_SERIAL_8250=y\nCONFIG_SERIAL_8250_NR_UARTS=5\n' > "$D/kernel-config/t1.config"
k2=$(key "$TMP/k-box.cfg"); n2=$(key "$TMP/k-none.cfg")
[ "$k1" != "$k2" ] || fail "changing the profile's fragment t1 did not change the kernel key"
[ "$n1" = "$n2" ] || fail "changing t1 changed the key of a recipe without a machine"
[ "$k1" != "$n1" ] || fail "the machine did not change the kernel key"
kr "$TMP/k-box2.cfg" box2
trl plan "$TMP/k-box2.cfg" --cache "$TMP/c"
expect_rc 2
expect_out "kernel.fragments: no fragment 'no-such-fragment'"
ok "kernel: the profile's fragment enters the key (changed: $k1 -> $k2), not without machine ($n1 = $n2); a missing one is a recipe error"
