package snapshot

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// A page summary says in a few header lines what a page offers before the outline shows it:
// its forms (fields and submit buttons with refs), its collections (what repeats and how
// many), its main actions and whether the user looks signed in. It is computed from the page
// model alone (never from the text), so it holds for any way the tree was built.

// Summary is what a page offers, read from its page model; Snapshot.Summary holds it and the
// header renders it (capped to a few lines).
type Summary struct {
	// Forms are the page's forms and search boxes, in document order.
	Forms []Form `json:"forms,omitempty"`
	// Collections are the page's repeated items (rows, cards, results), largest first.
	Collections []CollectionInfo `json:"collections,omitempty"`
	// Actions are the main buttons outside forms, collections and navigation, in order.
	Actions []Control `json:"actions,omitempty"`
	// Account is "signed in" or "signed out" when the page shows a sign-out control (or an
	// account menu) or says it is signed in ("Signed in!") without a password field, or shows a
	// sign-in control or password field; "" when it shows none of these.
	Account string `json:"account,omitempty"`
	// AccountBy is the control (or password field) Account was judged by.
	AccountBy *Control `json:"accountBy,omitempty"`
}

// Form is a form (or search landmark) of the page: its fields and its submit buttons.
type Form struct {
	// Name is the form's accessible name ("" when it has none); Role is "form" or "search", or
	// "fields" for the fields outside any form (and the button that follows them).
	Name string `json:"name,omitempty"`
	Role string `json:"role"`
	// Fields are its text boxes, selects, checkboxes, radios…; Submit the button that likely
	// submits it (named so, else a form's last button), if any.
	Fields []Control `json:"fields,omitempty"`
	Submit []Control `json:"submit,omitempty"`
}

// Control is an element named in a summary.
type Control struct {
	Role string `json:"role"`
	Name string `json:"name,omitempty"`
	Ref  string `json:"ref,omitempty"`
}

// CollectionInfo is a repeated collection as a summary names it.
type CollectionInfo struct {
	// Role is the items' role ("row", "listitem", or the first role of a flat run: "heading").
	Role string `json:"role"`
	// Count is how many items repeat.
	Count int `json:"count"`
	// In is the container's line ("table", "list \"Results\""), "" at the top of the page.
	In string `json:"in,omitempty"`
	// Example is the first ref in the first item.
	Example string `json:"example,omitempty"`
}

// Collection is a run of repeated items among the children of one node: rows of a table,
// items of a list, or cards written as a flat run of siblings (a heading, text and a button,
// again and again). Each item is the run of siblings that makes it up (one node for a row).
type Collection struct {
	// Container holds the items (nil for the page's top level).
	Container *Node
	// Items are the items, each the sibling nodes making it up, in document order.
	Items [][]*Node
	// Role is the role of each item's first node.
	Role string
	// Headers are a table's column headers ("" for a column without one), nil elsewhere.
	Headers []string
}

// Size is the number of elements and texts the collection's items hold in all.
func (c Collection) Size() int {
	n := 0
	for _, it := range c.Items {
		for _, d := range it {
			n += 1 + len(d.Descendants())
		}
	}
	return n
}

// chrome are the roles of a page's navigation and footer, whose repeats are no collections.
var chrome = map[string]bool{"navigation": true, "banner": true, "contentinfo": true, "menubar": true, "tablist": true}

// minRepeat is how many alike items make a collection.
const minRepeat = 3

// itemishRoles are roles that are whole items on their own: alike siblings of these roles repeat
// whatever their children.
var itemishRoles = map[string]bool{"row": true, "listitem": true, "article": true, "option": true, "treeitem": true,
	"menuitem": true, "region": true, "group": true, "gridcell": true, "figure": true, "tab": true}

// Signature is what makes siblings alike for collections: the role and level, and for roles
// that are not items on their own, the roles of the children ("" for text).
func Signature(n *Node) string {
	if n.IsText() {
		return ""
	}
	var b strings.Builder
	b.WriteString(n.Role)
	for _, s := range n.States {
		if strings.HasPrefix(s, "level=") {
			b.WriteString("[" + s + "]")
		}
	}
	if itemishRoles[n.Role] {
		return b.String()
	}
	for _, k := range n.Children {
		b.WriteString(" " + k.Role)
	}
	return b.String()
}

