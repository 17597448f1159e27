package skills

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func writeSkill(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name, FileName)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLibraryReloadsAndReportsProblems(t *testing.T) {
	dir := t.TempDir()
	l := NewLibrary(dir, testLog(t))
	n := len(l.List())
	writeSkill(t, dir, "greet", "---\nname: greet\ndescription: Say hello.\n---\nHi\n")
	if got := len(l.List()); got != n+1 {
		t.Fatalf("new skill not picked up: %d skills", got)
	}
	// An edit is picked up (mtime or size changes).
	p := writeSkill(t, dir, "greet", "---\nname: greet\ndescription: Say hello politely.\n---\nHi\n")
	future := time.Now().Add(2 * time.Second)
	_ = os.Chtimes(p, future, future)
	s, err := l.Get("greet")
	if err != nil || s.Description != "Say hello politely." {
		t.Fatalf("edit not picked up: %v %+v", err, s)
	}
	// A broken file is a problem with its line, not a crash, and the others still load.
	bad := writeSkill(t, dir, "broken", "---\nname: broken\ndescription: d\nparameters:\n  - name: q\n---\n```steps\n- do: click\n  target: button \"A\"\n- do: explode\n```\n")
	probs := l.Problems()
	if len(probs) != 1 || probs[0].File != bad || probs[0].Line != 10 || !strings.Contains(probs[0].Reason, "explode") {
		t.Fatalf("problems %v", probs)
	}
	if _, err := l.Get("broken"); err == nil || !strings.Contains(err.Error(), bad+":10:") {
		t.Fatalf("Get(broken) = %v", err)
	}
	if len(l.List()) != n+1 {
		t.Fatalf("broken skill listed")
	}
	// Folder and name must agree.
	writeSkill(t, dir, "other-folder", "---\nname: greet2\ndescription: d\n---\n")
	if probs := l.Problems(); len(probs) != 2 {
		t.Fatalf("name/folder mismatch not reported: %v", probs)
	}
	// A user skill replaces a bundled one of the same name; deleting it brings the bundled back.
	writeSkill(t, dir, "site-search", "---\nname: site-search\ndescription: Mine.\n---\n")
	if s, _ := l.Get("site-search"); s.Bundled || s.Description != "Mine." {
		t.Fatalf("user override not used: %+v", s)
	}
	if err := l.Delete("site-search"); err != nil {
		t.Fatal(err)
	}
	if s, _ := l.Get("site-search"); !s.Bundled {
		t.Fatalf("bundled skill not back")
	}
	if err := l.Delete("site-search"); err == nil || !strings.Contains(err.Error(), "built in") {
		t.Fatalf("deleting a bundled skill: %v", err)
	}
	// Removed from disk: gone.
	_ = os.RemoveAll(filepath.Join(dir, "greet"))
	if _, err := l.Get("greet"); err == nil {
		t.Fatal("deleted skill still served")
	}
}

func TestLibrarySaveValidates(t *testing.T) {
	l := NewLibrary(t.TempDir(), testLog(t))
	if s, err := l.Save("z", []byte("---\nname: y\ndescription: d\n---\n")); err != nil || s.Name != "z" || !strings.Contains(s.Raw, "name: z\n") {
		t.Fatalf("saving under another name does not rename: %v %+v", err, s)
	}
	if _, err := l.Save("x", []byte("---\nname: x\n---\n")); err == nil || !strings.Contains(err.Error(), ":2: description") {
		t.Fatalf("invalid skill saved: %v", err)
	}
	if _, err := l.Save("../x", []byte("---\nname: x\ndescription: d\n---\n")); err == nil {
		t.Fatal("path traversal accepted")
	}
	if _, err := l.Save("x", []byte("---\nname: x\ndescription: d\n---\n")); err != nil {
		t.Fatal(err)
	}
	if s, err := l.Get("x"); err != nil || s.Bundled {
		t.Fatalf("saved skill: %v", err)
	}
}

