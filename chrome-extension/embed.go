// Package chromeextension embeds the tabrelay Chrome extension (the unpacked MV3 extension in
// this directory) so that an installed tabrelay binary can load it into a browser it launches.
package chromeextension

import (
	"embed"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
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
