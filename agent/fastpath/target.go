package fastpath

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/tabrelay/tabrelay/agent/actions"
	"github.com/tabrelay/tabrelay/snapshot"
)

// target is a parsed element phrase: "the 3rd input textbox", "a "text" widget", "the second
// button from the bottom", "the "x"".
type target struct {
	phrase string
	// raw is the phrase as said (lowercased, quotes and kind words off), for glyphs that
	// normName drops ("×", "⋮").
	raw   string
	roles map[string]bool // from kind words like "button"; nil if none
	// filter, when set, narrows the kind further than roles can ("text" widget: not a text area).
	filter func(*snapshot.Node) bool
	nth    int // an ordinal ("the second …"): 1-based, negative from the end (-1 last), 0 if none
	// anyOne: the phrase names a kind with an indefinite article ("a button"): any one of them.
	anyOne bool
	// literal is the phrase read with the ordinal as a word of the name ("first item"), for
	// elements whose names start with one.
	literal *target
	// inList limits the match to elements in a list item, row or article ("the second result").
	inList bool
}

// ordinalRe matches an ordinal before an element phrase: "second", "2nd", "last", "second to
// last".
var ordinalRe = regexp.MustCompile(`^(first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|last|penultimate|[1-9]\d*(?:st|nd|rd|th))(?:\s+(?:to\s+|from\s+)?last)?\s+`)

// fromEndRe matches a trailing "from the bottom" that counts an ordinal from the end.
var fromEndRe = regexp.MustCompile(`\s+(?:counting\s+)?from\s+(?:the\s+)?(top|bottom|start|end|beginning|left|right)$`)

var ordinals = map[string]int{"first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6,
	"seventh": 7, "eighth": 8, "ninth": 9, "tenth": 10, "last": -1, "penultimate": -2}

// ordinal reads an ordinal word or number ("second", "2nd", "last").
func ordinal(w string) int {
	if n, ok := ordinals[w]; ok {
		return n
	}
	n := 0
	for _, r := range w {
		if r < '0' || r > '9' {
			break
		}
		n = n*10 + int(r-'0')
	}
	return n
}

// pick returns the nth of hits (document order; negative counts from the end) and whether
// there is one.
func (tg target) pick(hits []*snapshot.Node) (*snapshot.Node, bool) {
	switch {
	case tg.nth < 0 && -tg.nth <= len(hits):
		return hits[len(hits)+tg.nth], true
	case tg.nth > 0 && tg.nth <= len(hits):
		return hits[tg.nth-1], true
	}
	return nil, false
}

// keep reports whether n is of the kind the phrase names.
func (tg target) keep(n *snapshot.Node, roles map[string]bool) bool {
	return n.Ref != "" && roles[n.Role] && (tg.filter == nil || tg.filter(n))
}

// ordinalResult settles a phrase with an ordinal: the nth hit, or not found.
func ordinalResult(tg target, hits []*snapshot.Node, mk func(*snapshot.Node) actions.Action) Result {
	if n, ok := tg.pick(hits); ok {
		return Result{Outcome: Matched, Action: ptr(mk(n)), Candidates: cands([]*snapshot.Node{n})}
	}
	return Result{Outcome: NotFound, Reason: fmt.Sprintf("there are only %d matching elements", len(hits)), Candidates: cands(hits)}
}

var articleRe = regexp.MustCompile(`^(?:the|a|an|any|this|that|my|our|your|on|at)\s+`)

// quotes are the quote marks around names.
const quotes = `"'“”‘’`

func parseTarget(p string) target {
	p = strings.Trim(strings.TrimSpace(p), quotes)
	fromEnd := false
	if m := fromEndRe.FindStringSubmatch(p); m != nil {
		p = strings.TrimSpace(p[:len(p)-len(m[0])])
		fromEnd = m[1] == "bottom" || m[1] == "end" || m[1] == "right"
	}
	anyOne := false
	for {
		m := articleRe.FindString(p)
		if m == "" {
			break
		}
		if w := strings.TrimSpace(m); w == "a" || w == "an" || w == "any" {
			anyOne = true
		}
		p = p[len(m):]
	}
	m := ordinalRe.FindStringSubmatch(p)
	if m == nil {
		tg := parseTargetWords(p)
		tg.anyOne = anyOne
		return tg
	}
	lit := parseTargetWords(p)
	lit.raw = strings.ReplaceAll(p, "-", " ")
	tg := parseTargetWords(strings.TrimSpace(p[len(m[0]):]))
	tg.nth, tg.literal = ordinal(m[1]), &lit
	if strings.Contains(m[0], "last") && m[1] != "last" {
		// "second to last", "2nd last": counted from the end
		tg.nth = -tg.nth
	}
	if fromEnd && tg.nth > 0 {
		tg.nth = -tg.nth
	}
	return tg
}

// textModifiers are words before a kind of field that only repeat it ("input textbox", "text
// input field").
var textModifiers = map[string]bool{"input": true, "text": true, "textbox": true, "entry": true, "edit": true}

// parseTargetWords reads an element phrase without article or ordinal.
func parseTargetWords(p string) target {
	p = strings.ReplaceAll(p, "-", " ")
	inList := strings.HasSuffix(p, "result") && (p == "result" || strings.HasSuffix(p, " result"))
	if inList {
		return target{phrase: normName(strings.TrimSuffix(strings.TrimSuffix(p, "result"), "search ")), roles: roleSet("link"), inList: true}
	}
	for _, h := range roleHints {
		if p == h.words {
			break
		}
		// "the link "sit"", "the button submit": a kind word before the name.
		if rest, ok := strings.CutPrefix(p, h.words+" "); ok && leadingHints[h.words] {
			rest = strings.Trim(rest, quotes)
			return target{phrase: normName(rest), raw: rest, roles: h.roles}
		}
	}
	rest, k, ok := kindOf(p)
	if !ok {
		raw := strings.Trim(p, quotes)
		return target{phrase: normName(raw), raw: raw}
	}
	tg := target{roles: k.roles}
	bare := strings.Trim(rest, quotes)
	switch {
	case k.generic && modifierKinds[bare] != nil:
		// "a "text" widget": the word before names the kind
		tg.roles, tg.filter = modifierKinds[bare], modifierFilter(bare)
		return tg
	case rest == "" && strings.HasPrefix(k.words, "search "):
		// "the search box" names the search field
		tg.phrase, tg.raw = "search", "search"
		return tg
	}
	for w := range textModifiers {
		if k.roles["textbox"] && (rest == w || strings.HasSuffix(rest, " "+w)) {
			rest = strings.TrimSpace(strings.TrimSuffix(rest, w))
		}
	}
	bare = strings.Trim(rest, quotes)
	tg.phrase, tg.raw = normName(bare), bare
	return tg
}

// modifierFilter tells a text field from a text area, which the page model both calls textbox.
func modifierFilter(word string) func(*snapshot.Node) bool {
	switch word {
	case "text", "textbox":
		return func(n *snapshot.Node) bool { return !n.Has("multiline") }
	case "textarea":
		return func(n *snapshot.Node) bool { return n.Has("multiline") }
	}
	return nil
}
