package skills

import (
	"errors"
	"strings"
	"testing"
)

const goodSkill = `---
name: add-contact
description: Add a contact to the address book.
kind: workflow
sites: ["example.com"]
parameters:
  - name: name
    description: Full name
    required: true
    example: Ada Lovelace
  - name: team
    default: Blue
---
# Add a contact

Intro text.

` + "```steps" + `
- do: type
  target: textbox "Name"
  text: "{{name}}"
  hint: Type the name
- do: select
  target: {role: combobox, name: Team}
  values: ["{{team}}"]
- do: click
  target:
    role: button
    name: /add|create/
    within: form "New contact"
  expect: {text: "Added {{name}}"}
- do: click
  target: button "Remove" nth=2
` + "```" + `

## Verification
It shows up.
`

func TestParseGood(t *testing.T) {
	s, err := Parse("add-contact/SKILL.md", []byte(goodSkill))
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "add-contact" || s.Kind != KindWorkflow || len(s.Parameters) != 2 || len(s.Steps) != 4 {
		t.Fatalf("parsed %+v", s)
	}
	if got := s.Steps[0].Target; got.Role != "textbox" || got.Name != "Name" {
		t.Errorf("short target: %+v", got)
	}
	if got := s.Steps[2].Target; got.Within == nil || got.Within.Role != "form" || got.Name != "/add|create/" {
		t.Errorf("within target: %+v", got)
	}
	if got := s.Steps[3].Target; got.Nth != 2 || got.Name != "Remove" {
		t.Errorf("nth target: %+v", got)
	}
	if s.Steps[0].Line != 19 || s.Steps[2].Line != 26 {
		t.Errorf("step lines %d, %d; want 19, 26", s.Steps[0].Line, s.Steps[2].Line)
	}
	// Markdown round trip keeps everything.
	md, err := s.Markdown()
	if err != nil {
		t.Fatal(err)
	}
	s2, err := Parse("again", md)
	if err != nil {
		t.Fatalf("re-parse: %v\n%s", err, md)
	}
	if len(s2.Steps) != 4 || s2.Steps[2].Target.Within.Name != "New contact" || s2.Steps[3].Target.Nth != 2 || !strings.Contains(s2.Body, "## Verification") {
		t.Fatalf("round trip lost something:\n%s", md)
	}
}

func TestParseErrors(t *testing.T) {
	const fm = "---\nname: x\ndescription: d\nparameters:\n  - name: q\n---\n"
	steps := func(s string) string { return fm + "text\n```steps\n" + s + "\n```\n" }
	cases := []struct {
		name, in string
		line     int
		reason   string
	}{
		{"no front matter", "# hi\n", 1, "front matter"},
		{"unclosed front matter", "---\nname: x\n", 1, "never closed"},
		{"bad yaml", "---\nname: x\ndescription: a: b\n---\n", 3, "mapping value is not allowed"},
		{"missing name", "---\ndescription: d\n---\n", 2, "name: is missing"},
		{"bad name", "---\nname: Bad Name\ndescription: d\n---\n", 2, "lowercase"},
		{"missing description", "---\nname: x\n\ndescription: \"\"\n---\n", 4, "description"},
		{"unknown key", "---\nname: x\ndescription: d\nsite: [a]\n---\n", 4, `unknown key "site"`},
		{"bad kind", "---\nname: x\ndescription: d\nkind: macro\n---\n", 4, "kind"},
		{"dup param", "---\nname: x\ndescription: d\nparameters:\n  - name: a\n  - name: a\n---\n", 6, "twice"},
		{"unclosed steps", fm + "```steps\n- do: click\n", 7, "never closed"},
		{"unknown step kind", steps("- do: click\n  target: button \"A\"\n- do: smash"), 11, "smash"},
		{"missing target", steps("- do: click"), 9, "needs target"},
		{"bad target", steps("- do: click\n  target: '!!'"), 10, "target"},
		{"undeclared template", steps("- do: type\n  target: textbox \"A\"\n  text: \"{{nope}}\""), 9, "{{nope}}"},
		{"unknown step key", steps("- do: click\n  target: button \"A\"\n  colour: red"), 11, `unknown key "colour": valid keys here are do, target, text`},
		// strict decoding (goccy/go-yaml's Strict) at every depth, with the line
		{"misspelled parameter field", "---\nname: x\ndescription: d\nparameters:\n  - name: a\n    requird: true\n---\n", 6, `unknown key "requird": valid keys here are name, description, required`},
		{"misspelled front matter field", "---\nname: x\ndescripton: d\n---\n", 3, `unknown key "descripton": valid keys here are name, description, kind, sites, parameters, license`},
		{"misspelled expect field", steps("- do: click\n  target: button \"A\"\n  expect:\n    txt: done"), 12, `unknown key "txt": valid keys here are text, gone, url, timeout`},
		{"misspelled target field", steps("- do: click\n  target:\n    role: button\n    nmae: A"), 12, `unknown key "nmae": valid keys here are role, name, nth, within, any`},
		{"misspelled fill field", steps("- do: fill\n  fields:\n    - target: textbox \"A\"\n      vaule: x"), 12, `unknown key "vaule": valid keys here are target, value`},
		{"select without values", steps("- do: select\n  target: combobox \"A\""), 9, "values"},
		{"bad regex", steps("- do: click\n  target: {role: button, name: \"/(/\"}"), 9, "regular expression"},
		{"steps not a list", steps("do: click"), 9, "list"},
		{"wrong type", steps("- do: click\n  target: button \"A\"\n  submit: maybe"), 11, ""},
		// waits the wait action cannot replay: no condition, or two
		{"wait with only expect", steps("- do: click\n  target: button \"A\"\n- do: wait\n  expect: {text: done}"), 11, "needs text: or url:"},
		{"wait with nothing", steps("- do: wait"), 9, "needs text: or url:"},
		{"wait for text and url", steps("- do: wait\n  text: done\n  url: /next"), 9, "not both"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("x/SKILL.md", []byte(c.in))
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v is not a *ParseError", err)
			}
			if pe.File != "x/SKILL.md" || pe.Line != c.line || !strings.Contains(pe.Reason, c.reason) {
				t.Fatalf("got %q (line %d), want line %d containing %q", pe.Error(), pe.Line, c.line, c.reason)
			}
			if !strings.HasPrefix(pe.Error(), "x/SKILL.md:") {
				t.Fatalf("error %q does not start with file:line", pe.Error())
			}
		})
	}
}

