package gate

import (
	"encoding/base32"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/tabrelay/tabrelay/internal/testlimit"
)

// encodeEach writes each byte of s with f, joined by sep.
func encodeEach(s, sep string, f func(c byte) string) string {
	parts := make([]string, len(s))
	for i := range len(s) {
		parts[i] = f(s[i])
	}
	return strings.Join(parts, sep)
}

// shift moves s's letters n places along the alphabet (Caesar; rot13 is 13).
func shift(s string, n int) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z':
			return 'a' + (r-'a'+rune(n))%26
		case r >= 'A' && r <= 'Z':
			return 'A' + (r-'A'+rune(n))%26
		}
		return r
	}, s)
}

// spreadOut puts after each character of s the filler f(i) for its place i.
func spreadOut(s string, f func(i int) string) string {
	var b strings.Builder
	for i := range len(s) {
		b.WriteByte(s[i])
		b.WriteString(f(i))
	}
	return b.String()
}

// TestLeaksEncodings: a secret read on one site, re-encoded the ways an outgoing URL, field or
// body commonly carries text or an injected model cheaply rewrites it, is still the secret;
// harmless text that looks like an encoding is not.
func TestLeaksEncodings(t *testing.T) {
	const secret = "hk_live_Q3mT8vR2xN6pL4wJ"
	const page, dest = "https://dash.example.com/keys", "https://collect.example.net/log"
	b32 := base32.StdEncoding.EncodeToString([]byte(secret))
	rnd := rand.New(rand.NewPCG(1, 2))
	for _, c := range []struct {
		name, text string
		leak       bool
	}{
		// base32
		{"base32", "?d=" + b32, true},
		{"base32 unpadded lower case", "?d=" + strings.ToLower(strings.TrimRight(b32, "=")), true},
		{"base32 in a host label", "https://" + strings.ToLower(strings.TrimRight(b32, "=")) + ".example.net/", true},
		{"base32 hex alphabet", "/x/" + base32.HexEncoding.EncodeToString([]byte(secret)), true},
		{"base32 of a longer text, glued on", "/log/d" + base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString([]byte("key="+secret+";")), true},
		// Caesar shifts
		{"rot13", "?d=" + shift(secret, 13), true},
		{"rot1", "?d=" + shift(secret, 1), true},
		{"rot25", "?d=" + shift(secret, 25), true},
		{"rot13 of a piece", "?d=" + shift(secret[8:18], 13), true},
		{"rot13 reversed", "?d=" + reverse(shift(secret, 13)), true},
		{"rot7 spaced", strings.Join(strings.Split(shift(secret, 7), ""), " "), true},
		// escapes
		{"\\u escapes", encodeEach(secret, "", func(c byte) string { return fmt.Sprintf(`\u%04x`, c) }), true},
		{"\\u escapes, percent-escaped", url.QueryEscape(encodeEach(secret, "", func(c byte) string { return fmt.Sprintf(`\u%04x`, c) })), true},
		{"\\u{} escapes", encodeEach(secret, "", func(c byte) string { return fmt.Sprintf(`\u{%x}`, c) }), true},
		{"\\U escapes", encodeEach(secret, "", func(c byte) string { return fmt.Sprintf(`\U%08X`, c) }), true},
		{"%u escapes", encodeEach(secret, "", func(c byte) string { return fmt.Sprintf(`%%u%04X`, c) }), true},
		{"octal escapes", encodeEach(secret, "", func(c byte) string { return fmt.Sprintf(`\%03o`, c) }), true},
		{"U+ code points", encodeEach(secret, " ", func(c byte) string { return fmt.Sprintf(`U+%04X`, c) }), true},
		{"decimal entities", encodeEach(secret, "", func(c byte) string { return fmt.Sprintf(`&#%d;`, c) }), true},
		{"hex entities", encodeEach(secret, "", func(c byte) string { return fmt.Sprintf(`&#x%x;`, c) }), true},
		// character codes
		{"codes joined by dots", "?d=" + encodeEach(secret, ".", func(c byte) string { return strconv.Itoa(int(c)) }), true},
		{"codes joined by commas", "[" + encodeEach(secret, ",", func(c byte) string { return strconv.Itoa(int(c)) }) + "]", true},
		{"codes joined by comma and space", "String.fromCharCode(" + encodeEach(secret, ", ", func(c byte) string { return strconv.Itoa(int(c)) }) + ")", true},
		{"codes joined by dashes", encodeEach(secret, "-", func(c byte) string { return strconv.Itoa(int(c)) }), true},
		{"codes joined by pipes, percent-escaped", url.QueryEscape(encodeEach(secret, "|", func(c byte) string { return strconv.Itoa(int(c)) })), true},
		{"hex codes with 0x", encodeEach(secret, ",", func(c byte) string { return fmt.Sprintf("0x%x", c) }), true},
		{"hex codes with x and semicolons", encodeEach(secret, ";", func(c byte) string { return fmt.Sprintf("x%X", c) }), true},
		{"octal codes", encodeEach(secret, " ", func(c byte) string { return fmt.Sprintf("%o", c) }), true},
		{"three-digit codes end to end", encodeEach(secret, "", func(c byte) string { return fmt.Sprintf("%03d", c) }), true},
		{"codes of a piece", encodeEach(secret[6:18], ".", func(c byte) string { return strconv.Itoa(int(c)) }), true},
		// filler
		{"a filler letter after each", "?d=" + spreadOut(secret, func(int) string { return "z" }), true},
		{"two filler characters after each", spreadOut(secret, func(int) string { return "q7" }), true},
		{"up to four random fillers", spreadOut(secret, func(int) string {
			return strings.Repeat(string(rune('a'+rnd.IntN(26))), rnd.IntN(maxSpreadGap+1))
		}), true},
		{"the secret's own characters as filler", spreadOut(secret, func(i int) string { return string(secret[(i*7)%len(secret)]) }), true},
		{"filler between the characters reversed", reverse(spreadOut(secret, func(int) string { return "xx" })), true},
		// layered
		{"base64 of rot13", base64.StdEncoding.EncodeToString([]byte(shift(secret, 13))), true},
		{"hex of rot5", hex.EncodeToString([]byte(shift(secret, 5))), true},
		{"base32 of character codes", base32.StdEncoding.EncodeToString([]byte(encodeEach(secret, ",", func(c byte) string { return strconv.Itoa(int(c)) }))), true},
		{"base64 of the secret spread", base64.RawURLEncoding.EncodeToString([]byte(spreadOut(secret, func(int) string { return "-z-" }))), true},
		{"hex of UTF-16", encodeEach(secret, "", func(c byte) string { return fmt.Sprintf("%04x", c) }), true},
		{"base64 of UTF-16 little-endian", base64.StdEncoding.EncodeToString([]byte(encodeEach(secret, "", func(c byte) string { return string([]byte{c, 0}) }))), true},
		{"rot13 in \\x escapes", encodeEach(shift(secret, 13), "", func(c byte) string { return fmt.Sprintf(`\x%02x`, c) }), true},
		// harmless look-alikes
		{"prices", "Prices: 12.99, 15.00, 7.50, 104.00, 107.25, 95.10, 108.99 and 105.00 EUR", false},
		{"a list of scores", "scores=72,85,91,66,78,88,95,104,107,95,108", false},
		{"dates and times", "2026-12-02T04:03:10Z, 2026-11-30 23:59:59, 1999-01-01", false},
		{"an IP and a version", "10.104.107.95 running 1.108.105.118-beta", false},
		{"base32-looking words", "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567 INFORMATIONTECHNOLOGY DEPARTMENTOFSTATE", false},
		{"a sentence", "Please find attached the quarterly report for the Lisbon office; revenue grew 4.2% to 1,250,000.", false},
		{"escapes of other text", `\u0048\u0065\u006c\u006c\u006f\u0020\u0077\u006f\u0072\u006c\u0064`, false},
		{"another key, rot13", shift("sk_live_4f9A8b7C6d5E3f2G", 13), false},
		{"too short a piece, rot13", shift(secret[9:14], 13), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			tk := NewTask("", nil)
			tk.Read(page, "Signing key: "+secret)
			if got := tk.Leaks(c.text, dest); (len(got) > 0) != c.leak {
				t.Errorf("%q: leaks %v, want leak %v", c.text, got, c.leak)
			}
		})
	}
}