// Collections finds the repeated collections under root (the page model's root), largest
// (most elements and texts) first, leaving out navigation, banners, footers and inline runs
// in paragraphs. A collection of rows is a table's body: a row of column headers is not an
// item, its headers are the collection's.
func Collections(root *Node) []Collection {
	var out []Collection
	if root == nil {
		return nil
	}
	var sizes []int
	root.Walk(func(n *Node) bool {
		if chrome[n.Role] || n.Role == "paragraph" {
			return false // menus and footers repeat links, paragraphs inline words, not records
		}
		if c, ok := collectionIn(n, minRepeat); ok {
			if n != root {
				c.Container = n
			}
			out = append(out, c)
			sizes = append(sizes, c.Size())
		}
		return true
	})
	idx := make([]int, len(out))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return sizes[b] - sizes[a] })
	sorted := make([]Collection, len(out))
	for i, j := range idx {
		sorted[i] = out[j]
	}
	return sorted
}

// CollectionIn is the repeated collection among n's children (at least least items alike),
// if any.
func CollectionIn(n *Node, least int) (Collection, bool) {
	c, ok := collectionIn(n, max(least, 1))
	if ok {
		c.Container = n
	}
	return c, ok
}

func collectionIn(n *Node, least int) (Collection, bool) {
	kids := n.Children
	if len(kids) < least {
		return Collection{}, false
	}
	var headerRow *Node
	if len(kids) > 0 && isHeaderRow(kids[0]) {
		headerRow, kids = kids[0], kids[1:]
	}
	// the anchor is the signature items start with: of those repeated at least least times,
	// the one whose items are most often whole (alike to the typical item) and least often cut
	// short, the earliest on a tie
	sigs := make([]string, len(kids))
	count := map[string]int{}
	for i, k := range kids {
		if notItems[k.Role] {
			continue
		}
		if sigs[i] = Signature(k); sigs[i] != "" {
			count[sigs[i]]++
		}
	}
	var items [][]*Node
	first, best := -1, 0
	for i, s := range sigs {
		if s == "" || count[s] < least {
			continue
		}
		cand, score, alike := segment(kids, sigs, i)
		if alike < least {
			count[s] = 0
			continue // not enough items alike
		}
		if first < 0 || score > best {
			items, first, best = cand, i, score
		}
		count[s] = 0 // tried
	}
	if first < 0 || best <= 0 && least > 1 {
		return Collection{}, false
	}
	c := Collection{Items: items, Role: items[0][0].Role}
	if c.Role == "row" {
		if headerRow == nil {
			headerRow = headerRowOf(n)
		}
		if headerRow != nil {
			for _, h := range headerRow.Children {
				if h.IsText() {
					c.Headers = append(c.Headers, h.Text)
				} else {
					c.Headers = append(c.Headers, h.Words())
				}
			}
		}
	}
	return c, true
}

// isHeaderRow reports whether n is a row of column headers.
// segment splits kids (whose signatures are sigs) into items starting at each node of the
// signature of kids[first], from first on: an item runs to the next start, the last one as far
// as the items before it do and only over signatures they hold. alike is the number of items
// alike to the most common one, score that less the number of items shorter than it.
func segment(kids []*Node, sigs []string, first int) (items [][]*Node, score, alike int) {
	anchor := sigs[first]
	var starts []int
	for i := first; i < len(kids); i++ {
		if sigs[i] == anchor {
			starts = append(starts, i)
		}
	}
	seen := map[string]bool{}
	if len(starts) > 1 {
		for _, s := range sigs[starts[0]:starts[len(starts)-1]] {
			seen[s] = true
		}
	}
	shapes := map[string]int{}
	typical, typicalLen := "", 0
	items = make([][]*Node, 0, len(starts))
	ends := make([]int, 0, len(starts))
	for i, s := range starts {
		end := len(kids)
		if i+1 < len(starts) {
			end = starts[i+1]
		} else {
			end = min(end, s+max(typicalLen, 1))
			for j := s + 1; j < end; j++ {
				if len(starts) > 1 && !seen[sigs[j]] {
					end = j
					break
				}
			}
		}
		items, ends = append(items, kids[s:end]), append(ends, end)
		sh := strings.Join(sigs[s:end], "|")
		if shapes[sh]++; shapes[sh] > shapes[typical] {
			typical, typicalLen = sh, end-s
		}
	}
	for i, s := range starts {
		switch {
		case ends[i]-s == typicalLen && strings.Join(sigs[s:ends[i]], "|") == typical:
			score++
			alike++
		case ends[i]-s < typicalLen:
			score--
		}
	}
	return items, score, alike
}

