package task

import (
	"strings"
	"testing"
)

// TestRefersBack: a goal carries the session's recent tasks only when it refers back to them.
func TestRefersBack(t *testing.T) {
	for _, tc := range []struct {
		goal string
		want bool
	}{
		{"Do the same for the sports page", true},
		{"search for mugs again", true},
		{"what did I do?", true},
		{"open the previous result", true},
		{"Send it to Bob", true},
		{"that one, but in blue", true},
		{"mach das nochmal", true},
		{"Öffne die gleiche Seite", true},
		{"refais la même chose", true},
		{"hazlo otra vez", true},
		{"Find the price of a kettle", false},
		{"Click the button that says Submit", false},
		{"Enter 6:23 AM into the time field and press Submit", false},
		{"search for mugs and add the cheapest to the cart", false},
		{"", false},
	} {
		if got := refersBack(tc.goal); got != tc.want {
			t.Errorf("refersBack(%q) = %v, want %v", tc.goal, got, tc.want)
		}
	}
}

// TestRecentTasksOnlyWhenReferredTo: the "Recent tasks" block rides in the system prompt of a
// goal that refers back, and not in another's.
func TestRecentTasksOnlyWhenReferredTo(t *testing.T) {
	mem := []*Task{{Goal: "read the news", Status: StatusSucceeded, Answer: "3 headlines"}}
	if p := buildSystemPrompt(nil, "do that again for sports", mem); !strings.Contains(p, "Recent tasks in this session") || !strings.Contains(p, "3 headlines") {
		t.Errorf("a goal that refers back lacks the recent tasks:\n%s", p)
	}
	if p := buildSystemPrompt(nil, "Find the price of a kettle", mem); strings.Contains(p, "Recent tasks") || strings.Contains(p, "3 headlines") {
		t.Errorf("a goal that does not refer back carries the recent tasks:\n%s", p)
	}
}
