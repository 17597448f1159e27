package gate

import (
	"net/url"
	"regexp"
	"slices"
	"strings"
	"unicode"
)

// Data flow. A task remembers the distinctive values it read from pages (page outlines,
// extracted records, evaluated results, search hits, console and network logs, the URLs of
// the shared tabs), with the sites and origins it read them on. A value that then goes out to
// another site — in a URL opened, typed into a field, pressed key by key, answered to a
// prompt — is a value of one site handed to another: the person is asked unless their own
// words hold it. Values are compared in one normal form against every decoding of what
// leaves (decode.go), so the common re-encodings hide nothing (match.go compares).
//
// Only values that identify something are remembered, never common words: a run of letters
// and digits of at least minToken characters holding both (an API key, a token, an order
// code; at least two of each), a run of at least minDigits digits (an account or card
// number, a one-time code), an e-mail address.
//
// Secrets are held to the strictest rule. A value is a secret by its shape (a known key or
// token prefix, a long random mix of cases and digits, a card number) or by what labels it
// on the page ("API key:", "password:", a URL parameter named token or session, a recovery
// phrase's words). A secret never leaves its origin unasked — not for another host of the
// same site, not whole, not in pieces (any run of pieceLen of its characters), not with its
// letters shifted along the alphabet, not spread among filler characters, not in a search
// box: where ordinary values the page showed may go into a search on another site without
// asking, secrets may not.

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
	// pieceLen is the shortest piece of a secret (in normal form) that counts as the secret;
	// phraseLen the same for a phrase of words.
	pieceLen, phraseLen = 8, 12
	// maxPressed is how many printable keys pressed into one origin are remembered.
	maxPressed = 256
)

// secretLabels are the words that label a secret.
const secretLabels = `(?:api[ _-]?key|secret(?:[ _-]?key)?|access[ _-]?(?:key|token)|private[ _-]?key|auth(?:entication)?[ _-]?token|bearer|token|password|passwort|passcode|passphrase|pin|otp|one[- ]time (?:code|password)|verification code|recovery codes?|backup codes?|session(?:[ _-]?id)?|client[ _-]?secret|signing[ _-]?key|webhook[ _-]?secret)`

var (
	emailRe = regexp.MustCompile(`[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9.-]{1,253}\.[A-Za-z]{2,24}`)
	// secretPrefixRe are the prefixes of well-known keys and tokens.
	secretPrefixRe = regexp.MustCompile(`^(?:(?:sk|rk)_(?:live|test)_|sk-|gh[pousr]_|github_pat_|glpat-|xox[abprs]-|AKIA|ASIA|AIza|ya29\.|npm_|hf_|shpat_|shpss_|SG\.|eyJ)`)
	// secretLabelRe is a label that says the value after it is a secret, then the value.
	secretLabelRe = regexp.MustCompile(`(?i)\b` + secretLabels + `s?\b["'”]?\s*(?:[:=]|\bis\b)\s*["'“]?([^\s"'”<>,;]{6,128})`)
	// secretFieldRe is a field of a page outline named for a secret, then its value
	// ("- textbox \"API token\" [ref=e3]: abc123…").
	secretFieldRe = regexp.MustCompile(`(?im)"[^"\n]*\b` + secretLabels + `s?\b[^"\n]*"[^"\n]*\]: ([^\s]{6,128})\s*$`)
	// phraseRe is a recovery (seed) phrase: its label, then 12 to 24 words.
	phraseRe = regexp.MustCompile(`(?i)\b(?:recovery|seed|secret|mnemonic|backup)[ _-]?(?:phrase|words)\b\W{0,6}((?:[a-z]{3,8}[\s,]+){11,23}[a-z]{3,8})`)
	// secretParamRe names URL parameters that carry secrets.
	secretParamRe = regexp.MustCompile(`(?i)^(?:.*(?:token|secret|session|passw|apikey|api_key|jwt|signature|credential).*|auth|authorization|oauth_.*|sid|key|code|sig|otp|pass|pwd|access|state)$`)
)

// readValue is what a task knows of one value it read.
type readValue struct {
	norm    string   // the value in normal form
	forms   []string // norm, and norm reversed when that differs
	sites   []Site   // the sites it was read on
	origins []string // the origins it was read on
	secret  bool     // it is a secret: held to its origin, pieces count
}

