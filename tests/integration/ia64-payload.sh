#!/bin/sh
# Fast tier: the ia64 boot-check payload (firmware/payload/ia64/init.S)
# assembles and links with Debian's ia64 binutils into a static IA-64 ELF
# executable whose entry point is its _start symbol.
set -eu
: "${TOP:?}" "${TMP:?}"
AS=ia64-linux-gnu-as
LD=ia64-linux-gnu-ld
READELF=ia64-linux-gnu-readelf
OBJDUMP=ia64-linux-gnu-objdump
for t in $AS $LD $READELF $OBJDUMP; do
    command -v "$t" >/dev/null 2>&1 || { echo "SKIP: $t not installed (package binutils-ia64-linux-gnu)"; exit 77; }
done

SRC=$TOP/firmware/payload/ia64/init.S
fail() { echo "FAIL: $*"; exit 1; }

# The same argv the recipe's payload build uses. -x: report dependency
# violations; warnings are fatal so a missing stop (;;) fails the test.
$AS -x --fatal-warnings -o "$TMP/init.o" "$SRC" || fail "assembling $SRC"
$LD --fatal-warnings -static -e _start -o "$TMP/init" "$TMP/init.o" || fail "linking init"
echo "ok: assembled and linked $SRC"

$READELF -h "$TMP/init" >"$TMP/hdr"
grep -Eq '^ *Class: *ELF64$' "$TMP/hdr" || fail "not ELF64: $(cat "$TMP/hdr")"
grep -Eq '^ *Machine: *Intel IA-64$' "$TMP/hdr" || fail "not IA-64: $(grep Machine "$TMP/hdr")"
grep -Eq '^ *Type: *EXEC ' "$TMP/hdr" || fail "not an executable: $(grep Type "$TMP/hdr")"
echo "ok: ELF64 IA-64 EXEC"

entry=$(sed -n 's/^ *Entry point address: *0x0*\([0-9a-f]*\)$/\1/p' "$TMP/hdr")
start=$($READELF -sW "$TMP/init" | awk '$8 == "_start" && $5 == "GLOBAL" && $4 == "FUNC" { sub(/^0+/, "", $2); print $2 }')
[ -n "$entry" ] || fail "no entry point"
[ -n "$start" ] || fail "no global function symbol _start"
[ "$entry" = "$start" ] || fail "entry 0x$entry is not _start (0x$start)"
echo "ok: entry point 0x$entry is _start"

# static and self-contained: no interpreter, no dynamic section, nothing undefined
$READELF -lW "$TMP/init" | grep -q INTERP && fail "has a program interpreter"
$READELF -SW "$TMP/init" | grep -q ' \.dynamic ' && fail "has a .dynamic section"
undef=$($READELF -sW "$TMP/init" | awk '$7 == "UND" && $8 != "" { print $8 }')
[ -z "$undef" ] || fail "undefined symbols: $undef"
echo "ok: static, no undefined symbols"

# It makes Linux system calls the ia64 way.
$OBJDUMP -d "$TMP/init" >"$TMP/dis"
n=$(grep -c 'break\.i 0x100000' "$TMP/dis" || true)
[ "$n" -ge 5 ] || fail "expected the system calls (break.i 0x100000), found $n"
echo "ok: $n system call sites (break.i 0x100000)"
echo "PASS"
