package gate

import (
	"fmt"
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"
)

// This file judges what an action does rather than what its control says: the keys a press
// or typed text sends (and what the page may do with them), a commit's surroundings (its
// dialog's and section's headings, where its form sends, an account-takeover form, an
// account, security, billing or consent page), choices that hand an account over, and drops.
// What the gate cannot read, it asks about.

// Page is what the gate reads of the page an action runs on.
type Page struct {
	// Title and Headings are the page's title and its top headings (h1).
	Title    string   `json:"title"`
	Headings []string `json:"headings"`
	// Dialog is the words of an open dialog or modal box ("" when none), DialogButtons its
	// enabled buttons. Read for a press with nothing focused only.
	Dialog        string    `json:"dialog"`
	DialogButtons []Control `json:"dialogButtons"`
	// Selected are the selected items (the text selection, aria-selected and checked rows),
	// what a site's shortcut key acts on. Read for a press only.
	Selected []string `json:"selected"`
	// Text is the page's visible words (clipped): what a key with nothing focused may act
	// on. Read for a press with nothing focused only.
	Text string `json:"text"`
}

// keyKind is what a key does by itself.
type keyKind int

const (
	keyEnter  keyKind = iota // Enter: submits a field, activates a control
	keySpace                 // Space: activates a control, types a space, scrolls
	keyMove                  // Tab, Escape, arrows, Home, End, PageUp/Down, modifiers, F1–F12
	keyDelete                // Delete, Backspace: deletes text, or what is selected
	keyChar                  // a printable character: types it, or a site's shortcut
	keyOther                 // any other named key (Insert, ContextMenu, media keys…)
)

func classifyKey(key string) keyKind {
	switch {
	case isEnter(key):
		return keyEnter
	case isSpace(key):
		return keySpace
	}
	k := strings.ToLower(strings.TrimSpace(key))
	switch k {
	case "tab", "escape", "esc", "arrowup", "arrowdown", "arrowleft", "arrowright", "up", "down", "left", "right",
		"home", "end", "pageup", "pagedown", "pgup", "pgdn", "shift", "control", "alt", "meta", "capslock", "numlock", "scrolllock":
		return keyMove
	case "delete", "del", "backspace":
		return keyDelete
	}
	if len(k) >= 2 && k[0] == 'f' && strings.Trim(k[1:], "0123456789") == "" {
		return keyMove // F1–F24: the browser's own keys
	}
	if utf8.RuneCountInString(key) == 1 {
		return keyChar
	}
	return keyOther
}

func hasCommand(a Action) bool {
	for _, m := range a.Modifiers {
		switch strings.ToLower(m) {
		case "control", "ctrl", "meta", "cmd", "alt", "option":
			return true
		}
	}
	return false
}

// key judges a press: every key other than text entry for what it can start, on the element
// or, with nothing focused, on the page.
func (g *Gate) key(p Proposal) Decision {
	a, el := p.Action, p.Element
	field := el != nil && textField(el)
	cmd := hasCommand(a)
	switch classifyKey(a.Key) {
	case keyEnter:
		var d Decision
		switch {
		case el == nil:
			return g.pageKey(p)
		case field && el.Multiline && !cmd && el.Submits:
			// a new line in a form's text area (its button is judged when pressed)
		case field:
			d = g.commitField(el, p) // Enter, Control+Enter: a chat sends, a form submits
		default:
			d = g.activate(el, p)
			if d.Level == None && choice(el) && el.Submits {
				d = g.submit(el, p)
			}
		}
		return maxDecision(d, g.boxKey(p))
	case keySpace:
		switch {
		case el == nil:
			return g.pageKey(p)
		case field && !cmd:
			return Decision{}
		case el.Tag == "a" || el.Role == "link":
			return g.boxKey(p) // Space scrolls past a link
		}
		return maxDecision(g.activate(el, p), g.boxKey(p))
	case keyMove:
		if el != nil && choice(el) && strings.HasPrefix(strings.ToLower(a.Key), "arrow") {
			return g.choose(el, Action{Kind: "check", Checked: true}, p) // arrows move a radio group's choice
		}
		if el != nil && (el.Role == "slider" || el.Role == "spinbutton") && !strings.EqualFold(a.Key, "tab") && !strings.EqualFold(a.Key, "escape") {
			return g.choose(el, Action{Kind: "select"}, p) // arrows, Home, End, PageUp/Down set its value
		}
		return Decision{}
	case keyDelete:
		if field {
			return Decision{}
		}
		return Decision{Level: Grave, Reason: ReasonDeletion,
			Detail: fmt.Sprintf("%s outside a text field may delete %s", a.Key, g.keyTarget(p))}
	case keyChar:
		if field && !cmd {
			return Decision{} // typing
		}
		if cmd && strings.ContainsAny(strings.ToLower(a.Key), "ac") {
			return Decision{} // select all, copy
		}
		if field && cmd && strings.ContainsAny(strings.ToLower(a.Key), "vxzy") {
			return Decision{} // paste, cut, undo, redo in the field
		}
	case keyOther:
		if field && !cmd {
			return Decision{}
		}
	}
	return g.shortcut(p)
}

