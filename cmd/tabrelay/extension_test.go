package main

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	chromeextension "github.com/tabrelay/tabrelay/chrome-extension"
	"github.com/tabrelay/tabrelay/internal/browser"
	"github.com/tabrelay/tabrelay/internal/config"
)

// TestExtensionCommand: `tabrelay extension --out DIR --zip FILE` writes a folder that real
// Chromium loads (its service worker starts, with the pinned id) and a zip with manifest.json at
// its root, every file of the extension, and no "key"; it prints the three steps, and refuses to
// write over a folder or file that is not an earlier copy.
func TestExtensionCommand(t *testing.T) {
	tmp := t.TempDir()
	dir, zipPath := filepath.Join(tmp, "ext"), filepath.Join(tmp, "tabrelay.zip")
	var out, errOut bytes.Buffer
	if err := runExtension([]string{"--out", dir, "--zip", zipPath}, stdio{out: &out, err: &errOut}); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"chrome://extensions", "Load unpacked", dir, "pairing link", config.DefaultExtensionID} {
		if !strings.Contains(out.String(), s) {
			t.Errorf("printed steps lack %q:\n%s", s, out.String())
		}
	}

	// the zip: manifest.json at the root, without "key", and every embedded file
	zr, err := zip.OpenReader(zipPath)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	inZip := map[string]bool{}
	for _, f := range zr.File {
		inZip[f.Name] = true
	}
	_ = fs.WalkDir(chromeextension.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && !inZip[p] {
			t.Errorf("the zip lacks %s", p)
		}
		return err
	})
	mf, err := zr.Open("manifest.json")
	if err != nil {
		t.Fatalf("no manifest.json at the zip's root: %v (entries %v)", err, inZip)
	}
	b, _ := io.ReadAll(mf)
	var manifest map[string]any
	if err := json.Unmarshal(b, &manifest); err != nil {
		t.Fatalf("the zip's manifest.json: %v", err)
	}
	if _, ok := manifest["key"]; ok || manifest["manifest_version"] != float64(3) || manifest["name"] != "tabrelay" {
		t.Errorf("the zip's manifest: key present %v, manifest_version %v, name %v", ok, manifest["manifest_version"], manifest["name"])
	}

	// bad input is refused and nothing is lost
	mine := filepath.Join(tmp, "mine")
	if err := os.MkdirAll(mine, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mine, "notes.txt"), []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := runExtension([]string{"--out", mine}, stdio{out: io.Discard, err: io.Discard}); err == nil {
		t.Error("--out into a folder of other files: no error")
	}
	if err := runExtension([]string{"--zip", filepath.Join(mine, "notes.txt")}, stdio{out: io.Discard, err: io.Discard}); err == nil {
		t.Error("--zip over a file that is not a zip: no error")
	}
	if b, _ := os.ReadFile(filepath.Join(mine, "notes.txt")); string(b) != "keep" {
		t.Errorf("a refused write changed the user's file: %q", b)
	}
	// writing again over an earlier copy updates it
	if err := runExtension([]string{"--out", dir, "--zip", zipPath}, stdio{out: io.Discard, err: io.Discard}); err != nil {
		t.Errorf("writing over an earlier copy: %v", err)
	}

	if testing.Short() {
		t.Skip("loading the folder in Chromium skipped with -short")
	}
	if _, err := browser.Find(""); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	// Launch returns once the extension's service worker runs, and fails if it does not start
	b2, err := browser.Launch(ctx, browser.Options{Headless: true, ExtensionDir: dir})
	if err != nil {
		t.Fatalf("Chromium did not load the written extension: %v", err)
	}
	defer b2.Close()
	if b2.ExtensionID != config.DefaultExtensionID {
		t.Errorf("loaded extension id %s, want %s", b2.ExtensionID, config.DefaultExtensionID)
	}
	st, err := b2.Status(ctx)
	if err != nil || st.Text == "" || st.Paired {
		t.Errorf("the loaded extension's status: %+v %v, want an answer from its service worker, not paired", st, err)
	}
}
