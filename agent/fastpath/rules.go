package fastpath

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/tabrelay/tabrelay/agent/actions"
	"github.com/tabrelay/tabrelay/snapshot"
)

// said is one command being matched: as said (for typed text, which keeps its case), normalized
// (lowercase, polite words off), and the page's elements and shared tabs it is matched against.
type said struct {
	original, cmd string
	nodes         []*snapshot.Node
	tabs          []Tab
	// letterCase is a case the text is to be typed in ("in all upper case letters"): "upper",
	// "lower" or "".
	letterCase string
}

// rule is one kind of command: its pattern and what it does with the match. ok false lets the
// next rule try.
type rule struct {
	name string
	re   *regexp.Regexp
	do   func(s *said, m []string) (r Result, ok bool)
}

// rules are tried in order before the older chain of [Match] (which they are replacing).
var rules = []rule{
	{name: "back", re: reBack, do: always(actions.Back{})},
	{name: "forward", re: reForward, do: always(actions.Forward{})},
	{name: "reload", re: reReload, do: always(actions.Reload{})},
	{name: "describe", re: reDescribe, do: func(s *said, _ []string) (Result, bool) {
		return Result{Outcome: Matched, Answer: describe(s.nodes)}, true
	}},
	{name: "scroll", re: reScroll, do: func(_ *said, m []string) (Result, bool) {
		dir := m[1]
		if dir == "" {
			dir = "down"
		}
		return act(actions.Do(actions.Scroll{Direction: dir})), true
	}},
	{name: "scroll to", re: reScrollTo, do: func(_ *said, m []string) (Result, bool) {
		dir := map[string]string{"top": "top", "start": "top", "bottom": "bottom", "end": "bottom"}[m[1]]
		return act(actions.Do(actions.Scroll{Direction: dir})), true
	}},
	{name: "page up or down", re: rePage, do: func(_ *said, m []string) (Result, bool) {
		return act(actions.Do(actions.Press{Key: keyNames["page "+m[1]]})), true
	}},
	{name: "expand", re: regexp.MustCompile(`^(expand|collapse|unfold|fold) (.+)$`), do: expand},
	{name: "type as", re: regexp.MustCompile(`^(?:type|enter|write|input|put|insert|fill in|set) (.+?) as (?:the |a |an )?(.+)$`), do: typeAs},
}

// always answers with one action, whatever the match.
func always(p any) func(*said, []string) (Result, bool) {
	return func(*said, []string) (Result, bool) { return act(actions.Do(p)), true }
}

// applyRules runs the first rule that answers s.
func applyRules(s *said) (Result, bool) {
	for _, r := range rules {
		if m := r.re.FindStringSubmatch(s.cmd); m != nil {
			if res, ok := r.do(s, m); ok {
				return res, true
			}
		}
	}
	return Result{}, false
}

// whereRe is a trailing word that places a phrase on screen, which names nothing ("the section
// below").
var whereRe = regexp.MustCompile(`\s+(?:below|above|underneath|beneath|here|on (?:the|this) page)$`)

// expand reads "expand the section below", "collapse the details": a click on the one element
// the phrase names that is collapsed (for expand) or expanded (for collapse); an element
// already so is left alone, with the reason.
func expand(s *said, m []string) (Result, bool) {
	open := m[1] == "expand" || m[1] == "unfold"
	phrase := whereRe.ReplaceAllString(m[2], "")
	r := matchElement(s.nodes, phrase, clickRoles, click)
	if !r.OK() {
		return r, true
	}
	n := findRef(s.nodes, r.Candidates[0].Ref)
	if n != nil && n.Has("expanded") == open {
		state := map[bool]string{true: "expanded", false: "collapsed"}[open]
		return Result{Outcome: NotFound, Reason: fmt.Sprintf("%s %q is already %s", n.Role, n.Name, state), Candidates: r.Candidates}, true
	}
	return r, true
}

