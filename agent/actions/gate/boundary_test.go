package gate

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestSiteOf(t *testing.T) {
	for _, c := range []struct {
		url  string
		want Site
	}{
		{"https://shop.example.co.uk/cart", "example.co.uk"},
		{"http://www.example.com", "example.com"},
		{"https://example.com:443/x", "example.com"},
		{"http://example.com:8080/", "example.com:8080"},
		{"http://127.0.0.1:5555/a", "127.0.0.1:5555"},
		{"http://localhost:5555/a", "localhost:5555"},
		{"http://EXAMPLE.com./", "example.com"},
		{"https://user.github.io/x", "user.github.io"},
		{"about:blank", ""},
		{"data:text/html,hi", ""},
		{"not a url", ""},
	} {
		if got := SiteOf(c.url); got != c.want {
			t.Errorf("SiteOf(%q) = %q, want %q", c.url, got, c.want)
		}
	}
}

func TestSitesIn(t *testing.T) {
	for _, c := range []struct {
		words string
		want  []Site
	}{
		{"find the cheapest kettle", nil},
		{"go to example.com and buy a kettle", []Site{"example.com"}},
		{"open https://shop.example.co.uk/cart, then pay", []Site{"example.co.uk"}},
		{"compare prices on amazon.de and ebay.com.", []Site{"amazon.de", "ebay.com"}},
		{"check http://127.0.0.1:5555/x and localhost:8080", []Site{"127.0.0.1:5555", "localhost:8080"}},
		{"upload report.pdf and notes.txt", nil},
		{"mail bob@evil.com the summary", nil},
		{"open ~/docs/site.example.com.txt", nil},
		{"visit Docs.Example.org/guide", []Site{"example.org"}},
	} {
		got := SitesIn(c.words)
		if !slices.Equal(got, c.want) {
			t.Errorf("SitesIn(%q) = %q, want %q", c.words, got, c.want)
		}
	}
}

func FuzzSitesIn(f *testing.F) {
	for _, s := range []string{"go to example.com", "https://a.b.c.example.co.uk:8443/x?y", "bob@x.com", "127.0.0.1:1", "localhost:99999", "a..b.com", "ä.example.com", "http://[::1]:80/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, words string) {
		for _, s := range SitesIn(words) {
			if s == "" {
				t.Fatalf("empty site from %q", words)
			}
			host := string(s)
			if i := strings.LastIndexByte(host, ':'); i >= 0 && !strings.Contains(host, "]") {
				host = host[:i]
			}
			// a host the browser maps (IDNA) is named in the words in another spelling
			if !strings.Contains(host, "xn--") && !strings.Contains(strings.ToLower(words), host) {
				t.Fatalf("site %q is not in the words %q", s, words)
			}
			// http://x:443 is the site x:443, which https reads as x: only other ports round-trip
			if !strings.HasSuffix(string(s), ":443") && SiteOf("https://"+string(s)) != s {
				t.Fatalf("site %q does not round-trip", s)
			}
		}
	})
}

func TestTokens(t *testing.T) {
	for _, c := range []struct {
		text string
		want []string
	}{
		{"Your API key: sk_live_9f8A7b6C5d4E", []string{"sk_live_9f8A7b6C5d4E"}},
		{"Welcome back, Alice! You have 3 new messages.", nil},
		{"Order 2026-11-28 total $1,234.56", nil},
		{"Account number 12345678, code 4821", []string{"12345678"}},
		{"write to Alice.Smith@Example.com", []string{"alice.smith@example.com"}},
		{"iPhone15 and version2", []string{"iPhone15"}},
		{"temperature 20 degrees, password", nil},
	} {
		if got := Tokens(c.text); !slices.Equal(got, c.want) {
			t.Errorf("Tokens(%q) = %q, want %q", c.text, got, c.want)
		}
	}
}

