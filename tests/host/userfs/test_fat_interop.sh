#!/bin/sh
# test_fat_interop.sh - FAT images between exotool and dosfstools/mtools,
# on the host (the guest's part of the round trip is tests/qemu/cases_fat.py):
#   - FAT12, FAT16 and FAT32 images made by mkfs.fat and filled by mcopy go
#     into an exodisk image (exotool fat-import) and come out again
#     (fat-export) byte for byte the same, with fsck.fat -n clean
#   - only the chunks holding something are stored
#   - a damaged image (cross-linked chains) is refused, with a reason, and
#     -f imports it anyway; a file that is not a FAT is refused
#   - fat-check finds the damage, fat-check -r repairs it, and the export is
#     then clean by fsck.fat
# Usage: test_fat_interop.sh EXOTOOL
set -eu
exotool=$1
command -v mkfs.fat >/dev/null && command -v mcopy >/dev/null || {
	echo "test_fat_interop: dosfstools and mtools are needed (tools/deps.sh installs them)" >&2
	exit 1
}
export MTOOLS_SKIP_CHECK=1 LC_ALL=C
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "test_fat_interop: FAIL: $*" >&2; exit 1; }

mkdir -p "$dir/tree/Some Directory/and another one"
printf 'hello from the host\n' > "$dir/tree/Read Me.txt"
head -c 200000 /dev/urandom > "$dir/tree/Some Directory/random data.bin"
for i in 1 2 3 4 5 6 7 8 9 10 11 12; do
	printf 'file %s\n' "$i" > "$dir/tree/Some Directory/and another one/a file with a long name $i.txt"
done

n=0
for spec in "12 4M" "16 32M" "32 64M"; do
	set -- $spec
	n=$((n + 1))
	img=$dir/in$n.img disk=$dir/disk$n.img out=$dir/out$n.img
	truncate -s "$2" "$img"
	mkfs.fat -F "$1" "$img" >/dev/null 2>&1 || fail "mkfs.fat -F $1"
	mcopy -s -i "$img" "$dir/tree/"* ::/ || fail "mcopy"
	"$exotool" format "$disk" -s 64M >/dev/null
	"$exotool" fat-import "$disk" "$img" -o key=k$n > "$dir/log" || { cat "$dir/log"; fail "import FAT$1"; }
	grep -q " 0 problems" "$dir/log" || fail "import FAT$1: $(cat "$dir/log")"
	"$exotool" fat-export "$disk" "$out" -o key=k$n >/dev/null || fail "export FAT$1"
	cmp -s "$img" "$out" || fail "FAT$1: the exported image differs from the imported one"
	fsck.fat -n "$out" >/dev/null || fail "FAT$1: fsck.fat -n on the export"
	stored=$(sed -n 's/.* \([0-9]*\) KiB stored/\1/p' "$dir/log")
	[ "$stored" -lt 1024 ] || fail "FAT$1: $stored KiB stored for a 200 KiB tree"
	mdir -i "$out" -/ -b ::/ | grep -q "a file with a long name 12.txt" || fail "FAT$1: mdir"
done

# Cross-linked: the second FAT16 image with one FAT entry pointing into
# another file's chain (both FAT copies).
img=$dir/in2.img
python3 - "$img" <<'PY'
import struct, sys
p = sys.argv[1]
d = bytearray(open(p, 'rb').read())
rsvd, nf, fsz = struct.unpack_from('<H', d, 14)[0], d[16], struct.unpack_from('<H', d, 22)[0]
fat = rsvd * 512
# "Read Me.txt" has one cluster; make it lead into the random data's chain.
ents = [struct.unpack_from('<H', d, fat + 2 * c)[0] for c in range(2, 200)]
eoc = [c for c in range(2, 200) if ents[c - 2] >= 0xFFF8]
chain = [c for c in range(2, 200) if 2 <= ents[c - 2] < 0xFFF0]
a, b = eoc[0], chain[3]
for k in range(nf):
    struct.pack_into('<H', d, fat + k * fsz * 512 + 2 * a, b)
open(p, 'wb').write(d)
PY
fsck.fat -n "$img" >/dev/null 2>&1 && fail "fsck.fat does not see the cross-link either"
disk=$dir/bad.img
"$exotool" format "$disk" -s 64M >/dev/null
if "$exotool" fat-import "$disk" "$img" -o key=bad > "$dir/log" 2>&1; then
	fail "a cross-linked image was imported"
fi
grep -q "not imported" "$dir/log" || fail "no reason given: $(cat "$dir/log")"
grep -q "cross-linked\|longer than" "$dir/log" || fail "the damage is not named: $(cat "$dir/log")"
"$exotool" fat-import "$disk" "$img" -o key=bad -f > "$dir/log" 2>&1 || fail "-f: $(cat "$dir/log")"
"$exotool" fat-check "$disk" -o key=bad > "$dir/log" 2>&1 && fail "fat-check finds nothing"
"$exotool" fat-check "$disk" -o key=bad -r > "$dir/log" 2>&1 || fail "fat-check -r: $(cat "$dir/log")"
"$exotool" fat-check "$disk" -o key=bad > "$dir/log" 2>&1 || fail "not clean after -r: $(cat "$dir/log")"
"$exotool" fat-export "$disk" "$dir/fixed.img" -o key=bad >/dev/null
fsck.fat -n "$dir/fixed.img" >/dev/null || fail "fsck.fat -n after fat-check -r"

# Not a FAT at all.
head -c 1048576 /dev/urandom > "$dir/junk.img"
"$exotool" format "$disk.2" -s 64M >/dev/null
if "$exotool" fat-import "$disk.2" "$dir/junk.img" -o key=j > "$dir/log" 2>&1; then
	fail "random bytes were imported"
fi
grep -q "not a FAT volume" "$dir/log" || fail "no reason given: $(cat "$dir/log")"
echo "test_fat_interop: ok"
