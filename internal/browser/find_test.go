package browser

import (
	"errors"
	"os/exec"
	"strings"
	"testing"
)

// fakeFinder is a finder over a fake file tree: files are the executables that exist, path the
// names on PATH (name → path).
func fakeFinder(goos string, env map[string]string, files []string, onPath map[string]string) finder {
	tree := map[string]bool{}
	for _, f := range files {
		tree[f] = true
	}
	return finder{
		goos:   goos,
		getenv: func(k string) string { return env[k] },
		home:   env["HOME"],
		lookPath: func(n string) (string, error) {
			if p, ok := onPath[n]; ok {
				return p, nil
			}
			if strings.ContainsAny(n, `/\`) && tree[n] {
				return n, nil
			}
			return "", exec.ErrNotFound
		},
		isFile: func(p string) bool { return tree[p] },
	}
}

func TestFindOnEveryDesktop(t *testing.T) {
	win := map[string]string{"LOCALAPPDATA": `C:\Users\ann\AppData\Local`, "PROGRAMFILES": `C:\Program Files`, "PROGRAMFILES(X86)": `C:\Program Files (x86)`}
	mac := map[string]string{"HOME": "/Users/ann"}
	with := func(env map[string]string, k, v string) map[string]string {
		out := map[string]string{k: v}
		for a, b := range env {
			out[a] = b
		}
		return out
	}
	cases := []struct {
		name     string
		goos     string
		env      map[string]string
		files    []string
		onPath   map[string]string
		override string
		want     string // "" when Find must fail
		wantErr  string
	}{
		{name: "macOS Chrome", goos: "darwin", env: mac,
			files: []string{"/Applications/Google Chrome.app/Contents/MacOS/Google Chrome"},
			want:  "/Applications/Google Chrome.app/Contents/MacOS/Google Chrome"},
		{name: "macOS Chromium preferred to Chrome", goos: "darwin", env: mac,
			files: []string{"/Applications/Google Chrome.app/Contents/MacOS/Google Chrome", "/Applications/Chromium.app/Contents/MacOS/Chromium"},
			want:  "/Applications/Chromium.app/Contents/MacOS/Chromium"},
		{name: "macOS Edge", goos: "darwin", env: mac,
			files: []string{"/Applications/Microsoft Edge.app/Contents/MacOS/Microsoft Edge"},
			want:  "/Applications/Microsoft Edge.app/Contents/MacOS/Microsoft Edge"},
		{name: "macOS Brave in ~/Applications", goos: "darwin", env: mac,
			files: []string{"/Users/ann/Applications/Brave Browser.app/Contents/MacOS/Brave Browser"},
			want:  "/Users/ann/Applications/Brave Browser.app/Contents/MacOS/Brave Browser"},
		{name: "macOS TABRELAY_CHROME=edge picks Edge over Chrome", goos: "darwin", env: with(mac, EnvChrome, "edge"),
			files: []string{"/Applications/Google Chrome.app/Contents/MacOS/Google Chrome", "/Applications/Microsoft Edge.app/Contents/MacOS/Microsoft Edge"},
			want:  "/Applications/Microsoft Edge.app/Contents/MacOS/Microsoft Edge"},
		{name: "macOS --chrome brave not installed", goos: "darwin", env: mac, override: "Brave",
			files:   []string{"/Applications/Google Chrome.app/Contents/MacOS/Google Chrome"},
			wantErr: "/Applications/Brave Browser.app/Contents/MacOS/Brave Browser"},
		{name: "Windows Chrome per machine", goos: "windows", env: win,
			files: []string{`C:\Program Files\Google\Chrome\Application\chrome.exe`},
			want:  `C:\Program Files\Google\Chrome\Application\chrome.exe`},
		{name: "Windows Chrome per user first", goos: "windows", env: win,
			files: []string{`C:\Program Files\Google\Chrome\Application\chrome.exe`, `C:\Users\ann\AppData\Local\Google\Chrome\Application\chrome.exe`},
			want:  `C:\Users\ann\AppData\Local\Google\Chrome\Application\chrome.exe`},
		{name: "Windows Edge (x86 folder)", goos: "windows", env: win,
			files: []string{`C:\Program Files (x86)\Microsoft\Edge\Application\msedge.exe`},
			want:  `C:\Program Files (x86)\Microsoft\Edge\Application\msedge.exe`},
		{name: "Windows Brave", goos: "windows", env: win,
			files: []string{`C:\Program Files\BraveSoftware\Brave-Browser\Application\brave.exe`},
			want:  `C:\Program Files\BraveSoftware\Brave-Browser\Application\brave.exe`},
		{name: "Windows Chromium", goos: "windows", env: win,
			files: []string{`C:\Users\ann\AppData\Local\Chromium\Application\chrome.exe`},
			want:  `C:\Users\ann\AppData\Local\Chromium\Application\chrome.exe`},
		{name: "Windows TABRELAY_CHROME=brave", goos: "windows", env: with(win, EnvChrome, "brave"),
			files: []string{`C:\Program Files\Google\Chrome\Application\chrome.exe`, `C:\Program Files\BraveSoftware\Brave-Browser\Application\brave.exe`},
			want:  `C:\Program Files\BraveSoftware\Brave-Browser\Application\brave.exe`},
		{name: "Windows TABRELAY_CHROME a path", goos: "windows", env: with(win, EnvChrome, `D:\apps\chrome.exe`),
			files: []string{`D:\apps\chrome.exe`, `C:\Program Files\Google\Chrome\Application\chrome.exe`},
			want:  `D:\apps\chrome.exe`},
		{name: "Windows nothing installed", goos: "windows", env: win, wantErr: "usual install locations"},
		{name: "Linux PATH first", goos: "linux", files: []string{"/usr/bin/google-chrome"},
			onPath: map[string]string{"chromium": "/home/ann/bin/chromium"}, want: "/home/ann/bin/chromium"},
		{name: "Linux Edge", goos: "linux", files: []string{"/opt/microsoft/msedge/msedge"}, want: "/opt/microsoft/msedge/msedge"},
		{name: "Linux Brave", goos: "linux", files: []string{"/opt/brave.com/brave/brave"}, want: "/opt/brave.com/brave/brave"},
		{name: "bad TABRELAY_CHROME is an error, not a fallback", goos: "linux", env: map[string]string{EnvChrome: "/nope/chrome"},
			files: []string{"/usr/bin/chromium"}, wantErr: EnvChrome},
		{name: "bad --chrome names the flag", goos: "darwin", env: mac, override: "/nope/chrome", wantErr: "--chrome"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := fakeFinder(tc.goos, tc.env, tc.files, tc.onPath).find(tc.override)
			if tc.want != "" {
				if err != nil || got != tc.want {
					t.Fatalf("find(%q) = %q, %v; want %q", tc.override, got, err, tc.want)
				}
				return
			}
			if err == nil || !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("find(%q) = %q, %v; want ErrNotFound saying %q", tc.override, got, err, tc.wantErr)
			}
		})
	}
}
