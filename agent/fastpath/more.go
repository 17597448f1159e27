package fastpath

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/tabrelay/tabrelay/agent/actions"
	"github.com/tabrelay/tabrelay/snapshot"
)

func click(n *snapshot.Node) actions.Action { return actions.Do(actions.Click{Ref: n.Ref}) }

func typeInto(text string) func(*snapshot.Node) actions.Action {
	return func(n *snapshot.Node) actions.Action { return actions.Do(actions.Type{Ref: n.Ref, Text: text}) }
}

// typeOrSelect turns typing into a <select> ("set color to Blue") into choosing that option,
// and refuses when the list has no such option.
func typeOrSelect(r Result, nodes []*snapshot.Node) Result {
	if !r.OK() || r.Action == nil {
		return r
	}
	ty, ok := r.Action.Params.(*actions.Type)
	if !ok {
		return r
	}
	var n *snapshot.Node
	for _, x := range nodes {
		if x.Ref == ty.Ref {
			n = x
			break
		}
	}
	if n != nil && dateRoles[n.Role] {
		return fillDate(n, ty.Text, r)
	}
	if !isSelectLike(n) {
		return r
	}
	o := optionNamed(options(nodes, ty.Ref), ty.Text)
	if o == "" {
		return Result{Outcome: NotFound, Reason: fmt.Sprintf("%q is not an option of that list", ty.Text), Candidates: r.Candidates}
	}
	return Result{Outcome: Matched, Action: ptr(actions.Do(actions.Select{Ref: ty.Ref, Values: []string{o}})), Candidates: r.Candidates}
}

// isSelectLike reports whether n is a list to choose from (a native <select>) rather than a
// field to type in.
func isSelectLike(n *snapshot.Node) bool {
	if n == nil || (n.Role != "combobox" && n.Role != "listbox") {
		return false
	}
	if len(n.Options) > 0 {
		return true
	}
	for _, d := range n.Descendants() {
		if d.Role == "option" {
			return true
		}
	}
	return false
}

// optionNamed returns the option whose name is value, ignoring case, punctuation and spacing.
func optionNamed(opts []string, value string) string {
	for _, o := range opts {
		if normName(o) == normName(value) {
			return o
		}
	}
	return ""
}

// selectByOption chooses value in the one enabled list that offers it.
func selectByOption(nodes []*snapshot.Node, value string) Result {
	var hits []*snapshot.Node
	var opt string
	for _, n := range nodes {
		if n.Ref == "" || !isSelectLike(n) || n.Has("disabled") {
			continue
		}
		if o := optionNamed(options(nodes, n.Ref), value); o != "" && len(n.Options) > 0 {
			hits, opt = append(hits, n), o
		}
	}
	switch len(hits) {
	case 0:
		return Result{Outcome: NotFound, Reason: fmt.Sprintf("no list offers %q", value)}
	case 1:
		return Result{Outcome: Matched, Action: ptr(actions.Do(actions.Select{Ref: hits[0].Ref, Values: []string{opt}})), Candidates: cands(hits)}
	}
	return Result{Outcome: Ambiguous, Reason: fmt.Sprintf("%d lists offer %q; name one", len(hits), value), Candidates: cands(hits)}
}

// shown is the text an element shows besides its name (a button named Close showing "x").
func shown(n *snapshot.Node) string {
	if n.Value != "" {
		return n.Value
	}
	var parts []string
	for _, k := range n.Children {
		if k.IsText() {
			parts = append(parts, k.Text)
		}
	}
	return strings.Join(parts, " ")
}

// outermost drops the hits nested in another hit: a tab and the link inside it are one target.
func outermost(hits []*snapshot.Node) []*snapshot.Node {
	if len(hits) < 2 {
		return hits
	}
	out := hits[:0:0]
	for _, n := range hits {
		nested := false
		for _, a := range hits {
			if a != n && a.Contains(n) {
				nested = true
				break
			}
		}
		if !nested {
			out = append(out, n)
		}
	}
	return out
}

