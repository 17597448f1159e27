// Package fastpath turns simple commands ("click sign in", "type hello in the search box",
// "press enter", "scroll down", "go back", "open github.com", "switch to the mail tab",
// "check remember me", "select Blue in color", "what is on this page?") into one browser action
// without a language model, by matching names in the current role snapshot.
//
// Compound commands ("Enter "Jerald" into the text field and press Submit.") are cut into
// steps by [Split]; the caller matches each step on a fresh page model after the step before
// ran (agent/task does).
//
// It only acts when the match is unambiguous ("the second delete button" picks by ordinal, in
// page order): anything else comes back as not sure, with the candidates, for the caller to
// hand to the model. It answers with actions of the action registry (agent/actions), which
// still go through the agent's confirmation rules before they run.
package fastpath

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode"

	"github.com/tabrelay/tabrelay/agent/actions"
	"github.com/tabrelay/tabrelay/snapshot"
)

// Outcome says how a command was understood.
type Outcome string

// Outcomes.
const (
	// Matched: Action is set and safe to run (after the usual confirmation rules).
	Matched Outcome = "matched"
	// Ambiguous: several elements or tabs fit; Candidates lists them.
	Ambiguous Outcome = "ambiguous"
	// NotFound: the command is simple but nothing on the page fits.
	NotFound Outcome = "not_found"
	// NotSimple: the command is not one this package understands; ask the model.
	NotSimple Outcome = "not_simple"
)

// ReasonUnread is the reason of a NotSimple result for a command no rule reads: it may still
// be a name that appears on the page later (a compound command's "then save").
const ReasonUnread = "not a simple one-step command"

// Candidate is an element or tab that could be meant.
type Candidate struct {
	Ref  string `json:"ref,omitempty"`
	Tab  string `json:"tab,omitempty"`
	Role string `json:"role,omitempty"`
	Name string `json:"name"`
}

// Result is the outcome of [Match].
type Result struct {
	Outcome Outcome `json:"outcome"`
	// Action is set when Outcome is Matched, except for page questions.
	Action *actions.Action `json:"action,omitempty"`
	// Answer is the reply to a page question ("what is on this page?"), answered from the
	// snapshot with no action (Outcome Matched, Action nil).
	Answer string `json:"answer,omitempty"`
	// Reason explains a non-match in a sentence.
	Reason string `json:"reason,omitempty"`
	// Candidates are the elements that could be meant (ambiguous or near misses).
	Candidates []Candidate `json:"candidates,omitempty"`
}

// OK reports whether the command was understood: an action to run, or a page question's answer.
func (r Result) OK() bool { return r.Outcome == Matched && (r.Action != nil || r.Answer != "") }

// Tab is a shared tab, for "switch to …" and "close …" commands.
type Tab struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	URL   string `json:"url"`
}