// notItems are roles whose repeats are no collection of records: forms and their fields.
var notItems = map[string]bool{"form": true, "search": true, "dialog": true, "alertdialog": true, "textbox": true,
	"searchbox": true, "combobox": true, "spinbutton": true, "slider": true, "checkbox": true, "radio": true, "switch": true, "datetime": true}

func isHeaderRow(n *Node) bool {
	if n.Role != "row" || len(n.Children) == 0 {
		return false
	}
	for _, k := range n.Children {
		if k.Role != "columnheader" {
			return false
		}
	}
	return true
}

// headerRowOf finds the row of column headers of the table around the rows under n.
func headerRowOf(n *Node) *Node {
	t := n
	if !slices.Contains([]string{"table", "grid", "treegrid"}, n.Role) {
		t = n.Closest("table", "grid", "treegrid")
	}
	if t == nil {
		return nil
	}
	var found *Node
	t.Walk(func(d *Node) bool {
		if found == nil && isHeaderRow(d) {
			found = d
		}
		return found == nil
	})
	return found
}

// fieldRole reports whether role is a form field's.
func fieldRole(role string) bool {
	switch role {
	case "textbox", "searchbox", "combobox", "checkbox", "radio", "switch", "slider", "spinbutton", "listbox", "datetime":
		return true
	}
	return false
}

var (
	signOutRe = regexp.MustCompile(`(?i)^\s*(sign[ -]?out|log[ -]?out|logoff|log off|abmelden|se déconnecter|déconnexion|cerrar sesión|sair|esci|ログアウト|退出登录)\b`)
	signInRe  = regexp.MustCompile(`(?i)^\s*(sign[ -]?in|log[ -]?in|anmelden|se connecter|connexion|iniciar sesión|entrar|accedi|ログイン|登录)\b`)
	// signedInRe is a page's own word that the person is signed in ("Signed in!", "You are
	// logged in as ada"), which outweighs a sign-in link left on the page.
	signedInRe = regexp.MustCompile(`(?i)^\W*(you('| a)re\s+)?(now\s+)?(signed|logged)\s+in\b|\b(signed|logged)\s+in\s+as\b`)
	accountRe  = regexp.MustCompile(`(?i)^\s*(my account|account menu|your account|account settings|user menu|profile menu)\s*$`)
)

