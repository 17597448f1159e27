package fastpath

import (
	"strings"

	"github.com/tabrelay/tabrelay/snapshot"
)

// Kinds of element, as the roles of the page model they cover.
var (
	clickRoles = roleSet("button", "link", "menuitem", "menuitemcheckbox", "menuitemradio", "tab", "checkbox", "radio",
		"switch", "option", "treeitem", "row", "cell", "gridcell", "img", "listitem", "combobox", "summary", "clickable",
		"textbox", "searchbox", "spinbutton", "textarea")
	// linkRoles are what a person calls a link: a link, or text that responds to clicks.
	linkRoles = roleSet("link", "clickable")
	// dateRoles are the date and time inputs, typed into with a value in the input's format.
	dateRoles = roleSet("date", "DateTime", "InputTime", "time")
	// fieldRoles are what "text field", "input" or "box" mean: fields that take any text.
	fieldRoles = roleSet("textbox", "searchbox", "combobox", "spinbutton", "textarea")
	// textRoles are the fields one types into.
	textRoles   = union(fieldRoles, dateRoles)
	checkRoles  = roleSet("checkbox", "radio", "switch", "menuitemcheckbox", "menuitemradio")
	selectRoles = roleSet("combobox", "listbox")
	// controlRoles are what "widget", "control" or "element" cover: anything one can act on.
	controlRoles = union(clickRoles, union(textRoles, union(selectRoles, roleSet("slider"))))
	// actRoles are the roles a person presses: buttons, links, clickable text, tabs, menu items.
	actRoles = roleSet("button", "link", "clickable", "tab", "menuitem", "menuitemcheckbox", "menuitemradio")
)

func roleSet(rs ...string) map[string]bool {
	m := make(map[string]bool, len(rs))
	for _, r := range rs {
		m[r] = true
	}
	return m
}

// kindWord is a word or phrase that names a kind of element ("text field", "radio button").
type kindWord struct {
	words string
	roles map[string]bool
	// generic: the word covers any control ("widget"); a kind word before it narrows it
	// ("a text widget").
	generic bool
}

// roleHints are the kind words a target phrase may end with (longer phrases before the phrases
// they end with), singular; plurals are read by [kindOf].
var roleHints = []kindWord{
	{words: "text field", roles: fieldRoles}, {words: "text box", roles: fieldRoles}, {words: "text input", roles: fieldRoles},
	{words: "text area", roles: fieldRoles}, {words: "input box", roles: fieldRoles}, {words: "input field", roles: fieldRoles},
	{words: "entry field", roles: fieldRoles}, {words: "edit box", roles: fieldRoles},
	{words: "search box", roles: roleSet("searchbox", "textbox", "combobox")},
	{words: "search field", roles: roleSet("searchbox", "textbox", "combobox")},
	{words: "date field", roles: roleSet("date", "DateTime")}, {words: "date input", roles: roleSet("date", "DateTime")},
	{words: "date picker", roles: roleSet("date", "DateTime")},
	{words: "time field", roles: roleSet("InputTime", "time")}, {words: "time input", roles: roleSet("InputTime", "time")},
	{words: "check box", roles: checkRoles}, {words: "tick box", roles: checkRoles}, {words: "drop down", roles: selectRoles},
	{words: "drop down list", roles: selectRoles}, {words: "dropdown list", roles: selectRoles}, {words: "drop down menu", roles: selectRoles},
	{words: "dropdown menu", roles: selectRoles}, {words: "select box", roles: selectRoles}, {words: "list box", roles: selectRoles},
	{words: "combo box", roles: selectRoles}, {words: "scroll list", roles: selectRoles},
	{words: "radio button", roles: roleSet("radio")}, {words: "option button", roles: roleSet("radio")},
	{words: "menu item", roles: roleSet("menuitem", "menuitemcheckbox", "menuitemradio")},
	{words: "search result", roles: linkRoles},
	{words: "button", roles: roleSet("button", "menuitem", "link", "tab", "switch", "clickable")}, {words: "link", roles: linkRoles},
	{words: "hyperlink", roles: linkRoles}, {words: "word", roles: linkRoles},
	{words: "field", roles: fieldRoles}, {words: "box", roles: fieldRoles}, {words: "input", roles: fieldRoles},
	{words: "textbox", roles: fieldRoles}, {words: "textarea", roles: fieldRoles}, {words: "textfield", roles: fieldRoles},
	{words: "checkbox", roles: checkRoles}, {words: "tickbox", roles: checkRoles}, {words: "dropdown", roles: selectRoles},
	{words: "listbox", roles: selectRoles}, {words: "combobox", roles: selectRoles},
	{words: "select", roles: selectRoles}, {words: "menu", roles: roleSet("combobox", "listbox", "button", "menuitem")},
	{words: "list", roles: selectRoles}, {words: "tab", roles: roleSet("tab")}, {words: "radio", roles: roleSet("radio")},
	{words: "switch", roles: roleSet("switch")}, {words: "toggle", roles: roleSet("switch", "checkbox")},
	{words: "option", roles: roleSet("option", "radio", "menuitem")}, {words: "icon", roles: clickRoles},
	{words: "image", roles: roleSet("img")}, {words: "picture", roles: roleSet("img")}, {words: "result", roles: linkRoles},
	{words: "slider", roles: roleSet("slider")}, {words: "item", roles: roleSet("option", "menuitem", "listitem", "treeitem", "row")}, {words: "date", roles: roleSet("date", "DateTime")},
	{words: "time", roles: roleSet("InputTime", "time")},
	{words: "widget", roles: controlRoles, generic: true}, {words: "control", roles: controlRoles, generic: true},
	{words: "element", roles: controlRoles, generic: true},
}

