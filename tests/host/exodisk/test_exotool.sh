#!/bin/sh
# test_exotool.sh - tools/exotool end to end: format an image, put objects on
# it, list it, check it (exit 0), damage one header on the image, check again
# (exit 1 with a violation), and refuse an image formatted with another key.
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
echo "test_exotool: ok"