// reads are the distinctive values a task read, oldest first.
type reads struct {
	by    map[string]*readValue
	order []string
	// byPrefix indexes the values by the first minDigits bytes of their normal forms, as
	// read and reversed (shorter ones are never compared).
	byPrefix map[string][]string
	// secretGen counts the changes to which values are secrets; idx indexes the secrets as
	// they were at idxGen.
	secretGen, idxGen int
	idx               *secretIndex
}

func newReads() reads { return reads{by: map[string]*readValue{}, byPrefix: map[string][]string{}} }

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
	if strings.Contains(text, "@") { // the expression has no literal to skip ahead by
		for _, e := range emailRe.FindAllString(text, -1) {
			add(strings.ToLower(e))
		}
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

// Secrets returns the values of text that are secrets (see the package's data-flow rule):
// by shape, by a label before them, as a URL parameter named for one, as a recovery phrase.
func Secrets(text string) []string {
	var out []string
	seen := map[string]bool{}
	add := func(v string) {
		v = strings.Trim(v, ".,;:!?)]}")
		if len(v) > maxTokenLen {
			v = v[:maxTokenLen]
		}
		if len(normal(v)) >= 6 && !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	for _, tok := range Tokens(text) {
		if secretShape(tok) {
			add(tok)
		}
	}
	for _, re := range []*regexp.Regexp{secretLabelRe, secretFieldRe} {
		for _, m := range re.FindAllStringSubmatch(text, -1) {
			add(m[1])
		}
	}
	for _, m := range phraseRe.FindAllStringSubmatch(text, -1) {
		add(strings.Join(strings.Fields(strings.ReplaceAll(m[1], ",", " ")), " "))
	}
	for _, m := range urlInWords.FindAllString(text, -1) {
		u, err := url.Parse(m)
		if err != nil {
			continue
		}
		q := u.Query()
		if f, err := url.ParseQuery(u.Fragment); err == nil {
			for k, vs := range f {
				q[k] = append(q[k], vs...)
			}
		}
		for k, vs := range q {
			if !secretParamRe.MatchString(k) {
				continue
			}
			for _, v := range vs {
				if len(v) >= minToken {
					add(v)
				}
			}
		}
	}
	return out
}

// secretShape reports whether tok, a distinctive value, looks like a secret: a known key or
// token prefix, a long random mix of upper and lower case and digits, or a card number.
func secretShape(tok string) bool {
	if secretPrefixRe.MatchString(tok) && len(tok) >= 12 {
		return true
	}
	upper, lower, digits := 0, 0, 0
	for _, r := range tok {
		switch {
		case r >= 'A' && r <= 'Z':
			upper++
		case r >= 'a' && r <= 'z':
			lower++
		case r >= '0' && r <= '9':
			digits++
		}
	}
	if upper >= 2 && lower >= 2 && digits >= 2 && upper+lower+digits >= 20 {
		return true
	}
	return digits == len(tok) && digits >= 13 && digits <= 19 && luhn(tok)
}

// luhn reports whether the digits of s pass the Luhn check (a card number).
func luhn(s string) bool {
	sum, double := 0, false
	for i := len(s) - 1; i >= 0; i-- {
		d := int(s[i] - '0')
		if double {
			if d *= 2; d > 9 {
				d -= 9
			}
		}
		sum += d
		double = !double
	}
	return sum%10 == 0
}

// Read records the distinctive values and the secrets of text, read on the page at pageURL.
func (t *Task) Read(pageURL, text string) {
	if t == nil || text == "" {
		return
	}
	site, origin := SiteOf(pageURL), OriginOf(pageURL)
	if site == "" {
		return
	}
	toks := Tokens(text)
	secrets := Secrets(text)
	secret := map[string]bool{}
	for _, v := range secrets {
		secret[v] = true
	}
	// A link the page offers to another site already carries its values there: what a URL
	// in the text holds counts as read on that URL's site too (a secret stays its origin's).
	linked := map[string][]string{}
	for _, m := range urlInWords.FindAllString(text, -1) {
		if s := SiteOf(m); s != "" && s != site {
			for _, tok := range Tokens(m) {
				linked[tok] = append(linked[tok], m)
			}
		}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, tok := range append(toks, secrets...) {
		t.reads.add(tok, site, origin, secret[tok])
		for _, m := range linked[tok] {
			t.reads.add(tok, SiteOf(m), OriginOf(m), secret[tok])
		}
	}
}

// ReadTab records what a list of the shared tabs shows of one tab: its URL and title, read on
// the tab's own origin (a session token in another tab's URL is that tab's).
func (t *Task) ReadTab(tabURL, title string) {
	if t == nil {
		return
	}
	t.Read(tabURL, tabURL+"\n"+title)
}

func (r *reads) add(tok string, site Site, origin string, secret bool) {
	v, ok := r.by[tok]
	if !ok {
		if len(r.order) >= maxReads {
			r.forget(r.order[0])
			r.order = r.order[1:]
		}
		r.order = append(r.order, tok)
		v = &readValue{norm: normal(tok)}
		v.forms = []string{v.norm}
		if rev := reverse(v.norm); rev != v.norm {
			v.forms = append(v.forms, rev)
		}
		r.by[tok] = v
		if len(v.norm) >= minDigits {
			for _, f := range v.forms {
				p := f[:minDigits]
				if !slices.Contains(r.byPrefix[p], tok) {
					r.byPrefix[p] = append(r.byPrefix[p], tok)
				}
			}
		}
	}
	if secret && !v.secret {
		v.secret = true
		r.secretGen++
	}
	if !slices.Contains(v.sites, site) && len(v.sites) < maxReadSites {
		v.sites = append(v.sites, site)
	}
	if origin != "" && !slices.Contains(v.origins, origin) && len(v.origins) < maxReadSites {
		v.origins = append(v.origins, origin)
	}
}

// forget drops tok from the values remembered (not from their order).
func (r *reads) forget(tok string) {
	v := r.by[tok]
	delete(r.by, tok)
	if v != nil && v.secret {
		r.secretGen++
	}
	if v == nil || len(v.norm) < minDigits {
		return
	}
	for _, f := range v.forms {
		p := f[:minDigits]
		toks := slices.DeleteFunc(r.byPrefix[p], func(s string) bool { return s == tok })
		if len(toks) == 0 {
			delete(r.byPrefix, p)
		} else {
			r.byPrefix[p] = toks
		}
	}
}

// Leak is a value read on some sites that an action would carry to another.
type Leak struct {
	// Value is the value, From the sites it was read on.
	Value string
	From  []Site
}

// Leaks returns the values the task read elsewhere that text carries to dest (an URL opened,
// text typed there), leaving out values the person's own words hold: an ordinary value read on
// another site, a secret read on another origin. text is read in every form it decodes to
// (see Variants); a secret's pieces count as the secret.
func (t *Task) Leaks(text, dest string) []Leak { return t.leaks(text, dest, false) }

// SecretLeaks is Leaks for text that says what is looked for (a search's words): only secrets
// count.
func (t *Task) SecretLeaks(text, dest string) []Leak { return t.leaks(text, dest, true) }

func (t *Task) leaks(text, dest string, secretsOnly bool) []Leak {
	if t == nil || text == "" {
		return nil
	}
	to, toOrigin := SiteOf(dest), OriginOf(dest)
	vars := decoded(text)
	// a value carried in pieces ("…&a=rk_live_9Zq&b=7Wx5…") carries each piece: a
	// distinctive value in text that is part of a longer value read counts as that value
	var pieces []string
	for _, h := range []string{text, unescapePercent(text)} {
		for _, pc := range Tokens(h) {
			if n := normal(pc); len(n) >= minToken {
				pieces = append(pieces, n)
			}
		}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	counts := func(v *readValue) bool {
		if secretsOnly && !v.secret || len(v.norm) < minDigits {
			return false
		}
		here := to != "" && slices.Contains(v.sites, to)
		if v.secret {
			here = toOrigin != "" && slices.Contains(v.origins, toOrigin)
		}
		return !here && !strings.Contains(t.normWords, v.norm)
	}
	found := t.reads.carried(vars, pieces, t.normWords, counts)
	var out []Leak
	for _, tok := range t.reads.order {
		if found[tok] {
			v := t.reads.by[tok]
			out = append(out, Leak{Value: tok, From: append([]Site(nil), v.sites...)})
		}
	}
	return out
}

// Pressed records key, pressed into the document at dest, and returns the printable keys
// pressed there so far, oldest first (maxPressed at most): keys pressed one by one type text
// like any other.
func (t *Task) Pressed(dest, key string) string {
	if t == nil {
		return ""
	}
	o := OriginOf(dest)
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.keys[o] + key
	if len(s) > maxPressed {
		s = s[len(s)-maxPressed:]
	}
	t.keys[o] = s
	return s
}

// forgetPressed forgets the keys pressed into dest: what they typed was judged.
func (t *Task) forgetPressed(dest string) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.keys, OriginOf(dest))
}
