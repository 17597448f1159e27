package gate

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

func (o Options) withDefaults() Options {
	if o.UserHome == "" {
		o.UserHome, _ = os.UserHomeDir()
	}
	clean := func(p string) string {
		if p == "" {
			return ""
		}
		if abs, err := filepath.Abs(p); err == nil {
			p = abs
		}
		if real, err := filepath.EvalSymlinks(p); err == nil {
			p = real
		}
		return filepath.Clean(p)
	}
	o.Home, o.UserHome = clean(o.Home), clean(o.UserHome)
	dirs := make([]string, 0, len(o.UploadDirs))
	for _, d := range o.UploadDirs {
		if d = clean(d); d != "" {
			dirs = append(dirs, d)
		}
	}
	o.UploadDirs = dirs
	return o
}

// upload judges uploading files: a private file (tabrelay's home, a dot-file or dot-folder
// of the home directory, /proc, /sys, /dev, or a link to one) is refused; a file the user
// named by its full path in their words, picked, or keeps under an upload folder goes; any
// other asks.
func (g *Gate) upload(files []string, r Request) Decision {
	var ask []string
	for _, f := range files {
		abs, err := filepath.Abs(f)
		if err != nil {
			return Decision{Verdict: Block, Level: Grave, Reason: ReasonUpload, Detail: fmt.Sprintf("%q is not a path", f)}
		}
		abs = filepath.Clean(abs)
		real := abs
		if p, err := filepath.EvalSymlinks(abs); err == nil {
			real = p
		}
		for _, p := range []string{abs, real} {
			if why := g.private(p); why != "" {
				return Decision{Verdict: Block, Level: Grave, Reason: ReasonUpload,
					Detail: fmt.Sprintf("%s is %s; tabrelay never uploads it", f, why)}
			}
		}
		switch other, why, unsure := g.linkedPrivate(real); {
		case why != "":
			return Decision{Verdict: Block, Level: Grave, Reason: ReasonUpload,
				Detail: fmt.Sprintf("%s is the same file as %s, %s; tabrelay never uploads it", f, other, why)}
		case unsure:
			// it has other names, not all found: the person decides, whoever named it
			ask = append(ask, abs+" (a file with other names, not all found)")
			continue
		}
		if !g.namedFile(abs, real, r) {
			ask = append(ask, abs)
		}
	}
	if len(ask) > 0 {
		return Decision{Level: Grave, Reason: ReasonUpload,
			Detail: fmt.Sprintf("the user did not name %s", strings.Join(ask, ", "))}
	}
	return Decision{}
}

// private says why path p may never be uploaded ("" when it may).
func (g *Gate) private(p string) string {
	for _, sys := range []string{"/proc", "/sys", "/dev"} {
		if within(p, sys) {
			return "a system file (" + sys + ")"
		}
	}
	if g.opts.Home != "" && within(p, g.opts.Home) {
		return "in tabrelay's home (its secret and data)"
	}
	if h := g.opts.UserHome; h != "" && within(p, h) {
		rel, err := filepath.Rel(h, p)
		if err == nil {
			for _, part := range strings.Split(rel, string(filepath.Separator)) {
				if strings.HasPrefix(part, ".") && part != "." {
					return "a hidden file or folder of the home directory"
				}
			}
		}
	}
	return ""
}

// namedFile reports whether the user chose the file at abs (resolving to real): named by
// its full path in the goal or by its name (namedByName), picked in the panel, or under an
// upload folder.
func (g *Gate) namedFile(abs, real string, r Request) bool {
	for _, d := range g.opts.UploadDirs {
		if within(real, d) {
			return true
		}
	}
	for _, p := range r.Picked {
		if filepath.Clean(p) == abs {
			return true
		}
	}
	for _, p := range pathsIn(r.Goal, g.opts.UserHome) {
		if p == abs || p == real {
			return true
		}
	}
	return namedByName(abs, real, r.Goal, g.opts.UserHome)
}

// namedByName reports whether the person's words name the file at abs (resolving to real) by
// its name and its folder's: "cv.pdf in my Documents folder" names ~/Documents/cv.pdf (not
// ~/Private/cv.pdf); a file directly in the home directory needs its name only. The name must
// carry an extension and stand as a word of its own, and the file must be in the person's
// home directory (never a hidden file or folder there: those are refused before).
func namedByName(abs, real, goal, home string) bool {
	if home == "" || !within(abs, home) || !within(real, home) {
		return false
	}
	base := filepath.Base(real)
	if filepath.Ext(base) == "" || filepath.Ext(base) == base || utf8.RuneCountInString(base) < 4 {
		return false
	}
	fg := Fold(goal)
	for _, p := range []string{abs, real} {
		dir := filepath.Dir(p)
		if containsWord(fg, Fold(filepath.Base(p))) && (dir == filepath.Clean(home) || containsWord(fg, Fold(filepath.Base(dir)))) {
			return true
		}
	}
	return false
}

// pathsIn returns the absolute paths written in full in text: words starting with / or ~/
// (quotes and sentence punctuation around them dropped; ~ is the home directory).
func pathsIn(text, home string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(text, func(r rune) bool {
		return r == ' ' || r == '\t' || r == '\n' || r == '"' || r == '\'' || r == '`' || r == '“' || r == '”' || r == '«' || r == '»'
	}) {
		w = strings.TrimRight(w, ".,;:!?)]")
		w = strings.TrimLeft(w, "([")
		switch {
		case strings.HasPrefix(w, "~/") && home != "":
			w = filepath.Join(home, w[2:])
		case strings.HasPrefix(w, "/"):
		default:
			continue
		}
		out = append(out, filepath.Clean(w))
	}
	return out
}

// within reports whether p is dir or inside it.
func within(p, dir string) bool {
	if p == dir {
		return true
	}
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
