package main

import (
	"bufio"
	"context"
	"fmt"

	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// readmeLinuxInstall returns, from the README's Install section, the Linux install lines (the
// first sh block after the "Linux" paragraph) and the lines it says to run next in a new
// terminal (the sh block after that).
func readmeLinuxInstall(readme string) (install, next []string, err error) {
	start := strings.Index(readme, "\n## Install\n")
	if start < 0 {
		return nil, nil, fmt.Errorf("README.md has no \"## Install\" section")
	}
	sec := readme[start+1:]
	if end := strings.Index(sec[3:], "\n## "); end >= 0 {
		sec = sec[:end+3]
	}
	linux := strings.Index(sec, "\nLinux")
	if linux < 0 {
		return nil, nil, fmt.Errorf("the Install section has no paragraph starting \"Linux\"")
	}
	var blocks [][]string
	var cur []string
	in := false
	sc := bufio.NewScanner(strings.NewReader(sec[linux:]))
	for sc.Scan() && len(blocks) < 2 {
		line := sc.Text()
		switch {
		case !in && line == "```sh":
			in, cur = true, nil
		case in && line == "```":
			in = false
			blocks = append(blocks, cur)
		case in:
			cur = append(cur, line)
		}
	}
	if len(blocks) < 2 {
		return nil, nil, fmt.Errorf("the Linux part of the Install section has %d sh blocks, want the install lines and the ones to run next", len(blocks))
	}
	return blocks[0], blocks[1], nil
}

func TestReadmeLinuxInstallBlocks(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	install, next, err := readmeLinuxInstall(string(readme))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(install[0], "base=https://github.com/tabrelay/tabrelay/releases/latest/download") {
		t.Errorf("the install lines do not start with base=…/releases/latest/download: %q", install[0])
	}
	if !strings.Contains(strings.Join(install, "\n"), "sha256sum") {
		t.Errorf("the install lines check no checksum:\n%s", strings.Join(install, "\n"))
	}
	if !strings.HasPrefix(next[0], "tabrelay version") {
		t.Errorf("the lines after the install do not start with tabrelay version: %q", next[0])
	}
}

// TestReadmeLinuxInstall runs the README's Linux install lines, as written (only the download
// address points at a local copy of the release files, served on 127.0.0.1, and amd64 becomes
// this machine's architecture), in a fresh account: a throwaway user made with useradd when the
// test runs as root, else a login shell with an empty environment and a HOME made from
// /etc/skel. Then a new login shell of that account runs the lines the README gives next
// (`tabrelay version`, `tabrelay extension --out …`; not the server), which must find tabrelay
// on its PATH. With a binary that does not match SHA256SUMS, the same lines install nothing.
func TestReadmeLinuxInstall(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a release binary (minutes): skipped with -short")
	}
	if runtime.GOOS != "linux" {
		t.Skip("the README's Linux install lines need Linux")
	}
	for _, tool := range []string{"bash", "curl", "sha256sum", "install"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("the install lines need %s: %v", tool, err)
		}
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	install, next, err := readmeLinuxInstall(string(readme))
	if err != nil {
		t.Fatal(err)
	}

	// the release files, for this machine only
	dist := t.TempDir()
	t.Chdir("../..")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	const version = "v9.8.7-installtest"
	tg := Target{"linux", runtime.GOARCH}
	o := options{out: dist, version: version, maxBytes: 1 << 40, jobs: 1, targets: []Target{tg}, download: "http://unused.invalid/"}
	if err := run(ctx, o, tlog{t}); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.FileServer(http.Dir(dist)))
	defer srv.Close()

	script := strings.Join(install, "\n")
	script = strings.Replace(script, "base=https://github.com/tabrelay/tabrelay/releases/latest/download", "base="+srv.URL, 1)
	script = strings.ReplaceAll(script, "linux-amd64", "linux-"+runtime.GOARCH)
	var after []string
	for _, l := range next {
		if cmd, _, _ := strings.Cut(l, "#"); strings.TrimSpace(cmd) != "tabrelay" { // not the server
			after = append(after, l)
		}
	}

	sh := freshAccount(t)
	if out, err := sh("command -v tabrelay"); err == nil {
		t.Fatalf("the fresh account has a tabrelay before the install: %s", out)
	}
	out, err := sh("set -e\n" + script)
	t.Logf("install lines:\n%s\noutput:\n%s", script, out)
	if err != nil {
		t.Fatalf("the README's install lines failed in a fresh account: %v", err)
	}
	if want := "tabrelay-linux-" + runtime.GOARCH + ": OK"; !strings.Contains(out, want) {
		t.Errorf("the checksum check did not print %q", want)
	}
	out, err = sh("set -e\n" + strings.Join(after, "\n"))
	t.Logf("then, in a new login shell:\n%s\noutput:\n%s", strings.Join(after, "\n"), out)
	if err != nil {
		t.Fatalf("a new login shell of the fresh account: %v", err)
	}
	if !strings.Contains(out, version) {
		t.Errorf("tabrelay version did not say %s", version)
	}

	// a download that does not match SHA256SUMS is not installed
	bin := filepath.Join(dist, tg.BinaryName())
	b, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0xff
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	sh = freshAccount(t)
	out, _ = sh("set -e\n" + script) // the check guards the install with &&, which set -e lets fail
	if want := "tabrelay-linux-" + runtime.GOARCH + ": FAILED"; !strings.Contains(out, want) {
		t.Errorf("the checksum check of a changed binary did not print %q:\n%s", want, out)
	}
	if _, err := sh("test -e ~/.local/bin/tabrelay"); err == nil {
		t.Errorf("a binary that does not match SHA256SUMS was installed:\n%s", out)
	}
}