// typeAs reads "Enter 11/23/2016 as the date", "type ada as the username": the value into the
// field the words after "as" name.
func typeAs(s *said, m []string) (Result, bool) {
	text, r := s.value(m[1])
	if r != nil {
		return *r, true
	}
	return typeOrSelect(matchElement(s.nodes, m[2], textRoles, typeInto(text)), s.nodes), true
}

// caseRe is a letter case the text is to be typed in: "in all upper case letters", "in
// lowercase".
var caseRe = regexp.MustCompile(`\s+(?:in|using|with) (?:all )?(upper|lower|capital|small)(?:[ -]?case)?(?: letters| characters)?\b|\s+in (?:all )?(caps|capitals)\b`)

// takeLetterCase removes a letter-case phrase from the command and returns it ("upper",
// "lower" or "").
func takeLetterCase(cmd string) (string, string) {
	m := caseRe.FindStringSubmatchIndex(cmd)
	if m == nil {
		return cmd, ""
	}
	w := cmd[m[2]:m[3]]
	if m[2] < 0 {
		w = cmd[m[4]:m[5]]
	}
	c := map[string]string{"upper": "upper", "capital": "upper", "caps": "upper", "capitals": "upper", "lower": "lower", "small": "lower"}[w]
	return cmd[:m[0]] + cmd[m[1]:], c
}

// namedValueRe is a value said with the name of what it is: `the password "x1"`.
var namedValueRe = regexp.MustCompile(`^(?:the |a |an |my )?[a-z][a-z -]{0,30}? ?["“]([^"”]*)["”]$`)

// referenceRe is a value that refers to something rather than being the text: "the value of
// Color", "the answer", "the text above": typing it would be a guess.
var referenceRe = regexp.MustCompile(`^(?:the|this|that|its|their|his|her|your|my|our) \S`)

// value returns the text to type for the span of the command that says it (`"Jerald"`,
// `the password "x1"`, `hello`), in the letter case asked for; or a refusal when the span
// refers to a text instead of saying it.
func (s *said) value(span string) (string, *Result) {
	text := originalSpan(s.original, span)
	if m := namedValueRe.FindStringSubmatch(strings.TrimSpace(originalQuoted(s.original, span))); m != nil {
		text = m[1]
	} else if referenceRe.MatchString(span) {
		return "", &Result{Outcome: NotSimple, Reason: fmt.Sprintf("%q refers to a text rather than saying it; say the text in quotes", span)}
	}
	switch s.letterCase {
	case "upper":
		text = strings.ToUpper(text)
	case "lower":
		text = strings.ToLower(text)
	}
	return text, nil
}

// originalQuoted is the span of the original command, quotes kept.
func originalQuoted(original, lower string) string {
	orig := strings.Join(strings.Fields(strings.TrimSpace(original)), " ")
	if i := strings.Index(strings.ToLower(orig), lower); i >= 0 && len(strings.ToLower(orig)) == len(orig) {
		return orig[i : i+len(lower)]
	}
	return lower
}

// fieldValue converts a typed text to what the field holds: a date for a date input as
// YYYY-MM-DD, a time for a time input as HH:MM (the inputs' own value formats); ok false when
// the text is no date or time.
func fieldValue(role, text string) (string, bool) {
	switch role {
	case "date":
		return parseDate(text)
	case "InputTime", "time":
		return parseTime(text)
	case "DateTime":
		d, t, found := strings.Cut(strings.TrimSpace(text), " ")
		if !found {
			d, t, found = strings.Cut(text, "T")
		}
		dv, ok1 := parseDate(d)
		tv, ok2 := parseTime(t)
		if !found || !ok1 || !ok2 {
			return "", false
		}
		return dv + "T" + tv, true
	}
	return "", false
}

var (
	numDateRe  = regexp.MustCompile(`^(\d{1,4})[/.-](\d{1,2})[/.-](\d{1,4})$`)
	wordDateRe = regexp.MustCompile(`^(?:([a-z]+)\.? (\d{1,2})(?:st|nd|rd|th)?,? (\d{4})|(\d{1,2})(?:st|nd|rd|th)? (?:of )?([a-z]+)\.?,? (\d{4}))$`)
	timeRe     = regexp.MustCompile(`^(\d{1,2})(?::(\d{2}))?(?::(\d{2}))?\s*(?:([ap])\.?\s*m\.?)?$`)
)

