package gate

import (
	"encoding/base32"
	"encoding/base64"
	"encoding/hex"
	"html"
	"net/url"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Re-encoding. A value read on one site can leave for another written otherwise: in other
// case, with spaces or dashes between its characters, percent-escaped, in base64 (standard or
// url-safe), base32 (standard or hex alphabet, any case, padded or not), hex (in a host's
// labels too), HTML-escaped, written by its characters' codes (\u0068, \x68, %u0068, \150,
// U+0068, or a list "104,107,95" in decimal, hex or octal), reversed. The data-flow check
// compares values in one normal form (see normal) against every form of what leaves
// (Variants): the text and its decodings, each decoded again once. What an encoding cannot
// undo is left to the comparison (match.go): letters shifted along the alphabet (rot13 and
// every other Caesar shift), a secret spread among filler characters.

const (
	// minEncoded is the shortest run of base64 or hex characters that is decoded.
	minEncoded = 8
	// maxVariantBytes bounds the text that Variants returns (decodings past it are dropped).
	maxVariantBytes = 1 << 17
	// variantDepth is how many decodings are applied one after another.
	variantDepth = 2
	// minCodes is the fewest character codes in a row that are read as text.
	minCodes = 6
	// maxCodeSep is the longest separator between two character codes of a list.
	maxCodeSep = 3
)

// normal is s as values are compared: folded (see [Fold]), lower case, only its letters and
// digits ("SK-LIVE 4f9a…" and "sk_live_4F9A…" are one value).
func normal(s string) string {
	if n, ok := normalASCII(s); ok {
		return n
	}
	// ASCII as it is, each run of other characters folded (with the character before it,
	// which a combining mark may join)
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf && (i+1 == len(s) || s[i+1] < utf8.RuneSelf) {
			switch {
			case c >= 'A' && c <= 'Z':
				b.WriteByte(c + 'a' - 'A')
			case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
				b.WriteByte(c)
			}
			i++
			continue
		}
		j := i + 1
		for j < len(s) && s[j] >= utf8.RuneSelf {
			j++
		}
		b.WriteString(normalFolded(s[i:j]))
		i = j
	}
	return b.String()
}

// normalFolded is normal for any s.
func normalFolded(s string) string {
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

// normalASCII is normal for s in ASCII (folding leaves ASCII as it is): ok false for other s.
func normalASCII(s string) (string, bool) {
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= utf8.RuneSelf:
			return "", false
		case c >= 'A' && c <= 'Z':
			b = append(b, c+'a'-'A')
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
			b = append(b, c)
		}
	}
	return string(b), true
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
// (also repeated), HTML entities, escapes and lists of character codes, base64 (standard and
// url-safe, padded or not), base32 (standard and hex alphabets, any case) and hex runs of at
// least minEncoded characters (hex also across a host's dots and a separator's dashes), and
// the text reversed; the decodings are decoded again, variantDepth deep. Bounded:
// at most maxVariantBytes in all.
func Variants(text string) []string {
	var out []string
	seen := map[string]bool{}
	for _, n := range decoded(text) {
		for _, v := range []string{n, reverse(n)} {
			if !seen[v] {
				seen[v] = true
				out = append(out, v)
			}
		}
	}
	return out
}

// decoded is Variants without the reversed texts (the data-flow check looks for values
// reversed instead), each once, none empty.
func decoded(text string) []string {
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
	out := make([]string, 0, len(raw))
	nseen := map[string]bool{}
	for _, s := range raw {
		if n := normal(s); n != "" && !nseen[n] {
			nseen[n] = true
			out = append(out, n)
		}
	}
	return out
}

