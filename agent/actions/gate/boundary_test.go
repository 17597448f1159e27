package gate

import (
	"context"
	"errors"
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

// TestKnownHosts: a page the agent opens by itself is judged by its host too. Tenants of a
// domain no list names (acme.myshop.example, evil.myshop.example) are told apart; the site's
// own domain, its www host, the hosts the task has been on and their subdomains stay inside;
// acting on a page and the history stay judged by site.
func TestKnownHosts(t *testing.T) {
	g := New(Options{UserHome: t.TempDir()})
	const start = "https://acme.myshop.net/dashboard"
	nav := func(kind, u string) Proposal { return Proposal{Action: Action{Kind: kind, URL: u}, URL: start} }
	typ := func(page string) Proposal {
		return Proposal{Action: Action{Kind: "type", Text: "hello"}, Element: &Element{Ref: "e1", Role: "textbox", Tag: "input", URL: page}, URL: page}
	}
	for _, c := range []struct {
		name, words string
		standing    []string
		visited     []string
		p           Proposal
		reason      string // "" for allowed
	}{
		{"the same host", "", nil, nil, nav("navigate", "https://acme.myshop.net/orders?page=2"), ""},
		{"the same host over http", "", nil, nil, nav("navigate", "http://acme.myshop.net/orders"), ""},
		{"another tenant of an unlisted domain", "", nil, nil, nav("navigate", "https://evil.myshop.net/"), ReasonHost},
		{"another tenant in a new tab", "", nil, nil, nav("open", "https://evil.myshop.net/x"), ReasonHost},
		{"another tenant, its port", "", nil, nil, nav("navigate", "https://acme.myshop.net:8443/"), ReasonSite},
		{"the domain's own host", "", nil, nil, nav("navigate", "https://myshop.net/help"), ""},
		{"the domain's www host", "", nil, nil, nav("navigate", "https://www.myshop.net/help"), ""},
		{"under the task's host", "", nil, nil, nav("navigate", "https://docs.acme.myshop.net/api"), ""},
		{"a look-alike tenant", "", nil, nil, nav("navigate", "https://acme-myshop.myshop.net/"), ReasonHost},
		{"a host the task has been on (a redirect took it there)", "", nil, []string{"https://login.myshop.net/sso"}, nav("navigate", "https://login.myshop.net/sso?again"), ""},
		{"a host the person named", "then check status.myshop.net", nil, nil, nav("navigate", "https://status.myshop.net/"), ""},
		{"naming one tenant names no other", "compare with beta.myshop.net", nil, nil, nav("navigate", "https://evil.myshop.net/"), ReasonHost},
		{"the person named the domain", "look around myshop.net", nil, nil, nav("navigate", "https://evil.myshop.net/"), ""},
		{"the standing list names the site", "", []string{"*.myshop.net"}, nil, nav("navigate", "https://evil.myshop.net/"), ""},
		{"going back is judged by site", "", nil, nil, nav("back", "https://evil.myshop.net/"), ""},
		{"typing on a page of another host of the site", "", nil, nil, typ("https://login.myshop.net/sso"), ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			tk := NewTask(c.words, c.standing)
			tk.Begin(start)
			for _, v := range c.visited {
				tk.Begin(v)
			}
			r := Request{Goal: c.words, Task: tk, Grants: NewGrants()}
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
			// the person's yes admits that page, not the host: another page of it asks again
			r.Grants.Approve(d)
			if d2 := g.Check(c.p, r); d2.Verdict != Allow || !d2.Approved {
				t.Fatalf("approved step: %s", d2.Verdict)
			}
			if d3 := g.Check(c.p, r); d3.Verdict != Allow {
				t.Errorf("the approved page did not join the task: %s %s", d3.Verdict, d3.Prompt())
			}
			other := c.p
			other.Action.URL += "/../admin/users"
			if d4 := g.Check(other, r); d4.Verdict != Confirm {
				t.Errorf("another page of the approved one's host: %s", d4.Verdict)
			}
		})
	}
}