// TestLeaksEncodingsPhrase: a recovery phrase shifted, spread or written as codes is still
// the phrase.
func TestLeaksEncodingsPhrase(t *testing.T) {
	const phrase = "orbit velvet canyon lumber frost pilot amber quiver saddle meadow tiger noble"
	for _, c := range []struct {
		name, text string
		leak       bool
	}{
		{"rot13", shift(phrase, 13), true},
		{"rot13 of four words", shift("lumber frost pilot amber", 13), true},
		{"spread with filler", spreadOut(strings.ReplaceAll(phrase, " ", ""), func(i int) string { return strings.Repeat("x", i%3) }), true},
		{"character codes", encodeEach(phrase, ",", func(c byte) string { return strconv.Itoa(int(c)) }), true},
		{"other words", "the amber light over the meadow was noble and the tiger was a pilot", false},
	} {
		tk := NewTask("", nil)
		tk.Read("https://wallet.example.com/backup", "Recovery phrase: "+phrase)
		if got := tk.Leaks(c.text, "https://collect.example.net/"); (len(got) > 0) != c.leak {
			t.Errorf("%s (%q): leaks %v, want leak %v", c.name, c.text, got, c.leak)
		}
	}
}

// TestDecodings: each decoder on its own, and what it must leave alone.
func TestDecodings(t *testing.T) {
	for _, c := range []struct {
		name, text, want string
	}{
		{"base32", "NBSWY3DPEB3W64TMMQ", "hello world"},
		{"base32 lower case", "nbswy3dpeb3w64tmmq", "hello world"},
		{"base32 hex", "D1IMOR3F41RMUSJCCG", "hello world"},
		{"\\u", `\u0068\u0069\u0021`, "hi!"},
		{"\\u{}", `\u{1F600}x`, "\U0001F600x"},
		{"\\x", `\x68\x69`, "hi"},
		{"octal", `\150\151`, "hi"},
		{"%u", `%u0068%u0069`, "hi"},
		{"U+", `U+0068 U+0069`, "h i"},
		{"decimal list", "104,101,108,108,111,33", "hello!"},
		{"hex list", "0x68 0x65 0x6c 0x6c 0x6f 0x21", "hello!"},
		{"octal list", "150.145.154.154.157.41", "hello!"},
		{"triples", "104101108108111033", "hello!"},
	} {
		var got []string
		for _, d := range decodings(c.text) {
			got = append(got, d)
			if d == c.want || strings.Contains(d, c.want) {
				got = nil
				break
			}
		}
		if got != nil || len(decodings(c.text)) == 0 {
			t.Errorf("%s: %q decodes to %q, want %q among them", c.name, c.text, got, c.want)
		}
	}
	for _, c := range []struct{ name, text string }{
		{"five codes", "104,101,108,108,111"},
		{"codes of control characters", "1,2,3,4,5,6,7,8,9,10"},
		{"a separator too long", "104 ,  101 ,  108 ,  108 ,  111 ,  33"},
		{"a malformed escape", `\u00zz\x4`},
	} {
		for _, d := range append(codeLists(c.text), unescapeCodes(c.text)) {
			if d != c.text {
				t.Errorf("%s: %q decoded to %q", c.name, c.text, d)
			}
		}
	}
}

