#!/bin/sh
# test_exotool.sh - tools/exotool end to end: format an image, put objects on
# it, list it, check it (exit 0), damage one header on the image, check again
# (exit 1 with a violation), and refuse an image formatted with another key;
# errors in words (wrong key, not an exodisk, too small), the usage with
# every subcommand's arguments, and a sparse 1 TiB image.
# Usage: test_exotool.sh EXOTOOL-BINARY
set -u
tool=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
img=$dir/disk.img
fail() { echo "test_exotool: $*" >&2; exit 1; }

"$tool" format "$img" -s 8M >/dev/null || fail "format"
"$tool" demo "$img" >/dev/null || fail "demo"
out=$("$tool" list "$img") || fail "list"
echo "$out" | grep -q "^extent .* 16 sectors" || fail "list shows no extents"
echo "$out" | grep -q "exonode .*descendant of" || fail "list shows no descendant"
echo "$out" | grep -q "^  allocated" || fail "list shows no free map"
"$tool" check "$img" >/dev/null || fail "a good image fails the check"

# A boot replays the log and checkpoints: the headers are then only at home.
"$tool" recover "$img" >/dev/null || fail "recover"
"$tool" check "$img" >/dev/null || fail "a recovered image fails the check"
first=$(echo "$out" | awk '/^extent/ {print $2; exit}')
printf '\377' | dd of="$img" bs=1 seek=$((first * 512 + 24)) conv=notrunc 2>/dev/null
if "$tool" check "$img" >"$dir/out"; then
	fail "a damaged image passes the check"
fi
grep -q VIOLATION "$dir/out" || fail "no violation reported"

"$tool" format "$dir/other.img" -s 8M -k 000102030405060708090a0b0c0d0e0f >/dev/null || fail "format -k"
if "$tool" check "$dir/other.img" >/dev/null 2>&1; then
	fail "an image under another key passes the check"
fi
"$tool" check "$dir/other.img" -k 000102030405060708090a0b0c0d0e0f >/dev/null || fail "check -k"

# Errors say what is wrong, in words.
"$tool" info "$dir/other.img" 2>"$dir/err" && fail "info with the wrong key"
grep -q "wrong key" "$dir/err" || fail "the wrong key is not called that: $(cat "$dir/err")"
head -c 1048576 /dev/zero > "$dir/zero.img"
"$tool" info "$dir/zero.img" 2>"$dir/err" && fail "info of a blank image"
grep -q "not an exodisk" "$dir/err" || fail "a blank image is not called that: $(cat "$dir/err")"
"$tool" format "$dir/tiny.img" -s 100K 2>"$dir/err" && fail "format of 100 KiB"
grep -q "too small" "$dir/err" || fail "too small is not said: $(cat "$dir/err")"
grep -q "(-1[0-9][0-9])" "$dir/err" && fail "a bare error number: $(cat "$dir/err")"
"$tool" -h >"$dir/usage" 2>&1 || fail "exotool -h"
for sub in "format  IMAGE \[-s SIZE\]" "info    IMAGE" "list    IMAGE" "check   IMAGE" \
           "recover IMAGE" "demo    IMAGE" "ufs-mkfs  IMAGE \[-o OPTS\]" "ufs-put   IMAGE"; do
	grep -q "$sub" "$dir/usage" || fail "the usage lacks $sub"
done

# A sparse 1 TiB image: formatting writes a few sectors, and it works.
"$tool" format "$dir/big.img" -s 1T | grep -q "format wrote [0-9][0-9] sectors" || fail "format 1 TiB"
"$tool" demo "$dir/big.img" >/dev/null || fail "demo on 1 TiB"
"$tool" check "$dir/big.img" >/dev/null || fail "check of 1 TiB"
used=$(du -k "$dir/big.img" | cut -f1)
[ "$used" -lt 4096 ] || fail "the 1 TiB image takes $used KiB"
echo "test_exotool: ok"