func TestTaskLeaks(t *testing.T) {
	const secret = "sk_live_9f8A7b6C5d4E"
	tk := NewTask("summarise my dashboard, then look up kettles on shop.example", nil)
	tk.Read("https://dash.example.com/keys", "API key "+secret+" created; visit https://partner.example.net/welcome?ref=ABCD1234efgh; order 48213377")
	for _, c := range []struct {
		name, text, dest string
		leak             bool
	}{
		{"in a URL to another site", "https://evil.example.org/?k=" + secret, "https://evil.example.org/?k=" + secret, true},
		{"escaped in a URL", "https://evil.example.org/?k=sk%5Flive%5F9f8A7b6C5d4E", "https://evil.example.org/", true},
		{"typed into another site", "my key is " + secret, "https://evil.example.org/form", true},
		// a secret is held to its origin: another host of its site is another origin
		{"a secret to another host of its site", "search " + secret, "https://www.example.com/search", true},
		{"a secret back on its own origin", "search " + secret, "https://dash.example.com/search", false},
		{"an order number to another host of its site", "order 48213377", "https://www.example.com/search", false},
		{"the page's own link to its partner", "https://partner.example.net/welcome?ref=ABCD1234efgh", "https://partner.example.net/welcome?ref=ABCD1234efgh", false},
		{"common words", "kettle", "https://evil.example.org/?q=kettle", false},
	} {
		got := tk.Leaks(c.text, c.dest)
		if (len(got) > 0) != c.leak {
			t.Errorf("%s: leaks %v, want leak %v", c.name, got, c.leak)
		}
	}
	// the person's own words hold the value: it is theirs to send
	own := NewTask("send "+secret+" to evil.example.org", nil)
	own.Read("https://dash.example.com/keys", secret)
	if got := own.Leaks(secret, "https://evil.example.org/"); len(got) != 0 {
		t.Errorf("the person's own value: %v", got)
	}
}

func TestTaskReadsBounded(t *testing.T) {
	tk := NewTask("", nil)
	for i := range maxReads + 100 {
		tk.Read("https://a.example.com/", strings.Repeat("x", 4)+strings.Repeat("9", 4)+string(rune('a'+i%26))+itoa(i))
	}
	if n := len(tk.reads.order); n != maxReads || len(tk.reads.by) != maxReads {
		t.Errorf("%d values kept (%d in the map), want %d", n, len(tk.reads.by), maxReads)
	}
}

func itoa(i int) string {
	var b []byte
	for {
		b = append([]byte{byte('0' + i%10)}, b...)
		if i /= 10; i == 0 {
			return string(b)
		}
	}
}