// modifierKinds are the kind words that narrow a generic kind word before it ("a "text"
// widget", "the checkbox control"): the kind, as the page model shows it.
var modifierKinds = map[string]map[string]bool{
	"text": roleSet("textbox", "searchbox"), "textbox": roleSet("textbox", "searchbox"), "input": fieldRoles,
	"textarea": roleSet("textbox"), "button": roleSet("button"), "link": linkRoles, "checkbox": checkRoles,
	"check box": checkRoles, "radio": roleSet("radio"), "radio button": roleSet("radio"), "tab": roleSet("tab"),
	"slider": roleSet("slider"), "dropdown": selectRoles, "select": selectRoles, "list": selectRoles,
	"date": roleSet("date", "DateTime"), "time": roleSet("InputTime", "time"), "option": roleSet("option"), "switch": roleSet("switch"),
}

// leadingHints are the kind words that may come before a name ("the link "sit"").
var leadingHints = map[string]bool{"link": true, "button": true, "word": true, "checkbox": true, "option": true,
	"radio button": true, "menu item": true}

// kindOf reads a trailing kind word of p ("the email field", "both text fields"): the phrase
// before it and the kind, or ok false when p ends with none.
func kindOf(p string) (rest string, k kindWord, ok bool) {
	for _, h := range roleHints {
		for _, w := range []string{h.words, pluralOf(h.words)} {
			if p == w {
				return "", h, true
			}
			if r, found := strings.CutSuffix(p, " "+w); found {
				return strings.TrimSpace(r), h, true
			}
		}
	}
	return p, kindWord{}, false
}

// pluralOf is the plural of a kind word ("box" → "boxes").
func pluralOf(w string) string {
	switch {
	case strings.HasSuffix(w, "x") || strings.HasSuffix(w, "ch"):
		return w + "es"
	case strings.HasSuffix(w, "y") && !strings.HasSuffix(w, "ey"):
		return strings.TrimSuffix(w, "y") + "ies"
	}
	return w + "s"
}

// glyphs are the names and glyphs that mean one icon button: a button named Close that shows
// "×" is what "click the x" means.
var glyphs = [][]string{
	{"x", "×", "✕", "✖", "✗", "╳", "close", "dismiss", "close dialog", "close this dialog", "close modal"},
	{"☰", "≡", "menu", "hamburger", "hamburger menu", "main menu", "navigation menu"},
	{"⋮", "⋯", "…", "...", "more", "more options", "more actions", "overflow menu", "kebab menu"},
	{"+", "＋", "plus"},
}

// glyphGroup returns the set of names equal to phrase as an icon (nil when phrase names no
// icon). phrase is as said, lowercased; glyphs are compared before normName drops them.
func glyphGroup(phrase string) []string {
	p := strings.Trim(strings.TrimSpace(phrase), `"'“”‘’`)
	for _, g := range glyphs {
		for _, w := range g {
			if p == w {
				return g
			}
		}
	}
	return nil
}

// isGlyph reports whether an element's name or shown text is one of the icon's names.
func isGlyph(n *snapshot.Node, group []string) bool {
	for _, s := range []string{n.Name, shown(n)} {
		s = strings.ToLower(strings.TrimSpace(s))
		if s == "" {
			continue
		}
		for _, w := range group {
			if s == w || normName(s) == w {
				return true
			}
		}
	}
	return false
}
