// Package describe is the one description of a page element beyond its accessible name: what
// an element and its descendants say of themselves (EvidenceJS) and the words an unnamed
// control's evidence gives (Infer).
//
// This copy stands in for the lead's package of the same API until it is on main; on merge,
// main's files win.
package describe

import (
	_ "embed"
	"strings"
	"unicode"
)

// EvidenceJS is a JavaScript function expression function(el) returning {icons, data}: what
// an element and its descendants say of themselves (see evidence.js).
//
//go:embed evidence.js
var EvidenceJS string

// Tokens splits a name into lower-case words at case changes and punctuation: "fa-trash-can" is
// [fa trash can], "sendReply" is [send reply].
func Tokens(name string) []string {
	var b strings.Builder
	prev := rune(0)
	for _, r := range name {
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

// noise are the words of icon sets, file types and styles that say nothing of what a control
// does.
var noise = map[string]bool{
	"fa": true, "fas": true, "far": true, "fal": true, "fad": true, "fab": true, "bi": true, "mdi": true, "glyphicon": true,
	"icon": true, "icons": true, "ico": true, "ti": true, "ri": true, "la": true, "las": true, "lar": true, "octicon": true,
	"lucide": true, "feather": true, "ion": true, "gg": true, "ph": true, "codicon": true, "material": true, "ms": true,
	"symbol": true, "symbols": true, "svg": true, "png": true, "gif": true, "jpg": true, "jpeg": true, "webp": true,
	"solid": true, "regular": true, "outline": true, "outlined": true, "filled": true, "fill": true, "line": true,
	"sm": true, "lg": true, "xs": true, "xl": true, "2x": true, "fw": true, "id": true, "onclick": true, "href": true,
	"javascript": true, "void": true, "btn": true, "button": true, "img": true, "images": true, "assets": true, "static": true,
	"testid": true, "test": true, "action": true, "js": true, "i": true, "o": true, "alt": true, "round": true, "sharp": true,
}

// Infer is the words an unnamed control's evidence gives: the first icon, else the first data
// item, with readable words ("fa-trash-can" is "trash can", "id send-reply" is "send reply",
// "#icon-star" is "star"); "" when nothing is readable.
func Infer(icons, data []string) string {
	for _, list := range [][]string{icons, data} {
		for _, s := range list {
			var words []string
			for _, w := range Tokens(s) {
				if noise[w] || strings.Trim(w, "0123456789") == "" {
					continue
				}
				words = append(words, w)
			}
			if len(words) > 0 {
				return strings.Join(words[:min(len(words), 4)], " ")
			}
			if r := []rune(strings.TrimSpace(s)); len(r) == 1 && !unicode.IsLetter(r[0]) && !unicode.IsPunct(r[0]) && r[0] > 0x2000 {
				return string(r) // an icon font's or emoji's glyph
			}
		}
	}
	return ""
}