func TestBundledSkillsParse(t *testing.T) {
	l := NewLibrary("", testLog(t))
	if p := l.Problems(); len(p) > 0 {
		t.Fatalf("bundled problems: %v", p)
	}
	want := []string{"extract-table", "fill-form", "site-search"}
	var got []string
	for _, s := range l.List() {
		got = append(got, s.Name)
		if !s.Bundled || len(s.Steps) == 0 {
			t.Errorf("%s: bundled=%v steps=%d", s.Name, s.Bundled, len(s.Steps))
		}
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("bundled skills %v, want %v", got, want)
	}
}

func TestParseTarget(t *testing.T) {
	cases := []struct {
		in   string
		want Target
		err  bool
	}{
		{`button "Save"`, Target{Role: "button", Name: "Save"}, false},
		{`searchbox`, Target{Role: "searchbox"}, false},
		{`textbox "Say \"hi\"" nth=3`, Target{Role: "textbox", Name: `Say "hi"`, Nth: 3}, false},
		{`"Save"`, Target{}, true},
		{`button Save`, Target{}, true},
	}
	for _, c := range cases {
		got, err := ParseTarget(c.in)
		if (err != nil) != c.err || (!c.err && got.String() != c.want.String()) {
			t.Errorf("ParseTarget(%q) = %+v, %v; want %+v", c.in, got, err, c.want)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(goodSkill))
	f.Add([]byte("---\nname: a\ndescription: b\n---\n```steps\n- do: click\n  target: button \"x\"\n```\n"))
	f.Add([]byte("---\n---\n"))
	f.Add([]byte("---\nname: a\ndescription: b\nparameters: [{name: q}]\n---\n```steps\n- {do: type, target: {any: [searchbox, {role: textbox, within: form}]}, text: '{{q}}'}\n```"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse("f/SKILL.md", data)
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v is not a *ParseError", err)
			}
			if pe.Line < 0 || pe.Line > strings.Count(string(data), "\n")+2 {
				t.Fatalf("line %d out of range for %d lines: %v", pe.Line, strings.Count(string(data), "\n")+1, pe)
			}
			return
		}
		// What parses renders and parses again to the same steps.
		md, err := s.Markdown()
		if err != nil {
			t.Fatalf("render: %v", err)
		}
		s2, err := Parse("f2", md)
		if err != nil {
			t.Fatalf("re-parse of rendered skill failed: %v\n--- in:\n%s\n--- out:\n%s", err, data, md)
		}
		if len(s2.Steps) != len(s.Steps) || s2.Name != s.Name {
			t.Fatalf("round trip changed the skill:\n%s", md)
		}
	})
}

// TestParseKeepsAgentSkillsFields: the strict front matter still accepts the Agent Skills
// format's fields tabrelay does not use.
func TestParseKeepsAgentSkillsFields(t *testing.T) {
	in := "---\nname: x\ndescription: d\nlicense: MIT\nmetadata:\n  author: ada\nallowed-tools: Bash\ncompatibility: any\n---\nbody\n"
	s, err := Parse("x/SKILL.md", []byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "x" || s.Description != "d" || s.Body != "body\n" {
		t.Fatalf("parsed %+v", s)
	}
}