// decodings are what s decodes to, one step: percent escapes, HTML entities, escapes and
// lists of character codes, base64, base32 and hex runs.
func decodings(s string) []string {
	var out []string
	if d := unescapePercent(s); d != s {
		out = append(out, d)
	}
	if d := html.UnescapeString(s); d != s {
		out = append(out, d)
	}
	if d := unescapeCodes(s); d != s {
		out = append(out, d)
	}
	out = append(out, codeLists(s)...)
	buf := make([]byte, base32.StdEncoding.DecodedLen(len(s))+5)
	for _, b32 := range base32Alphabets {
		for _, run := range runs(s, b32.class) {
			// like base64 (below), one of eight starts is aligned with the encoding
			run = strings.ToUpper(run)
			for i := 0; i < 8 && len(run)-i >= minEncoded; i++ {
				if d, ok := decodeBase32(b32.enc, run[i:], buf); ok {
					out = append(out, d)
					break
				}
			}
		}
	}
	for _, run := range runs(s, inBase64) {
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
		for _, run := range runs(src, inHex) {
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

func isHexByte(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// The alphabets of the encodings decoded, as bits of alphabets.
const (
	inBase64    = 1 << iota // standard and url-safe
	inBase32                // standard, either case
	inBase32Hex             // extended hex, either case
	inHex
)

// alphabets holds, per byte, the alphabets that hold it (a table, read only).
var alphabets = func() (t [256]uint8) {
	for c := range 256 {
		b := byte(c)
		lower, upper, digit := b >= 'a' && b <= 'z', b >= 'A' && b <= 'Z', b >= '0' && b <= '9'
		if lower || upper || digit || b == '+' || b == '/' || b == '-' || b == '_' {
			t[c] |= inBase64
		}
		if lower || upper || b >= '2' && b <= '7' {
			t[c] |= inBase32
		}
		if digit || b >= 'a' && b <= 'v' || b >= 'A' && b <= 'V' {
			t[c] |= inBase32Hex
		}
		if isHexByte(b) {
			t[c] |= inHex
		}
	}
	return t
}()

// runs are the maximal runs of s's bytes in the alphabet (a bit of alphabets), at least
// minEncoded long.
func runs(s string, alphabet uint8) []string {
	var out []string
	start := -1
	for i := 0; i <= len(s); i++ {
		if i < len(s) && alphabets[s[i]]&alphabet != 0 {
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
	return asText(b)
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
	return asText(b)
}

// asText is b as text when it is text: mostly printable ASCII (see printable), or that in
// UTF-16 (every other byte zero: the zeros dropped).
func asText(b []byte) (string, bool) {
	if printable(b) {
		return string(b), true
	}
	zeros := 0
	for _, c := range b {
		if c == 0 {
			zeros++
		}
	}
	if len(b) < 4 || 5*zeros < 2*len(b) { // UTF-16 of ASCII is half zeros
		return "", false
	}
	t := slices.DeleteFunc(slices.Clone(b), func(c byte) bool { return c == 0 })
	return string(t), printable(t)
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

// base32Alphabets are the base32 alphabets decoded: the standard one and the "extended hex"
// one, in either case, padding left off.
var base32Alphabets = []struct {
	class uint8
	enc   *base32.Encoding
}{
	{inBase32, base32.StdEncoding.WithPadding(base32.NoPadding)},
	{inBase32Hex, base32.HexEncoding.WithPadding(base32.NoPadding)},
}

// decodeBase32 decodes run (upper case, without its padding) as base32 in enc, into buf when it
// is large enough; ok only when what it decodes to is mostly printable text.
func decodeBase32(enc *base32.Encoding, run string, buf []byte) (string, bool) {
	switch len(run) % 8 { // lengths no encoding ends with: the last character is another's
	case 1, 3, 6:
		run = run[:len(run)-1]
	}
	if n := enc.DecodedLen(len(run)); cap(buf) < n {
		buf = make([]byte, n)
	}
	n, err := enc.Decode(buf[:cap(buf)], []byte(run))
	if err != nil {
		return "", false
	}
	return asText(buf[:n])
}

// unescapeCodes undoes the escapes that write a character by its code: \uXXXX, \u{X…},
// \UXXXXXXXX, \xXX, \NNN (octal), %uXXXX and U+XXXX. Malformed ones stay as they are.
func unescapeCodes(s string) string {
	if !strings.ContainsAny(s, `\%+`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		c := s[i]
		if c != '\\' && c != '%' && c != 'U' && c != 'u' {
			b.WriteByte(c)
			i++
			continue
		}
		if r, n := escapedCode(s[i:]); n > 0 {
			b.WriteRune(r)
			i += n
			continue
		}
		b.WriteByte(s[i])
		i++
	}
	return b.String()
}

// escapedCode reads the escape s starts with: the character it writes and its length, or 0.
func escapedCode(s string) (rune, int) {
	digits := func(from, min, max, base int) (rune, int) {
		n := 0
		for from+n < len(s) && n < max && digitValue(s[from+n], base) >= 0 {
			n++
		}
		if n < min {
			return 0, 0
		}
		v, ok := parseCode(s[from:from+n], base)
		if !ok {
			return 0, 0
		}
		return v, from + n
	}
	switch {
	case len(s) < 3:
		return 0, 0
	case s[0] == '\\' && s[1] == 'u' && s[2] == '{':
		r, n := digits(3, 1, 6, 16)
		if n == 0 || n >= len(s) || s[n] != '}' {
			return 0, 0
		}
		return r, n + 1
	case s[0] == '\\' && s[1] == 'u', s[0] == '%' && (s[1] == 'u' || s[1] == 'U'):
		return digits(2, 4, 4, 16)
	case s[0] == '\\' && s[1] == 'U':
		return digits(2, 8, 8, 16)
	case s[0] == '\\' && s[1] == 'x':
		return digits(2, 2, 2, 16)
	case s[0] == '\\':
		return digits(1, 3, 3, 8)
	case (s[0] == 'U' || s[0] == 'u') && s[1] == '+':
		return digits(2, 4, 6, 16)
	}
	return 0, 0
}

// codeLists decodes the runs of character codes in s: at least minCodes numbers in a row, each
// the code of a character, written in decimal, hex ("0x68", "x68", "68") or octal, separated
// by up to maxCodeSep characters that are not letters or digits ("104,107", "104 107",
// "104.107", "0x68-0x6b"); and a long run of digits that is three-digit codes end to end.
func codeLists(s string) []string {
	var out []string
	var group []string
	flush := func() {
		if len(group) >= minCodes {
			for _, base := range []int{10, 16, 8} {
				out = append(out, codeRuns(group, base)...)
			}
		}
		group = group[:0]
	}
	end := -1 // where the last token ended
	for i := 0; i < len(s); {
		if !isAlnumByte(s[i]) {
			i++
			continue
		}
		j := i
		for j < len(s) && isAlnumByte(s[j]) {
			j++
		}
		tok := s[i:j]
		if end < 0 || i-end > maxCodeSep || !codeLike(tok) {
			flush()
		}
		if codeLike(tok) {
			group = append(group, tok)
		}
		if len(tok) >= 3*minCodes && len(tok)%3 == 0 && strings.Trim(tok, "0123456789") == "" {
			var triples []string
			for k := 0; k < len(tok); k += 3 {
				triples = append(triples, tok[k:k+3])
			}
			for _, base := range []int{10, 8} {
				out = append(out, codeRuns(triples, base)...)
			}
		}
		end, i = j, j
	}
	flush()
	return out
}

// codeLike reports whether tok may be a character's code in some base: at most 8 hex digits,
// 0x or x before them or not.
func codeLike(tok string) bool {
	if t, ok := strings.CutPrefix(strings.TrimPrefix(tok, "0"), "x"); ok {
		tok = t
	} else if t, ok := strings.CutPrefix(tok, "0X"); ok {
		tok = t
	}
	if tok == "" || len(tok) > 8 {
		return false
	}
	for i := 0; i < len(tok); i++ {
		if !isHexByte(tok[i]) {
			return false
		}
	}
	return true
}

// codeRuns decodes the runs of at least minCodes tokens in a row that are character codes in
// base.
func codeRuns(toks []string, base int) []string {
	var out []string
	var b strings.Builder
	n := 0
	flush := func() {
		if n >= minCodes {
			out = append(out, b.String())
		}
		b.Reset()
		n = 0
	}
	for _, tok := range toks {
		r, ok := charCode(tok, base)
		if !ok {
			flush()
			continue
		}
		b.WriteRune(r)
		n++
	}
	flush()
	return out
}

// charCode reads tok as a character's code in base (hex with or without 0x or x before it):
// the character, if it is a printable one.
func charCode(tok string, base int) (rune, bool) {
	max := 7
	if base == 16 {
		max = 6
		if t, ok := strings.CutPrefix(strings.ToLower(tok), "0x"); ok {
			tok = t
		} else if t, ok := strings.CutPrefix(tok, "x"); ok {
			tok = t
		}
	}
	if tok == "" || len(tok) > max {
		return 0, false
	}
	return parseCode(tok, base)
}

// parseCode reads digits, at most 8 of them, in base as the code of a printable character.
func parseCode(digits string, base int) (rune, bool) {
	if digits == "" || len(digits) > 8 {
		return 0, false
	}
	var v uint64
	for i := 0; i < len(digits); i++ {
		d := digitValue(digits[i], base)
		if d < 0 {
			return 0, false
		}
		v = v*uint64(base) + uint64(d)
	}
	return rune(v), codePoint(v)
}

// codePoint reports whether v is the code of a printable character (no control character, no
// surrogate).
func codePoint(v uint64) bool {
	return v >= 0x20 && v != 0x7f && !(v >= 0x80 && v < 0xa0) && !(v >= 0xd800 && v < 0xe000) && v <= unicode.MaxRune
}

// digitValue is c's value as a digit in base, or -1.
func digitValue(c byte, base int) int {
	v := -1
	switch {
	case c >= '0' && c <= '9':
		v = int(c - '0')
	case c >= 'a' && c <= 'z':
		v = int(c-'a') + 10
	case c >= 'A' && c <= 'Z':
		v = int(c-'A') + 10
	}
	if v >= base {
		return -1
	}
	return v
}

func isAlnumByte(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}
