// Package chromeextension embeds the tabrelay Chrome extension (the unpacked MV3 extension in
// this directory) so that an installed tabrelay binary can load it into a browser it launches.
package chromeextension

import (
	"archive/zip"
	"embed"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

//go:embed manifest.json *.js *.html *.css icons/*.png
var files embed.FS

// FS returns the extension's files, rooted at the extension directory (manifest.json at the top).
func FS() fs.FS { return files }

// WriteTo writes the extension's files into dir (created if missing), ready for
// chromium --load-extension=dir.
func WriteTo(dir string) error {
	err := fs.WalkDir(files, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		dst := filepath.Join(dir, filepath.FromSlash(path))
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		b, err := files.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o644)
	})
	if err != nil {
		return fmt.Errorf("write extension to %s: %w", dir, err)
	}
	return nil
}

// WriteZip writes the extension as the zip a Chrome Web Store listing takes: its files with
// manifest.json at the root. The manifest's "key" (which pins the unpacked extension's id) is
// left out, as the store refuses it and assigns its own id.
func WriteZip(w io.Writer) error {
	zw := zip.NewWriter(w)
	err := fs.WalkDir(files, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := files.ReadFile(path)
		if err != nil {
			return err
		}
		if path == "manifest.json" {
			if b, err = withoutKey(b); err != nil {
				return err
			}
		}
		f, err := zw.CreateHeader(&zip.FileHeader{Name: path, Method: zip.Deflate, Modified: time.Now()})
		if err != nil {
			return err
		}
		_, err = f.Write(b)
		return err
	})
	if err == nil {
		err = zw.Close()
	}
	if err != nil {
		return fmt.Errorf("zip the extension: %w", err)
	}
	return nil
}

// withoutKey returns the manifest without its "key" field.
func withoutKey(manifest []byte) ([]byte, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(manifest, &m); err != nil {
		return nil, fmt.Errorf("read manifest.json: %w", err)
	}
	delete(m, "key")
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}
