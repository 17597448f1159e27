package gate

import (
	"net/url"
	"regexp"
	"strings"
	"unicode"
)

// Data flow. A task remembers the distinctive values it read from pages (page outlines,
// extracted records, evaluated results, search hits), with the sites it read them on. A value
// that then goes out to another site — in a URL opened, typed into a field, uploaded — is a
// value of one site handed to another: the person is asked unless their own words hold it.
//
// Only values that identify something are remembered, never common words: a run of letters
// and digits of at least minToken characters holding both (an API key, a token, an order
// code; at least two of each), a run of at least minDigits digits (an account or card number, a one-time code), an
// e-mail address.

const (
	// minToken is the shortest run of letters and digits that counts as a distinctive value.
	minToken = 8
	// minDigits is the shortest run of digits that counts as one.
	minDigits = 6
	// maxTokenLen is the longest value kept whole (longer runs keep their first maxTokenLen
	// characters: a value carried out whole carries those too).
	maxTokenLen = 128
	// maxReads bounds the values a task remembers (the oldest go first).
	maxReads = 4096
	// maxReadSites bounds the sites remembered per value.
	maxReadSites = 8
)

var emailRe = regexp.MustCompile(`[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9.-]{1,253}\.[A-Za-z]{2,24}`)

// reads are the distinctive values a task read, each with the sites it read it on, oldest
// first.
type reads struct {
	by    map[string][]Site
	order []string
}

func newReads() reads { return reads{by: map[string][]Site{}} }

// Tokens returns the distinctive values in text (see the package's data-flow rule), each once.
func Tokens(text string) []string {
	var out []string
	seen := map[string]bool{}
	add := func(tok string) {
		if len(tok) > maxTokenLen {
			tok = tok[:maxTokenLen]
		}
		if !seen[tok] {
			seen[tok] = true
			out = append(out, tok)
		}
	}
	for _, e := range emailRe.FindAllString(text, -1) {
		add(strings.ToLower(e))
	}
	for _, w := range strings.FieldsFunc(text, func(r rune) bool {
		return !(r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r)) || r == '_' || r == '-')
	}) {
		w = strings.Trim(w, "_-")
		if distinctive(w) {
			add(w)
		}
	}
	return out
}

// distinctive reports whether w, a run of ASCII letters, digits, '_' and '-', identifies
// something: long enough and mixing letters and digits, or a long number.
func distinctive(w string) bool {
	letters, digits := 0, 0
	for _, r := range w {
		switch {
		case r >= '0' && r <= '9':
			digits++
		case r != '_' && r != '-':
			letters++
		}
	}
	switch {
	case letters == 0:
		return digits >= minDigits && digits == len(w)
	case digits < 2 || letters < 2:
		return false // a word with a number ("version2", "x86")
	}
	return letters+digits >= minToken
}

// Read records the distinctive values of text, read on the page at pageURL.
func (t *Task) Read(pageURL, text string) {
	if t == nil || text == "" {
		return
	}
	site := SiteOf(pageURL)
	if site == "" {
		return
	}
	toks := Tokens(text)
	// A link the page offers to another site already carries its values there: what a URL
	// in the text holds counts as read on that URL's site too.
	linked := map[string][]Site{}
	for _, m := range urlInWords.FindAllString(text, -1) {
		if s := SiteOf(m); s != "" && s != site {
			for _, tok := range Tokens(m) {
				linked[tok] = append(linked[tok], s)
			}
		}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, tok := range toks {
		t.reads.add(tok, site)
		for _, s := range linked[tok] {
			t.reads.add(tok, s)
		}
	}
}

func (r *reads) add(tok string, site Site) {
	sites, ok := r.by[tok]
	if !ok {
		if len(r.order) >= maxReads {
			delete(r.by, r.order[0])
			r.order = r.order[1:]
		}
		r.order = append(r.order, tok)
	}
	for _, s := range sites {
		if s == site {
			return
		}
	}
	if len(sites) < maxReadSites {
		r.by[tok] = append(sites, site)
	}
}

// Leak is a value read on some sites that an action would carry to another.
type Leak struct {
	// Value is the value, From the sites it was read on.
	Value string
	From  []Site
}

// Leaks returns the values the task read on sites other than dest's that text carries to
// dest (an URL opened, text typed there), leaving out values the person's own words hold. A
// text that is a URL is also read decoded (its escapes undone).
func (t *Task) Leaks(text, dest string) []Leak {
	if t == nil || text == "" {
		return nil
	}
	to := SiteOf(dest)
	hay := []string{text}
	if d, err := url.PathUnescape(text); err == nil && d != text {
		hay = append(hay, d)
	}
	if d, err := url.QueryUnescape(text); err == nil && d != text {
		hay = append(hay, d)
	}
	low := make([]string, len(hay))
	for i, h := range hay {
		low[i] = strings.ToLower(h)
	}
	// a value carried in pieces ("…&a=rk_live_9Zq&b=7Wx5…") carries each piece: a
	// distinctive value in text that is part of a longer value read counts as that value
	var pieces []string
	for _, h := range hay {
		pieces = append(pieces, Tokens(h)...)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []Leak
	for _, tok := range t.reads.order {
		sites := t.reads.by[tok]
		here := false
		for _, s := range sites {
			here = here || (to != "" && s == to)
		}
		if here || strings.Contains(t.words, tok) {
			continue
		}
		found := false
		for i, h := range hay {
			if strings.Contains(h, tok) || strings.Contains(tok, "@") && strings.Contains(low[i], tok) {
				found = true
				break
			}
		}
		for _, pc := range pieces {
			found = found || (len(pc) >= minToken && len(pc) < len(tok) && strings.Contains(tok, pc) && !strings.Contains(t.words, pc))
		}
		if found {
			out = append(out, Leak{Value: tok, From: append([]Site(nil), sites...)})
		}
	}
	return out
}