// Summarize reads what the page under root offers (see [Summary]).
func Summarize(root *Node) *Summary {
	if root == nil {
		return nil
	}
	s := &Summary{}
	var forms []*Node
	var password, signIn, signOut, saysIn *Node
	root.Walk(func(n *Node) bool {
		switch {
		case n.Role == "form" || n.Role == "search":
			forms = append(forms, n)
		case n.Password && password == nil:
			password = n
		case saysIn == nil && (n.Role == "text" || n.Role == "heading" || n.Role == "status" || n.Role == "paragraph" || n.Role == "alert"):
			if t := strings.TrimSpace(n.Text + " " + n.Name); len(t) <= 80 && signedInRe.MatchString(t) {
				saysIn = n
			}
		}
		if n.Ref != "" && len(n.Name) <= 40 && (n.Role == "link" || n.Role == "button" || n.Role == "menuitem") {
			switch {
			case signOut == nil && signOutRe.MatchString(n.Name):
				signOut = n
			case signOut == nil && n.Role != "link" && accountRe.MatchString(n.Name):
				signOut = n
			case signIn == nil && signInRe.MatchString(n.Name):
				signIn = n
			}
		}
		return true
	})
	inForm := map[*Node]bool{}
	for _, f := range forms {
		if f.Closest("form", "search") != nil {
			continue // a form within a form is part of it
		}
		sf := Form{Name: f.Name, Role: f.Role}
		var buttons []*Node
		f.Walk(func(d *Node) bool {
			inForm[d] = true
			switch {
			case d.Ref == "":
			case fieldRole(d.Role):
				sf.Fields = append(sf.Fields, control(d))
			case d.Role == "button":
				buttons = append(buttons, d)
			}
			return true
		})
		if b := submitOf(buttons, true); b != nil {
			sf.Submit = []Control{control(b)}
		}
		if len(sf.Fields)+len(sf.Submit) > 0 {
			s.Forms = append(s.Forms, sf)
		}
	}
	inCollection := map[*Node]bool{}
	for _, c := range Collections(root) {
		if len(c.Items) > 0 && inCollection[c.Items[0][0]] || c.Container != nil && (inForm[c.Container] || c.Container.Role == "row") {
			continue // inside a larger one, a form's choices, or the columns of one row
		}
		ci := CollectionInfo{Role: c.Role, Count: len(c.Items)}
		if c.Container != nil {
			ci.In = line(c.Container, nil)
		}
		for _, it := range c.Items {
			for _, d := range it {
				d.Walk(func(x *Node) bool { inCollection[x] = true; return true })
			}
		}
		for _, d := range c.Items[0] {
			if ci.Example = firstRef(d); ci.Example != "" {
				break
			}
		}
		s.Collections = append(s.Collections, ci)
	}
	// fields outside any form (pages that script their forms) make one more, submitted by the
	// first button shortly after the last of them
	loose := Form{Role: "fields"}
	all := root.Descendants()
	last := -1
	for i, n := range all {
		if n.Ref != "" && fieldRole(n.Role) && !inForm[n] && !inCollection[n] {
			loose.Fields = append(loose.Fields, control(n))
			last = i
		}
	}
	if last >= 0 {
		var buttons []*Node
		for _, n := range all[last+1 : min(len(all), last+8)] {
			if n.Role == "button" && n.Ref != "" && !inCollection[n] && !inForm[n] {
				buttons = append(buttons, n)
			}
		}
		if b := submitOf(buttons, false); b != nil {
			loose.Submit = []Control{control(b)}
			inForm[b] = true
		}
		s.Forms = append(s.Forms, loose)
	}
	named := map[string]bool{}
	root.Walk(func(n *Node) bool {
		if inForm[n] || inCollection[n] || n.Role == "navigation" || n.Role == "banner" || n.Role == "contentinfo" {
			return false
		}
		if n.Role == "button" && n.Ref != "" && n.Name != "" && n != signOut && n != signIn && !named[n.Name] {
			named[n.Name] = true // the first of buttons alike stands for them
			s.Actions = append(s.Actions, control(n))
		}
		return true
	})
	switch {
	case signOut != nil:
		s.Account, s.AccountBy = "signed in", ptr(control(signOut))
	case saysIn != nil && password == nil:
		// the page says so, and asks for no password: a sign-in link left in a header does not
		// make it signed out
		s.Account, s.AccountBy = "signed in", &Control{Role: saysIn.Role, Name: clip(strings.TrimSpace(saysIn.Text+" "+saysIn.Name), 40)}
	case signIn != nil:
		s.Account, s.AccountBy = "signed out", ptr(control(signIn))
	case password != nil:
		s.Account, s.AccountBy = "signed out", ptr(control(password))
	}
	if len(s.Forms) == 0 && len(s.Collections) == 0 && len(s.Actions) == 0 && s.Account == "" {
		return nil
	}
	return s
}

func ptr[T any](v T) *T { return &v }

// submitRe names a button that submits what was filled in.
var submitRe = regexp.MustCompile(`(?i)^\s*(submit|send|save|sign[ -]?in|log[ -]?in|sign[ -]?up|register|create|continue|next|search|go|find|subscribe|apply|pay|place order|order|buy|confirm|ok|done|update|book|reserve|check ?out|absenden|senden|speichern|anmelden|envoyer|enregistrer|enviar|guardar|送信|登录|提交)\b`)

// submitOf is the button that likely submits a form: the first whose name says so, else (in a
// form element, where the submit button is usually last) the last one.
func submitOf(buttons []*Node, inForm bool) *Node {
	for _, b := range buttons {
		if submitRe.MatchString(b.Name) {
			return b
		}
	}
	if inForm && len(buttons) > 0 {
		return buttons[len(buttons)-1]
	}
	return nil
}

func control(n *Node) Control { return Control{Role: n.Role, Name: n.Label(), Ref: n.Ref} }

