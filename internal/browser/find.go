package browser

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
)

// EnvChrome names the environment variable that overrides where Chrome or Chromium is found.
const EnvChrome = "TABRELAY_CHROME"

// ErrNotFound is returned (wrapped) by Find when no Chrome or Chromium is installed.
var ErrNotFound = errors.New("no Chrome or Chromium found")

// pathNames are executable names looked up on PATH, best first.
var pathNames = []string{
	"chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "google-chrome-beta",
	"google-chrome-unstable", "chrome", "chrome.exe",
}

// wellKnown lists the usual install locations for the running OS.
func wellKnown() []string {
	switch runtime.GOOS {
	case "darwin":
		home, _ := os.UserHomeDir()
		apps := []string{
			"/Applications/Google Chrome.app/Contents/MacOS/Google Chrome",
			"/Applications/Chromium.app/Contents/MacOS/Chromium",
			"/Applications/Google Chrome Canary.app/Contents/MacOS/Google Chrome Canary",
			"/Applications/Google Chrome for Testing.app/Contents/MacOS/Google Chrome for Testing",
		}
		out := append([]string{}, apps...)
		if home != "" {
			for _, a := range apps {
				out = append(out, filepath.Join(home, a))
			}
		}
		return out
	case "windows":
		var out []string
		for _, env := range []string{"LOCALAPPDATA", "PROGRAMFILES", "PROGRAMFILES(X86)"} {
			if base := os.Getenv(env); base != "" {
				out = append(out,
					filepath.Join(base, `Google\Chrome\Application\chrome.exe`),
					filepath.Join(base, `Chromium\Application\chrome.exe`),
					filepath.Join(base, `Google\Chrome SxS\Application\chrome.exe`))
			}
		}
		return out
	default:
		return []string{
			"/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome",
			"/usr/bin/google-chrome-stable", "/opt/google/chrome/chrome", "/snap/bin/chromium",
			"/usr/lib/chromium/chromium", "/var/lib/flatpak/exports/bin/org.chromium.Chromium",
		}
	}
}

// Find returns the Chrome or Chromium executable to use: override if set (a path or a name on
// PATH), else $TABRELAY_CHROME, else the first of the usual names on PATH, else the usual install
// locations of the running OS. The error says where it looked.
func Find(override string) (string, error) {
	for _, explicit := range []struct{ v, from string }{{override, "--chrome"}, {os.Getenv(EnvChrome), EnvChrome}} {
		if explicit.v == "" {
			continue
		}
		if p, err := exec.LookPath(explicit.v); err == nil {
			return p, nil
		}
		return "", fmt.Errorf("%s=%q: %w: not an executable file", explicit.from, explicit.v, ErrNotFound)
	}
	for _, n := range pathNames {
		if p, err := exec.LookPath(n); err == nil {
			return p, nil
		}
	}
	for _, p := range wellKnown() {
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p, nil
		}
	}
	return "", fmt.Errorf("%w: looked for %v on PATH and in the usual install locations; install Chromium (Debian/Ubuntu: apt-get install chromium; in a checkout, `go tool task setup` installs everything the tests need) or set %s or --chrome", ErrNotFound, pathNames, EnvChrome)
}
