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
// count above one): other is one found in a protected place and why says what that place is;
// unsure is true when the file has other names the bounded search did not find (none of them
// can be ruled out). All zero for a file with one name.
func (g *Gate) linkedPrivate(real string) (other, why string, unsure bool) {
	fi, err := os.Stat(real)
	if err != nil || !fi.Mode().IsRegular() || linkCount(fi) <= 1 {
		return "", "", false
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
	// breadth first over all the places at once: secrets lie shallow (~/.ssh/id_rsa,
	// ~/.aws/credentials), caches deep
	budget := maxLinkWalk
	for dirs := roots; len(dirs) > 0 && budget > 0; {
		var next []string
		for _, dir := range dirs {
			entries, err := os.ReadDir(dir)
			if err != nil {
				if d, serr := os.Lstat(dir); serr == nil && d.Mode().IsRegular() {
					entries = []fs.DirEntry{fs.FileInfoToDirEntry(d)}
					dir = filepath.Dir(dir)
				} else {
					continue // unreadable: not ours to judge
				}
			}
			for _, e := range entries {
				if budget--; budget < 0 {
					break
				}
				p := filepath.Join(dir, e.Name())
				switch {
				case e.IsDir():
					next = append(next, p)
				case e.Type().IsRegular():
					if ofi, err := e.Info(); err == nil && os.SameFile(fi, ofi) && p != real {
						return p, g.private(p), false
					}
				}
			}
		}
		dirs = next
	}
	return "", "", true
}
