package skills

import (
	"context"
	"strings"
	"testing"
	"time"
)

// A click followed by text in a status region: the step expects that text on replay, with the
// typed values written as their parameters; an effect of another click, another document or
// arriving late is not attached; long or template-like texts are left out.
func TestRecordedClickEffectBecomesExpectText(t *testing.T) {
	now := time.Now()
	r := &recording{}
	page := "https://app.test/contacts"
	r.add(captured{Kind: "type", Target: Target{Role: "textbox", Name: "Name"}, Value: "Ada Lovelace", URL: page, At: now, page: 0})
	r.add(captured{Kind: "type", Target: Target{Role: "textbox", Name: "Team"}, Value: "Ad", URL: page, At: now, page: 1})
	r.add(captured{Kind: "click", Target: Target{Role: "button", Name: "Add contact"}, URL: page, At: now, page: 2})
	r.effect(pageEvent{T: "effect", Of: 1, Text: "wrong click", URL: page}, now)
	r.effect(pageEvent{T: "effect", Of: 2, Text: "other page", URL: "https://app.test/other"}, now)
	r.effect(pageEvent{T: "effect", Of: 2, Text: "too late", URL: page}, now.Add(effectWindow+3*time.Second))
	r.effect(pageEvent{T: "effect", Of: 2, Text: "  Added Ada Lovelace to team  Ad \n", URL: page}, now.Add(50*time.Millisecond))
	r.effect(pageEvent{T: "effect", Of: 2, Text: "a second text", URL: page}, now.Add(60*time.Millisecond))
	if got := r.steps[2].ExpectText; got != "Added Ada Lovelace to team Ad" {
		t.Fatalf("the click's effect: %q", got)
	}
	r.add(captured{Kind: "click", Target: Target{Role: "button", Name: "Long"}, URL: page, At: now, page: 3})
	r.effect(pageEvent{T: "effect", Of: 3, Text: strings.Repeat("x", maxEffect+1), URL: page}, now)
	r.effect(pageEvent{T: "effect", Of: 3, Text: "Hello {{name}}", URL: page}, now)
	if got := r.steps[3].ExpectText; got != "" {
		t.Fatalf("a long or template-like effect was kept: %q", got)
	}
	r.add(captured{Kind: "check", Target: Target{Role: "checkbox", Name: "News"}, Checked: true, URL: page, At: now, page: 4})
	r.effect(pageEvent{T: "effect", Of: 4, Text: "Subscribed", URL: page}, now)
	if got := r.steps[4].ExpectText; got != "" {
		t.Fatalf("only clicks take an effect: %q", got)
	}

	s := New(Options{Log: testLog(t)})
	d, err := s.draft(context.Background(), Recording{URL: page, StartedAt: now}, r.steps, "add a contact")
	if err != nil {
		t.Fatal(err)
	}
	click := d.Skill.Steps[2]
	if click.Expect == nil || click.Expect.Text != "Added {{name}} to team {{team}}" || click.Expect.URL != "" {
		t.Fatalf("the click step's expect: %+v\n%s", click.Expect, d.Markdown)
	}
	if !strings.Contains(d.Markdown, "text: Added {{name}} to team {{team}}") && !strings.Contains(d.Markdown, "text: 'Added {{name}} to team {{team}}'") {
		t.Errorf("the draft does not write the expected text:\n%s", d.Markdown)
	}
	if d.Skill.Steps[3].Expect != nil {
		t.Errorf("a click without an effect expects %+v", d.Skill.Steps[3].Expect)
	}

	// with a navigation too, both are checked
	caps := []captured{{Kind: "click", Target: Target{Role: "button", Name: "Save"}, URL: page, ExpectTo: "/saved", ExpectText: "Saved"}}
	d, err = s.draft(context.Background(), Recording{URL: page}, caps, "")
	if err != nil || d.Skill.Steps[0].Expect == nil || d.Skill.Steps[0].Expect.Text != "Saved" || d.Skill.Steps[0].Expect.URL != "/saved" {
		t.Fatalf("expect with a navigation: %v %+v", err, d.Skill.Steps[0].Expect)
	}
}

func TestWithParams(t *testing.T) {
	values := map[string]string{"Ada": "name", "Ada Lovelace": "full", "x": "one"}
	for in, want := range map[string]string{
		"Added Ada":                  "Added {{name}}",
		"Added Ada Lovelace.":        "Added {{full}}.",
		"Adam and Ada":               "Adam and {{name}}",
		"x marks":                    "x marks", // one-letter values are too common to be a parameter
		"Welcome, Ada! Ada Lovelace": "Welcome, {{name}}! {{full}}",
		"":                           "",
	} {
		if got := withParams(in, values); got != want {
			t.Errorf("withParams(%q) = %q, want %q", in, got, want)
		}
	}
}
