package actions

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestParseKeys(t *testing.T) {
	cases := []struct {
		in        string
		mods      int
		key, code string
		keyCode   int
		text      string
	}{
		{"Enter", 0, "Enter", "Enter", 13, "\r"},
		{"enter", 0, "Enter", "Enter", 13, "\r"},
		{"Esc", 0, "Escape", "Escape", 27, ""},
		{"a", 0, "a", "KeyA", 65, "a"},
		{"Shift+a", modShift, "A", "KeyA", 65, "A"},
		{"Control+A", modCtrl, "A", "KeyA", 65, ""},
		{"Ctrl+Shift+Tab", modCtrl | modShift, "Tab", "Tab", 9, ""},
		{"Meta+k", modMeta, "k", "KeyK", 75, ""},
		{"ArrowDown", 0, "ArrowDown", "ArrowDown", 40, ""},
		{"F5", 0, "F5", "F5", 116, ""},
		{"/", 0, "/", "Slash", 191, "/"},
		{"+", 0, "+", "Equal", 187, "+"},
		{"Control++", modCtrl, "+", "Equal", 187, ""},
		{"Space", 0, " ", "Space", 32, " "},
		{"é", 0, "é", "", 0, "é"},
		{"7", 0, "7", "Digit7", 55, "7"},
	}
	for _, c := range cases {
		got, err := ParseKeys(c.in)
		if err != nil {
			t.Errorf("ParseKeys(%q): %v", c.in, err)
			continue
		}
		if got.Modifiers != c.mods || got.Key.Key != c.key || got.Key.Code != c.code || got.Key.KeyCode != c.keyCode || got.Key.Text != c.text {
			t.Errorf("ParseKeys(%q) = %+v", c.in, got)
		}
	}
	for _, bad := range []string{"", "Foo", "Control+", "Bogus+A", "F0", "F25", "Enter+A", "\x01"} {
		if _, err := ParseKeys(bad); err == nil {
			t.Errorf("ParseKeys(%q): no error", bad)
		}
	}
}

func FuzzParseKeys(f *testing.F) {
	for _, s := range []string{"Enter", "Control+A", "Shift+Tab", "+", "Control++", "F12", "a", "Meta+Shift+k", "", "++", "Alt+"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseKeys(s)
		if err != nil {
			if !utf8.ValidString(err.Error()) {
				t.Fatalf("error not UTF-8")
			}
			return
		}
		if c.Key.Key == "" {
			t.Fatalf("ParseKeys(%q) has no key: %+v", s, c)
		}
		if c.Modifiers&^(modAlt|modCtrl|modMeta|modShift) != 0 {
			t.Fatalf("ParseKeys(%q): bad modifiers %d", s, c.Modifiers)
		}
		if c.Modifiers&(modCtrl|modAlt|modMeta) != 0 && c.Key.Text != "" {
			t.Fatalf("ParseKeys(%q): text %q with a command modifier", s, c.Key.Text)
		}
	})
}

func TestValidate(t *testing.T) {
	cases := []struct {
		json string
		err  string // substring; "" = valid
	}{
		{`{"kind":"click","ref":"e7"}`, ""},
		{`{"kind":"CLICK","ref":"@e7","button":"right","modifiers":["Shift"]}`, ""},
		{`{}`, "action has no kind"},
		{`{"kind":"jump"}`, `unknown action kind "jump"`},
		{`{"kind":"click"}`, "click needs ref"},
		{`{"kind":"click","ref":"button"}`, "refs look like e7"},
		{`{"kind":"click","ref":"e1","button":"back"}`, "bad button"},
		{`{"kind":"click","ref":"e1","modifiers":["Hyper"]}`, "bad modifier"},
		{`{"kind":"type","text":"x"}`, "type needs ref"},
		{`{"kind":"type","ref":"e2","text":""}`, ""},
		{`{"kind":"press","key":"Control+A"}`, ""},
		{`{"kind":"press","key":"Ctrl+Nope"}`, "unknown key"},
		{`{"kind":"drag","ref":"e1"}`, "drag needs to"},
		{`{"kind":"select","ref":"e1"}`, "select needs values"},
		{`{"kind":"select","ref":"e1","values":["France"],"text":"France"}`, `select: unknown field "text"`},
		{`{"kind":"click","ref":"e1","text":"x"}`, `unknown field "text" (click takes ref, button, double, modifiers, timeout)`},
		{`{"kind":"fill","fields":[{"ref":"e3","value":true}]}`, ""},
		{`{"kind":"upload","ref":"e1","files":"/tmp/a.pdf"}`, ""},
		{`{"kind":"check","ref":"e1","checked":false}`, ""},
		{`{"kind":"check","ref":"e1"}`, "check needs checked"},
		{`{"kind":"scroll","direction":"bottom"}`, ""},
		{`{"kind":"type","ref":"e2"}`, "type needs text"},
		{`{"kind":"navigate","url":3}`, "navigate: url must be a string"},
		{`{"kind":"fill","fields":[]}`, "fill needs fields"},
		{`{"kind":"fill","fields":[{"ref":"x","value":"1"}]}`, "fields[0].ref"},
		{`{"kind":"scroll","direction":"sideways"}`, "bad direction"},
		{`{"kind":"wait"}`, "wait needs one of"},
		{`{"kind":"wait","text":"a","url":"b"}`, "only one of"},
		{`{"kind":"wait","state":"idle"}`, "bad state"},
		{`{"kind":"wait","seconds":120}`, "at most 60"},
		{`{"kind":"evaluate"}`, "evaluate needs expression"},
		{`{"kind":"resize","width":100}`, "resize needs width and height"},
		{`{"kind":"resize"}`, ""},
		{`{"kind":"navigate"}`, "navigate needs url"},
		{`{"kind":"upload","ref":"e1"}`, "upload needs files"},
		{`{"kind":"screenshot","format":"gif"}`, "bad format"},
		{`{"kind":"tabs","timeout":-1}`, "timeout"},
		{`{"kind":"dialog","accept":false}`, ""},
	}
	for _, c := range cases {
		var a Action
		err := json.Unmarshal([]byte(c.json), &a)
		if err == nil {
			err = a.Validate()
		}
		if err != nil && !errors.Is(err, ErrBadAction) {
			t.Errorf("%s: %v does not match ErrBadAction", c.json, err)
		}
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%s: unexpected error %v", c.json, err)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: error %v, want %q", c.json, err, c.err)
		}
	}
}