var (
	politeRe   = regexp.MustCompile(`^(?:please |pls |can you |could you |would you |now |then |and |just |ok |okay )+`)
	trailingRe = regexp.MustCompile(`(?: please| for me| now| thanks| thank you)+$`)
	urlLikeRe  = regexp.MustCompile(`^(?:https?://\S+|(?:[a-z0-9-]+\.)+[a-z]{2,}(?::\d+)?(?:/\S*)?|localhost(?::\d+)?(?:/\S*)?)$`)

	reBack     = regexp.MustCompile(`^(?:go |navigate )?back(?: a page| one page)?$|^previous page$`)
	reForward  = regexp.MustCompile(`^(?:go |navigate )?forward(?: a page| one page)?$|^next page in history$`)
	reReload   = regexp.MustCompile(`^(?:reload|refresh)(?: (?:the|this) (?:page|tab))?$`)
	reScroll   = regexp.MustCompile(`^scroll(?: the page)?(?: (up|down|left|right))?(?: a bit| a little| more| some)?$`)
	reScrollTo = regexp.MustCompile(`^scroll to (?:the )?(top|bottom|end|start)(?: of (?:the|this) page)?$`)
	rePage     = regexp.MustCompile(`^page (up|down)$`)
	reDescribe = regexp.MustCompile(`^(?:what(?:'s| is) (?:on )?(?:this|the) (?:page|tab)|what(?:'s| is) on (?:the )?screen|describe (?:this|the) (?:page|tab)|summari[sz]e (?:this|the) (?:page|tab)|read (?:this|the) (?:page|tab)(?: to me)?|where am i)$`)
	reOpen     = regexp.MustCompile(`^(?:open|go to|goto|navigate to|visit|load|browse to)\s+(\S+)(\s+in (?:a )?new tab)?$`)
	reNewTab   = regexp.MustCompile(`^open (?:a )?new tab(?: (?:with|for|at) (\S+))?$`)
	reSwitch   = regexp.MustCompile(`^(?:switch|change|go|jump|move) to (.+?)(?: tab)?$`)
	reCloseTab = regexp.MustCompile(`^close (?:(?:this|the current|current|the) tab|(?:the )?(.+?) tab)$`)
	rePress    = regexp.MustCompile(`^(?:press|hit|push|tap)(?: the)? (.+?)(?: key)?$`)
	reType     = regexp.MustCompile(`^(?:type|enter|write|input|put|insert) (.+?) (?:in|into|in the|on|to) (.+)$`)
	reTypeOnly = regexp.MustCompile(`^(?:type|write|input) (.+)$`)
	reFill     = regexp.MustCompile(`^(?:fill(?: in| out)?|set) (.+?) (?:with|to|as) (.+)$`)
	reSearch   = regexp.MustCompile(`^search(?: for)? (.+)$`)
	// reSearchIn is "search the contacts for grace": the text is what follows "for".
	reSearchIn = regexp.MustCompile(`^search (?:the|my|this|our) \w+(?: \w+)? for (.+)$`)
	// reRunOn finds, in an unquoted search text, a joint followed by a clause of three words or
	// more: "kettles and add the cheapest one to the cart" holds a second request, where "salt
	// and pepper" is the text.
	reRunOn   = regexp.MustCompile(`(?:,|\s(?:and|then))\s+(\S+\s+\S+\s+\S+.*)$`)
	reCheck   = regexp.MustCompile(`^(?:check|tick|enable|turn on|switch on|select the checkbox) (.+)$`)
	reUncheck = regexp.MustCompile(`^(?:uncheck|untick|disable|turn off|switch off|clear the checkbox) (.+)$`)
	reFocus   = regexp.MustCompile(`^(?:focus(?: on| in| into| inside)?|(?:click|tap) (?:in|into|inside)) (.+)$`)
	reToggle  = regexp.MustCompile(`^(?:toggle|flip) (.+)$`)
	reGoTo    = regexp.MustCompile(`^(?:go|navigate|jump) to (.+)$`)
	// reDeleteNth reads "delete the second one", "remove the last order": verb, ordinal, noun.
	reDeleteNth   = regexp.MustCompile(`^(delete|remove|edit) (?:the )?(first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|last|[1-9]\d*(?:st|nd|rd|th)) [a-z]+$`)
	reChooseValue = regexp.MustCompile(`^(?:select|choose|pick) (.+)$`)
	// reCloseDialog reads "close the dialog", "dismiss the cookie popup by clicking "x"".
	reCloseDialog = regexp.MustCompile(`^(?:close|dismiss|exit|hide) (?:the |this )?(?:([a-z0-9 ]+?) )?(?:dialog|modal|popup|pop up|overlay)(?: box| window)?(?: by (?:clicking|pressing|tapping|hitting)(?: on)? (.+))?$`)
	// reScope reads a trailing "in the dialog" that limits the elements to one dialog.
	// It may stand before a name: "click the button in the dialog box labeled "x"".
	reScope = regexp.MustCompile(`^(.+?) (?:in|inside|within|on|of|from) (?:the |this )?((?:[a-z0-9]+ )*?(?:dialog|modal|popup|pop up))(?: box| window)?((?: (?:labell?ed|named|called|titled|marked|that says|saying|with the (?:label|text|name)) .+)?)$`)
	// reLabeled reads "the button labeled "x"": a kind, then the name it carries.
	reLabeled = regexp.MustCompile(`^(.*?)\b(?:labell?ed|named|called|titled|marked|that says|saying|with the (?:label|text|name)) (.+)$`)
	reSelect  = regexp.MustCompile(`^(?:select|choose|pick|set) (.+?) (?:in|from|for|as) (.+)$`)
	reHover   = regexp.MustCompile(`^(?:hover(?: over| on)?|mouse over|point at) (.+)$`)
	reClick   = regexp.MustCompile(`^(?:click|tap|press|push|hit|select|choose|pick|open|follow|activate|click on|tap on|double click)(?: on)? (.+)$`)
)