func TestResolve(t *testing.T) {
	snap := `# Shop — https://shop.test/
- banner:
  - searchbox "Search products" [ref=e1]
  - button "Search" [ref=e2]
- main:
  - form "Login":
    - textbox "Email" [ref=e3]
    - button "Go" [ref=e4]
  - form "Newsletter":
    - textbox "Email" [ref=e5]
    - button "Go" [ref=e6]
  - button "Remove" [ref=e7]
  - button "Remove" [ref=e8]`
	cases := []struct {
		name   string
		target Target
		ref    string
		errHas string
	}{
		{"role and name", Target{Role: "button", Name: "search"}, "e2", ""},
		{"role only", Target{Role: "searchbox"}, "e1", ""},
		{"textbox matches searchbox", Target{Role: "textbox", Name: "Search products"}, "e1", ""},
		{"regex", Target{Role: "searchbox", Name: "/search|find/"}, "e1", ""},
		{"within", Target{Role: "textbox", Name: "Email", Within: &Target{Role: "form", Name: "Newsletter"}}, "e5", ""},
		{"within first", Target{Role: "button", Name: "Go", Within: &Target{Role: "form", Name: "Login"}}, "e4", ""},
		{"nth", Target{Role: "button", Name: "Remove", Nth: 2}, "e8", ""},
		{"first of equals", Target{Role: "button", Name: "Remove"}, "e7", ""},
		{"any", Target{Any: []Target{{Role: "button", Name: "Nope"}, {Role: "button", Name: "Go"}}}, "e4", ""},
		{"template", Target{Role: "button", Name: "{{b}}"}, "e2", ""},
		{"missing", Target{Role: "button", Name: "Buy"}, "", `no button "Buy"; the page has button "Search"`},
		{"nth too big", Target{Role: "button", Name: "Remove", Nth: 3}, "", "only 2"},
		{"within missing", Target{Role: "textbox", Within: &Target{Role: "dialog"}}, "", "no textbox in dialog"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n, err := Resolve(snap, c.target, map[string]string{"b": "Search"})
			if c.errHas != "" {
				if err == nil || !strings.Contains(err.Error(), c.errHas) {
					t.Fatalf("err %v, want %q", err, c.errHas)
				}
				return
			}
			if err != nil || n.Ref != c.ref {
				t.Fatalf("got %s, %v; want %s", n.Ref, err, c.ref)
			}
		})
	}
}

func TestParseValues(t *testing.T) {
	cases := []struct {
		in   string
		want string
		err  bool
	}{
		{"Name: Ada\nEmail = a@b.c\n\n", "Name=Ada|Email=a@b.c", false},
		{`{"Name": "Ada", "Age": 36, "Subscribe": true}`, "Name=Ada|Age=36|Subscribe=true", false},
		{`Name: Ada\nTeam: Red`, "Name=Ada|Team=Red", false},
		{"no separator", "", true},
		{"", "", true},
		{"{broken", "", true},
	}
	for _, c := range cases {
		got, err := parseValues(c.in)
		if (err != nil) != c.err {
			t.Errorf("parseValues(%q) error %v", c.in, err)
			continue
		}
		var parts []string
		for _, kv := range got {
			parts = append(parts, kv[0]+"="+kv[1])
		}
		if !c.err && strings.Join(parts, "|") != c.want {
			t.Errorf("parseValues(%q) = %v, want %s", c.in, parts, c.want)
		}
	}
}

func TestSiteMatch(t *testing.T) {
	cases := []struct {
		sites []string
		url   string
		score float64
		ok    bool
	}{
		{nil, "https://a.test/", 0.25, true},
		{[]string{"*"}, "", 0.25, true},
		{[]string{"example.com"}, "https://www.example.com/x", 1, true},
		{[]string{"example.com"}, "https://notexample.com/x", 0, false},
		{[]string{"*.example.com"}, "https://example.com/", 0, false},
		{[]string{"*.example.com"}, "https://shop.example.com/", 1, true},
		{[]string{"example.com/orders/*"}, "https://example.com/orders/42", 1, true},
		{[]string{"example.com/orders/*"}, "https://example.com/cart", 0, false},
		{[]string{"https://example.com/a*"}, "https://example.com/abc?x=1", 1, true},
		{[]string{"http://127.0.0.1:*/skills/*"}, "http://127.0.0.1:4321/skills/contacts.html", 1, true},
		{[]string{"example.com"}, "", 0, false},
	}
	for _, c := range cases {
		score, ok := siteScore(c.sites, c.url)
		if ok != c.ok || score != c.score {
			t.Errorf("siteScore(%v, %q) = %v, %v; want %v, %v", c.sites, c.url, score, ok, c.score, c.ok)
		}
	}
}

