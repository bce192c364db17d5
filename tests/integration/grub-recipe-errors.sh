# packages kind grub, without building GRUB: the recipe errors it reports at
# plan time (exit 2, FILE:LINE: key: message): a platform for another arch,
# a .dsc or tarball source that does not exist, a sha256 with the Debian
# archive as source, a bad module name or prefix, a configure flag Trillian
# sets itself; the ESP refusing a GRUB stage whose prefix is not /EFI/BOOT,
# and an ia64 GRUB ESP without such a stage pointing at it. The shipped
# recipes/ia64-grub.cfg plans, with the bootloader depending on the grub stage.
. "$TOP/tests/lib.sh"
C=$TMP/cache
export TRILLIAN_DATA=$TOP # kernel-config/ and firmware/ for the shipped recipe, whichever binary runs
F=$TOP/tests/fixtures/initramfs-kernel

recipe() { # ARCH GRUB-SETTINGS [MORE-TEXT]
    cat >"$TMP/r.cfg" <<EOF
name = "grub-errors";
arch = "$1";
source_date_epoch = 1700000000;
root_uuid = "0b9c9a52-6a2a-4c4e-9d77-3c4f1b1e7a11";
stages = (
  { name = "toolchain"; kind = "command"; outputs = ["target"];
    argv = ["sh", "-c", "echo ia64-linux-gnu > \$0/target", "\${out}"]; },
  { name = "kernel"; kind = "command"; argv = ["cp", "-R", "$F/.", "\${out}/"];
    outputs = ["vmlinuz"]; }
);
packages = ( { kind = "grub"; $2 } );
${3:-}
EOF
}

plan_fails() { # LINE-TEXT
    trl plan "$TMP/r.cfg" --cache "$C" -o "$TMP/out"
    expect_rc 2
    expect_out "$1"
    [ ! -e "$TMP/out" ] || fail "plan created an output directory"
}

recipe amd64 'platform = "ia64-efi";'
plan_fails "r.cfg:11: packages.grub.platform: ia64-efi is for arch ia64, but the recipe's arch is amd64: set platform = \"x86_64-efi\" or leave it out"
recipe ia64 'platform = "x86_64-efi";'
plan_fails "packages.grub.platform: x86_64-efi is for arch amd64, but the recipe's arch is ia64: set platform = \"ia64-efi\""
recipe ia64 'platform = "arm64-efi";'
plan_fails "packages.grub.platform: 'arm64-efi' is not allowed"
ok "a platform not matching the arch is refused, naming the right one"

recipe ia64 "source = \"$TMP/nothere/grub2_2.06-13+deb12u2.dsc\";"
plan_fails "packages.grub.source: $TMP/nothere/grub2_2.06-13+deb12u2.dsc is not a file"
recipe ia64 'source = "grub-2.06.tar.xz";'
plan_fails "packages.grub.source: $TMP/grub-2.06.tar.xz is not a file (expected \"debian\", a grub2 .dsc, or a GRUB tarball path or URL)"
recipe ia64 'source = "https://ftp.gnu.org/gnu/grub/grub-2.06.tar.xz";'
plan_fails "packages.grub.sha256: is required when source is a URL"
recipe ia64 'sha256 = "0123";'
plan_fails "packages.grub.sha256: is for a .dsc or tarball source"
recipe ia64 'keyring = "/nonexistent/keyring.gpg";'
plan_fails "packages.grub.keyring: /nonexistent/keyring.gpg does not exist"
ok "missing sources are refused before anything runs"

recipe ia64 'modules = ["normal", "linux;reboot"];'
plan_fails "packages.grub.modules: 'linux;reboot' is not a GRUB module name"
recipe ia64 'prefix = "EFI/BOOT";'
plan_fails "packages.grub.prefix: 'EFI/BOOT' must be absolute"
recipe ia64 'configure = ["--with-platform=pc"];'
plan_fails "packages.grub.configure: '--with-platform=pc': Trillian sets --with-platform itself"
ok "bad modules, prefix and configure flags are refused"

recipe ia64 'prefix = "/boot/grub";' 'bootloader = { kind = "grub"; };'
plan_fails "bootloader.kind: takes its GRUB image from the packages stage 'grub', whose prefix is /boot/grub"
[ -d /usr/lib/grub/ia64-efi ] || {
    sed -i '/^packages = /d' "$TMP/r.cfg"
    plan_fails "add packages = ( { kind = \"grub\"; } ) to build it"
}
recipe ia64 'name = "mygrub";' 'bootloader = { kind = "grub"; };'
trl plan "$TMP/r.cfg" --cache "$C" -o "$TMP/out"
expect_rc 0
expect_out "mygrub"
ok "the ESP takes GRUB from the packages stage (any name) and checks its prefix"

if [ -r /usr/src/gcc-12/gcc-12.2.0-dfsg.tar.xz ] && [ -r /usr/src/linux-source-6.1.tar.xz ]; then
    trl plan "$TOP/recipes/ia64-grub.cfg" --cache "$C" -o "$TMP/out"
    expect_rc 0
    grep -qE '^grub +packages/grub ' "$TMP/out.txt" || { cat "$TMP/out.txt"; fail "no grub stage"; }
    ok "recipes/ia64-grub.cfg plans"
fi
echo PASS
