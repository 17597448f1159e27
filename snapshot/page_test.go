package snapshot

import (
	"encoding/json"
	"testing"
)

// TestPageModel: the tree the outline is rendered from answers the questions consumers ask
// (by ref, enclosing form, neighbours, focus), survives JSON, and a hand-built model renders as
// a built one does.
func TestPageModel(t *testing.T) {
	name := el("textbox", "Name", "e2")
	name.focused = true
	root := el("document", "Shop", "",
		el("form", "Checkout", "", txt("Total 49 €"), name, el("button", "Pay", "e3")),
		el("generic", "", "", el("link", "Help", "e4")))
	s := &Snapshot{URL: "https://shop.test/", Title: "Shop", Root: compact(root, false)}
	s.renderText(Options{})
	// the header's summary names the form, its field and its submit button
	want := "# Shop — https://shop.test/\n# forms: form \"Checkout\" (textbox \"Name\" e2; submit button \"Pay\" e3)\n- form \"Checkout\": Total 49 €\n  - textbox \"Name\" [focused] [ref=e2]\n  - button \"Pay\" [ref=e3]\n- link \"Help\" [ref=e4]\n"
	if s.Text != want || s.Refs != 3 {
		t.Fatalf("text (%d refs)\n%s\nwant\n%s", s.Refs, s.Text, want)
	}
	check := func(t *testing.T, s *Snapshot) {
		t.Helper()
		pay := s.Find("e3")
		if pay == nil || pay.Role != "button" || pay.Name != "Pay" {
			t.Fatalf("Find(e3) = %+v", pay)
		}
		if f := pay.Closest("form", "dialog"); f == nil || f.Name != "Checkout" {
			t.Fatalf("Closest form of Pay = %+v", f)
		}
		if s.Find("e4").Closest("form") != nil {
			t.Fatal("Help is in no form (its unnamed wrapper is hoisted away)")
		}
		if f := s.Focused(); f == nil || f.Ref != "e2" {
			t.Fatalf("Focused() = %+v", f)
		}
		var words []string
		for _, n := range s.Around(s.Find("e2"), 1, 1) {
			words = append(words, n.Words())
		}
		if len(words) != 3 || words[0] != "Total 49 €" || words[2] != "Pay" {
			t.Fatalf("Around(e2, 1, 1) = %q", words)
		}
		if s.Find("e9") != nil || len(s.Nodes()) != 5 {
			t.Fatalf("Find(e9) or %d nodes", len(s.Nodes()))
		}
	}
	check(t, s)
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var back Snapshot
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	check(t, &back)
	// a model decoded (or written by hand) renders the same text
	text := back.Text
	back.Render(Options{})
	if back.Text != text {
		t.Fatalf("re-rendered\n%s\nwant\n%s", back.Text, text)
	}
	// a blocked page has no tree and says so
	blocked := &Snapshot{URL: "https://shop.test/", Dialog: &Dialog{Type: "confirm", Message: "Sure?"}}
	blocked.Render(Options{})
	if blocked.Nodes() != nil || blocked.Find("e2") != nil ||
		blocked.Text != "# https://shop.test/\n# confirm dialog open: \"Sure?\" (accept or dismiss it)\n# the page is blocked until the dialog is accepted or dismissed\n" {
		t.Fatalf("blocked page: %q", blocked.Text)
	}
}
