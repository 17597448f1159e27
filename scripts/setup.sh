#!/bin/sh
# Sets up what `go tool task test` and `go tool task bench` need, on Debian or Ubuntu, and is
# what `go tool task setup` runs (test and bench run it first):
#   - Debian packages: chromium (end-to-end tests), flite, pocketsphinx, pocketsphinx-en-us and
#     ffmpeg (voice tests: speech synthesis, offline recognition, decoding recordings; the desktop
#     tests' screenshots), xvfb and xdotool (the desktop tests: a headed browser on a virtual
#     display, driven with real keys, clicks and drags); nodejs and npm when Node.js is missing. As root (CI, containers) the missing ones are installed
#     (apt-get update first); otherwise the script stops at once and prints the one command to
#     run. A browser found on PATH or set in TABRELAY_CHROME stands in for the chromium package.
#   - Node packages of the client tests: `npm ci` in e2e/clients when they are missing or
#     package-lock.json changed since.
# Nothing is downloaded when everything is there already.
set -eu
cd "$(dirname "$0")/.."

packages="flite pocketsphinx pocketsphinx-en-us ffmpeg xvfb xdotool"
browser_found() {
  if [ -n "${TABRELAY_CHROME:-}" ]; then
    command -v "$TABRELAY_CHROME" >/dev/null 2>&1 && return 0
  fi
  for b in chromium chromium-browser google-chrome google-chrome-stable; do
    command -v "$b" >/dev/null 2>&1 && return 0
  done
  return 1
}
browser_found || packages="chromium $packages"
command -v node >/dev/null 2>&1 || packages="$packages nodejs npm"

if command -v dpkg >/dev/null 2>&1; then
  missing=""
  for p in $packages; do
    case "$p" in
      chromium) missing="$missing $p" ;; # no browser found above
      *) dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p" ;;
    esac
  done
  missing="${missing# }"
  if [ -n "$missing" ]; then
    if [ "$(id -u)" -eq 0 ]; then
      echo "setup: installing Debian packages: $missing"
      apt-get update -qq
      # shellcheck disable=SC2086 # one word per package
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null
    else
      echo "setup: the tests need these Debian packages: $missing. Run, then retry:" >&2
      echo "  sudo apt-get update && sudo apt-get install -y $missing" >&2
      exit 1
    fi
  fi
else
  for t in node flite pocketsphinx_continuous ffmpeg Xvfb xdotool; do
    command -v "$t" >/dev/null 2>&1 || {
      echo "setup: not a Debian or Ubuntu system, and $t is missing: install Chromium, Node.js 20+, flite, pocketsphinx (with its US English model), ffmpeg, Xvfb and xdotool with your package manager" >&2
      exit 1
    }
  done
  browser_found || {
    echo "setup: no Chromium or Chrome found: install one, or set TABRELAY_CHROME to its path" >&2
    exit 1
  }
fi

# The client tests' Node packages (Playwright, Puppeteer, chrome-remote-interface…), exactly as
# package-lock.json pins them.
lock=e2e/clients/package-lock.json
installed=e2e/clients/node_modules/.package-lock.json
if [ ! -f "$installed" ] || [ "$lock" -nt "$installed" ]; then
  echo "setup: npm ci in e2e/clients"
  # never a browser download: the tests use the installed Chromium
  (cd e2e/clients && PUPPETEER_SKIP_DOWNLOAD=1 PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error)
fi
