package actions

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/tabrelay/tabrelay/snapshot"
)

// Search finds elements anywhere on the page, frames included, whatever a snapshot's budget
// showed: by words, role or a regular expression (all given must match).
type Search struct {
	Text  string `json:"text,omitempty" jsonschema:"words (any case)" cli:"text?"`
	Role  string `json:"role,omitempty" jsonschema:"e.g. button"`
	Regex string `json:"regex,omitempty"`
	// Limit caps the matches answered (default 20).
	Limit int `json:"limit,omitempty" tool:"-" jsonschema:"most matches answered (default 20)"`

	re *regexp.Regexp
}

// SearchMatch is one element search found: its ref (for text, the nearest element with a ref
// around it), its outline line and the nearest named element around it.
type SearchMatch struct {
	Ref     string `json:"ref,omitempty"`
	Line    string `json:"line"`
	Context string `json:"context,omitempty"`
}

// Validate checks that something is asked and that the regular expression compiles.
func (p *Search) Validate() error {
	if p.Text == "" && p.Role == "" && p.Regex == "" {
		return phrase("needs text, role or regex")
	}
	if p.Limit < 0 {
		return phrase("limit must be 0 (the default, 20) or more")
	}
	if p.Regex != "" {
		re, err := regexp.Compile(p.Regex)
		if err != nil {
			return fmt.Errorf("bad regex %q: %w", p.Regex, err)
		}
		p.re = re
	}
	p.Role = strings.ToLower(p.Role)
	return nil
}

// matches reports whether n is what p asks for.
func (p *Search) matches(n *snapshot.Node) bool {
	if p.Role != "" && n.Role != p.Role {
		return false
	}
	if p.Text == "" && p.re == nil {
		return true
	}
	hay := n.Words()
	if n.Inferred != "" {
		hay += " " + n.Inferred // an icon-only control is found by the name the outline shows
	}
	if n.URL != "" {
		hay += " " + n.URL
	}
	if p.Text != "" && !strings.Contains(strings.ToLower(hay), strings.ToLower(p.Text)) {
		return false
	}
	return p.re == nil || p.re.MatchString(hay)
}

// SearchPage answers the elements of snap's page model that p (validated) asks for, at most
// p.Limit (default 20) of them, and how many matched in all. A text match answers the nearest
// element with a ref around the text. Elements named exactly as the text come first; when
// there are some and no limit is given, only the first few ([nearMatches]) of the others follow,
// in document order.
func SearchPage(snap *snapshot.Snapshot, p *Search) (found []SearchMatch, total int) {
	limit := p.Limit
	if limit == 0 {
		limit = 20
	}
	seen := map[string]bool{}
	var exact, other []SearchMatch
	for _, n := range snap.Nodes() {
		if n.Role == "document" || !p.matches(n) {
			continue
		}
		m := SearchMatch{Ref: n.Ref, Line: snap.Line(n)}
		if n.IsText() {
			// the sentence that holds the match, not the text's first characters
			m.Line = "text: " + p.excerpt(n.Text)
		}
		if m.Ref == "" {
			for a := n.Parent(); a != nil; a = a.Parent() {
				if a.Ref != "" {
					m.Ref = a.Ref
					break
				}
			}
		}
		for a := n.Parent(); a != nil && a.Role != "document"; a = a.Parent() {
			if a.Name != "" {
				m.Context = snap.Line(a)
				break
			}
		}
		if m.Context == "" && n.IsText() {
			// text in no named element: the heading it falls under says where it is
			if h := headingBefore(snap, n); h != nil {
				m.Context = snap.Line(h)
			}
		}
		key := m.Ref + "\n" + m.Line
		if seen[key] {
			continue
		}
		seen[key] = true
		total++
		switch {
		case p.Text != "" && strings.EqualFold(strings.TrimSpace(n.Label()), strings.TrimSpace(p.Text)):
			if len(exact) < limit {
				exact = append(exact, m)
			}
		case len(other) < limit:
			other = append(other, m)
		}
	}
	if len(exact) > 0 && p.Limit == 0 {
		other = other[:min(len(other), nearMatches)]
	}
	found = append(exact, other...)
	return found[:min(len(found), limit)], total
}

