#!/bin/sh
# test_exotool_ufs.sh - exotool's unixfs subcommands end to end: build an
# image from a host tree, list it, copy files out and in, check it; a wrong
# key opens nothing; a damaged directory block makes the check fail, naming
# what is wrong.
# Usage: test_exotool_ufs.sh EXOTOOL
set -eu
tool=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkdir -p "$dir/tree/a/b"
echo hi > "$dir/tree/a/b/c"
echo x > "$dir/tree/a/b/a-name-found-only-in-its-record"
head -c 200000 /dev/urandom > "$dir/tree/r"
img=$dir/d.img
fail() { echo "test_exotool_ufs: $*" >&2; exit 1; }

"$tool" format "$img" -s 16M > /dev/null
"$tool" ufs-mkfs "$img" -o key=t -d "$dir/tree" > /dev/null
"$tool" ufs-ls "$img" -o key=t > "$dir/ls"
grep -q ' /a/b/c$' "$dir/ls" || fail "ufs-ls does not show /a/b/c"
grep -q '^- *200000 .* /r$' "$dir/ls" || fail "ufs-ls does not show /r with its size"
"$tool" ufs-get "$img" -o key=t /r "$dir/r.out"
cmp -s "$dir/r.out" "$dir/tree/r" || fail "ufs-get /r differs"
[ "$("$tool" ufs-get "$img" -o key=t /a/b/c)" = hi ] || fail "ufs-get to stdout"
echo added > "$dir/new"
"$tool" ufs-put "$img" -o key=t "$dir/new" /a/new
[ "$("$tool" ufs-get "$img" -o key=t /a/new)" = added ] || fail "ufs-put"
"$tool" ufs-check "$img" -o key=t > "$dir/check" || fail "ufs-check of a good image: $(cat "$dir/check")"
grep -q '0 problems' "$dir/check" || fail "ufs-check summary"
if "$tool" ufs-ls "$img" -o key=wrong > /dev/null 2>&1; then fail "a wrong key opened it"; fi
if "$tool" ufs-get "$img" -o key=t /missing > /dev/null 2>&1; then fail "ufs-get of a missing file"; fi
# Damage /a/b's directory block: flip bytes in the record of a name that is
# nowhere else (wherever a copy of the block is, old ones included).
for off in $(grep -boa 'a-name-found-only-in-its-record' "$img" | cut -d: -f1); do
	printf 'X' | dd of="$img" bs=1 seek=$((off + 3)) conv=notrunc 2> /dev/null
done
if "$tool" ufs-check "$img" -o key=t > "$dir/check2" 2>&1; then fail "ufs-check missed a damaged directory block"; fi
grep -q 'checksum' "$dir/check2" || fail "the damage is not named: $(cat "$dir/check2")"
echo "test_exotool_ufs: ok"