// TestNewOriginCritic: opening a page of a site or host new to the task that carries nothing
// the task read goes to the critic (which sees the person's words and the destination) instead
// of the person; with no critic, no person's words, a value carried or a redirector, it asks.
func TestNewOriginCritic(t *testing.T) {
	const start, key = "https://acme.myshop.net/keys", "sk_live_9f8A7b6C5d4E"
	nav := func(kind, u string) Proposal { return Proposal{Action: Action{Kind: kind, URL: u}, URL: start} }
	allow := func(Review) (CriticVerdict, error) { return CriticVerdict{Reason: "part of the task"}, nil }
	for _, c := range []struct {
		name     string
		p        Proposal
		goal     string
		critic   func(Review) (CriticVerdict, error) // nil: none configured
		want     Verdict
		reviewed bool
		reason   string
	}{
		{"another site, the critic allows", nav("navigate", "https://docs.other.org/api"), "find the API reference", allow, Allow, true, ""},
		{"another site in a new tab, the critic allows", nav("open", "https://docs.other.org/api"), "find the API reference", allow, Allow, true, ""},
		{"another tenant, the critic allows", nav("navigate", "https://docs.myshop.net/api"), "find the API reference", allow, Allow, true, ""},
		{"the critic asks", nav("navigate", "https://evil.myshop.net/x"), "summarise this page", askIf("evil.myshop.net"), Confirm, true, ReasonCritic},
		{"no critic: the rules ask", nav("navigate", "https://docs.other.org/api"), "find the API reference", nil, Confirm, false, ReasonSite},
		{"no model now: the rules ask", nav("navigate", "https://docs.other.org/api"), "find the API reference", func(Review) (CriticVerdict, error) { return CriticVerdict{}, ErrNoCritic }, Confirm, true, ReasonSite},
		{"no person's words: the rules ask", nav("navigate", "https://docs.other.org/api"), "", allow, Confirm, false, ReasonSite},
		{"a value read carried: the rules ask", nav("navigate", "https://docs.other.org/api?k="+key), "find the API reference", allow, Confirm, false, ReasonDataFlow},
		{"a redirector to another site: the rules ask", nav("navigate", "https://acme.myshop.net/out?to=https://docs.other.org/api"), "find the API reference", allow, Confirm, false, ReasonSite},
		{"a URL that deletes: the rules ask", nav("navigate", "https://docs.other.org/account/delete?all=1"), "find the API reference", allow, Confirm, false, ReasonDeletion},
		{"a host the gate cannot read: the rules ask", nav("navigate", "https://docs_other.org/api"), "find the API reference", allow, Confirm, false, ReasonSite},
		{"going back to another site: the rules ask", nav("back", "https://docs.other.org/api"), "find the API reference", allow, Confirm, false, ReasonSite},
	} {
		t.Run(c.name, func(t *testing.T) {
			opts := Options{UserHome: t.TempDir()}
			s := &scripted{answer: c.critic}
			if c.critic != nil {
				opts.Critic = s
			}
			g := New(opts)
			tk := NewTask(c.goal, nil)
			tk.Begin(start)
			tk.Read(start, "Your key "+key)
			_, err := g.CheckAll(context.Background(), []Proposal{c.p}, Request{Goal: c.goal, Task: tk, Grants: NewGrants()}, nil)
			got, reason := Allow, ""
			var ce *ConfirmError
			switch {
			case errors.As(err, &ce):
				got, reason = Confirm, ce.Decision.Reason
			case err != nil:
				got = Block
			}
			if got != c.want || reason != c.reason {
				t.Errorf("verdict %v %q, want %v %q (%v)", got, reason, c.want, c.reason, err)
			}
			if (len(s.asked) > 0) != c.reviewed {
				t.Errorf("reviewed=%v, want %v", len(s.asked) > 0, c.reviewed)
			}
			for _, r := range s.asked {
				if r.Destination != c.p.Action.URL || r.DestinationSite != string(SiteOf(c.p.Action.URL)) {
					t.Errorf("the critic was not shown the destination: %q (%q)", r.Destination, r.DestinationSite)
				}
			}
		})
	}
}

