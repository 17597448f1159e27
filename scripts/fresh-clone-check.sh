#!/bin/sh
# Shows that a fresh clone passes with the README's two commands alone, and how long that takes.
#
# It clones this repository's committed HEAD into a temporary directory (no node_modules, no
# build output, nothing untracked), then, with a fresh npm cache and a fresh tabrelay home:
#   1. `go run ./cmd/tabrelay` (on a free port): waits for the server to answer /health and /,
#      then stops it;
#   2. `go tool task test`: setup (Debian packages as root, npm ci) and every test; with
#      --no-test, only `go tool task setup`.
# It prints the time from the clone to green. What it cannot check: it does not uninstall
# Chromium or the other Debian packages (setup's install path runs only where they are missing,
# e.g. in a new container), and it reuses the Go module and build caches (a first run anywhere
# downloads the modules: about two minutes). Run it as root to check setup the way CI does.
#
# usage: scripts/fresh-clone-check.sh [--no-test] [--keep]
set -eu
repo=$(cd "$(dirname "$0")/.." && pwd)
run_tests=1 keep=0
for a in "$@"; do
  case "$a" in
    --no-test) run_tests=0 ;;
    --keep) keep=1 ;;
    *) echo "usage: $0 [--no-test] [--keep]" >&2; exit 2 ;;
  esac
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/tabrelay-fresh-XXXXXX")
server=""
cleanup() {
  [ -n "$server" ] && kill "$server" 2>/dev/null || true
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
  go tool task test
  echo "fresh-clone-check: green: $(($(date +%s) - start)) s from a fresh clone"
else
  go tool task setup
  test -d e2e/clients/node_modules/puppeteer-core
  echo "fresh-clone-check: setup done: $(($(date +%s) - start)) s from a fresh clone (tests not run: --no-test)"
fi
