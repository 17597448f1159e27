// Package describe holds the one description of a page element beyond its accessible name,
// which the model's outline, the safety gate and the person's confirmation all render: the
// evidence an element carries of what it is (icon classes, ids, data-* attributes, SVG titles
// and symbols, icon-font glyphs, background and image file names), read in the page by one
// function ([EvidenceJS]), and the name that evidence gives an unnamed control ([Infer]).
//
// An icon-only trash button has no accessible name; its class says "fa-trash-can". The
// snapshot shows it as `button "trash can" [icon]`, the gate judges the same words, and the
// person is asked about `click button "trash can" [icon]`: one reading, three renderings.
package describe

import (
	_ "embed"
	"strings"
	"unicode"
)

// EvidenceJS is a JavaScript function expression, `function(el)`, that returns what el and its
// descendants say of themselves: {icons: string[], data: string[]} (see evidence.js).
//
//go:embed evidence.js
var EvidenceJS string

// Evidence is what [EvidenceJS] reads of an element.
type Evidence struct {
	// Icons are the names its icons carry: ::before/::after content, background and mask
	// image file names, unnamed image file names, icon-font classes, SVG symbols and titles.
	Icons []string `json:"icons,omitempty"`
	// Data are its and its descendants' ids, button name/value pairs, inline handlers,
	// javascript: links and data-* attributes, each "name value" ("action delete-file").
	Data []string `json:"data,omitempty"`
}

// Mark is the state rendered after a name that was inferred from evidence rather than given
// by the page's accessible name: `button "trash" [icon]`.
const Mark = "icon"

// Tokens splits an icon's or attribute's name into lower-case words: "fa-trash-can" is
// [fa trash can], "deleteFile" is [delete file], "/img/icons/trash.svg" is [img icons trash
// svg].
func Tokens(name string) []string {
	var b strings.Builder
	prev := rune(0)
	for _, r := range name {
		if unicode.Is(unicode.Cf, r) || r == 0x034F || (r >= 0xFE00 && r <= 0xFE0F) {
			continue // invisible: zero-width spaces and joiners, soft hyphens, bidi marks
		}
		if unicode.IsUpper(r) && unicode.IsLower(prev) {
			b.WriteByte(' ')
		}
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(unicode.ToLower(r))
		} else {
			b.WriteByte(' ')
		}
		prev = r
	}
	return strings.Fields(b.String())
}

// noise are words of icon and attribute names that say how a thing is drawn or built, not
// what it does: icon-set prefixes, file endings, style variants and markup words.
var noise = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`fa fas far fal fad fab fa6 fw lg sm xs xl 2x 3x bi mdi glyphicon glyphicons icon icons ico
		ti ri la las lar lab octicon lucide feather ion ionicon gg ph codicon material materialicons symbols symbol ms
		outlined outline rounded round sharp filled fill solid regular light thin duotone line alt
		svg png gif jpg jpeg webp img image images assets static sprite sprites i btn button buttons
		id js jsx data action onclick href javascript void return this event e fn handler click on
		c cls class el elem element wrapper container inner outer ui ux component comp widget control ctrl
		default primary secondary small large medium mini tiny big xl xxl left right top bottom
		testid test qa cy automation tracking track analytics ga
		black white dark light gray grey red green blue 16 20 24 32 48 64 true false null undefined`) {
		m[w] = true
	}
	return m
}()

// Infer is the name the evidence of an element with no accessible name gives it: the words of
// its first icon or attribute that says more than how it is drawn ("fa-trash-can" is "trash
// can", "id send-reply" is "send reply", "#icon-star" is "star", an emoji is itself), or ""
// when nothing there is readable. Icons come before data: what is drawn is what a person sees.
func Infer(icons, data []string) string {
	for _, list := range [][]string{icons, data} {
		for _, s := range list {
			if n := words(s); n != "" {
				return n
			}
		}
	}
	return ""
}

// words is the readable part of one icon or attribute name ("" when none).
func words(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return ""
	}
	// an emoji or a symbol drawn as text (✕, ★, 🗑) names itself; a private-use glyph of an
	// icon font says nothing
	if pic := pictographs(s); pic != "" {
		return pic
	}
	var out []string
	for _, t := range Tokens(s) {
		if noise[t] || len(t) < 2 || allDigits(t) || hexish(t) {
			continue
		}
		out = append(out, t)
		if len(out) == 4 {
			break
		}
	}
	return strings.Join(out, " ")
}

// pictographs is s when it is a short run of symbols and emoji a person reads as a picture
// (no letters, no private-use glyphs), else "".
func pictographs(s string) string {
	n := 0
	for _, r := range s {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			return ""
		case unicode.Is(unicode.Co, r): // private use: an icon font's glyph
			return ""
		case unicode.IsSpace(r) || r == 0xFE0F || r == 0x200D:
		case unicode.IsSymbol(r) || unicode.IsPunct(r):
			n++
		}
	}
	if n == 0 || n > 3 || !strings.ContainsFunc(s, unicode.IsSymbol) {
		return ""
	}
	return strings.TrimSpace(s)
}

func allDigits(s string) bool {
	return strings.IndexFunc(s, func(r rune) bool { return !unicode.IsDigit(r) }) < 0
}

// hexish reports a generated token (a hash in a class or id: "a3f9c2", "x7k2m9q1",
// "gxcgprxevu"): long, with digits among letters or a run of consonants no word has.
func hexish(s string) bool {
	if len(s) < 5 {
		return false
	}
	d, run, longest := 0, 0, 0
	for _, r := range s {
		switch {
		case unicode.IsDigit(r):
			d++
			run = 0
		case strings.ContainsRune("aeiou", r):
			run = 0
		default:
			run++
			longest = max(longest, run)
		}
	}
	return d > 0 && d < len(s) || longest >= 6
}