// TestUnreadableLink: a link named in a script the gate's words are not written in asks as a
// button so named does, with the rules alone; a critic reads it instead.
func TestUnreadableLink(t *testing.T) {
	link := func(name string) Proposal {
		return Proposal{Action: Action{Kind: "click"}, URL: "https://mail.example.com/",
			Element: &Element{Ref: "e4", Role: "link", Tag: "a", Name: name, Text: name, URL: "https://mail.example.com/"}}
	}
	for _, c := range []struct {
		name   string
		p      Proposal
		critic func(Review) (CriticVerdict, error)
		want   Verdict
	}{
		{"Tamil, the rules alone", link("கணக்கை நீக்கு"), nil, Confirm},
		{"Greek, the rules alone", link("Προβολή προφίλ"), nil, Confirm},
		{"a link in a script the gate reads", link("Следующая страница"), nil, Allow},
		{"a link in Latin letters", link("Ukurasa unaofuata"), nil, Allow},
		{"Greek, the critic allows", link("Προβολή προφίλ"), askIf("nothing"), Allow},
		{"Tamil, the critic asks", link("கணக்கை நீக்கு"), askIf("நீக்கு"), Confirm},
	} {
		t.Run(c.name, func(t *testing.T) {
			opts := Options{UserHome: t.TempDir()}
			if c.critic != nil {
				opts.Critic = &scripted{answer: c.critic}
			}
			_, err := New(opts).CheckAll(context.Background(), []Proposal{c.p}, Request{Goal: "open the next page"}, nil)
			got := Allow
			if errors.Is(err, ErrConfirm) {
				got = Confirm
			} else if err != nil {
				got = Block
			}
			if got != c.want {
				t.Errorf("verdict %v, want %v (%v)", got, c.want, err)
			}
		})
	}
}

// FuzzKnown: judging a URL host by host never admits what the site rule keeps out (Known
// implies Has), and no URL panics it.
func FuzzKnown(f *testing.F) {
	for _, s := range []string{"https://evil.myshop.net/", "http://www.myshop.net:8080/x", "https://[::1]:9/", "https://a.b.acme.myshop.net/", "about:blank", "https://ev\u00adil.myshop.net", "http://127.0.0.1:5/", "file:///x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		tk := NewTask("compare with beta.myshop.net", nil)
		tk.Begin("https://acme.myshop.net:8443/home")
		tk.Begin(raw)
		if tk.Known(raw) && !tk.Has(raw) {
			t.Fatalf("Known(%q) but not Has", raw)
		}
	})
}

// TestLinkNewOriginCritic: following a link to a page of another site is opening that page: a
// critic judges it where the link's address carries nothing the task read; the rules ask
// otherwise.
func TestLinkNewOriginCritic(t *testing.T) {
	const start, key = "https://shop.example.com/help", "sk_live_9f8A7b6C5d4E"
	link := func(href string) Proposal {
		return Proposal{Action: Action{Kind: "click"}, URL: start,
			Element: &Element{Ref: "e2", Role: "link", Tag: "a", Name: "API reference", Text: "API reference", URL: start, Href: href}}
	}
	allow := func(Review) (CriticVerdict, error) { return CriticVerdict{Reason: "part of the task"}, nil }
	for _, c := range []struct {
		name     string
		p        Proposal
		critic   func(Review) (CriticVerdict, error)
		want     Verdict
		reviewed bool
	}{
		{"the critic allows", link("https://docs.other.org/api"), allow, Allow, true},
		{"the critic asks", link("https://docs.other.org/api"), askIf("docs.other.org"), Confirm, true},
		{"no critic: the rules ask", link("https://docs.other.org/api"), nil, Confirm, false},
		{"a value read in its address: the rules ask", link("https://docs.other.org/api?k=" + key), allow, Confirm, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			opts := Options{UserHome: t.TempDir()}
			s := &scripted{answer: c.critic}
			if c.critic != nil {
				opts.Critic = s
			}
			tk := NewTask("find the API reference", nil)
			tk.Begin(start)
			tk.Read("https://dash.example.net/keys", "Your key "+key)
			_, err := New(opts).CheckAll(context.Background(), []Proposal{c.p}, Request{Goal: "find the API reference", Task: tk, Grants: NewGrants()}, nil)
			got := Allow
			if errors.Is(err, ErrConfirm) {
				got = Confirm
			} else if err != nil {
				got = Block
			}
			if got != c.want {
				t.Errorf("verdict %v, want %v (%v)", got, c.want, err)
			}
			if (len(s.asked) > 0) != c.reviewed {
				t.Errorf("reviewed=%v, want %v", len(s.asked) > 0, c.reviewed)
			}
		})
	}
}