// keyNames maps spoken key names to DOM key values.
var keyNames = map[string]string{
	"enter": "Enter", "return": "Enter", "escape": "Escape", "esc": "Escape", "tab": "Tab", "space": "Space",
	"spacebar": "Space", "backspace": "Backspace", "delete": "Delete", "del": "Delete", "up": "ArrowUp",
	"down": "ArrowDown", "left": "ArrowLeft", "right": "ArrowRight", "arrow up": "ArrowUp", "arrow down": "ArrowDown",
	"arrow left": "ArrowLeft", "arrow right": "ArrowRight", "up arrow": "ArrowUp", "down arrow": "ArrowDown",
	"left arrow": "ArrowLeft", "right arrow": "ArrowRight", "page down": "PageDown", "page up": "PageUp",
	"home": "Home", "end": "End",
}

// Match understands command against the page model of the tab's snapshot (nil when there is
// no tab) and the shared tabs, for tab commands.
func Match(command string, page *snapshot.Snapshot, tabs []Tab) Result {
	cmd, letterCase := takeLetterCase(normalizeCommand(command))
	if cmd == "" {
		return Result{Outcome: NotSimple, Reason: "empty command"}
	}
	nodes := page.Nodes()
	if m := reCloseDialog.FindStringSubmatch(cmd); m != nil {
		return closeDialog(nodes, m[1], m[2])
	}
	if m := reScope.FindStringSubmatch(cmd); m != nil {
		// "click ok in the dialog": only the dialog's elements.
		inner, r := scope(nodes, m[2])
		if inner == nil {
			return r
		}
		cmd, nodes = m[1]+m[3], inner
	}
	if m := reLabeled.FindStringSubmatch(cmd); m != nil && strings.TrimSpace(m[1]) != "" {
		// "click the button labeled "x"": the button "x"
		cmd = strings.TrimSpace(m[1]) + " " + m[2]
	}
	sd := &said{original: command, cmd: cmd, nodes: nodes, tabs: tabs, letterCase: letterCase}
	if r, ok := applyRules(sd); ok {
		return r
	}

	if m := reNewTab.FindStringSubmatch(cmd); m != nil {
		return act(actions.Do(actions.Open{URL: normalizeURL(originalSpan(command, m[1]))}))
	}
	if m := reOpen.FindStringSubmatch(cmd); m != nil && urlLikeRe.MatchString(m[1]) {
		u := normalizeURL(originalSpan(command, m[1]))
		if m[2] != "" {
			return act(actions.Do(actions.Open{URL: u}))
		}
		return act(actions.Do(actions.Navigate{URL: u}))
	}
	if m := reCloseTab.FindStringSubmatch(cmd); m != nil {
		if m[1] == "" {
			return act(actions.Do(actions.Close{}))
		}
		return matchTab(func(id string) actions.Action { return actions.Do(actions.Close{Tab: id}) }, m[1], tabs)
	}
	if m := reSwitch.FindStringSubmatch(cmd); m != nil && (strings.HasPrefix(cmd, "switch") || strings.HasSuffix(cmd, " tab")) {
		r := matchTab(func(id string) actions.Action { return actions.Do(actions.Focus{Tab: id}) }, m[1], tabs)
		if !r.OK() {
			// "switch to tab 3": a tab of the page, when no shared tab fits.
			if pr := matchElement(nodes, m[1], roleSet("tab"), click); pr.OK() {
				return pr
			}
		}
		return r
	}
	if m := rePress.FindStringSubmatch(cmd); m != nil {
		if k, ok := keyNames[m[1]]; ok {
			return act(actions.Do(actions.Press{Key: k}))
		}
		if k, ok := keyCombo(m[1]); ok {
			return act(actions.Do(actions.Press{Key: k}))
		}
	}
	if m := reFocus.FindStringSubmatch(cmd); m != nil {
		// Clicking a field focuses it.
		return matchElement(nodes, m[1], union(textRoles, clickRoles), click)
	}
	if m := reToggle.FindStringSubmatch(cmd); m != nil {
		return matchElement(nodes, m[1], checkRoles, click)
	}
	if m := reDeleteNth.FindStringSubmatch(cmd); m != nil {
		// "delete the last order": the last of the buttons named for the verb.
		r := matchElement(nodes, m[2]+" "+m[1], actRoles, click)
		if alt := map[string]string{"delete": "remove", "remove": "delete"}[m[1]]; r.Outcome == NotFound && alt != "" {
			r = matchElement(nodes, m[2]+" "+alt, actRoles, click)
		}
		return r
	}
	if m := reUncheck.FindStringSubmatch(cmd); m != nil {
		return matchElement(nodes, m[1], checkRoles, func(n *snapshot.Node) actions.Action {
			return actions.Do(actions.Check{Ref: n.Ref, Checked: false})
		})
	}
	if m := reCheck.FindStringSubmatch(cmd); m != nil {
		return matchElement(nodes, m[1], checkRoles, func(n *snapshot.Node) actions.Action {
			return actions.Do(actions.Check{Ref: n.Ref, Checked: true})
		})
	}
	if m := reType.FindStringSubmatch(cmd); m != nil {
		text, refused := sd.value(m[1])
		if refused != nil {
			return *refused
		}
		return typeOrSelect(matchElement(nodes, m[2], textRoles, typeInto(text)), nodes)
	}
	if m := reFill.FindStringSubmatch(cmd); m != nil {
		if r := typeOrSelect(matchElement(nodes, m[1], textRoles, typeInto(originalSpan(command, m[2]))), nodes); r.Outcome != NotFound || strings.HasPrefix(cmd, "fill") {
			return r
		}
	}
	if m := reSelect.FindStringSubmatch(cmd); m != nil {
		value := originalSpan(command, m[1])
		r := matchElement(nodes, m[2], selectRoles, func(n *snapshot.Node) actions.Action {
			return actions.Do(actions.Select{Ref: n.Ref, Values: []string{value}})
		})
		if r.OK() {
			sel := r.Action.Params.(*actions.Select)
			opts := options(nodes, sel.Ref)
			values := []string{value}
			if n := findRef(nodes, sel.Ref); n != nil && n.Has("multiselectable") && !containsFold(opts, value) {
				// "select Panama, Congo from the list": several options of a list that takes several
				values = listValues(value, opts)
			}
			sel.Values = sel.Values[:0]
			for _, v := range values {
				if len(opts) > 0 && !containsFold(opts, v) {
					return Result{Outcome: NotFound, Reason: fmt.Sprintf("%q is not an option of that list", v), Candidates: r.Candidates}
				}
				if o := optionNamed(opts, v); o != "" {
					v = o
				}
				sel.Values = append(sel.Values, v)
			}
		}
		if r.Outcome != NotFound {
			return r
		}
	}
	if m := reChooseValue.FindStringSubmatch(cmd); m != nil {
		// "select 5YmEMLz": the one list that offers that option.
		if r := selectByOption(nodes, originalSpan(command, m[1])); r.Outcome != NotFound {
			return r
		}
	}
	if m := reSearch.FindStringSubmatch(cmd); m != nil {
		q := m[1]
		if in := reSearchIn.FindStringSubmatch(cmd); in != nil && !strings.HasPrefix(cmd, "search for ") {
			q = in[1]
		}
		if rest := reRunOn.FindStringSubmatch(q); rest != nil && !strings.ContainsAny(q[:1], `"“'`) {
			return Result{Outcome: NotSimple, Reason: fmt.Sprintf("the search text runs on into another request (%q); put the text in quotes", rest[1])}
		}
		text := originalSpan(command, q)
		r := matchElement(nodes, "search", roleSet("searchbox", "textbox", "combobox"), func(n *snapshot.Node) actions.Action {
			return actions.Do(actions.Type{Ref: n.Ref, Text: text, Submit: true})
		})
		if r.Outcome == NotFound {
			r = onlyOne(nodes, roleSet("searchbox"), nil, func(n *snapshot.Node) actions.Action {
				return actions.Do(actions.Type{Ref: n.Ref, Text: text, Submit: true})
			})
		}
		return r
	}
	if m := reTypeOnly.FindStringSubmatch(cmd); m != nil {
		text := originalSpan(command, m[1])
		return onlyOne(nodes, textRoles, nil, func(n *snapshot.Node) actions.Action { return actions.Do(actions.Type{Ref: n.Ref, Text: text}) })
	}
	if m := reHover.FindStringSubmatch(cmd); m != nil {
		return matchElement(nodes, m[1], clickRoles, func(n *snapshot.Node) actions.Action { return actions.Do(actions.Hover{Ref: n.Ref}) })
	}
	if m := reClick.FindStringSubmatch(cmd); m != nil {
		r := matchElement(nodes, m[1], clickRoles, click)
		if n := clickedNode(r, nodes); n != nil && checkRoles[n.Role] && reChooseValue.MatchString(cmd) {
			// "select lMXPn" for a checkbox or radio: selected, even when it already is
			return Result{Outcome: Matched, Action: ptr(actions.Do(actions.Check{Ref: n.Ref, Checked: true})), Candidates: r.Candidates}
		}
		if r.OK() && reChooseValue.MatchString(cmd) && isSelectLike(findRef(nodes, r.Candidates[0].Ref)) {
			// "choose a color": a list, but which option?
			return Result{Outcome: NotSimple, Reason: "which option of the list?", Candidates: r.Candidates}
		}
		if r.Outcome == NotFound && strings.HasPrefix(cmd, "open ") {
			return Result{Outcome: NotFound, Reason: fmt.Sprintf("nothing called %q here, and it is not a web address", m[1]), Candidates: r.Candidates}
		}
		return r
	}
	if m := reGoTo.FindStringSubmatch(cmd); m != nil {
		// "go to tab 2": a tab or link of the page.
		if r := matchElement(nodes, m[1], union(linkRoles, roleSet("tab")), click); r.Outcome != NotFound {
			return r
		}
	}
	if r := matchBare(nodes, cmd); r.OK() {
		// "submit", "accept all": the name of one button or link.
		return r
	}
	return Result{Outcome: NotSimple, Reason: ReasonUnread}
}