func TestRankAndNamed(t *testing.T) {
	dir := t.TempDir()
	writeSkill(t, dir, "order-pizza", "---\nname: order-pizza\ndescription: Order a pizza for delivery.\nsites: [pizza.test]\n---\n")
	writeSkill(t, dir, "export-orders", "---\nname: export-orders\ndescription: Download the order history as a spreadsheet.\nsites: [shop.test]\n---\n")
	l := NewLibrary(dir, testLog(t))
	cases := []struct {
		req, url, first string
		named           bool
		absent          string
	}{
		{"search for blue mugs", "https://shop.test/", "site-search", false, "order-pizza"},
		{"get the table as csv", "https://x.test/", "extract-table", false, ""},
		{"fill the form with my details", "https://x.test/", "fill-form", false, ""},
		{"order a pizza", "https://pizza.test/menu", "order-pizza", false, ""},
		{"order a pizza", "https://shop.test/", "export-orders", false, "order-pizza"},
		{"run extract-table", "https://x.test/", "extract-table", true, ""},
		{"use fill form with Name: Ada", "https://x.test/", "fill-form", true, ""},
		// no page URL (the panel or the CLI without --url): site-specific skills are found too
		{"order a pizza", "", "order-pizza", false, ""},
		{"download the order history", "", "export-orders", false, ""},
		{"run export-orders", "", "export-orders", true, ""},
	}
	for _, c := range cases {
		ms := l.Rank(c.req, c.url)
		if len(ms) == 0 || ms[0].Skill.Name != c.first || ms[0].Named != c.named {
			var got []string
			for _, m := range ms {
				got = append(got, m.Skill.Name)
			}
			t.Errorf("Rank(%q, %q) = %v (named %v); want %s first", c.req, c.url, got, len(ms) > 0 && ms[0].Named, c.first)
		}
		for _, m := range ms {
			if m.Skill.Name == c.absent {
				t.Errorf("Rank(%q, %q) lists %s for another site", c.req, c.url, c.absent)
			}
		}
	}
	if s, ok := l.Named("please run export-orders now"); !ok || s.Name != "export-orders" {
		t.Errorf("Named: %v %v", s, ok)
	}
	if _, ok := l.Named("export my orders"); ok {
		t.Errorf("a request that does not name a skill counted as named")
	}
}

func TestParamsInText(t *testing.T) {
	sk, err := Parse("x", []byte("---\nname: site-search\ndescription: d\nparameters:\n  - {name: query, required: true}\n  - {name: limit}\n---\n"))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		req  string
		want map[string]string
	}{
		{"run site-search for wireless mouse", map[string]string{"query": "wireless mouse"}},
		{`site-search "blue mug"`, map[string]string{"query": "blue mug"}},
		{"site-search query=kettle limit=5", map[string]string{"query": "kettle", "limit": "5"}},
		{"run site search with lamps", map[string]string{"query": "lamps"}},
		{"do something else", map[string]string{}},
	}
	for _, c := range cases {
		got := paramsInText(sk, c.req, sk.Parameters[:1])
		if len(got) != len(c.want) {
			t.Errorf("%q: got %v, want %v", c.req, got, c.want)
			continue
		}
		for k, v := range c.want {
			if got[k] != v {
				t.Errorf("%q: got %v, want %v", c.req, got, c.want)
			}
		}
	}
}

// TestLibrarySaveRefusesSymlinks checks that a save refuses a skill folder or SKILL.md that
// is a symbolic link, with ErrSymlink, and leaves what the link points to untouched.
func TestLibrarySaveRefusesSymlinks(t *testing.T) {
	const md = "---\nname: greet\ndescription: Say hello.\n---\nHi\n"
	for _, tc := range []struct {
		name string
		// link makes <dir>/greet (or its SKILL.md) a link into outside; it returns the file
		// the link leads to, which must not change.
		link func(t *testing.T, dir, outside string) string
	}{
		{"folder", func(t *testing.T, dir, outside string) string {
			if err := os.Symlink(outside, filepath.Join(dir, "greet")); err != nil {
				t.Fatal(err)
			}
			return filepath.Join(outside, FileName)
		}},
		{"file", func(t *testing.T, dir, outside string) string {
			if err := os.MkdirAll(filepath.Join(dir, "greet"), 0o755); err != nil {
				t.Fatal(err)
			}
			target := filepath.Join(outside, "notes.md")
			if err := os.Symlink(target, filepath.Join(dir, "greet", FileName)); err != nil {
				t.Fatal(err)
			}
			return target
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, outside := t.TempDir(), t.TempDir()
			target := tc.link(t, dir, outside)
			const before = "not a skill: the user's own file\n"
			if err := os.WriteFile(target, []byte(before), 0o644); err != nil {
				t.Fatal(err)
			}
			l := NewLibrary(dir, testLog(t))
			_, err := l.Save("greet", []byte(md))
			if !errors.Is(err, ErrSymlink) {
				t.Fatalf("save through a symlinked %s: %v, want ErrSymlink", tc.name, err)
			}
			if got, _ := os.ReadFile(target); string(got) != before {
				t.Errorf("the link's target was written: %q", got)
			}
			entries, _ := os.ReadDir(outside)
			for _, e := range entries {
				if strings.HasPrefix(e.Name(), ".SKILL-") {
					t.Errorf("a temporary file was left where the link points: %s", e.Name())
				}
			}
		})
	}
}