// fresh counts the accounts made, for their names.
var fresh atomic.Int32

// tlog writes the release build's progress lines to the test log.
type tlog struct{ t *testing.T }

func (l tlog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}

// freshAccount makes an account with nothing in it but what a new account gets, and returns a
// function that runs a script in a new login shell of it (bash, as useradd's -s gives it),
// returning the combined output.
func freshAccount(t *testing.T) func(script string) (string, error) {
	t.Helper()
	accounts := int(fresh.Add(1))
	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	if _, errUA := exec.LookPath("useradd"); u.Uid == "0" && errUA == nil {
		name := fmt.Sprintf("trinst%d%c", os.Getpid()%100000, 'a'+accounts)
		if out, err := exec.Command("useradd", "--create-home", "--shell", "/bin/bash", name).CombinedOutput(); err != nil {
			t.Fatalf("useradd %s: %v\n%s", name, err, out)
		}
		t.Cleanup(func() {
			if out, err := exec.Command("userdel", "--remove", name).CombinedOutput(); err != nil {
				t.Errorf("userdel %s: %v\n%s", name, err, out)
			}
		})
		t.Logf("fresh account: user %s (useradd), run with su - %s -c", name, name)
		return func(script string) (string, error) {
			out, err := exec.Command("su", "-", name, "-c", script).CombinedOutput()
			return string(out), err
		}
	}
	// not root: a login shell with an empty environment and a HOME copied from /etc/skel
	home := filepath.Join(t.TempDir(), "home")
	if err := os.CopyFS(home, os.DirFS("/etc/skel")); err != nil && !os.IsNotExist(err) {
		t.Fatalf("copy /etc/skel: %v", err)
	}
	t.Logf("fresh account: not root, so a login shell with HOME=%s (from /etc/skel) and no other environment", home)
	return func(script string) (string, error) {
		cmd := exec.Command("bash", "--login", "-c", script)
		cmd.Env = []string{"HOME=" + home, "USER=" + u.Username, "LOGNAME=" + u.Username, "SHELL=/bin/bash", "PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8"}
		cmd.Dir = home
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
}
