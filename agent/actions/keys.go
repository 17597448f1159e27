package actions

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// keyDef is what Input.dispatchKeyEvent needs for one key.
type keyDef struct {
	Key     string
	Code    string
	KeyCode int
	Text    string
}

// Modifier bits of Input.dispatch*Event.
const (
	modAlt   = 1
	modCtrl  = 2
	modMeta  = 4
	modShift = 8
)

var namedKeys = map[string]keyDef{
	"enter":       {"Enter", "Enter", 13, "\r"},
	"tab":         {"Tab", "Tab", 9, ""},
	"backspace":   {"Backspace", "Backspace", 8, ""},
	"delete":      {"Delete", "Delete", 46, ""},
	"escape":      {"Escape", "Escape", 27, ""},
	"space":       {" ", "Space", 32, " "},
	"arrowup":     {"ArrowUp", "ArrowUp", 38, ""},
	"arrowdown":   {"ArrowDown", "ArrowDown", 40, ""},
	"arrowleft":   {"ArrowLeft", "ArrowLeft", 37, ""},
	"arrowright":  {"ArrowRight", "ArrowRight", 39, ""},
	"home":        {"Home", "Home", 36, ""},
	"end":         {"End", "End", 35, ""},
	"pageup":      {"PageUp", "PageUp", 33, ""},
	"pagedown":    {"PageDown", "PageDown", 34, ""},
	"insert":      {"Insert", "Insert", 45, ""},
	"shift":       {"Shift", "ShiftLeft", 16, ""},
	"control":     {"Control", "ControlLeft", 17, ""},
	"alt":         {"Alt", "AltLeft", 18, ""},
	"meta":        {"Meta", "MetaLeft", 91, ""},
	"contextmenu": {"ContextMenu", "ContextMenu", 93, ""},
}

var keyAliases = map[string]string{
	"esc": "escape", "return": "enter", "del": "delete", "up": "arrowup", "down": "arrowdown",
	"left": "arrowleft", "right": "arrowright", "pgup": "pageup", "pgdn": "pagedown", " ": "space",
	"ctrl": "control", "cmd": "meta", "command": "meta", "super": "meta", "win": "meta", "option": "alt",
	"spacebar": "space",
}

var punct = map[rune]struct {
	code    string
	keyCode int
	shifted bool
}{
	'-': {"Minus", 189, false}, '_': {"Minus", 189, true}, '=': {"Equal", 187, false}, '+': {"Equal", 187, true},
	'[': {"BracketLeft", 219, false}, '{': {"BracketLeft", 219, true}, ']': {"BracketRight", 221, false}, '}': {"BracketRight", 221, true},
	'\\': {"Backslash", 220, false}, '|': {"Backslash", 220, true}, ';': {"Semicolon", 186, false}, ':': {"Semicolon", 186, true},
	'\'': {"Quote", 222, false}, '"': {"Quote", 222, true}, ',': {"Comma", 188, false}, '<': {"Comma", 188, true},
	'.': {"Period", 190, false}, '>': {"Period", 190, true}, '/': {"Slash", 191, false}, '?': {"Slash", 191, true},
	'`': {"Backquote", 192, false}, '~': {"Backquote", 192, true},
	'!': {"Digit1", 49, true}, '@': {"Digit2", 50, true}, '#': {"Digit3", 51, true}, '$': {"Digit4", 52, true},
	'%': {"Digit5", 53, true}, '^': {"Digit6", 54, true}, '&': {"Digit7", 55, true}, '*': {"Digit8", 56, true},
	'(': {"Digit9", 57, true}, ')': {"Digit0", 48, true},
}

// charKey returns the key definition that types rune r on a US layout (other characters get a
// key with no code, which Chromium still inserts as text).
func charKey(r rune) keyDef {
	s := string(r)
	switch {
	case r >= 'a' && r <= 'z':
		return keyDef{s, "Key" + strings.ToUpper(s), int(r - 'a' + 'A'), s}
	case r >= 'A' && r <= 'Z':
		return keyDef{s, "Key" + s, int(r), s}
	case r >= '0' && r <= '9':
		return keyDef{s, "Digit" + s, int(r), s}
	case r == ' ':
		return namedKeys["space"]
	case r == '\n' || r == '\r':
		return namedKeys["enter"]
	case r == '\t':
		return namedKeys["tab"]
	}
	if p, ok := punct[r]; ok {
		return keyDef{s, p.code, p.keyCode, s}
	}
	return keyDef{Key: s, Text: s}
}