// TestLeaksNoChance: with many realistic secrets read, long real text sent elsewhere (prose,
// numbers, dates, references, URLs of real pages, in 4 KB pieces) carries none of them by
// chance, nor do long random blobs of base64 and hex: the shifted pieces and the spread
// secrets are specific enough.
func TestLeaksNoChance(t *testing.T) {
	rnd := rand.New(rand.NewPCG(7, 11))
	const alnum = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	randomOf := func(set string, n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = set[rnd.IntN(len(set))]
		}
		return string(b)
	}
	var secrets []string
	for _, p := range []string{"sk_live_", "ghp_", "hk_live_", "xoxb-", "AKIA", "", ""} {
		for range 6 {
			secrets = append(secrets, p+randomOf(alnum, 16+rnd.IntN(24)))
		}
	}
	secrets = append(secrets, "hk_live_Q3mT8vR2xN6pL4wJ", "correcthorsebattery", "sunflowermeadow", "4111111111111111", "5500005555555559")
	tk := NewTask("", nil)
	for _, s := range secrets {
		tk.Read("https://dash.example.com/keys", "API key: "+s)
	}
	tk.Read("https://wallet.example.com/", "Recovery phrase: orbit velvet canyon lumber frost pilot amber quiver saddle meadow tiger noble")
	tk.Read("https://wallet.example.com/", "Recovery phrase: abandon ability able about above absent absorb abstract absurd abuse access accident")
	tk.Read("https://wallet.example.com/", "Recovery phrase: cat tool area milk song gate rain fish open wolf door seed")
	held := 0
	for _, v := range tk.reads.by {
		if v.secret {
			held++
		}
	}
	if held < len(secrets) {
		t.Fatalf("%d secrets held of %d read", held, len(secrets))
	}
	var outs []string
	for _, name := range []string{"wikipedia.html", "wikipedia-3.html", "mozilla-1.html", "ietf-1.html", "gitlab-blog.html", "v8-blog.html"} {
		text := realText(t, name)
		for i := 0; i < len(text); i += 4096 {
			outs = append(outs, text[i:min(i+4096, len(text))])
		}
	}
	for range 64 {
		b := make([]byte, 3000)
		for i := range b {
			b[i] = byte(rnd.IntN(256))
		}
		outs = append(outs, base64.StdEncoding.EncodeToString(b), hex.EncodeToString(b[:2000]), base32.StdEncoding.EncodeToString(b[:2500]))
	}
	if len(outs) < 200 {
		t.Fatalf("only %d texts to send", len(outs))
	}
	for _, out := range outs {
		if l := tk.Leaks(out, "https://other.example.org/"); len(l) != 0 {
			t.Errorf("harmless text carries %v: %q", l, clip(out, 300))
		}
	}
	// the same texts carrying a secret, shifted or spread, are caught (the check can fail)
	for i, out := range outs[:20] {
		s := secrets[i]
		carried := out[:len(out)/2] + shift(s, 1+i) + out[len(out)/2:]
		if i%2 == 1 {
			carried = out[:len(out)/2] + spreadOut(s, func(int) string { return "q" }) + out[len(out)/2:]
		}
		if l := tk.Leaks(carried, "https://other.example.org/"); len(l) == 0 {
			t.Errorf("a real text carrying %q (shifted or spread) carries nothing", s)
		}
	}
	t.Logf("%d texts (%d secrets held): none carries a secret", len(outs), held)
}