func act(a actions.Action) Result { return Result{Outcome: Matched, Action: &a} }

// normalizeCommand lowercases, trims punctuation and polite words.
func normalizeCommand(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	s = strings.TrimRight(s, ".!?")
	s = strings.Join(strings.Fields(s), " ")
	s = politeRe.ReplaceAllString(s, "")
	s = trailingRe.ReplaceAllString(s, "")
	return strings.TrimSpace(s)
}

// originalSpan returns the part of the original command matching the lowercased span, so
// typed text keeps its case ("type Hello World" types "Hello World"); quotes are removed.
func originalSpan(original, lower string) string {
	orig := strings.Join(strings.Fields(strings.TrimSpace(original)), " ")
	if i := strings.Index(strings.ToLower(orig), lower); i >= 0 && len(strings.ToLower(orig)) == len(orig) {
		lower = orig[i : i+len(lower)]
	}
	return strings.Trim(lower, `"'“”‘’`)
}

func normalizeURL(u string) string {
	if u == "" {
		return ""
	}
	u = strings.TrimRight(u, ".,;")
	if !strings.Contains(u, "://") {
		u = "https://" + u
	}
	return u
}

// keyCombo accepts "ctrl+a", "control a", "shift tab" style combinations.
func keyCombo(s string) (string, bool) {
	parts := strings.FieldsFunc(s, func(r rune) bool { return r == '+' || r == ' ' || r == '-' })
	if len(parts) < 2 {
		return "", false
	}
	mods := map[string]string{"ctrl": "Control", "control": "Control", "shift": "Shift", "alt": "Alt", "option": "Alt", "cmd": "Meta", "command": "Meta", "meta": "Meta"}
	var out []string
	for i, p := range parts {
		if m, ok := mods[p]; ok && i < len(parts)-1 {
			out = append(out, m)
			continue
		}
		if i != len(parts)-1 {
			return "", false
		}
		if k, ok := keyNames[p]; ok {
			out = append(out, k)
		} else if len(p) == 1 {
			out = append(out, p)
		} else {
			return "", false
		}
	}
	return strings.Join(out, "+"), true
}

