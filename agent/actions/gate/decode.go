package gate

import (
	"encoding/base64"
	"encoding/hex"
	"html"
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Re-encoding. A value read on one site can leave for another written otherwise: in other
// case, with spaces or dashes between its characters, percent-escaped, in base64 (standard or
// url-safe), in hex (in a host's labels too), HTML-escaped, reversed. The data-flow check
// compares values in one normal form (see normal) against every form of what leaves
// (Variants): the text and its decodings, each decoded again once.

const (
	// minEncoded is the shortest run of base64 or hex characters that is decoded.
	minEncoded = 8
	// maxVariantBytes bounds the text that Variants returns (decodings past it are dropped).
	maxVariantBytes = 1 << 17
	// variantDepth is how many decodings are applied one after another.
	variantDepth = 2
)

// normal is s as values are compared: folded (see [Fold]), lower case, only its letters and
// digits ("SK-LIVE 4f9a…" and "sk_live_4F9A…" are one value).
func normal(s string) string {
	n := normalOnce(s)
	for range 3 { // folding what lower case gave may give more to fold
		m := normalOnce(n)
		if m == n {
			break
		}
		n = m
	}
	return n
}

func normalOnce(s string) string {
	f := strings.ToLower(Fold(s))
	var b strings.Builder
	b.Grow(len(f))
	for _, r := range f {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Variants returns text and what it decodes to, each in normal form: percent escapes undone
// (also repeated), HTML entities, base64 (standard and url-safe, padded or not) and hex runs
// of at least minEncoded characters (also across a host's dots and a separator's dashes),
// and the text reversed; the decodings are decoded again, variantDepth deep. Bounded:
// at most maxVariantBytes in all.
func Variants(text string) []string {
	seen := map[string]bool{}
	var raw []string // decoded texts, not yet normal
	total := 0
	add := func(s string) bool {
		if s == "" || seen[s] || total+len(s) > maxVariantBytes {
			return false
		}
		seen[s] = true
		total += len(s)
		raw = append(raw, s)
		return true
	}
	add(text)
	for from, depth := 0, 0; depth < variantDepth; depth++ {
		to := len(raw)
		for _, s := range raw[from:to] {
			for _, d := range decodings(s) {
				add(d)
			}
		}
		from = to
	}
	out := make([]string, 0, 2*len(raw))
	nseen := map[string]bool{}
	for _, s := range raw {
		n := normal(s)
		for _, v := range []string{n, reverse(n)} {
			if v != "" && !nseen[v] {
				nseen[v] = true
				out = append(out, v)
			}
		}
	}
	return out
}

// decodings are what s decodes to, one step: percent escapes, HTML entities, base64 and hex
// runs.
func decodings(s string) []string {
	var out []string
	if d := unescapePercent(s); d != s {
		out = append(out, d)
	}
	if d := html.UnescapeString(s); d != s {
		out = append(out, d)
	}
	for _, run := range runs(s, isBase64Rune) {
		// a run may start before the encoding does ("/x/djE6…", "ref" glued on): one of four
		// starts is aligned with it
		for i := 0; i < 4 && len(run)-i >= minEncoded; i++ {
			if d, ok := decodeBase64(run[i:]); ok {
				out = append(out, d)
				break
			}
		}
	}
	// hex split by dots, dashes, colons or spaces (a host's labels, "de:ad:be:ef") is one run
	joined := strings.Map(func(r rune) rune {
		switch r {
		case '.', '-', ':', ' ', '_':
			return -1
		}
		return r
	}, strings.ReplaceAll(strings.ReplaceAll(s, `\x`, ""), "0x", ""))
	for _, src := range []string{s, joined} {
		for _, run := range runs(src, isHexRune) {
			if d, ok := decodeHex(run); ok {
				out = append(out, d)
			}
		}
	}
	return out
}

// unescapePercent undoes s's percent escapes, leaving a malformed one as it is, and '+' as a
// space.
func unescapePercent(s string) string {
	if !strings.ContainsAny(s, "%+") {
		return s
	}
	if d, err := url.QueryUnescape(s); err == nil {
		return d
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && isHexByte(s[i+1]) && isHexByte(s[i+2]) {
			v, _ := hex.DecodeString(s[i+1 : i+3])
			b.WriteByte(v[0])
			i += 2
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isHexByte(c byte) bool { return c < utf8.RuneSelf && isHexRune(rune(c)) }

func isHexRune(r rune) bool {
	return r >= '0' && r <= '9' || r >= 'a' && r <= 'f' || r >= 'A' && r <= 'F'
}

func isBase64Rune(r rune) bool {
	return r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r == '+' || r == '/' || r == '-' || r == '_'
}

// runs are the maximal runs of s's characters that in holds, at least minEncoded long.
func runs(s string, in func(rune) bool) []string {
	var out []string
	start := -1
	for i, r := range s + "\x00" {
		if i < len(s) && in(r) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 && i-start >= minEncoded {
			out = append(out, s[start:i])
		}
		start = -1
	}
	return out
}

// decodeBase64 decodes run (without its padding) as base64, standard or url-safe; ok only when
// what it decodes to is mostly printable text.
func decodeBase64(run string) (string, bool) {
	r := run
	enc := base64.RawStdEncoding
	if strings.ContainsAny(r, "-_") {
		if strings.ContainsAny(r, "+/") {
			return "", false
		}
		enc = base64.RawURLEncoding
	}
	if len(r)%4 == 1 {
		r = r[:len(r)-1]
	}
	b, err := enc.DecodeString(r)
	if err != nil {
		return "", false
	}
	return string(b), printable(b)
}

// decodeHex decodes run as hex (an odd last digit dropped); ok only when it decodes to mostly
// printable text.
func decodeHex(run string) (string, bool) {
	if len(run)%2 == 1 {
		run = run[:len(run)-1]
	}
	b, err := hex.DecodeString(run)
	if err != nil {
		return "", false
	}
	return string(b), printable(b)
}

// printable reports whether most of b (at least 3 bytes in 4) is printable ASCII.
func printable(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	n := 0
	for _, c := range b {
		if c >= 0x20 && c < 0x7f {
			n++
		}
	}
	return 4*n >= 3*len(b)
}

func reverse(s string) string {
	r := []rune(s)
	for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
		r[i], r[j] = r[j], r[i]
	}
	return string(r)
}