// TestLeaksHostileTime: the decodings of hostile text (runs of every encoding, lists of codes,
// escapes within escapes) stay bounded in size and time.
func TestLeaksHostileTime(t *testing.T) {
	tk := NewTask("", nil)
	tk.Read("https://dash.example.com/keys", "Signing key: hk_live_Q3mT8vR2xN6pL4wJ\nRecovery phrase: orbit velvet canyon lumber frost pilot amber quiver saddle meadow tiger noble")
	for _, c := range []struct{ name, text string }{
		{"codes", strings.Repeat("104,", 16<<10)},
		{"escapes", strings.Repeat(`%5Cu0068\u0025\x41`, 4<<10)},
		{"base32 run", strings.Repeat("MFRGGZDF", 8<<10)},
		{"one long run of the secret's letters", strings.Repeat("hklivq3mt8vr2xn6pl4wj", 3<<10)},
		{"entities", strings.Repeat("&#104;&#x6b;&amp;", 4<<10)},
	} {
		start := time.Now()
		tk.Leaks(c.text, "https://other.example.org/")
		d := time.Since(start)
		if d > testlimit.Scale(2*time.Second) {
			t.Errorf("%s (%d bytes): %v", c.name, len(c.text), d)
		}
		t.Logf("%s (%d bytes): %v", c.name, len(c.text), d)
		total := 0
		for _, v := range Variants(c.text) {
			total += len(v)
		}
		if total > 2*maxVariantBytes+2*len(c.text) {
			t.Errorf("%s: %d bytes of variants", c.name, total)
		}
	}
}