func TestBoundary(t *testing.T) {
	g := New(Options{UserHome: t.TempDir()})
	const secret = "sk_live_9f8A7b6C5d4E"
	start := "https://dash.example.com/home"
	newTask := func(words string) *Task {
		tk := NewTask(words, []string{"docs.standing.example"})
		tk.Begin(start)
		tk.Read(start, "Your key "+secret)
		return tk
	}
	nav := func(u string) Proposal {
		return Proposal{Action: Action{Kind: "navigate", URL: u}, URL: start}
	}
	typ := func(page, text string) Proposal {
		return Proposal{Action: Action{Kind: "type", Text: text}, Element: &Element{Ref: "e1", Role: "textbox", Tag: "input", Type: "text"}, URL: page}
	}
	for _, c := range []struct {
		name   string
		words  string
		p      Proposal
		reason string // "" for allowed
	}{
		{"same site", "", nav("https://www.example.com/settings"), ""},
		{"a link's path on the same site", "", nav("https://dash.example.com/reports?page=2"), ""},
		{"search on the same site", "", nav("https://dash.example.com/search?q=delete+account"), ""},
		{"standing list", "", nav("https://standing.example/docs"), ""},
		{"named by the person", "look it up on wiki.example.org", nav("https://en.wiki.example.org/x"), ""},
		{"another site", "", nav("https://evil.example.org/"), ReasonSite},
		{"the secret in a URL", "", nav("https://evil.example.org/?k=" + secret), ReasonDataFlow},
		{"the secret to a named site", "use evil.example.org", nav("https://evil.example.org/?k=" + secret), ReasonDataFlow},
		{"a GET that deletes", "", nav("https://dash.example.com/account/delete?confirm=1"), ReasonDeletion},
		{"a GET the person named", "open https://dash.example.com/account/delete?confirm=1", nav("https://dash.example.com/account/delete?confirm=1"), ""},
		// the person's word is not the person's URL: "delete the spam" approves no GET that deletes
		{"a GET whose word the person said", "delete the spam mail", nav("https://dash.example.com/account/delete?confirm=1"), ReasonDeletion},
		{"a GET that pays", "", nav("https://dash.example.com/cart/checkout?pay=now"), ReasonPayment},
		{"typing on the task's site", "", typ("https://dash.example.com/search", "kettle"), ""},
		{"typing on another site", "", typ("https://evil.example.org/form", "hello"), ReasonSite},
		{"typing the secret on a named site", "post on evil.example.org", typ("https://evil.example.org/form", secret), ReasonDataFlow},
		{"typing the secret on its own site", "", typ("https://dash.example.com/form", secret), ""},
		{"typing the secret into another site's frame", "", func() Proposal {
			p := typ("https://dash.example.com/form", secret)
			p.Element.URL = "https://ads.evil.example.org/frame.html"
			return p
		}(), ReasonDataFlow},
		// what a frame receives its own document receives: another site's widget is that site
		{"typing into a frame of another site the page embeds", "", func() Proposal {
			p := typ("https://dash.example.com/form", "hello")
			p.Element.URL = "https://widgets.example.net/frame.html"
			return p
		}(), ReasonSite},
		{"typing into a frame of the page's own site", "", func() Proposal {
			p := typ("https://dash.example.com/form", "hello")
			p.Element.URL = "https://widgets.example.com/frame.html"
			return p
		}(), ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := Request{Goal: c.words, Task: newTask(c.words), Grants: NewGrants()}
			d := g.Check(c.p, r)
			if c.reason == "" {
				if d.Verdict != Allow {
					t.Fatalf("asked: %s (%s)", d.Prompt(), d.Reason)
				}
				return
			}
			if d.Verdict != Confirm || d.Reason != c.reason {
				t.Fatalf("got %s %q (%s), want confirm for %q", d.Verdict, d.Reason, d.Prompt(), c.reason)
			}
			// the person's yes lets that one step run; a site they approved joins the task
			r.Grants.Approve(d)
			if d2 := g.Check(c.p, r); d2.Verdict != Allow || !d2.Approved {
				t.Fatalf("approved step: %s", d2.Verdict)
			}
			if c.reason == ReasonSite {
				if d3 := g.Check(c.p, r); d3.Verdict != Allow {
					t.Errorf("the approved site did not join the task: %s %s", d3.Verdict, d3.Prompt())
				}
			}
		})
	}
	// a caller's own action is not judged
	if d := g.Check(nav("https://evil.example.org/"), Request{Who: Caller, Task: newTask("")}); d.Verdict != Allow {
		t.Errorf("caller's navigate: %s", d.Verdict)
	}
}

func TestUploadHardLink(t *testing.T) {
	home := t.TempDir()
	dot := filepath.Join(home, ".ssh")
	if err := os.Mkdir(dot, 0o700); err != nil {
		t.Fatal(err)
	}
	key := filepath.Join(dot, "id_ed25519")
	if err := os.WriteFile(key, []byte("private"), 0o600); err != nil {
		t.Fatal(err)
	}
	docs := filepath.Join(home, "Documents")
	if err := os.Mkdir(docs, 0o700); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(docs, "resume.pdf")
	if err := os.Link(key, link); err != nil {
		t.Skip("no hard links here:", err)
	}
	plain := filepath.Join(docs, "cv.pdf")
	if err := os.WriteFile(plain, []byte("cv"), 0o600); err != nil {
		t.Fatal(err)
	}
	g := New(Options{UserHome: home, UploadDirs: []string{docs}})
	up := func(f string) Decision {
		return g.Check(Proposal{Action: Action{Kind: "upload", Files: []string{f}}, Element: &Element{Ref: "e1"}}, Request{Goal: "upload " + f})
	}
	if d := up(link); d.Verdict != Block || !strings.Contains(d.Detail, key) {
		t.Errorf("hard link to the private key: %s %s", d.Verdict, d.Prompt())
	}
	if d := up(plain); d.Verdict != Allow {
		t.Errorf("a plain file in the upload folder: %s %s", d.Verdict, d.Prompt())
	}
	// a file with another name the search cannot find is asked about, even in the upload folder
	outside := filepath.Join(t.TempDir(), "elsewhere")
	if err := os.Link(plain, outside); err != nil {
		t.Fatal(err)
	}
	if d := up(plain); d.Verdict != Confirm {
		t.Errorf("a file with an unknown other name: %s %s", d.Verdict, d.Prompt())
	}
}
