package actions

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// shout is a throwaway kind for TestNewKindReachesEveryDoor.
type shout struct {
	Words string `json:"words" jsonschema:"what to shout" cli:"text"`
	Loud  bool   `json:"loud,omitempty" tool:"-" jsonschema:"all capitals"`
}

func (p *shout) Validate() error {
	if strings.TrimSpace(p.Words) == "" {
		return phrase("needs words")
	}
	return nil
}

// TestNewKindReachesEveryDoor: adding a kind is one Register call with its handler. Without
// further edits the kind is offered to the model (Tools, with a schema generated from its
// struct, and FromTool decodes the model's call), the CLI lists and parses it (Usage,
// ParseArgs), the HTTP door decodes and validates it (Decode, Validate: what POST /api/act
// calls) and the service runs it (Act with Options.Registry).
func TestNewKindReachesEveryDoor(t *testing.T) {
	reg := NewRegistry()
	Register(reg, Spec[shout]{Name: "shout", Doc: "Shout some words.", Risk: Reads, Browser: true,
		Run: func(_ *runner, _ context.Context, p *shout) (*Result, error) {
			w := p.Words + "!"
			if p.Loud {
				w = strings.ToUpper(w)
			}
			return &Result{Message: w}, nil
		}})

	// the model's tools
	tools, err := reg.Tools()
	if err != nil || len(tools) != 1 || tools[0].Name != "shout" || tools[0].Description != "Shout some words." {
		t.Fatalf("tools: %v %+v", err, tools)
	}
	schema, _ := json.Marshal(tools[0].Parameters)
	if want := `{"properties":{"words":{"description":"what to shout","type":"string"}},"required":["words"],"type":"object"}`; string(schema) != want {
		t.Errorf("schema %s, want %s", schema, want)
	}
	a, err := reg.FromTool("shout", json.RawMessage(`{"words":"hello"}`))
	if err != nil || a.Params.(*shout).Words != "hello" {
		t.Errorf("FromTool: %v %+v", err, a)
	}
	if _, err := reg.FromTool("shout", json.RawMessage(`{"words":" "}`)); err == nil || err.Error() != "shout needs words" {
		t.Errorf("FromTool with blank words: %v", err)
	}

	// the CLI
	if u := reg.Usage(); !strings.Contains(u, "shout words…") || !strings.Contains(u, "Shout some words.") {
		t.Errorf("usage:\n%s", u)
	}
	a, err = reg.ParseArgs("shout", []string{"hello", "there"}, "loud")
	if err != nil || *a.Params.(*shout) != (shout{Words: "hello there", Loud: true}) {
		t.Errorf("ParseArgs: %v %+v", err, a.Params)
	}

	// the HTTP door: strict decoding, validation, the kinds listed on a typo
	for _, c := range []struct{ body, err string }{
		{`{"kind":"shout","words":"hi","loud":true}`, ""},
		{`{"kind":"shout"}`, "shout needs words (what to shout)"},
		{`{"kind":"shout","words":"hi","volume":11}`, `unknown field "volume" (shout takes words, loud, timeout)`},
		{`{"kind":"shuot","words":"hi"}`, `unknown action kind "shuot": use one of shout`},
	} {
		a, err := reg.Decode([]byte(c.body))
		if err == nil {
			err = reg.Validate(&a)
		}
		if c.err == "" && err != nil || c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
			t.Errorf("%s: %v, want %q", c.body, err, c.err)
		}
	}
	if _, err := reg.Decode([]byte(`{"kind":"click","ref":"e1"}`)); !errors.Is(err, ErrUnknownKind) {
		t.Errorf("a kind of another registry: %v", err)
	}

	// dispatch
	svc := New(nil, Options{Registry: reg})
	res, err := svc.Act(callerCtx(), "", reg.Do(shout{Words: "hey", Loud: true}))
	if err != nil || res.Message != "HEY!" || res.Kind != "shout" {
		t.Errorf("Act: %v %+v", err, res)
	}
	if _, err := svc.Act(callerCtx(), "", Do(Click{Ref: "e1"})); !errors.Is(err, ErrUnknownKind) {
		t.Errorf("Act with a kind the service's registry lacks: %v", err)
	}
}

// TestDefaultRegistry: every standard kind has a doc, a parameter schema the model can take,
// CLI tags the parser knows, and encodes and decodes as the HTTP API's JSON.
func TestDefaultRegistry(t *testing.T) {
	reg := Default()
	if len(reg.Kinds()) < 28 {
		t.Fatalf("only %d kinds: %v", len(reg.Kinds()), reg.Kinds())
	}
	if _, err := reg.Tools(); err != nil {
		t.Fatal(err)
	}
	_ = reg.Usage()
	for _, k := range reg.All() {
		if k.Doc == "" {
			t.Errorf("%s has no doc", k.Name)
		}
		for _, f := range k.fields {
			if f.cli != "" && !strings.Contains("ref ref? word word? text text? list list? pairs int int? number? bool", f.cli) && !strings.Contains(f.cli, "|") {
				t.Errorf("%s.%s: unknown cli tag %q", k.Name, f.name, f.cli)
			}
		}
	}
	a := Do(Fill{Fields: []Field{{Ref: "e3", Value: "Ann"}}}).WithTimeout(2)
	b, err := json.Marshal(a)
	if want := `{"kind":"fill","fields":[{"ref":"e3","value":"Ann"}],"timeout":2}`; err != nil || string(b) != want {
		t.Fatalf("marshal: %v %s, want %s", err, b, want)
	}
	var back Action
	if err := json.Unmarshal(b, &back); err != nil || back.Kind != "fill" || back.Timeout != 2 || back.Params.(*Fill).Fields[0].Value != "Ann" {
		t.Fatalf("unmarshal: %v %+v", err, back)
	}
}
