#!/bin/sh
# Prints, from the log of a `go tool task test` run (the end-to-end tests run verbose), the
# seconds each end-to-end test function took, in the form e2e/testdata/test-seconds.tsv keeps:
#   scripts/test-seconds.sh test.log > e2e/testdata/test-seconds.tsv
set -eu
[ $# -eq 1 ] && [ -r "$1" ] || { echo "usage: $0 TEST-LOG" >&2; exit 2; }
echo "# Seconds each end-to-end test function took in one run of go tool task test, read by"
echo "# setup_test.go to balance the parts; refresh: scripts/test-seconds.sh test.log > e2e/testdata/test-seconds.tsv"
grep -oE '^--- (PASS|FAIL): Test[A-Za-z0-9_]+ \([0-9.]+s\)' "$1" |
  awk '{ gsub(/[()s]/, "", $4); print $3 "\t" $4 }' | sort
