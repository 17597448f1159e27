package browser

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"runtime"
	"strings"
)

// EnvChrome names the environment variable that overrides where Chrome or Chromium is found.
const EnvChrome = "TABRELAY_CHROME"

// ErrNotFound is returned (wrapped) by Find when no Chrome or Chromium is installed.
var ErrNotFound = errors.New("no Chrome or Chromium found")

// kind is one Chromium-based browser and where it installs itself on each desktop.
type kind struct {
	// name is what --chrome and TABRELAY_CHROME accept for it ("chrome", "edge", …).
	name string
	// onPath are its executable names on PATH (Linux packages, mostly).
	onPath []string
	// mac is its app bundle's executable under /Applications or ~/Applications.
	mac string
	// windows is its executable under %LOCALAPPDATA%, %PROGRAMFILES% or %PROGRAMFILES(X86)%.
	windows string
	// linux are its usual absolute paths besides PATH.
	linux []string
}

// kinds are the browsers looked for, in order of preference when several are installed.
var kinds = []kind{
	{name: "chromium", onPath: []string{"chromium", "chromium-browser"},
		mac:     "Chromium.app/Contents/MacOS/Chromium",
		windows: `Chromium\Application\chrome.exe`,
		linux:   []string{"/usr/bin/chromium", "/usr/bin/chromium-browser", "/snap/bin/chromium", "/usr/lib/chromium/chromium", "/var/lib/flatpak/exports/bin/org.chromium.Chromium"}},
	{name: "chrome", onPath: []string{"google-chrome", "google-chrome-stable", "chrome", "chrome.exe"},
		mac:     "Google Chrome.app/Contents/MacOS/Google Chrome",
		windows: `Google\Chrome\Application\chrome.exe`,
		linux:   []string{"/usr/bin/google-chrome", "/usr/bin/google-chrome-stable", "/opt/google/chrome/chrome"}},
	{name: "edge", onPath: []string{"microsoft-edge", "microsoft-edge-stable", "msedge", "msedge.exe"},
		mac:     "Microsoft Edge.app/Contents/MacOS/Microsoft Edge",
		windows: `Microsoft\Edge\Application\msedge.exe`,
		linux:   []string{"/usr/bin/microsoft-edge", "/usr/bin/microsoft-edge-stable", "/opt/microsoft/msedge/msedge"}},
	{name: "brave", onPath: []string{"brave-browser", "brave", "brave.exe"},
		mac:     "Brave Browser.app/Contents/MacOS/Brave Browser",
		windows: `BraveSoftware\Brave-Browser\Application\brave.exe`,
		linux:   []string{"/usr/bin/brave-browser", "/opt/brave.com/brave/brave", "/snap/bin/brave"}},
	{name: "chrome-beta", onPath: []string{"google-chrome-beta", "google-chrome-unstable"},
		mac:     "Google Chrome Beta.app/Contents/MacOS/Google Chrome Beta",
		windows: `Google\Chrome Beta\Application\chrome.exe`,
		linux:   []string{"/usr/bin/google-chrome-beta", "/usr/bin/google-chrome-unstable"}},
	{name: "chrome-canary",
		mac:     "Google Chrome Canary.app/Contents/MacOS/Google Chrome Canary",
		windows: `Google\Chrome SxS\Application\chrome.exe`},
	{name: "chrome-for-testing",
		mac: "Google Chrome for Testing.app/Contents/MacOS/Google Chrome for Testing"},
}

// windowsBases are the environment variables naming the folders Windows installs browsers in.
var windowsBases = []string{"LOCALAPPDATA", "PROGRAMFILES", "PROGRAMFILES(X86)"}

// finder looks for a browser on one desktop; its functions are the operating system's (or a
// test's fake file tree).
type finder struct {
	goos     string
	getenv   func(string) string
	home     string                       // the user's home folder ("" when unknown)
	lookPath func(string) (string, error) // exec.LookPath
	isFile   func(string) bool            // a regular file exists at the path
}

// hostFinder is the finder of the running system.
func hostFinder() finder {
	home, _ := os.UserHomeDir()
	return finder{goos: runtime.GOOS, getenv: os.Getenv, home: home, lookPath: exec.LookPath, isFile: func(p string) bool {
		st, err := os.Stat(p)
		return err == nil && !st.IsDir()
	}}
}

// places are k's usual install locations on f's desktop, best first.
func (f finder) places(k kind) []string {
	var out []string
	switch f.goos {
	case "darwin":
		if k.mac == "" {
			return nil
		}
		out = append(out, path.Join("/Applications", k.mac))
		if f.home != "" {
			out = append(out, path.Join(f.home, "Applications", k.mac))
		}
	case "windows":
		if k.windows == "" {
			return nil
		}
		for _, env := range windowsBases {
			if base := strings.TrimRight(f.getenv(env), `\/`); base != "" {
				out = append(out, base+`\`+k.windows)
			}
		}
	default:
		out = k.linux
	}
	return out
}

// find is Find on f's desktop.
func (f finder) find(override string) (string, error) {
	for _, explicit := range []struct{ v, from string }{{override, "--chrome"}, {f.getenv(EnvChrome), EnvChrome}} {
		if explicit.v == "" {
			continue
		}
		if p, err := f.lookPath(explicit.v); err == nil {
			return p, nil
		}
		for _, k := range kinds { // a browser's name: chrome, chromium, edge, brave…
			if strings.EqualFold(explicit.v, k.name) {
				if p := f.first([]kind{k}); p != "" {
					return p, nil
				}
				return "", fmt.Errorf("%s=%q: %w: %s is not installed in its usual places (%s)", explicit.from, explicit.v, ErrNotFound, k.name, strings.Join(f.places(k), ", "))
			}
		}
		return "", fmt.Errorf("%s=%q: %w: not an executable file, nor one of %s", explicit.from, explicit.v, ErrNotFound, kindNames())
	}
	if p := f.first(kinds); p != "" {
		return p, nil
	}
	var names []string
	for _, k := range kinds {
		names = append(names, k.onPath...)
	}
	return "", fmt.Errorf("%w: looked for %v on PATH and for Chromium, Chrome, Edge and Brave in their usual install locations; install one (Debian/Ubuntu: apt-get install chromium; in a checkout, `go tool task setup` installs everything the tests need) or set %s or --chrome to its path", ErrNotFound, names, EnvChrome)
}

// first is the first of ks found: each one's names on PATH, then each one's usual places.
func (f finder) first(ks []kind) string {
	for _, k := range ks {
		for _, n := range k.onPath {
			if p, err := f.lookPath(n); err == nil {
				return p
			}
		}
	}
	for _, k := range ks {
		for _, p := range f.places(k) {
			if f.isFile(p) {
				return p
			}
		}
	}
	return ""
}

// kindNames lists the browser names --chrome and TABRELAY_CHROME accept.
func kindNames() string {
	names := make([]string, len(kinds))
	for i, k := range kinds {
		names[i] = k.name
	}
	return strings.Join(names, ", ")
}

// Find returns the Chrome or Chromium executable to use: override if set, else
// $TABRELAY_CHROME — each a path, a name on PATH or a browser's name (chromium, chrome, edge,
// brave, chrome-beta, chrome-canary, chrome-for-testing) found in its usual places —, else
// the first browser found on PATH, else in the usual install locations of the running desktop
// (Linux, macOS's /Applications and ~/Applications, Windows' %LOCALAPPDATA% and Program Files).
// The error says where it looked.
func Find(override string) (string, error) { return hostFinder().find(override) }
