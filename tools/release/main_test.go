package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestBinaryNames(t *testing.T) {
	want := map[Target]string{
		{"linux", "amd64"}: "tabrelay-linux-amd64", {"linux", "arm64"}: "tabrelay-linux-arm64",
		{"darwin", "amd64"}: "tabrelay-darwin-amd64", {"darwin", "arm64"}: "tabrelay-darwin-arm64",
		{"windows", "amd64"}: "tabrelay-windows-amd64.exe", {"windows", "arm64"}: "tabrelay-windows-arm64.exe",
	}
	if len(Targets) != len(want) {
		t.Fatalf("%d targets, want the %d desktops", len(Targets), len(want))
	}
	for _, tg := range Targets {
		if got := tg.BinaryName(); got != want[tg] {
			t.Errorf("%v: %q, want %q", tg, got, want[tg])
		}
	}
}

// TestSumsCheck writes SHA256SUMS for two files and has sha256sum -c (where installed) check
// it; the format is also checked by hand.
func TestSumsCheck(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{"b.zip": "zip bytes", "a-linux-amd64": "binary bytes"}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sums, err := Sums(dir, []string{"b.zip", "a-linux-amd64"})
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(sums), "\n"), "\n")
	if len(lines) != 2 || !strings.HasSuffix(lines[0], "  a-linux-amd64") || !strings.HasSuffix(lines[1], "  b.zip") || len(strings.Fields(lines[0])[0]) != 64 {
		t.Fatalf("SHA256SUMS:\n%s", sums)
	}
	if sum := sha256.Sum256([]byte("zip bytes")); strings.Fields(lines[1])[0] != hex.EncodeToString(sum[:]) {
		t.Errorf("b.zip: %s, want %x", lines[1], sum)
	}
	if err := os.WriteFile(filepath.Join(dir, SumsFile), sums, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := exec.LookPath("sha256sum"); err != nil {
		return
	}
	cmd := exec.Command("sha256sum", "-c", SumsFile)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("sha256sum -c: %v\n%s", err, out)
	}
}

func TestParseTargets(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []Target
		err  bool
	}{
		{in: "all", want: Targets},
		{in: "", want: Targets},
		{in: "linux/amd64", want: []Target{{"linux", "amd64"}}},
		{in: "windows/arm64, linux/amd64", want: []Target{{"linux", "amd64"}, {"windows", "arm64"}}}, // the order of Targets
		{in: "linux/amd64,linux/amd64", want: []Target{{"linux", "amd64"}}},
		{in: "linux/386", err: true},
		{in: "linux", err: true},
		{in: "linux/amd64,", err: true},
	} {
		got, err := ParseTargets(tc.in)
		if (err != nil) != tc.err || !slices.Equal(got, tc.want) {
			t.Errorf("ParseTargets(%q) = %v, %v; want %v (error: %v)", tc.in, got, err, tc.want, tc.err)
		}
	}
}

// TestBuildAllOrder: with builds that end in reverse order, the start lines and the done lines
// still come in the order of the targets, no more builds run at once than jobs, and a failed
// target is reported as such without stopping the others.
func TestBuildAllOrder(t *testing.T) {
	for _, jobs := range []int{1, 2, 6} {
		var mu sync.Mutex
		running, most := 0, 0
		var log bytes.Buffer
		boom := errors.New("boom")
		errs := buildAll(context.Background(), Targets, jobs, func(tg Target) (int64, error) {
			mu.Lock()
			running++
			most = max(most, running)
			mu.Unlock()
			// later targets finish first
			time.Sleep(time.Duration(len(Targets)-slices.Index(Targets, tg)) * 5 * time.Millisecond)
			mu.Lock()
			running--
			mu.Unlock()
			if tg == (Target{"darwin", "amd64"}) {
				return 0, boom
			}
			return 3 << 20, nil
		}, &log)
		if most > jobs {
			t.Errorf("jobs %d: %d builds at once", jobs, most)
		}
		for i, err := range errs {
			if want := Targets[i] == (Target{"darwin", "amd64"}); (err != nil) != want {
				t.Errorf("jobs %d: %v: error %v", jobs, Targets[i], err)
			}
		}
		var starts, ends []string
		for line := range strings.Lines(log.String()) {
			f := strings.Fields(line)
			if f[2] == "building" {
				starts = append(starts, f[1])
			} else {
				ends = append(ends, f[1])
			}
			if !strings.HasPrefix(f[0], "[") || !strings.HasSuffix(f[0], "/6]") {
				t.Errorf("jobs %d: line %q: no [i/6]", jobs, line)
			}
		}
		var want []string
		for _, tg := range Targets {
			want = append(want, tg.String())
		}
		if !slices.Equal(starts, want) || !slices.Equal(ends, want) {
			t.Errorf("jobs %d: started %v, done %v; want both %v\n%s", jobs, starts, ends, want, log.String())
		}
		if !strings.Contains(log.String(), "darwin/amd64   FAILED") || !strings.Contains(log.String(), "tabrelay-linux-amd64           3.0 MiB") {
			t.Errorf("jobs %d: log:\n%s", jobs, log.String())
		}
	}
}