// summaryMax is the most bytes a summary's header lines take.
const summaryMax = 900

// summaryLimit is the most bytes the summary takes under o: summaryMax, and at most a fifth of
// a token budget or of a character cap.
func summaryLimit(o Options) int {
	limit := summaryMax
	if o.MaxTokens > 0 {
		limit = min(limit, o.MaxTokens*bytesPerToken/5)
	}
	if o.MaxChars > 0 {
		limit = min(limit, o.MaxChars/5)
	}
	return limit
}

// Summary limits: forms, fields per form, collections and actions named.
const (
	maxForms       = 3
	maxFormFields  = 6
	maxCollections = 3
	maxActions     = 5
)

// lineMax is the most bytes one summary line takes.
const lineMax = 300

// text renders the summary as header lines of at most limit bytes in all: whole lines only,
// the most useful first (account, forms, collections, actions), each line naming whole parts
// only and saying how many more it left out.
func (s *Summary) text(limit int, tools Tools) string {
	if s == nil {
		return ""
	}
	var lines []string
	if s.Account != "" {
		l := "# looks " + s.Account
		if c := s.AccountBy; c != nil {
			l += " (" + controlText(*c) + ")"
		}
		lines = append(lines, l)
	}
	if len(s.Forms) > 0 {
		var parts []string
		for _, f := range s.Forms[:min(len(s.Forms), maxForms)] {
			p := f.Role
			if f.Name != "" {
				p += " " + strconv.Quote(clip(f.Name, 40))
			}
			var in []string
			for _, c := range f.Fields[:min(len(f.Fields), maxFormFields)] {
				in = append(in, controlText(c))
			}
			if more := len(f.Fields) - maxFormFields; more > 0 {
				in = append(in, fmt.Sprintf("%d more", more))
			}
			fields := strings.Join(in, ", ")
			if len(f.Submit) > 0 {
				if fields != "" {
					fields += "; "
				}
				fields += "submit " + controlText(f.Submit[0])
			}
			parts = append(parts, p+" ("+fields+")")
		}
		lines = append(lines, joinParts("# forms: ", parts, "; ", "", len(s.Forms), "forms"))
	}
	if len(s.Collections) > 0 {
		var parts []string
		for _, c := range s.Collections[:min(len(s.Collections), maxCollections)] {
			p := fmt.Sprintf("%d %s", c.Count, plural(c.Role))
			if c.In != "" {
				p += " in " + clip(c.In, 60)
			}
			if c.Example != "" {
				p += " (first " + c.Example + ")"
			}
			parts = append(parts, p)
		}
		lines = append(lines, joinParts("# repeats: ", parts, "; ", " — "+tools.Records+" reads them as records", len(s.Collections), "collections"))
	}
	if len(s.Actions) > 0 {
		var parts []string
		for _, c := range s.Actions[:min(len(s.Actions), maxActions)] {
			parts = append(parts, controlText(c))
		}
		lines = append(lines, joinParts("# main actions: ", parts, ", ", "", len(s.Actions), "buttons"))
	}
	var b strings.Builder
	for _, l := range lines {
		l += "\n"
		if b.Len()+len(l) > limit {
			break
		}
		b.WriteString(l)
	}
	return b.String()
}

// joinParts writes prefix, as many whole parts as fit in lineMax bytes, how many of all
// (total) it left out, and suffix.
func joinParts(prefix string, parts []string, sep, suffix string, total int, what string) string {
	var b strings.Builder
	b.WriteString(prefix)
	n := 0
	for i, p := range parts {
		if i > 0 && b.Len()+len(sep)+len(p)+len(suffix)+20 > lineMax {
			break
		}
		if i > 0 {
			b.WriteString(sep)
		}
		b.WriteString(clip(p, lineMax-len(prefix)-len(suffix)-20))
		n++
	}
	if more := total - n; more > 0 {
		fmt.Fprintf(&b, "%s%d more %s", sep, more, what)
	}
	b.WriteString(suffix)
	return b.String()
}

func controlText(c Control) string {
	t := c.Role
	if c.Name != "" {
		t += " " + strconv.Quote(clip(c.Name, 40))
	}
	if c.Ref != "" {
		t += " " + c.Ref
	}
	return t
}
