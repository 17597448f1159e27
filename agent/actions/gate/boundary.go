package gate

import (
	"fmt"
	"net/url"
	"strings"
)

// Reasons of the boundary's decisions.
const (
	// ReasonSite is going to, or typing into, a site outside the task's.
	ReasonSite = "a site outside the task"
	// ReasonDataFlow is a value read on one site carried to another.
	ReasonDataFlow = "data leaving for another site"
)

// searchParams are query parameters that carry a search's words: what they say is looked
// for, not done.
var searchParams = map[string]bool{"q": true, "query": true, "search": true, "s": true, "k": true, "p": true,
	"term": true, "terms": true, "keyword": true, "keywords": true, "text": true, "wd": true, "search_query": true}

// boundary judges p against the task's boundary (r.Task): a value read on another site
// carried out, a site outside the task, and a URL whose words do something (a GET that
// deletes). The zero Decision when p stays inside.
func (g *Gate) boundary(p Proposal, r Request) Decision {
	a, t := p.Action, r.Task
	t.Begin(p.URL)
	switch a.Kind {
	case "navigate", "open":
		if a.URL == "" {
			return Decision{}
		}
		if d := g.actionURL(a.URL, r.Goal); d.Level != None {
			return d
		}
		if t == nil {
			return Decision{}
		}
		// a URL goes to its own site and on to every site a URL inside it names (a
		// redirector's ?to=, a login's ?next=): each is a destination of what it carries
		for _, dest := range append([]string{a.URL}, nestedURLs(a.URL, 3)...) {
			if d := leakDecision(t.Leaks(a.URL, dest), dest); d.Level != None {
				return d
			}
			if !t.Has(dest) {
				return Decision{Level: Grave, Reason: ReasonSite,
					Detail: fmt.Sprintf("%s is not one of the task's sites (%s)", SiteOf(dest), siteList(t))}
			}
		}
	case "type", "upload":
		if t == nil {
			return Decision{}
		}
		if a.Kind == "type" {
			// what is typed goes to the field's own document: a frame of another site the page
			// embeds (an ad, a widget) is another site for the values the task read
			dest := destination(p)
			if d := leakDecision(t.Leaks(a.Text, dest), dest); d.Level != None {
				return d
			}
		}
		// the page chose the frames it embeds: typing into one is typing on the page's site
		if !t.Has(p.URL) {
			verb := "typing into"
			if a.Kind == "upload" {
				verb = "uploading to"
			}
			return Decision{Level: Grave, Reason: ReasonSite,
				Detail: fmt.Sprintf("%s a page of %s, not one of the task's sites (%s)", verb, SiteOf(p.URL), siteList(t))}
		}
	}
	return Decision{}
}

// approvedBoundary records what the person's yes to d, a boundary decision on p, lets the task
// do from now on: a site they approved going to or typing into joins the task's sites.
func approvedBoundary(d Decision, p Proposal, t *Task) {
	if d.Reason != ReasonSite || t == nil {
		return
	}
	if p.Action.URL != "" {
		t.Allow(p.Action.URL)
	} else {
		t.Allow(p.URL)
	}
}

// destination is where p sends what it carries: a navigation's URL, else the acted-on
// element's own document (a frame's), else the page.
func destination(p Proposal) string {
	switch {
	case p.Action.URL != "":
		return p.Action.URL
	case p.Element != nil && SiteOf(p.Element.URL) != "":
		return p.Element.URL
	}
	return p.URL
}

func leakDecision(leaks []Leak, dest string) Decision {
	if len(leaks) == 0 {
		return Decision{}
	}
	l := leaks[0]
	from := make([]string, len(l.From))
	for i, s := range l.From {
		from[i] = string(s)
	}
	return Decision{Level: Grave, Reason: ReasonDataFlow,
		Detail: fmt.Sprintf("it carries %s, read on %s, to %s", maskValue(l.Value), strings.Join(from, ", "), SiteOf(dest))}
}

// maskValue shows enough of a value for the person to recognise it, not the whole of it.
func maskValue(v string) string {
	r := []rune(v)
	if len(r) <= 8 {
		return fmt.Sprintf("%q", string(r[:min(2, len(r))])+"…")
	}
	return fmt.Sprintf("%q", string(r[:4])+"…"+string(r[len(r)-2:]))
}

func siteList(t *Task) string {
	sites := t.Sites()
	if len(sites) == 0 {
		return "none yet"
	}
	parts := make([]string, 0, len(sites))
	for i, s := range sites {
		if i == 8 {
			parts = append(parts, "…")
			break
		}
		parts = append(parts, string(s))
	}
	return strings.Join(parts, ", ")
}

// actionURL judges the words of a URL to open (its path, its query's names and the values
// that are not a search's words): a GET that deletes or pays does so whoever opens it. A URL
// the person's own words hold is theirs.
func (g *Gate) actionURL(raw, goal string) Decision {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return Decision{}
	}
	if goal != "" && (strings.Contains(goal, raw) || u.Path != "" && u.Path != "/" && strings.Contains(goal, u.Path)) {
		return Decision{}
	}
	var words []string
	path := u.EscapedPath()
	if p, err := url.PathUnescape(path); err == nil {
		path = p
	}
	words = append(words, urlWords(path))
	for k, vs := range u.Query() {
		words = append(words, urlWords(k))
		if !searchParams[strings.ToLower(k)] {
			for _, v := range vs {
				words = append(words, urlWords(v))
			}
		}
	}
	text := Fold(strings.Join(words, " "))
	h := g.vocab.actionHit(text, false)
	if h.level != Grave {
		return Decision{}
	}
	return Decision{Level: Grave, Reason: h.reason,
		Detail: fmt.Sprintf("the URL says %q: opening it may do that", h.word)}
}

// urlWords splits a URL's part into words at its punctuation ("/account/delete-now" is
// "account delete now"; camelCase stays one word).
func urlWords(s string) string {
	return strings.Join(strings.FieldsFunc(s, func(r rune) bool {
		return r == '/' || r == '-' || r == '_' || r == '.' || r == '=' || r == '&' || r == '+' || r == '?' || r == '#' || r == ',' || r == ';' || r == ':'
	}), " ")
}

// nestedURLs returns the absolute URLs raw carries in its query values and fragment, and
// theirs, depth levels down: where a redirector on the task's own site sends the browser on.
func nestedURLs(raw string, depth int) []string {
	u, err := url.Parse(raw)
	if err != nil || depth == 0 {
		return nil
	}
	var vals []string
	for _, vs := range u.Query() {
		vals = append(vals, vs...)
	}
	if f, err := url.QueryUnescape(u.Fragment); err == nil && f != "" {
		vals = append(vals, f)
		if q, err := url.ParseQuery(f); err == nil {
			for _, vs := range q {
				vals = append(vals, vs...)
			}
		}
	}
	var out []string
	for _, v := range vals {
		v = strings.TrimSpace(v)
		if strings.HasPrefix(v, "//") {
			v = u.Scheme + ":" + v
		}
		if SiteOf(v) == "" {
			continue
		}
		out = append(out, v)
		out = append(out, nestedURLs(v, depth-1)...)
	}
	return out
}
