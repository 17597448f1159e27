package gate

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Files by identity. The never-upload rule holds for a file however it is reached: a symbolic
// link is resolved before the path is judged (upload), and a hard link — another name of the
// very same file, which no path comparison sees — is found by comparing the file's identity
// (device and inode, os.SameFile) with the files of the protected places.

// maxLinkWalk bounds the entries read looking for a file's other names.
const maxLinkWalk = 20000

// linkedPrivate looks for the other names of the file at real when it has any (a hard link
// count above one): why is set when one of them is a private file (other names it); else other
// is "other names not all found" when the search could not rule that out. Both are empty for a
// file with one name.
func (g *Gate) linkedPrivate(real string) (other, why string) {
	fi, err := os.Stat(real)
	if err != nil || !fi.Mode().IsRegular() || linkCount(fi) <= 1 {
		return "", ""
	}
	var roots []string
	if g.opts.Home != "" {
		roots = append(roots, g.opts.Home)
	}
	if h := g.opts.UserHome; h != "" {
		if entries, err := os.ReadDir(h); err == nil {
			for _, e := range entries {
				if strings.HasPrefix(e.Name(), ".") {
					roots = append(roots, filepath.Join(h, e.Name()))
				}
			}
		}
	}
	budget := maxLinkWalk
	for _, root := range roots {
		found := ""
		_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil // unreadable: not ours to judge
			}
			if budget--; budget < 0 {
				return filepath.SkipAll
			}
			if !d.Type().IsRegular() {
				return nil
			}
			if ofi, err := d.Info(); err == nil && os.SameFile(fi, ofi) && p != real {
				found = p
				return filepath.SkipAll
			}
			return nil
		})
		if found != "" {
			return found, g.private(found)
		}
		if budget < 0 {
			break
		}
	}
	return "other names not all found", ""
}