// inLists keeps the nodes inside a list item, table row or article (search results).
func inLists(nodes []*snapshot.Node) []*snapshot.Node {
	var out []*snapshot.Node
	for _, n := range nodes {
		if n.Closest("listitem", "row", "article") != nil {
			out = append(out, n)
		}
	}
	return out
}

var dialogRoles = roleSet("dialog", "alertdialog")

// dialogs lists the dialogs whose name fits phrase ("" for any).
func dialogs(nodes []*snapshot.Node, phrase string) []*snapshot.Node {
	phrase = normName(phrase)
	var out []*snapshot.Node
	for _, n := range nodes {
		if dialogRoles[n.Role] && (phrase == "" || score(n.Name, phrase) > 0) {
			out = append(out, n)
		}
	}
	return out
}

// scope returns the elements of the one dialog named by phrase ("cookie dialog"), or a result
// saying why there is no such one dialog.
func scope(nodes []*snapshot.Node, phrase string) ([]*snapshot.Node, Result) {
	name := strings.TrimSpace(regexp.MustCompile(`(?:dialog|modal|popup|pop up)$`).ReplaceAllString(phrase, ""))
	ds := dialogs(nodes, name)
	switch len(ds) {
	case 0:
		return nil, Result{Outcome: NotFound, Reason: "no dialog is open on this page"}
	case 1:
		return ds[0].Descendants(), Result{}
	}
	return nil, Result{Outcome: Ambiguous, Reason: fmt.Sprintf("%d dialogs are open; name one", len(ds)), Candidates: cands(ds)}
}

// closeNames are the names of a dialog's close button.
var closeNames = map[string]bool{"close": true, "x": true, "dismiss": true, "close dialog": true, "close this dialog": true, "close modal": true}

// closeDialog clicks the close button of the one open dialog (named by name, if given), or the
// element the command names ("by clicking "x"").
func closeDialog(nodes []*snapshot.Node, name, by string) Result {
	ds := dialogs(nodes, name)
	switch len(ds) {
	case 0:
		return Result{Outcome: NotFound, Reason: "no dialog is open on this page"}
	case 1:
	default:
		return Result{Outcome: Ambiguous, Reason: fmt.Sprintf("%d dialogs are open; name one", len(ds)), Candidates: cands(ds)}
	}
	inner := ds[0].Descendants()
	if by != "" {
		return matchElement(inner, by, actRoles, click)
	}
	var hits []*snapshot.Node
	for _, n := range inner {
		if n.Ref != "" && actRoles[n.Role] && !n.Has("disabled") && (closeNames[normName(n.Name)] || closeNames[normName(shown(n))] || strings.TrimSpace(shown(n)) == "×") {
			hits = append(hits, n)
		}
	}
	if len(hits) != 1 {
		return Result{Outcome: NotFound, Reason: fmt.Sprintf("the dialog has %d close buttons; say which to press", len(hits)), Candidates: cands(hits)}
	}
	return Result{Outcome: Matched, Action: ptr(click(hits[0])), Candidates: cands(hits)}
}

// matchBare reads a command that is only a name ("submit", "accept all") as a click on the one
// button, link or tab called exactly that.
func matchBare(nodes []*snapshot.Node, cmd string) Result {
	phrase := normName(cmd)
	var hits []*snapshot.Node
	for _, n := range nodes {
		if n.Ref != "" && actRoles[n.Role] && !n.Has("disabled") && score(n.Name, phrase) == 3 {
			hits = append(hits, n)
		}
	}
	hits = outermost(hits)
	if len(hits) != 1 {
		return Result{Outcome: NotSimple, Reason: ReasonUnread}
	}
	return Result{Outcome: Matched, Action: ptr(click(hits[0])), Candidates: cands(hits)}
}

