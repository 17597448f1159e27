package gate

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
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

// Complete mediation. Every action kind of every door passes one entry, boundary, which
// judges it at the documents that receive it (receivers): the page a navigation or history
// step loads; the element's own document (a frame's); where a submit control's form sends;
// the frame a key goes to; the tab's page. Each receiver must be inside the task (see
// Task.Has) and what the step carries there (a URL, typed text, keys pressed one by one, a
// prompt's answer) must hold no value read elsewhere (Task.Leaks). boundaryRules names each
// kind's rule; a kind without one is judged as input (fail closed).

// rule is how the boundary judges one action kind.
type rule int

const (
	// ruleRead: the kind reads or moves the view only (its results are recorded as read);
	// nothing it does reaches a page's handlers with the task's values.
	ruleRead rule = iota + 1
	// ruleGo: the kind loads a URL (Action.URL): its site, what it carries, what its words do.
	ruleGo
	// ruleInput: the kind acts on the page's elements: every receiver inside the task, and what
	// it carries (typed text, pressed keys, a prompt's answer) stays on its own sites.
	ruleInput
)

// boundaryRules are the rules of every action kind the action service defines (the gate's
// kinds: a fill is judged field by field as type, select and check).
var boundaryRules = map[string]rule{
	"snapshot": ruleRead, "search": ruleRead, "extract": ruleRead, "screenshot": ruleRead, "pdf": ruleRead,
	"console": ruleRead, "errors": ruleRead, "network": ruleRead, "downloads": ruleRead, "tabs": ruleRead,
	"wait": ruleRead, "scroll": ruleRead, "resize": ruleRead,
	// switching tabs only brings one to the front: the next action there is judged there
	"focus": ruleRead,

	"navigate": ruleGo, "open": ruleGo, "back": ruleGo, "forward": ruleGo, "reload": ruleGo,

	"click": ruleInput, "press": ruleInput, "type": ruleInput, "fill": ruleInput, "select": ruleInput,
	"check": ruleInput, "drag": ruleInput, "upload": ruleInput, "dialog": ruleInput, "hover": ruleInput,
	"evaluate": ruleInput, "close": ruleInput,
}

// BoundaryRule reports whether the boundary has a rule of its own for action kind (kinds
// without one are judged as input).
func BoundaryRule(kind string) bool { return boundaryRules[kind] != 0 }

// ReasonResubmit is going back to, or reloading, a page that was a form's POST.
const ReasonResubmit = "sending a form again"

// boundary judges p against the task's boundary (r.Task): a value read on another site
// carried out, a site outside the task, a URL whose words do something (a GET that deletes), a
// form sent again. The zero Decision when p stays inside.
func (g *Gate) boundary(p Proposal, r Request) Decision {
	a, t := p.Action, r.Task
	t.Begin(p.URL)
	switch boundaryRules[a.Kind] {
	case ruleRead:
		return Decision{}
	case ruleGo:
		if a.Resubmits {
			return Decision{Level: Grave, Reason: ReasonResubmit,
				Detail: fmt.Sprintf("the page %s was loaded by sending a form: loading it again sends the form again", clip(a.URL, 120))}
		}
		if a.URL == "" {
			return Decision{}
		}
		if a.Kind == "navigate" || a.Kind == "open" {
			if d := g.actionURL(a.URL, r.Goal); d.Level != None {
				return d
			}
		}
		if t == nil {
			return Decision{}
		}
		// a URL goes to its own site and on to every site a URL inside it names (a
		// redirector's ?to=, a login's ?next=): each is a destination of what it carries
		dests := append([]string{a.URL}, nestedURLs(a.URL, 3)...)
		for _, dest := range dests {
			if d := leakDecision(urlLeaks(t, a.URL, dest), dest); d.Level != None {
				return d
			}
		}
		opens := a.Kind == "navigate" || a.Kind == "open"
		for i, dest := range dests {
			var d Decision
			switch {
			case !t.Has(dest):
				d = outside("going to", dest, t)
			case opens && !t.Known(dest):
				d = newHost(dest, t)
			default:
				continue
			}
			// the page it opens is the only place it goes and it carries nothing the task
			// read: a critic, which sees the person's words and the destination, judges it
			d.newOrigin = opens && i == 0 && webURL(dest) && allKnown(dests[1:], t)
			return d
		}
		return Decision{}
	}
	// ruleInput, and any kind without a rule
	if t == nil || a.Kind == "dialog" && !a.Accept {
		return Decision{} // dismissing a dialog changes nothing and may be the only way off a page
	}
	recv := receivers(p)
	for _, c := range carried(p, t, recv) {
		leaks := t.Leaks(c.text, c.dest)
		if c.search {
			leaks = t.SecretLeaks(c.text, c.dest)
		}
		if d := leakDecision(leaks, c.dest); d.Level != None {
			if a.Kind == "press" {
				t.forgetPressed(c.dest) // judged: the next key starts afresh
			}
			return d
		}
	}
	for _, dest := range recv {
		if !t.Has(dest) {
			if ownWordsIntoFrame(p, t, dest) {
				continue
			}
			verb := verbOf(a.Kind)
			if el := p.Element; el != nil && dest != el.URL && dest != p.URL && sends(el, a) && formTarget(el, p.URL) == dest {
				verb = "sending its form to"
			}
			link := p.Element != nil && a.Kind == "click" && p.Element.Href == dest
			if link {
				verb = "following a link to"
			}
			d := outside(verb, dest, t)
			// following a link to a page new to the task is opening that page: where it is the
			// only place outside the task the click reaches and its address carries nothing the
			// task read, a critic judges it
			d.newOrigin = link && webURL(dest) && len(t.Leaks(dest, dest)) == 0 && onlyOutside(recv, dest, t)
			return d
		}
	}
	return Decision{}
}

