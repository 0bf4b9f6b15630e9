#!/usr/bin/env bash
# run-host-tests.sh - run each host unit-test binary given on the command line,
# with a time limit, and report a summary.  Exits non-zero if any test fails.
set -u
pass=0; fail=0; failed=()
for t in "$@"; do
  name=$(basename "$t")
  start=$(date +%s%N)
  out=$(timeout 300 "$t" 2>&1); rc=$?
  ms=$(( ($(date +%s%N) - start) / 1000000 ))
  secs=$(printf '%d.%01d' $((ms / 1000)) $(((ms % 1000) / 100)))
  if [ $rc -eq 0 ]; then
    pass=$((pass+1)); printf '  PASS  %-32s %5ss\n' "$name" "$secs"
  else
    fail=$((fail+1)); failed+=("$name")
    [ $rc -eq 124 ] && why="timed out after 300s" || why="exit status $rc"
    printf '  FAIL  %-32s %5ss  (%s)\n' "$name" "$secs" "$why"
    printf '%s\n' "$out" | tail -n 40 | sed 's/^/        | /'
  fi
done
echo "host tests: $pass passed, $fail failed${failed:+ (${failed[*]})}"
[ $fail -eq 0 ]