// Combo is a parsed key combination such as Control+Shift+A.
type Combo struct {
	Modifiers int
	Key       keyDef
}

// ParseKeys parses a key combination: modifiers (Control, Ctrl, Shift, Alt, Meta, Cmd) and one
// key joined by "+", e.g. "Enter", "Control+A", "Shift+Tab", "Meta+Shift+k", "+" or "Control++".
// Key names follow KeyboardEvent.key (Enter, Escape, ArrowDown, F5, a, A, 1, /) with a few
// aliases (Esc, Return, Del, Up, Down, Left, Right, PgUp, PgDn, Space).
func ParseKeys(s string) (Combo, error) {
	var c Combo
	if s == "" {
		return c, fmt.Errorf("empty key: name a key such as Enter, Tab, ArrowDown, a or Control+A")
	}
	if !utf8.ValidString(s) {
		return c, fmt.Errorf("key %q is not valid UTF-8", s)
	}
	parts := strings.Split(s, "+")
	// "+" and "Control++" name the plus key
	if strings.HasSuffix(s, "++") || s == "+" {
		parts = append(strings.Split(strings.TrimSuffix(s, "++"), "+"), "+")
		if s == "+" {
			parts = []string{"+"}
		}
	}
	for i, p := range parts {
		last := i == len(parts)-1
		name := strings.TrimSpace(p)
		if p == " " {
			name = " "
		}
		lower := strings.ToLower(name)
		if a, ok := keyAliases[lower]; ok {
			lower = a
		}
		if !last {
			switch lower {
			case "control":
				c.Modifiers |= modCtrl
			case "shift":
				c.Modifiers |= modShift
			case "alt":
				c.Modifiers |= modAlt
			case "meta":
				c.Modifiers |= modMeta
			default:
				return c, fmt.Errorf("bad key %q: %q is not a modifier (Control, Shift, Alt, Meta)", s, name)
			}
			continue
		}
		if name == "" {
			return c, fmt.Errorf("bad key %q: missing key after %q", s, "+")
		}
		if k, ok := namedKeys[lower]; ok {
			c.Key = k
		} else if len(lower) >= 2 && lower[0] == 'f' && isDigits(lower[1:]) {
			n := 0
			fmt.Sscanf(lower[1:], "%d", &n)
			if n < 1 || n > 24 {
				return c, fmt.Errorf("bad key %q: function keys are F1 to F24", s)
			}
			c.Key = keyDef{Key: "F" + lower[1:], Code: "F" + lower[1:], KeyCode: 111 + n}
		} else if utf8.RuneCountInString(name) == 1 {
			r, _ := utf8.DecodeRuneInString(name)
			if unicode.IsControl(r) && r != '\t' && r != '\n' && r != '\r' {
				return c, fmt.Errorf("bad key %q: control characters are not keys", s)
			}
			c.Key = charKey(r)
		} else {
			return c, fmt.Errorf("unknown key %q: use names like Enter, Tab, Escape, Backspace, ArrowDown, PageDown, F5, a single character, or combos like Control+A", name)
		}
	}
	// with Control, Alt or Meta held a key types nothing
	if c.Modifiers&(modCtrl|modAlt|modMeta) != 0 {
		c.Key.Text = ""
	}
	if c.Modifiers&modShift != 0 && len(c.Key.Text) == 1 && c.Key.Text[0] >= 'a' && c.Key.Text[0] <= 'z' {
		c.Key.Text = strings.ToUpper(c.Key.Text)
		c.Key.Key = c.Key.Text
	}
	return c, nil
}

func isDigits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

// parseModifiers turns names such as ["Shift", "Control"] into modifier bits.
func parseModifiers(names []string) (int, error) {
	m := 0
	for _, n := range names {
		l := strings.ToLower(strings.TrimSpace(n))
		if a, ok := keyAliases[l]; ok {
			l = a
		}
		switch l {
		case "control":
			m |= modCtrl
		case "shift":
			m |= modShift
		case "alt":
			m |= modAlt
		case "meta":
			m |= modMeta
		default:
			return 0, fmt.Errorf("bad modifier %q: use Control, Shift, Alt or Meta", n)
		}
	}
	return m, nil
}
