#!/bin/sh
# Shows that a fresh clone passes with the README's two commands alone, and how long that takes.
#
# It clones this repository's committed HEAD into a temporary directory (no node_modules, no
# build output, nothing untracked), then, with a fresh npm cache and a fresh tabrelay home:
#   1. `go run ./cmd/tabrelay` (on a free port): waits for the server to answer /health and /,
#      then stops it;
#   2. `go tool task test`: setup (Debian packages as root, npm ci) and every test; with
#      --no-test, only `go tool task setup`.
# It prints the time from the clone to green, the machine's load (uptime) at the start and the
# end, and the slowest tests with their times (the test output is kept in test.log, printed with
# the other files' place under --keep). With --busy N it runs N busy loops beside the tests (one
# core each, stopped at the end): the tests must hold on a machine doing other work. What it
# cannot check: it does not uninstall
# Chromium or the other Debian packages (setup's install path runs only where they are missing,
# e.g. in a new container), and it reuses the Go module and build caches (a first run anywhere
# downloads the modules: about two minutes). Run it as root to check setup the way CI does.
#
# usage: scripts/fresh-clone-check.sh [--no-test] [--keep] [--busy N]
set -eu
repo=$(cd "$(dirname "$0")/.." && pwd)
usage="usage: $0 [--no-test] [--keep] [--busy N]"
run_tests=1 keep=0 busy=0
while [ $# -gt 0 ]; do
  case "$1" in
    --no-test) run_tests=0 ;;
    --keep) keep=1 ;;
    --busy)
      [ $# -ge 2 ] && [ "$2" -ge 0 ] 2>/dev/null || { echo "$usage (N: how many busy loops)" >&2; exit 2; }
      busy=$2; shift ;;
    *) echo "$usage" >&2; exit 2 ;;
  esac
  shift
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/tabrelay-fresh-XXXXXX")
server="" loops=""
cleanup() {
  [ -n "$server" ] && kill "$server" 2>/dev/null || true
  for p in $loops; do kill "$p" 2>/dev/null || true; done
  [ "$keep" = 1 ] && echo "kept $tmp" || rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

start=$(date +%s)
git clone --quiet --no-local "$repo" "$tmp/tabrelay"
cd "$tmp/tabrelay"
export npm_config_cache="$tmp/npm-cache" TABRELAY_HOME="$tmp/home" TABRELAY_ADDR=127.0.0.1:0
echo "fresh-clone-check: cloned $(git rev-parse --short HEAD) into $tmp/tabrelay"

# 1. go run ./cmd/tabrelay: started, answering, then stopped
go build -o "$tmp/tabrelay-bin" ./cmd/tabrelay # what go run builds; a binary we can stop by pid
"$tmp/tabrelay-bin" >"$tmp/serve.log" 2>&1 &
server=$!
url=""
for _ in $(seq 1 100); do
  url=$(sed -n 's/^tabrelay .* is running at \(http:[^ ]*\)$/\1/p' "$tmp/serve.log" | head -1)
  [ -n "$url" ] && break
  kill -0 "$server" 2>/dev/null || { cat "$tmp/serve.log" >&2; echo "fresh-clone-check: the server exited" >&2; exit 1; }
  sleep 0.1
done
[ -n "$url" ] || { cat "$tmp/serve.log" >&2; echo "fresh-clone-check: the server printed no address" >&2; exit 1; }
curl -fsS "$url/health" >/dev/null
curl -fsS "$url/" | grep -q "tabrelay server"
kill "$server"; wait "$server" 2>/dev/null || true; server=""
echo "fresh-clone-check: go run ./cmd/tabrelay served $url ($(($(date +%s) - start)) s after the clone started)"

# 2. go tool task test
if [ "$run_tests" = 1 ]; then
  i=0
  while [ "$i" -lt "$busy" ]; do
    sh -c 'while :; do :; done' &
    loops="$loops $!"
    i=$((i + 1))
  done
  beside=""
  [ "$busy" -gt 0 ] && beside=" ($busy busy loops beside the tests)"
  echo "fresh-clone-check: load before the tests:$(uptime | sed 's/.*load average: */ /')$beside"
  tests=$(date +%s)
  # -test.v goes to the end-to-end test binary: each test's time is in the log
  status=0
  go tool task test -- -test.v >"$tmp/test.log" 2>&1 || status=$?
  echo "fresh-clone-check: load after the tests:$(uptime | sed 's/.*load average: */ /')"
  echo "fresh-clone-check: the slowest tests (package tests: ok lines, end-to-end: each test):"
  grep -E '^(ok|FAIL|--- (PASS|FAIL))' "$tmp/test.log" |
    sed -n 's/^--- \(PASS\|FAIL\): \([^ ]*\) (\([0-9.]*\)s)$/\3 e2e \2 \1/p; s/^\(ok\|FAIL\)[ \t]*\([^ \t]*\)[ \t]*\([0-9.]*\)s$/\3 package \2 \1/p' |
    sort -rn | head -15 | sed 's/^/  /'
  if [ "$status" != 0 ]; then
    grep -E -B2 -A20 '^--- FAIL|^FAIL|panic:' "$tmp/test.log" | tail -80 >&2
    echo "fresh-clone-check: red after $(($(date +%s) - start)) s (the tests: $(($(date +%s) - tests)) s; log: $tmp/test.log, kept)" >&2
    keep=1
    exit 1
  fi
  echo "fresh-clone-check: green: $(($(date +%s) - start)) s from a fresh clone (the tests: $(($(date +%s) - tests)) s)"
else
  go tool task setup
  test -d e2e/clients/node_modules/puppeteer-core
  echo "fresh-clone-check: setup done: $(($(date +%s) - start)) s from a fresh clone (tests not run: --no-test)"
fi