// normName lowercases and keeps letters and digits separated by single spaces.
func normName(s string) string {
	var b strings.Builder
	space := false
	for _, r := range strings.ToLower(s) {
		r = foldAccent(r)
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if space && b.Len() > 0 {
				b.WriteByte(' ')
			}
			space = false
			b.WriteRune(r)
		} else {
			space = true
		}
	}
	return b.String()
}

// score rates how well a node's name fits the phrase: 3 exact, 2 prefix at a word boundary or
// equal without spaces, 1 whole-word containment, 0 none.
func score(name, phrase string) int {
	n := normName(name)
	switch {
	case n == "" || phrase == "":
		return 0
	case n == phrase:
		return 3
	case strings.ReplaceAll(n, " ", "") == strings.ReplaceAll(phrase, " ", ""):
		return 3
	case strings.HasPrefix(n, phrase+" "):
		return 2
	case strings.Contains(" "+n+" ", " "+phrase+" "):
		return 1
	case allWords(n, phrase):
		// "the red kettle" for "Kettle, red, 1.7 L".
		return 1
	}
	return 0
}

// allWords reports whether every word of phrase is a word of name (two words or more).
func allWords(name, phrase string) bool {
	ws := strings.Fields(phrase)
	if len(ws) < 2 {
		return false
	}
	have := strings.Fields(name)
	for _, w := range ws {
		if !slices.Contains(have, w) {
			return false
		}
	}
	return true
}