// keyTarget names what a key acts on: the focused element, the selection, or the page.
func (g *Gate) keyTarget(p Proposal) string {
	var parts []string
	if el := p.Element; el != nil {
		parts = append(parts, fmt.Sprintf("%s %q", orRole(el), shown(el)))
	}
	if p.Page != nil && len(p.Page.Selected) > 0 {
		parts = append(parts, fmt.Sprintf("the selected %q", clip(strings.Join(p.Page.Selected, "; "), 80)))
	}
	if len(parts) == 0 {
		return "whatever the page has selected"
	}
	return strings.Join(parts, " or ")
}

// shortcut judges a key the page, not the browser, gives a meaning to (a site's shortcut:
// "#" deletes the selected mail, "e" archives it): by what it acts on and the page around it,
// and at least as an ordinary step the person's words must name.
func (g *Gate) shortcut(p Proposal) Decision {
	key := strings.Join(append(append([]string(nil), p.Action.Modifiers...), p.Action.Key), "+")
	d := Decision{Level: Ordinary, Reason: ReasonKey,
		Detail: fmt.Sprintf("the page may bind %s to an action on %s", key, g.keyTarget(p))}
	var texts []string
	if el := p.Element; el != nil {
		texts = append(texts, names(el)...)
		texts = append(texts, Fold(el.ScopeText))
	}
	if p.Page != nil {
		for _, s := range p.Page.Selected {
			texts = append(texts, Fold(s))
		}
		texts = append(texts, Fold(p.Page.Dialog))
	}
	for _, t := range texts {
		if h := g.vocab.actionHit(t, false); h.level == Grave {
			return Decision{Level: Grave, Reason: h.reason, Detail: joinDetail(d.Detail, fmt.Sprintf("it says %q", h.word))}
		}
		if h := g.vocab.contextHit(t); h.level == Grave {
			return Decision{Level: Grave, Reason: h.reason, Detail: joinDetail(d.Detail, fmt.Sprintf("it says %q", h.word))}
		}
	}
	return d
}

// pageKey judges Enter or Space with nothing focused: the browser does nothing with them
// (Space scrolls), so whatever happens is the page's own handler acting on what it shows.
// With a dialog or box open it asks, as gravely as the box's words; otherwise the page's
// words decide.
func (g *Gate) pageKey(p Proposal) Decision {
	return g.pageWords(p, p.Action.Key+" with nothing focused goes to the page")
}

// pageWords judges a key by the page's open dialog or box, else by its words; how says how
// the key reaches the page.
func (g *Gate) pageWords(p Proposal, how string) Decision {
	pg := p.Page
	if pg == nil {
		return Decision{}
	}
	if pg.Dialog != "" {
		d := Decision{Level: Ordinary, Reason: ReasonKey,
			Detail: fmt.Sprintf("%s, which shows %q", how, clip(oneLine(pg.Dialog), 120))}
		f := Fold(pg.Dialog)
		h := g.vocab.actionHit(f, false)
		if c := g.vocab.contextHit(f); c.level > h.level {
			h = c
		}
		for _, b := range pg.DialogButtons {
			if bh, _ := g.labelHit(&Element{Role: "button", Text: b.Text, Labels: b.Labels}); bh.level > h.level {
				h = bh
			}
		}
		if h.level > d.Level {
			d.Level, d.Reason = h.level, h.reason
		}
		return d
	}
	f := Fold(pg.Text)
	h := g.vocab.actionHit(f, false)
	if h.level < Grave {
		if c := g.vocab.contextHit(f); c.level > h.level {
			h = c
		}
	}
	if h.level == None {
		return Decision{}
	}
	return Decision{Level: h.level, Reason: h.reason,
		Detail: fmt.Sprintf("%s, which says %q", how, quote(pg.Text, f, h.word))}
}