// excerptMax is how many characters of a text node a text match shows around the match.
const excerptMax = 300

// excerpt is the part of text a text match shows: the sentence holding the first match of p,
// cut to about [excerptMax] characters around it, with "…" where it was cut.
func (p *Search) excerpt(text string) string {
	text = strings.Join(strings.Fields(text), " ")
	start, end := 0, 0
	switch {
	case p.re != nil:
		if loc := p.re.FindStringIndex(text); loc != nil {
			start, end = loc[0], loc[1]
		}
	case p.Text != "":
		// folded rune by rune, so that rune i of the folded text is rune i of text
		r, want := []rune(text), []rune(strings.Join(strings.Fields(p.Text), " "))
		if i := runeIndex(foldRunes(r), foldRunes(want)); i >= 0 {
			start, end = len(string(r[:i])), len(string(r[:i+len(want)]))
		}
	}
	if len(text) <= excerptMax {
		return text
	}
	// the sentence around the match: from after the last sentence end before it to the next
	// sentence end after it
	from := 0
	if i := strings.LastIndexAny(text[:start], ".!?"); i >= 0 {
		from = i + 1
	}
	to := len(text)
	if i := strings.IndexAny(text[end:], ".!?"); i >= 0 {
		to = end + i + 1
	}
	// keep it within excerptMax, centred on the match
	if to-from > excerptMax {
		mid := (start + end) / 2
		from = max(from, mid-excerptMax/2)
		to = min(to, from+excerptMax)
	}
	from, to = runeStart(text, from), runeStart(text, to)
	out := strings.TrimSpace(text[from:to])
	if from > 0 {
		out = "…" + out
	}
	if to < len(text) {
		out += "…"
	}
	return out
}

// foldRunes lowers each rune of r (one rune for one).
func foldRunes(r []rune) []rune {
	out := make([]rune, len(r))
	for i, c := range r {
		out[i] = unicode.ToLower(c)
	}
	return out
}

// runeIndex is the index in runes of the first occurrence of want in s, -1 if none.
func runeIndex(s, want []rune) int {
	if len(want) == 0 {
		return 0
	}
	for i := 0; i+len(want) <= len(s); i++ {
		if slices.Equal(s[i:i+len(want)], want) {
			return i
		}
	}
	return -1
}

// runeStart moves byte offset i back to the start of the rune it falls in.
func runeStart(s string, i int) int {
	for i > 0 && i < len(s) && !utf8.RuneStart(s[i]) {
		i--
	}
	return i
}

// headingBefore is the last heading before n in document order (nil when none).
func headingBefore(snap *snapshot.Snapshot, n *snapshot.Node) *snapshot.Node {
	var h *snapshot.Node
	for _, o := range snap.Nodes() {
		if o == n {
			return h
		}
		if o.Role == "heading" && o.Name != "" {
			h = o
		}
	}
	return nil
}

// nearMatches is how many matches not named exactly as the text follow the exact ones by
// default: the exact ones are most likely what was looked for.
const nearMatches = 5

// search reads the whole page (every frame, no budget) and answers the matching elements.
func (r *runner) search(ctx context.Context, p *Search) (*Result, error) {
	snap, err := r.ts.tab.Snapshot(ctx, snapshot.Options{})
	if err != nil {
		return nil, err
	}
	found, total := SearchPage(snap, p)
	var b strings.Builder
	if total == 1 {
		b.WriteString("1 match")
	} else {
		fmt.Fprintf(&b, "%d matches", total)
	}
	if total > len(found) {
		b.WriteString(", " + strconv.Itoa(len(found)) + " shown (narrow the search for others)")
	}
	for _, m := range found {
		b.WriteString("\n- " + m.Line)
		if m.Ref != "" && !strings.Contains(m.Line, "[ref="+m.Ref+"]") {
			b.WriteString(" (in " + m.Ref + ")")
		}
		if m.Context != "" {
			b.WriteString(" — in " + m.Context)
		}
	}
	return &Result{Message: b.String(), Matches: found, URL: snap.URL, Title: snap.Title}, nil
}