// TestDeb: the package WriteDeb makes is one dpkg-deb reads (where installed): its control
// fields, and /usr/bin/tabrelay with the binary's bytes and mode 755.
func TestDeb(t *testing.T) {
	bin := []byte("#!/bin/sh\necho tabrelay 1.2.3\n")
	var deb bytes.Buffer
	if err := WriteDeb(&deb, bin, debVersion("v1.2.3"), "arm64", time.Unix(1700000000, 0)); err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(deb.Bytes(), []byte("!<arch>\ndebian-binary   ")) {
		t.Fatalf("not an ar archive starting with debian-binary: %q", deb.Bytes()[:30])
	}
	var again bytes.Buffer
	_ = WriteDeb(&again, bin, "1.2.3", "arm64", time.Unix(1700000000, 0))
	if !bytes.Equal(deb.Bytes(), again.Bytes()) {
		t.Error("the same binary gave two different packages")
	}
	if _, err := exec.LookPath("dpkg-deb"); err != nil {
		t.Skip("dpkg-deb is not installed: the package was not read back")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "t.deb")
	if err := os.WriteFile(path, deb.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	for field, want := range map[string]string{"Package": "tabrelay", "Version": "1.2.3", "Architecture": "arm64"} {
		out, err := exec.Command("dpkg-deb", "--field", path, field).CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) != want {
			t.Errorf("dpkg-deb --field %s: %q, %v; want %q", field, out, err, want)
		}
	}
	if out, err := exec.Command("dpkg-deb", "--extract", path, filepath.Join(dir, "root")).CombinedOutput(); err != nil {
		t.Fatalf("dpkg-deb --extract: %v\n%s", err, out)
	}
	fi, err := os.Stat(filepath.Join(dir, "root", "usr", "bin", "tabrelay"))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(filepath.Join(dir, "root", "usr", "bin", "tabrelay"))
	if !bytes.Equal(got, bin) || fi.Mode().Perm() != 0o755 {
		t.Errorf("/usr/bin/tabrelay: mode %v, %q; want 755, %q", fi.Mode().Perm(), got, bin)
	}
}

// TestManifests: the Homebrew formula and the Scoop manifest name each binary by its URL and
// checksum, for the platforms built only.
func TestManifests(t *testing.T) {
	sums := map[Target]string{}
	for i, tg := range Targets {
		sums[tg] = strings.Repeat(string(rune('a'+i)), 64)
	}
	const dl = "https://example.test/download/v1.2.3/"
	f, ok, err := Formula("v1.2.3", dl, sums)
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	for _, want := range []string{
		`version "1.2.3"`, "on_macos do", "on_linux do", "on_arm do", "on_intel do",
		`url "` + dl + `tabrelay-darwin-arm64"`, `sha256 "` + sums[Target{"darwin", "arm64"}] + `"`,
		`url "` + dl + `tabrelay-linux-amd64"`, `sha256 "` + sums[Target{"linux", "amd64"}] + `"`,
	} {
		if !strings.Contains(string(f), want) {
			t.Errorf("formula lacks %s:\n%s", want, f)
		}
	}
	if strings.Contains(string(f), "windows") {
		t.Errorf("formula names Windows:\n%s", f)
	}
	m, ok, err := ScoopManifest("v1.2.3", dl, sums)
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	var man struct {
		Version      string
		Bin          string
		Architecture map[string]struct{ URL, Hash string }
	}
	if err := json.Unmarshal(m, &man); err != nil {
		t.Fatal(err)
	}
	if man.Version != "1.2.3" || man.Bin != "tabrelay.exe" || len(man.Architecture) != 2 ||
		man.Architecture["64bit"].URL != dl+"tabrelay-windows-amd64.exe#/tabrelay.exe" || man.Architecture["64bit"].Hash != sums[Target{"windows", "amd64"}] ||
		man.Architecture["arm64"].Hash != sums[Target{"windows", "arm64"}] {
		t.Errorf("Scoop manifest:\n%s", m)
	}
	if _, ok, _ := ScoopManifest("1", dl, map[Target]string{{"linux", "amd64"}: sums[Target{"linux", "amd64"}]}); ok {
		t.Error("a Scoop manifest without Windows binaries")
	}
}