// boxKey judges a key pressed on an element while the page shows a dialog or box whose
// words say what that key does ("Press Enter to delete your account"): the key's event
// reaches the page's own handlers too, whatever has the focus.
func (g *Gate) boxKey(p Proposal) Decision {
	if p.Page == nil || p.Page.Dialog == "" || !keyMentioned(Fold(p.Page.Dialog), p.Action.Key) {
		return Decision{}
	}
	d := g.pageWords(Proposal{Action: p.Action, Page: p.Page}, p.Action.Key+" reaches the page's own handlers too")
	if d.Reason == ReasonKey {
		return Decision{} // a box that says nothing risky: the focused element's own judgement stands
	}
	return d
}

// keyNames are how pages name Enter and Space in the words around them.
var keyNames = map[keyKind][]string{
	keyEnter: {"enter", "return", "↵", "⏎", "eingabetaste", "entrée", "intro", "invio", "エンター", "回车", "엔터"},
	keySpace: {"space", "spacebar", "leertaste", "espace", "espacio", "spazio", "スペース", "空格", "스페이스"},
}

// keyMentioned reports whether folded page words name key (Enter, Space).
func keyMentioned(words, key string) bool {
	for _, n := range keyNames[classifyKey(key)] {
		if containsWord(words, n) || (!isLatinWord(n) && strings.Contains(words, n)) {
			return true
		}
	}
	return false
}

func maxDecision(a, b Decision) Decision {
	if b.Level > a.Level {
		return b
	}
	return a
}

// typedKeys judges the control characters in typed text as the keys they are: a line break is
// Enter in the field (a chat sends), a Tab moves the focus, so what follows it reaches an
// element the gate has not read.
func (g *Gate) typedKeys(p Proposal) Decision {
	el, text := p.Element, p.Action.Text
	for i, r := range text {
		switch r {
		case '\t':
			if text[i+1:] != "" || p.Action.Submit {
				return Decision{Level: Ordinary, Reason: ReasonKey,
					Detail: "the typed text presses Tab, then types or presses Enter in whatever has the focus next, which was not read"}
			}
		case '\n', '\r', '\v', '\f':
			if el.Multiline && el.Submits {
				continue // a new line in a form's text area
			}
			d := g.commitField(el, p)
			if d.Level != None {
				d.Detail = joinDetail("the typed text presses Enter in the field", d.Detail)
				return d
			}
		default:
			if r < 0x20 || r == 0x7f {
				if r == 0x08 || r == 0x7f || r == 0x1b {
					continue // Backspace, Delete, Escape in a field edit or close
				}
				return Decision{Level: Ordinary, Reason: ReasonKey, Detail: fmt.Sprintf("the typed text holds the control character %U", r)}
			}
		}
	}
	return Decision{}
}

// commitField judges Enter in field el (type with submit, a line break, Enter pressed): its
// form's submission, else the page's own handler committing the field: a box for messages,
// comments or replies sends what it holds.
func (g *Gate) commitField(el *Element, p Proposal) Decision {
	d := g.submit(el, p)
	if d.Level == Grave {
		return d
	}
	if el.Submits {
		if c := g.formCommit(el); c.Level == Grave {
			return c
		}
	}
	if c := g.commitContext(el, p); c.Level > d.Level {
		d = c
	}
	if d.Level == Grave || searchField(el) {
		return d
	}
	if el.Scope != "form" || !el.Submits {
		if el.Multiline {
			// Enter in a text area only adds a line unless the page's own handler commits
			// the box: a chat sends what it holds
			return Decision{Level: Grave, Reason: ReasonSending,
				Detail: fmt.Sprintf("Enter in a %s with no form to submit is the page's own commit: a chat sends what it holds", orRole(el))}
		}
		texts := append(names(el), foldAll(el.Headings)...)
		if el.Scope == "" {
			texts = append(texts, Fold(el.ScopeText))
		}
		for _, t := range texts {
			if w := g.vocab.messageHit(t); w != "" {
				return Decision{Level: Grave, Reason: ReasonSending,
					Detail: fmt.Sprintf("Enter in a %s with no form sends what it holds (%q)", orRole(el), w)}
			}
		}
	}
	return d
}