// onlyOutside reports whether dest is the only one of recv outside the task.
func onlyOutside(recv []string, dest string, t *Task) bool {
	for _, r := range recv {
		if r != dest && !t.Has(r) {
			return false
		}
	}
	return true
}

// ownWordsIntoFrame reports whether p types the person's own words into a frame that a page of
// the task embeds (dest is the field's own document), sending no form: words the person gave may
// go wherever the page they work in asks for them; values read elsewhere are the data-flow
// check's (above), and a form sent to another site is still judged.
func ownWordsIntoFrame(p Proposal, t *Task, dest string) bool {
	el, a := p.Element, p.Action
	if el == nil || a.Kind != "type" || a.Text == "" || dest != el.URL || dest == p.URL || !t.Has(p.URL) || sends(el, a) {
		return false
	}
	n := normal(a.Text)
	return n != "" && strings.Contains(t.normWords, n)
}

// ReasonHost is opening a host of one of the task's sites that the task has not been on.
const ReasonHost = "a new host of the task's site"

// newHost is the decision on opening dest, a page of a host of the task's sites that the task
// has not been on and the person did not name (see Task.Known).
func newHost(dest string, t *Task) Decision {
	host := dest
	if u, err := url.Parse(strings.TrimSpace(dest)); err == nil {
		host = hostOf(u)
	}
	return Decision{Level: Grave, Reason: ReasonHost,
		Detail: fmt.Sprintf("going to %s, a host of %s the task has not been on: another owner's tenant may live there", host, SiteOf(dest))}
}

// allKnown reports whether every URL of dests is inside the task host by host (Task.Known).
func allKnown(dests []string, t *Task) bool {
	for _, d := range dests {
		if !t.Known(d) {
			return false
		}
	}
	return true
}

// webURL reports whether raw is an http or https URL with a site.
func webURL(raw string) bool {
	u, err := url.Parse(strings.TrimSpace(raw))
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && siteOfURL(u) != ""
}

func outside(verb, dest string, t *Task) Decision {
	site := string(SiteOf(dest))
	if site == "" {
		site = fmt.Sprintf("%q, whose site cannot be told", clip(dest, 120))
	}
	return Decision{Level: Grave, Reason: ReasonSite,
		Detail: fmt.Sprintf("%s a page of %s, not one of the task's sites (%s)", verb, site, siteList(t))}
}

func verbOf(kind string) string {
	switch kind {
	case "type", "fill", "press":
		return "typing into"
	case "upload":
		return "uploading to"
	case "close":
		return "closing"
	case "evaluate":
		return "running a script on"
	}
	return "acting on"
}

// urlLeaks are the values the URL raw carries to dest: a search's words (searchParams) only
// when secret, everything else whatever it is.
func urlLeaks(t *Task, raw, dest string) []Leak {
	u, err := url.Parse(raw)
	if err != nil {
		return t.Leaks(raw, dest)
	}
	q := u.Query()
	var search []string
	for k, vs := range q {
		if searchParams[strings.ToLower(k)] {
			search = append(search, vs...)
			delete(q, k)
		}
	}
	if len(search) == 0 {
		return t.Leaks(raw, dest)
	}
	rest := *u
	rest.RawQuery = q.Encode()
	if l := t.Leaks(rest.String(), dest); len(l) > 0 {
		return l
	}
	return t.SecretLeaks(strings.Join(search, " "), dest)
}

