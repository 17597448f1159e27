package main

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	chromeextension "github.com/tabrelay/tabrelay/chrome-extension"
	"github.com/tabrelay/tabrelay/internal/config"
)

// defaultExtensionDir is where `tabrelay extension` writes the extension without --out.
const defaultExtensionDir = "tabrelay-extension"

// extensionCmd is `tabrelay extension [--out DIR] [--zip FILE]`.
type extensionCmd struct {
	Out string `placeholder:"DIR" help:"write the unpacked extension into DIR (default ./${default_extension_dir} unless --zip is given)"`
	Zip string `placeholder:"FILE" help:"write the extension as a zip for a Chrome Web Store listing into FILE"`
	// Extra catches arguments to refuse them with a hint.
	Extra []string `arg:"" sep:"none" optional:"" hidden:""`
}

func runExtension(args []string, io stdio) error {
	return runCommand(context.Background(), "extension", args, io)
}

// Run writes the extension embedded in the binary as a folder for "Load unpacked" (so a binary
// installed with `go install` needs no checkout) and prints the steps, or as the zip a store
// listing takes.
func (e *extensionCmd) Run(io stdio) error {
	out, zipPath := &e.Out, &e.Zip
	if len(e.Extra) > 0 {
		return fmt.Errorf("unexpected argument %q: use --out DIR or --zip FILE", e.Extra[0])
	}
	if *out == "" && *zipPath == "" {
		*out = defaultExtensionDir
	}
	if *zipPath != "" {
		if err := writeExtensionZip(*zipPath); err != nil {
			return err
		}
		fmt.Fprintf(io.out, "Wrote %s for a Chrome Web Store listing (manifest.json at its root, without the \"key\" field the store refuses).\n", *zipPath)
		fmt.Fprintln(io.out, "The store gives the extension its own id: start the server with TABRELAY_EXTENSION_IDS=<that id> so it accepts it.")
	}
	if *out == "" {
		return nil
	}
	dir, err := filepath.Abs(*out)
	if err != nil {
		return fmt.Errorf("extension folder %s: %w", *out, err)
	}
	if err := checkExtensionDir(dir); err != nil {
		return err
	}
	if err := chromeextension.WriteTo(dir); err != nil {
		return err
	}
	fmt.Fprintf(io.out, `Wrote the tabrelay extension to %s. To install it (once):
  1. Open chrome://extensions and switch on Developer mode (top right).
  2. Click "Load unpacked" and choose %s (its id is %s).
  3. Start the server (tabrelay) and open the pairing link it prints in that browser.
`, dir, dir, config.DefaultExtensionID)
	return nil
}

// checkExtensionDir refuses to write into a folder that holds something other than an earlier
// copy of the extension, so no file of the user's is overwritten.
func checkExtensionDir(dir string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) || (err == nil && len(entries) == 0) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("extension folder %s: %w", dir, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "manifest.json")); err != nil {
		return fmt.Errorf("%s is not empty and holds no extension: choose an empty or new folder with --out", dir)
	}
	return nil // an earlier copy: updated in place (click the reload arrow in chrome://extensions)
}

// writeExtensionZip writes the store zip to path, refusing to replace a file that is not an
// earlier extension zip.
func writeExtensionZip(path string) error {
	if _, err := os.Stat(path); err == nil {
		r, err := zip.OpenReader(path)
		if err != nil {
			return fmt.Errorf("%s exists and is not a zip: choose another --zip file", path)
		}
		_, err = r.Open("manifest.json")
		r.Close()
		if err != nil {
			return fmt.Errorf("%s exists and is not an extension zip: choose another --zip file", path)
		}
	}
	var buf bytes.Buffer
	if err := chromeextension.WriteZip(&buf); err != nil {
		return err
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
