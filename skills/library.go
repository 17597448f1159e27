package skills

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"
)

//go:embed bundled
var bundledFS embed.FS

// FileName is the name of a skill's file inside its folder.
const FileName = "SKILL.md"

// ErrNotFound is wrapped by errors for unknown skill names.
var ErrNotFound = errors.New("skill not found")

// ErrBundled is wrapped by errors for changes to bundled skills.
var ErrBundled = errors.New("bundled skills are read-only")

// ErrSymlink is wrapped by errors for saves to a skill whose folder or SKILL.md is a symbolic
// link: the save would write wherever the link points.
var ErrSymlink = errors.New("refusing to save through a symbolic link")

// Library is the set of available skills: the bundled ones and the user's under a directory,
// rescanned on use (only changed files are parsed again) so edits on disk take effect without a
// restart. It is safe for concurrent use.
type Library struct {
	dir string
	log zerolog.Logger

	bundled         map[string]*Skill
	bundledProblems []*ParseError

	mu   sync.Mutex
	user map[string]*userEntry // by file path
}

type userEntry struct {
	mod   time.Time
	size  int64
	skill *Skill
	err   *ParseError
}

// NewLibrary loads the bundled skills and serves user skills from dir (typically
// <home>/skills; "" for bundled skills only). The directory need not exist yet.
func NewLibrary(dir string, log zerolog.Logger) *Library {
	l := &Library{dir: dir, log: log, bundled: map[string]*Skill{}, user: map[string]*userEntry{}}
	entries, _ := fs.ReadDir(bundledFS, "bundled")
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		p := path.Join("bundled", e.Name(), FileName)
		data, err := bundledFS.ReadFile(p)
		if err != nil {
			continue
		}
		s, err := parseIn("bundled:"+e.Name()+"/"+FileName, e.Name(), data)
		if err != nil {
			var pe *ParseError
			if errors.As(err, &pe) {
				l.bundledProblems = append(l.bundledProblems, pe)
			}
			continue
		}
		s.Bundled = true
		l.bundled[s.Name] = s
	}
	return l
}

// Dir is the directory of user skills ("" when there is none).
func (l *Library) Dir() string { return l.dir }

// parseIn parses a SKILL.md that lives in folder and checks that the name matches it.
func parseIn(file, folder string, data []byte) (*Skill, error) {
	s, err := Parse(file, data)
	if err != nil {
		return nil, err
	}
	if folder != "" && s.Name != folder {
		return nil, &ParseError{File: file, Line: 2, Reason: fmt.Sprintf("name %q does not match its folder %q: rename one of them", s.Name, folder)}
	}
	return s, nil
}

// scan brings the user entries up to date with the disk. Called with l.mu held.
func (l *Library) scan() {
	if l.dir == "" {
		return
	}
	seen := map[string]bool{}
	entries, err := os.ReadDir(l.dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		l.log.Warn().Err(err).Str("dir", l.dir).Msg("cannot read the skills folder")
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		p := filepath.Join(l.dir, e.Name(), FileName)
		fi, err := os.Stat(p)
		if err != nil {
			continue
		}
		seen[p] = true
		old := l.user[p]
		if old != nil && old.mod.Equal(fi.ModTime()) && old.size == fi.Size() {
			continue
		}
		ent := &userEntry{mod: fi.ModTime(), size: fi.Size()}
		data, err := os.ReadFile(p)
		if err == nil {
			ent.skill, err = parseIn(p, e.Name(), data)
		}
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) {
				pe = &ParseError{File: p, Reason: err.Error()}
			}
			ent.err = pe
			l.log.Warn().Str("problem", pe.Error()).Msg("skill file skipped")
		} else {
			l.log.Debug().Str("skill", ent.skill.Name).Str("file", p).Msg("skill loaded")
		}
		l.user[p] = ent
	}
	for p := range l.user {
		if !seen[p] {
			delete(l.user, p)
		}
	}
}