// receivers are the documents that receive p (absolute URLs, deduplicated): the tab's page, the
// element's own document and its drop target's, where a submit control's form (or Enter in a
// field) sends, and p.Receiver. A document that goes nowhere (about:srcdoc, about:blank) is
// its page's.
func receivers(p Proposal) []string {
	var out []string
	add := func(u string) {
		if nowhere(u) || slices.Contains(out, u) {
			return
		}
		out = append(out, u)
	}
	add(p.URL)
	add(p.Receiver)
	for _, el := range []*Element{p.Element, p.Target} {
		if el == nil {
			continue
		}
		add(el.URL)
		if sends(el, p.Action) {
			add(formTarget(el, p.URL))
		}
		if p.Action.Kind == "click" && el.Href != "" {
			add(el.Href) // a link's click loads its href
		}
	}
	return out
}

// sends reports whether a acts on el so that its form sends: a click on a submit control, Enter
// in a field of a form, a type that ends in Enter.
func sends(el *Element, a Action) bool {
	if el.FormAction == "" {
		return false
	}
	switch a.Kind {
	case "click":
		return el.Type == "submit" || el.Type == "image" || (el.Tag == "button" && el.Type == "")
	case "press":
		return isEnter(a.Key)
	case "type":
		return a.Submit || strings.ContainsAny(a.Text, "\r\n")
	}
	return false
}

// formTarget is the absolute URL el's form sends to (its FormAction against its document).
func formTarget(el *Element, page string) string {
	base := el.URL
	if nowhere(base) {
		base = page
	}
	b, err := url.Parse(base)
	if err != nil {
		return el.FormAction // unreadable: Has fails closed on it
	}
	f, err := url.Parse(strings.TrimSpace(el.FormAction))
	if err != nil {
		return el.FormAction
	}
	return b.ResolveReference(f).String()
}

// carry is text a step carries to a document.
type carry struct {
	text, dest string
	// search marks a search's words: only secrets count
	search bool
}

// carried is what p carries to which of its receivers recv: typed text to the field's document
// and where its form sends, keys pressed one by one to the document they go to, a prompt's
// answer to the page, a script's text to the page and to every URL it names.
func carried(p Proposal, t *Task, recv []string) []carry {
	a, el := p.Action, p.Element
	doc := p.URL
	if p.Receiver != "" {
		doc = p.Receiver
	} else if el != nil && !nowhere(el.URL) {
		doc = el.URL
	}
	var out []carry
	switch a.Kind {
	case "type":
		// a search's words say what is looked for: only secrets count there
		search := el != nil && (searchField(el) || containsWord(Fold(urlWords(el.FormAction)), "search"))
		out = append(out, carry{a.Text, doc, search})
		if el != nil && el.FormAction != "" {
			out = append(out, carry{a.Text, formTarget(el, p.URL), search})
		}
	case "press":
		if k := printableKey(a); k != "" {
			typed := t.Pressed(doc, k)
			out = append(out, carry{text: typed, dest: doc})
			if el != nil && el.FormAction != "" {
				out = append(out, carry{text: typed, dest: formTarget(el, p.URL)})
			}
		}
	case "dialog":
		if a.Text != "" {
			out = append(out, carry{text: a.Text, dest: p.URL})
		}
	case "evaluate":
		if a.Text != "" {
			out = append(out, carry{text: a.Text, dest: p.URL})
			for _, u := range urlInWords.FindAllString(a.Text, -1) {
				out = append(out, carry{text: a.Text, dest: u})
			}
		}
	}
	return out
}

// printableKey is the text a press types: its key when that is one printable character and no
// command modifier is held ("" otherwise).
func printableKey(a Action) string {
	for _, m := range a.Modifiers {
		if m == "Control" || m == "Meta" || m == "Alt" {
			return ""
		}
	}
	if isSpace(a.Key) {
		return " "
	}
	if utf8.RuneCountInString(a.Key) == 1 {
		if r, _ := utf8.DecodeRuneInString(a.Key); unicode.IsPrint(r) {
			return a.Key
		}
	}
	return ""
}

// approvedBoundary records what the person's yes to d, a boundary decision on p, lets the task
// do from now on: the page outside the task they approved going to or acting on (its origin
// and path: not the rest of its site or host) joins the task.
func approvedBoundary(d Decision, p Proposal, t *Task) {
	if d.Reason != ReasonSite && d.Reason != ReasonHost || t == nil {
		return
	}
	if p.Action.URL != "" {
		t.AllowPage(p.Action.URL)
		for _, u := range nestedURLs(p.Action.URL, 3) {
			t.AllowPage(u)
		}
		return
	}
	for _, u := range receivers(p) {
		t.AllowPage(u)
	}
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