// naiveSpread reports whether s is in h in order with at most gap characters between each two,
// trying every way.
func naiveSpread(h, s string, gap int) bool {
	var from func(i, j int) bool
	from = func(i, j int) bool { // s[j:] from h[i:], its first character within gap of i
		if j == len(s) {
			return true
		}
		for k := i; k < len(h) && k <= i+gap; k++ {
			if h[k] == s[j] && from(k+1, j+1) {
				return true
			}
		}
		return false
	}
	for i := range len(h) {
		if h[i] == s[0] && from(i+1, 1) {
			return true
		}
	}
	return false
}

func FuzzSpread(f *testing.F) {
	f.Add("hzkzlziveq3", "hklive")
	f.Add("abcabcabcabc", "aaaa")
	f.Add("xaxxxxxbxc", "abc")
	f.Fuzz(func(t *testing.T, h, s string) {
		if s == "" || len(s) > 12 || len(h) > 40 || !utf8.ValidString(s) {
			return
		}
		var set spreadSet
		set.add(s, "x")
		set.add("0123456789", "filler")
		got := false
		set.find(h, func(tok string) { got = got || tok == "x" })
		if want := naiveSpread(h, s, maxSpreadGap); got != want {
			t.Fatalf("in(%q, %q) = %v, want %v", h, s, got, want)
		}
	})
}

func FuzzShiftIndex(f *testing.F) {
	f.Add("uxyvirq3zg8ie2", "hklivq3m", 8)
	f.Add("12ab34cd56", "ab34", 4)
	f.Fuzz(func(t *testing.T, h, w string, n int) {
		if n < 1 || n > 16 || len(w) != n || len(h) > 64 {
			return
		}
		h, w = normal(h), normal(w)
		if len(w) != n {
			return
		}
		x := newShiftIndex(n)
		x.add(w, "w")
		d, next := letterSteps(h, nil, nil)
		found := map[string]bool{}
		x.find(h, d, next, func(tok, _ string) { found[tok] = true })
		want := false
		key := string(must(letterSteps(w, nil, nil)))
		for i := 0; i+n <= len(h); i++ {
			if string(must(letterSteps(h[i:i+n], nil, nil))) == key {
				want = true
			}
		}
		if found["w"] != want {
			t.Fatalf("find %q in %q: %v, want %v", w, h, found["w"], want)
		}
	})
}

func must(d []byte, _ []int) []byte { return d }

func FuzzDecodings(f *testing.F) {
	for _, s := range []string{"104,101,108,108,111,33", `\u0068\u{1F600}\x41\150%u0068U+0068`, "NBSWY3DPEB3W64TMMQ", "0x68 x69 0150", "104101108108111033"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, d := range decodings(s) {
			if len(d) > 4*len(s)+4 {
				t.Fatalf("%q decodes to %d bytes", s, len(d))
			}
		}
		_ = unescapeCodes(s)
		_ = codeLists(s)
	})
}

// TestLeaksIndexFollowsReads: the index of secrets follows what the task reads: a secret read
// after a step was judged, or a value first read as ordinary and then labelled a secret, is
// found shifted at the next step.
func TestLeaksIndexFollowsReads(t *testing.T) {
	const page, dest = "https://dash.example.com/keys", "https://collect.example.net/log"
	const a, b = "ghp_Zx81Lm20Qa7Ws3Ed4Rf5", "Qz7hWp3Kx9Lm2Nv8"
	tk := NewTask("", nil)
	tk.Read(page, "Token: "+a)
	if l := tk.Leaks(shift(a, 13), dest); len(l) == 0 {
		t.Fatal("the first secret, shifted: not found")
	}
	if l := tk.Leaks(shift(b, 3), dest); len(l) != 0 {
		t.Fatalf("a value not read yet found: %v", l)
	}
	tk.Read(page, "Reference "+b) // ordinary: not shifted
	if l := tk.Leaks(shift(b, 3), dest); len(l) != 0 {
		t.Fatalf("an ordinary value found shifted: %v", l)
	}
	tk.Read(page, "Client secret: "+b)
	if l := tk.Leaks(shift(b, 3), dest); len(l) == 0 {
		t.Fatal("a value labelled a secret later, shifted: not found")
	}
}