// List returns every usable skill sorted by name (a user skill replaces a bundled one of the
// same name).
func (l *Library) List() []*Skill {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.scan()
	m := map[string]*Skill{}
	for n, s := range l.bundled {
		m[n] = s
	}
	for _, e := range l.user {
		if e.skill != nil {
			m[e.skill.Name] = e.skill
		}
	}
	out := make([]*Skill, 0, len(m))
	for _, s := range m {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Problems returns the skill files that could not be loaded, as file:line: reason.
func (l *Library) Problems() []*ParseError {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.scan()
	out := append([]*ParseError(nil), l.bundledProblems...)
	for _, e := range l.user {
		if e.err != nil {
			out = append(out, e.err)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].File < out[j].File })
	return out
}

// Get returns the skill with the name. For a name whose file is broken, the error is the
// *ParseError.
func (l *Library) Get(name string) (*Skill, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.scan()
	if l.dir != "" {
		if e := l.user[filepath.Join(l.dir, name, FileName)]; e != nil {
			if e.err != nil {
				return nil, e.err
			}
			return e.skill, nil
		}
	}
	if s := l.bundled[name]; s != nil {
		return s, nil
	}
	return nil, fmt.Errorf("%w: %q (list the skills with GET /api/skills or `tabrelay skills list`)", ErrNotFound, name)
}

// Save validates markdown as the SKILL.md of name and writes it to <dir>/<name>/SKILL.md. The
// file's name: must equal name. It returns the parsed skill.
func (l *Library) Save(name string, markdown []byte) (*Skill, error) {
	if l.dir == "" {
		return nil, errors.New("no skills folder is configured (start the server with --home)")
	}
	if !ValidName(name) {
		return nil, fmt.Errorf("skill name %q must be 1-64 lowercase letters, digits and single hyphens", name)
	}
	p := filepath.Join(l.dir, name, FileName)
	s, err := Parse(p, markdown)
	if err != nil {
		return nil, err
	}
	if s.Name != name {
		// Saved under another name (e.g. a draft renamed in the side panel): rename the file's.
		markdown = renameFrontMatter(markdown, name)
		if s, err = parseIn(p, name, markdown); err != nil {
			return nil, err
		}
	}
	if err := noSymlinks(filepath.Dir(p), p); err != nil {
		return nil, fmt.Errorf("save skill %s: %w", name, err)
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return nil, fmt.Errorf("create the folder of skill %s: %w", name, err)
	}
	if err := noSymlinks(filepath.Dir(p)); err != nil { // made a link in the meantime
		return nil, fmt.Errorf("save skill %s: %w", name, err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(p), ".SKILL-*.md")
	if err != nil {
		return nil, fmt.Errorf("save skill %s: %w", name, err)
	}
	_, werr := tmp.Write(markdown)
	cerr := tmp.Close()
	if werr != nil || cerr != nil {
		_ = os.Remove(tmp.Name())
		return nil, fmt.Errorf("save skill %s: %w", name, errors.Join(werr, cerr))
	}
	if err := os.Rename(tmp.Name(), p); err != nil {
		_ = os.Remove(tmp.Name())
		return nil, fmt.Errorf("save skill %s: %w", name, err)
	}
	l.mu.Lock()
	delete(l.user, p) // parse again on next use, whatever the mtime granularity
	l.mu.Unlock()
	return s, nil
}

// noSymlinks refuses paths that are symbolic links (missing ones are fine).
func noSymlinks(paths ...string) error {
	for _, p := range paths {
		fi, err := os.Lstat(p)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			return err
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return fmt.Errorf("%w: %s is a link; replace it with a real folder or file, or edit the skill where the link points", ErrSymlink, p)
		}
	}
	return nil
}

// Delete removes the user skill's folder. Bundled skills cannot be deleted.
func (l *Library) Delete(name string) error {
	if !ValidName(name) {
		return fmt.Errorf("%w: %q", ErrNotFound, name)
	}
	if l.dir != "" {
		p := filepath.Join(l.dir, name, FileName)
		if _, err := os.Stat(p); err == nil {
			if err := os.RemoveAll(filepath.Join(l.dir, name)); err != nil {
				return fmt.Errorf("delete skill %s: %w", name, err)
			}
			l.mu.Lock()
			delete(l.user, p)
			l.mu.Unlock()
			return nil
		}
	}
	if _, ok := l.bundled[name]; ok {
		return fmt.Errorf("%w: %s is built in; save an edited copy under another name instead", ErrBundled, name)
	}
	return fmt.Errorf("%w: %q", ErrNotFound, name)
}

// renameFrontMatter rewrites the front matter's top-level name: line.
func renameFrontMatter(md []byte, name string) []byte {
	lines := strings.Split(string(md), "\n")
	for i := 1; i < len(lines); i++ {
		l := strings.TrimRight(lines[i], "\r")
		if l == "---" {
			break
		}
		if strings.HasPrefix(l, "name:") {
			lines[i] = "name: " + name
			break
		}
	}
	return []byte(strings.Join(lines, "\n"))
}