// searchField reports whether el is a search box (Enter there searches).
func searchField(el *Element) bool {
	if el.Role == "searchbox" || el.Type == "search" {
		return true
	}
	for _, n := range names(el) {
		for _, w := range []string{"search", "suche", "buscar", "rechercher", "cerca", "pesquisar", "zoeken", "szukaj", "поиск", "пошук", "ara", "tìm", "cari", "検索", "搜索", "搜尋", "검색", "بحث", "खोज"} {
			if containsWord(n, w) || (!isLatinWord(w) && strings.Contains(n, w)) {
				return true
			}
		}
	}
	return false
}

func isLatinWord(w string) bool {
	for _, r := range w {
		if r > unicode.MaxLatin1 && !unicode.In(r, unicode.Latin, unicode.Cyrillic) {
			return false
		}
	}
	return true
}

// commitControl reports whether activating el commits something: a button, a submit or a
// menu item, not a link (navigation) or one that only closes or leaves (Cancel, Close). A
// control that says it opens a menu or section (Element.Opens) is still one: the page says
// so, and a page may lie.
func (g *Gate) commitControl(el *Element) bool {
	if el.Type == "reset" {
		return false
	}
	switch {
	case el.Role == "button" || el.Role == "menuitem" || el.Role == "clickable":
	case el.Tag == "button":
	case el.Tag == "input" && (el.Type == "submit" || el.Type == "image" || el.Type == "button"):
	default:
		return false
	}
	for _, n := range names(el) {
		if g.vocab.isDismiss(strings.Trim(n, " .!…")) {
			return false
		}
	}
	return true
}

// linkURL judges a click on el as the navigation it is when el is a link: the words of its
// href, as those of a URL to open (actionURL): a "Learn more" whose href is /account/erase
// erases whoever follows it.
func (g *Gate) linkURL(el *Element, goal string) Decision {
	if el.Href == "" {
		return Decision{}
	}
	return g.actionURL(el.Href, goal) // the step the person reads names the href itself
}

// commitContext judges a commit by what surrounds it: its dialog's and section's headings,
// where its form sends, a form about recovery addresses, forwarding, keys, owners or OAuth
// grants (an account takeover), and an account, security, billing or consent page.
func (g *Gate) commitContext(el *Element, p Proposal) Decision {
	for _, hd := range el.Headings {
		f := Fold(hd)
		h := g.vocab.actionHit(f, false)
		if h.level < Grave {
			if c := g.vocab.compoundHit(f); c.level > h.level {
				h = c
			}
		}
		if h.level == Grave {
			return Decision{Level: Grave, Reason: h.reason, Detail: fmt.Sprintf("it is under the heading %q", clip(oneLine(hd), 100))}
		}
	}
	if el.FormAction != "" {
		if h := g.vocab.iconHit(actionPath(el.FormAction)); h.level == Grave {
			return Decision{Level: Grave, Reason: h.reason, Detail: fmt.Sprintf("its form sends to %q", clip(el.FormAction, 100))}
		}
	}
	about := append(append(names(el), foldAll(el.Headings)...), Fold(el.ScopeText))
	for _, t := range about {
		if w := g.vocab.takeoverHit(t); w != "" {
			return Decision{Level: Grave, Reason: ReasonAccount, Detail: fmt.Sprintf("what it is in is about %q", w)}
		}
	}
	if el.Opens {
		return Decision{} // opening a menu or section on a settings page changes nothing yet
	}
	if w := g.sensitivePage(el, p); w != "" {
		return Decision{Level: Ordinary, Reason: ReasonSensitivePage, Detail: fmt.Sprintf("the page is about %q", w)}
	}
	return Decision{}
}