// matchElement finds the one element the phrase names. defaultRoles apply when the phrase
// names no role.
func matchElement(nodes []*snapshot.Node, phrase string, defaultRoles map[string]bool, mk func(*snapshot.Node) actions.Action) Result {
	tg := parseTarget(phrase)
	if tg.literal != nil {
		// "click first item" on a page with a button "First item": the word is part of a name.
		whole := target{phrase: normName(tg.literal.raw), raw: tg.literal.raw}
		for _, n := range nodes {
			if n.Ref == "" {
				continue
			}
			if score(n.Name, tg.literal.phrase) == 3 {
				tg = *tg.literal
				break
			}
			if tg.literal.roles != nil && score(n.Name, whole.phrase) == 3 {
				// "first item" for an element named so, "item" being a kind word too
				tg = whole
				break
			}
		}
	}
	if refRe.MatchString(tg.phrase) {
		// "click e14": a ref straight from the snapshot.
		for _, n := range nodes {
			if n.Ref == tg.phrase {
				return Result{Outcome: Matched, Action: ptr(mk(n)), Candidates: cands([]*snapshot.Node{n})}
			}
		}
		return Result{Outcome: NotFound, Reason: fmt.Sprintf("no element %s on this page", tg.phrase)}
	}
	roles := defaultRoles
	switch {
	case tg.roles != nil && subset(clickRoles, defaultRoles):
		// "click the email field": the named role wins.
		roles = tg.roles
	case tg.roles != nil && tg.phrase == "" && len(intersect(defaultRoles, tg.roles)) > 0:
		// "enter 3:45 PM as the time": only a kind, which says which of the fields
		roles = intersect(defaultRoles, tg.roles)
	case tg.roles != nil:
		// "check the newsletter box": either kind of word may be loose; accept both.
		roles = union(defaultRoles, tg.roles)
	}
	if tg.inList {
		nodes = inLists(nodes)
	}
	glyph := glyphGroup(tg.raw)
	if glyph == nil && tg.phrase == "" && strings.Trim(tg.raw, " "+quotes) != "" {
		// a name of symbols only ("★"): the element showing exactly that
		glyph = []string{strings.ToLower(strings.Trim(tg.raw, " "+quotes))}
	}
	if (tg.phrase == "" && glyph == nil) || isPronoun(tg.phrase) {
		// "the search box", "it": only when exactly one element of the roles exists (or the
		// phrase says which: "the second button", or any will do: "a button").
		kind := enabled(nodes, roles, tg.filter)
		switch {
		case tg.nth != 0:
			return ordinalResult(tg, kind, mk)
		case tg.anyOne && len(kind) > 0 && tg.phrase == "":
			return Result{Outcome: Matched, Action: ptr(mk(kind[0])), Candidates: cands(kind[:1])}
		}
		return onlyOne(nodes, roles, tg.filter, mk)
	}
	best := 0
	var hits, good []*snapshot.Node // the best matches; every exact or prefix match (for ordinals)
	var disabled []*snapshot.Node
	for _, n := range nodes {
		if !tg.keep(n, roles) {
			continue
		}
		// a control with no name is called what the page shows beside it or what its icon
		// says (the outline's inferred name, the same words the model and the gate read)
		s := score(n.Label(), tg.phrase)
		if n.Label() == "" && textRoles[n.Role] {
			// a field with no name, labelled by the text beside it
			s = score(nearLabel(n), tg.phrase)
		}
		if s < 3 && actRoles[n.Role] && (score(shown(n), tg.phrase) == 3 || glyph != nil && isGlyph(n, glyph)) {
			// "click the x" for a button named Close that shows "×".
			s = 3
		}
		if s == 0 {
			continue
		}
		if n.Has("disabled") {
			disabled = append(disabled, n)
			continue
		}
		if s >= 2 {
			good = append(good, n)
		}
		switch {
		case s > best:
			best, hits = s, []*snapshot.Node{n}
		case s == best:
			hits = append(hits, n)
		}
	}
	hits, good = outermost(hits), outermost(good)
	switch {
	case tg.nth != 0 && len(good) > 0:
		// "the second delete button": the nth of the elements so named, in page order.
		return ordinalResult(tg, good, mk)
	case tg.nth != 0 && len(hits) > 0:
		return ordinalResult(tg, hits, mk)
	case len(hits) == 1 && (best >= 2 || len(tg.phrase) >= 3):
		return Result{Outcome: Matched, Action: ptr(mk(hits[0])), Candidates: cands(hits)}
	case len(hits) > 1:
		return Result{Outcome: Ambiguous, Reason: fmt.Sprintf("%d elements match %q", len(hits), tg.phrase), Candidates: cands(hits)}
	case len(disabled) > 0:
		return Result{Outcome: NotFound, Reason: fmt.Sprintf("%q is disabled", tg.phrase), Candidates: cands(disabled)}
	}
	return Result{Outcome: NotFound, Reason: fmt.Sprintf("no element called %q on this page", tg.phrase), Candidates: near(nodes, roles, tg.phrase)}
}