var months = map[string]int{"january": 1, "february": 2, "march": 3, "april": 4, "may": 5, "june": 6, "july": 7,
	"august": 8, "september": 9, "october": 10, "november": 11, "december": 12, "jan": 1, "feb": 2, "mar": 3,
	"apr": 4, "jun": 6, "jul": 7, "aug": 8, "sep": 9, "sept": 9, "oct": 10, "nov": 11, "dec": 12}

// parseDate reads a date as people write it (11/23/2016 month first, as a date field shows it
// in English; 23/11/2016 when the first number cannot be a month; 2016-11-23; November 23,
// 2016; 23 November 2016) and returns it as YYYY-MM-DD.
func parseDate(s string) (string, bool) {
	s = strings.ToLower(strings.TrimSpace(s))
	var y, mo, d int
	if m := numDateRe.FindStringSubmatch(s); m != nil {
		a, _ := strconv.Atoi(m[1])
		b, _ := strconv.Atoi(m[2])
		c, _ := strconv.Atoi(m[3])
		switch {
		case len(m[1]) == 4:
			y, mo, d = a, b, c
		case len(m[3]) == 4 && a > 12:
			y, mo, d = c, b, a
		case len(m[3]) == 4:
			y, mo, d = c, a, b
		default:
			return "", false
		}
	} else if m := wordDateRe.FindStringSubmatch(s); m != nil {
		if m[1] != "" {
			mo, _ = months[m[1]]
			d, _ = strconv.Atoi(m[2])
			y, _ = strconv.Atoi(m[3])
		} else {
			d, _ = strconv.Atoi(m[4])
			mo, _ = months[m[5]]
			y, _ = strconv.Atoi(m[6])
		}
	} else {
		return "", false
	}
	if mo < 1 || mo > 12 || d < 1 || d > daysIn(mo, y) {
		return "", false
	}
	return fmt.Sprintf("%04d-%02d-%02d", y, mo, d), true
}

func daysIn(month, year int) int {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// parseTime reads a time ("3:45 PM", "15:45", "9 am", "12:01:30 p.m.") and returns it as HH:MM
// (HH:MM:SS when it has seconds).
func parseTime(s string) (string, bool) {
	m := timeRe.FindStringSubmatch(strings.ToLower(strings.TrimSpace(s)))
	if m == nil || (m[2] == "" && m[4] == "") {
		return "", false
	}
	h, _ := strconv.Atoi(m[1])
	mi, _ := strconv.Atoi(m[2])
	switch m[4] {
	case "a", "p":
		if h < 1 || h > 12 {
			return "", false
		}
		h %= 12
		if m[4] == "p" {
			h += 12
		}
	}
	if h > 23 || mi > 59 {
		return "", false
	}
	if m[3] != "" {
		sec, _ := strconv.Atoi(m[3])
		if sec > 59 {
			return "", false
		}
		return fmt.Sprintf("%02d:%02d:%02d", h, mi, sec), true
	}
	return fmt.Sprintf("%02d:%02d", h, mi), true
}

// fillDate turns typing into a date or time input into filling it with the value in the
// input's format, or a refusal when the text is no date or time.
func fillDate(n *snapshot.Node, text string, r Result) Result {
	v, ok := fieldValue(n.Role, text)
	if !ok {
		return Result{Outcome: NotFound, Reason: fmt.Sprintf("%q is not a %s this field takes", text, map[string]string{"date": "date", "InputTime": "time", "time": "time", "DateTime": "date and time"}[n.Role]), Candidates: r.Candidates}
	}
	return Result{Outcome: Matched, Action: ptr(actions.Do(actions.Fill{Fields: []actions.Field{{Ref: n.Ref, Value: actions.Text(v)}}})), Candidates: r.Candidates}
}