// sensitivePage reports what marks the page of el as an account, security, billing or consent
// page ("" when nothing does): its URL's path, where el's form sends, the page's title and top
// headings, el's headings.
func (g *Gate) sensitivePage(el *Element, p Proposal) string {
	for _, raw := range []string{p.URL, el.FormAction} {
		for _, seg := range iconTokens(actionPath(raw)) {
			for _, w := range commitPathWords {
				if seg == w {
					return "/" + seg
				}
			}
		}
	}
	var texts []string
	if p.Page != nil {
		texts = append(texts, p.Page.Title)
		texts = append(texts, p.Page.Headings...)
	}
	texts = append(texts, el.Headings...)
	for _, t := range texts {
		if w := g.vocab.sensitiveHit(Fold(t)); w != "" {
			return w
		}
	}
	return ""
}

// actionPath is the path of a URL or form action ("/account/delete"), without its host.
func actionPath(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return raw
	}
	return u.Path
}

// takeoverChoice judges a choice that hands the account over: a role such as Owner or Admin
// chosen, or a switch, checkbox, radio or select about two-factor authentication, recovery,
// forwarding or keys set either way; and any switch or checkbox on an account, security, billing or
// consent page (ordinary: the person's words may name it).
func (g *Gate) takeoverChoice(el *Element, a Action, p Proposal) Decision {
	for _, v := range a.Values {
		if w := g.vocab.takeoverHit(Fold(v)); w != "" {
			return Decision{Level: Grave, Reason: ReasonAccount, Detail: fmt.Sprintf("it chooses %q", clip(v, 80))}
		}
	}
	about := append(names(el), foldAll(el.Headings)...)
	if el.Scope == "" {
		about = append(about, Fold(el.ScopeText))
	}
	for _, t := range about {
		if w := g.vocab.takeoverHit(t); w != "" {
			return Decision{Level: Grave, Reason: ReasonAccount, Detail: fmt.Sprintf("it sets %q", w)}
		}
	}
	toggle := el.Role == "checkbox" || el.Role == "switch" || el.Role == "menuitemcheckbox" || (el.Tag == "input" && el.Type == "checkbox")
	if !toggle {
		return Decision{}
	}
	if w := g.sensitivePage(el, p); w != "" {
		return Decision{Level: Ordinary, Reason: ReasonSensitivePage, Detail: fmt.Sprintf("a switch on a page about %q", w)}
	}
	return Decision{}
}

// drop judges a drag by where it drops: a target whose names, icons or data say a category,
// or a drop zone with no name the gate can read.
func (g *Gate) drop(p Proposal) Decision {
	t := p.Target
	if t == nil {
		return Decision{}
	}
	if h, where := g.labelHit(t); h.level != None {
		return Decision{Level: h.level, Reason: h.reason, Detail: joinDetail(fmt.Sprintf("drops it on %s %q", orRole(t), shown(t)), where)}
	}
	if len(names(t)) == 0 && len(t.Icons) == 0 {
		return Decision{Level: Ordinary, Reason: ReasonUnnamed, Detail: "drops it on an element that shows and says nothing"}
	}
	return Decision{}
}

// keyNamed reports whether the folded goal names the key a shortcut step presses ("press #",
// "hit j", "Escape").
func keyNamed(goal, key string) bool {
	k := Fold(key)
	if k == "" {
		return false
	}
	if utf8.RuneCountInString(k) >= 3 {
		return containsWord(goal, k)
	}
	for _, verb := range []string{"press ", "hit ", "key ", "type ", "shortcut "} {
		if strings.Contains(goal, verb+k) || strings.Contains(goal, verb+"\""+k+"\"") || strings.Contains(goal, verb+"'"+k+"'") {
			return true
		}
	}
	return false
}

func foldAll(ss []string) []string {
	out := make([]string, 0, len(ss))
	for _, s := range ss {
		if f := Fold(s); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// orRole is el's role, else its tag.
func orRole(el *Element) string {
	if el.Role != "" {
		return el.Role
	}
	if el.Tag != "" {
		return el.Tag
	}
	return "element"
}