var refRe = regexp.MustCompile(`^e\d+$`)

// subset reports whether every role of a is in b.
func subset(a, b map[string]bool) bool {
	for k := range a {
		if !b[k] {
			return false
		}
	}
	return true
}

func union(a, b map[string]bool) map[string]bool {
	m := make(map[string]bool, len(a)+len(b))
	for k := range a {
		m[k] = true
	}
	for k := range b {
		m[k] = true
	}
	return m
}

func intersect(a, b map[string]bool) map[string]bool {
	m := map[string]bool{}
	for k := range a {
		if b[k] {
			m[k] = true
		}
	}
	return m
}

func isPronoun(p string) bool {
	switch p {
	case "it", "there", "here", "that", "this":
		return true
	}
	return false
}

// enabled lists the enabled elements with one of roles (and passing filter, when set), in
// page order.
func enabled(nodes []*snapshot.Node, roles map[string]bool, filter func(*snapshot.Node) bool) []*snapshot.Node {
	var hits []*snapshot.Node
	for _, n := range nodes {
		if n.Ref != "" && roles[n.Role] && !n.Has("disabled") && (filter == nil || filter(n)) {
			hits = append(hits, n)
		}
	}
	return hits
}

// onlyOne picks the single enabled element with one of roles.
func onlyOne(nodes []*snapshot.Node, roles map[string]bool, filter func(*snapshot.Node) bool, mk func(*snapshot.Node) actions.Action) Result {
	hits := enabled(nodes, roles, filter)
	if roles["textbox"] && len(hits) > 1 {
		// "the text field": a <select> is no text field.
		var typable []*snapshot.Node
		for _, n := range hits {
			if !isSelectLike(n) {
				typable = append(typable, n)
			}
		}
		if len(typable) > 0 {
			hits = typable
		}
	}
	switch len(hits) {
	case 1:
		return Result{Outcome: Matched, Action: ptr(mk(hits[0])), Candidates: cands(hits)}
	case 0:
		return Result{Outcome: NotFound, Reason: "no such field on this page"}
	}
	return Result{Outcome: Ambiguous, Reason: fmt.Sprintf("%d possible elements; name one", len(hits)), Candidates: cands(hits)}
}

// near lists elements of the roles sharing a word with the phrase (for the model's benefit).
func near(nodes []*snapshot.Node, roles map[string]bool, phrase string) []Candidate {
	words := strings.Fields(phrase)
	var out []*snapshot.Node
	for _, n := range nodes {
		if n.Ref == "" || !roles[n.Role] {
			continue
		}
		nn := " " + normName(n.Label()) + " "
		for _, w := range words {
			if len(w) > 2 && strings.Contains(nn, " "+w) {
				out = append(out, n)
				break
			}
		}
		if len(out) >= 8 {
			break
		}
	}
	return cands(out)
}