// foldAccent maps accented Latin letters to their base letter ("français" matches "francais").
func foldAccent(r rune) rune {
	if r < 0xC0 || r > 0x17F {
		return r
	}
	for base, set := range accentSets {
		if strings.ContainsRune(set, r) {
			return base
		}
	}
	return r
}

var accentSets = map[rune]string{
	'a': "àáâãäåāăą", 'c': "çćĉċč", 'e': "èéêëēĕėęě", 'i': "ìíîïĩīĭį", 'n': "ñńņň", 'o': "òóôõöøōŏő",
	'u': "ùúûüũūŭůűų", 'y': "ýÿ", 's': "śŝşš", 'z': "źżž", 'g': "ĝğġģ", 'l': "ĺļľŀł", 'r': "ŕŗř", 'd': "ďđ", 't': "ţťŧ",
}

// listRe cuts a list of values: "Panama, Congo and Togo".
var listRe = regexp.MustCompile(`\s*,\s*(?:and\s+)?|\s+and\s+`)

// listValues cuts a said list of values into its values; a joint inside one of opts (the
// list's options) is no joint: "Guyana, Antigua and Barbuda" is two countries.
func listValues(s string, opts []string) []string {
	var pieces []string // values and joints, alternately
	last := 0
	for _, m := range listRe.FindAllStringIndex(s, -1) {
		pieces = append(pieces, s[last:m[0]], s[m[0]:m[1]])
		last = m[1]
	}
	pieces = append(pieces, s[last:])
	clean := func(v string) string { return strings.Trim(strings.TrimSpace(v), quotes) }
	var out []string
	for i := 0; i < len(pieces); i += 2 {
		// the longest run of values from i, joints and all, that is one option
		end := i
		for j := i + 2; j < len(pieces); j += 2 {
			if containsFold(opts, clean(strings.Join(pieces[i:j+1], ""))) {
				end = j
			}
		}
		if v := clean(strings.Join(pieces[i:end+1], "")); v != "" {
			out = append(out, v)
		}
		i = end
	}
	return out
}

// clickedNode is the element a matched click acts on (nil for anything else).
func clickedNode(r Result, nodes []*snapshot.Node) *snapshot.Node {
	if !r.OK() || r.Action == nil {
		return nil
	}
	if c, ok := r.Action.Params.(*actions.Click); ok {
		return findRef(nodes, c.Ref)
	}
	return nil
}

// nearLabel is the text that labels an unnamed field on screen: the text of the nearest
// enclosing element that holds no other field ("Username" in <p>Username <input></p>), or "".
func nearLabel(n *snapshot.Node) string {
	a := n.Parent()
	for depth := 0; a != nil && depth < 2; a, depth = a.Parent(), depth+1 {
		fields := 0
		var words []string
		for _, d := range a.Descendants() {
			if d.Ref != "" && (textRoles[d.Role] || checkRoles[d.Role] || selectRoles[d.Role]) {
				fields++
			}
			if d.IsText() {
				words = append(words, d.Text)
			}
		}
		switch {
		case fields > 1:
			return ""
		case len(words) > 0:
			return strings.Join(words, " ")
		case a.Name != "" && a.Ref == "":
			return a.Name
		}
	}
	return ""
}

// LeavesPage reports whether the matched action leaves the page's elements as they are: typing
// into a plain text field, filling a date or time field. A compound command whose later part
// names nothing on the page after such parts only will not find it after them either.
func LeavesPage(r Result, page *snapshot.Snapshot) bool {
	if !r.OK() || r.Action == nil {
		return false
	}
	nodes := page.Nodes()
	switch p := r.Action.Params.(type) {
	case *actions.Type:
		n := findRef(nodes, p.Ref)
		return n != nil && n.Role == "textbox" && !p.Submit
	case *actions.Fill:
		for _, f := range p.Fields {
			if n := findRef(nodes, f.Ref); n == nil || !dateRoles[n.Role] {
				return false
			}
		}
		return true
	}
	return false
}
