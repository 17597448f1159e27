package main

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
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