func cands(ns []*snapshot.Node) []Candidate {
	out := make([]Candidate, 0, len(ns))
	for _, n := range ns {
		out = append(out, Candidate{Ref: n.Ref, Role: n.Role, Name: n.Label()})
	}
	return out
}

func ptr(a actions.Action) *actions.Action { return &a }

// options returns the names of option elements under the element with ref.
func options(nodes []*snapshot.Node, ref string) []string {
	var out []string
	for _, n := range nodes {
		if n.Ref != ref {
			continue
		}
		out = append(out, n.Options...)
		for _, d := range n.Descendants() {
			if d.Role == "option" {
				out = append(out, d.Name)
			}
		}
	}
	return out
}

func containsFold(list []string, s string) bool {
	for _, x := range list {
		if normName(x) == normName(s) {
			return true
		}
	}
	return false
}

// matchTab finds the one tab whose title or host contains the phrase.
func matchTab(mk func(tab string) actions.Action, phrase string, tabs []Tab) Result {
	p := parseTarget(phrase).phrase
	if p == "" {
		return Result{Outcome: NotSimple, Reason: "which tab?"}
	}
	var hits []Tab
	exact := []Tab{}
	for _, t := range tabs {
		title := normName(t.Title)
		host := normName(hostOf(t.URL))
		if title == p || strings.TrimPrefix(host, "www ") == p {
			exact = append(exact, t)
		}
		if strings.Contains(" "+title+" ", " "+p) || strings.Contains(host, p) {
			hits = append(hits, t)
		}
	}
	if len(exact) == 1 {
		hits = exact
	}
	cs := make([]Candidate, 0, len(hits))
	for _, t := range hits {
		cs = append(cs, Candidate{Tab: t.ID, Name: t.Title})
	}
	sort.Slice(cs, func(i, j int) bool { return cs[i].Name < cs[j].Name })
	switch len(hits) {
	case 1:
		return Result{Outcome: Matched, Action: ptr(mk(hits[0].ID)), Candidates: cs}
	case 0:
		return Result{Outcome: NotFound, Reason: fmt.Sprintf("no shared tab matches %q", p)}
	}
	return Result{Outcome: Ambiguous, Reason: fmt.Sprintf("%d tabs match %q", len(hits), p), Candidates: cs}
}

func hostOf(u string) string {
	if i := strings.Index(u, "://"); i >= 0 {
		u = u[i+3:]
	}
	if i := strings.IndexAny(u, "/?#"); i >= 0 {
		u = u[:i]
	}
	return u
}

// describe summarises a page from its page model: headings, then counts of controls, then the
// first runs of text.
func describe(nodes []*snapshot.Node) string {
	var heads, texts []string
	counts := map[string]int{}
	for _, n := range nodes {
		switch {
		case n.Role == "heading" && n.Name != "":
			heads = append(heads, n.Name)
		case n.IsText() && n.Text != "":
			texts = append(texts, n.Text)
		case n.Role == "paragraph" && n.Name != "":
			texts = append(texts, n.Name)
		}
		if n.Ref != "" {
			counts[n.Role]++
		}
	}
	var b strings.Builder
	if len(heads) > 0 {
		fmt.Fprintf(&b, "Headings: %s.\n", strings.Join(first(heads, 8), "; "))
	}
	var parts []string
	for _, r := range []string{"link", "button", "textbox", "checkbox", "combobox", "tab", "img"} {
		if counts[r] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[r], plural(r, counts[r])))
		}
	}
	if len(parts) > 0 {
		fmt.Fprintf(&b, "Controls: %s.\n", strings.Join(parts, ", "))
	}
	if len(texts) > 0 {
		fmt.Fprintf(&b, "Text: %s", strings.Join(first(texts, 5), " "))
	}
	if b.Len() == 0 {
		return "The page looks empty."
	}
	return strings.TrimSpace(b.String())
}

func first(s []string, n int) []string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

func plural(role string, n int) string {
	names := map[string]string{"textbox": "text field", "combobox": "drop-down", "img": "image"}
	w := role
	if v, ok := names[role]; ok {
		w = v
	}
	if n != 1 {
		w += "s"
	}
	return w
}
