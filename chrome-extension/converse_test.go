package chromeextension

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/tabrelay/tabrelay/agent/voice"
)

// runConverse calls the panel's converse.js function fn with each argument list in node and
// returns the results (converse.js is plain JavaScript with no imports: node runs it as the
// panel does).
func runConverse(t *testing.T, fn string, args [][]any) []json.RawMessage {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("this test runs the panel's converse.js in Node.js 20+ (Debian: apt-get install nodejs): %v", err)
	}
	abs, err := filepath.Abs("converse.js")
	if err != nil {
		t.Fatal(err)
	}
	in, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	script := `const m = await import(process.argv[1]);
const args = JSON.parse(process.argv[2]);
console.log(JSON.stringify(args.map((a) => m[process.argv[3]](...a) ?? null)));`
	out, err := exec.Command(node, "--input-type=module", "-e", script, "file://"+filepath.ToSlash(abs), string(in), fn).CombinedOutput()
	if err != nil {
		t.Fatalf("node converse.js %s: %v\n%s", fn, err, out)
	}
	var res []json.RawMessage
	if err := json.Unmarshal(out, &res); err != nil || len(res) != len(args) {
		t.Fatalf("node converse.js %s answered %d results (want %d), %v:\n%s", fn, len(res), len(args), err, out)
	}
	return res
}

// decision is converse.js's Decision, all kinds in one struct.
type decision struct {
	Kind       string `json:"kind"`
	Text       string `json:"text,omitempty"`
	TaskID     string `json:"taskId,omitempty"`
	StepID     string `json:"stepId,omitempty"`
	Approve    *bool  `json:"approve,omitempty"`
	QuestionID string `json:"questionId,omitempty"`
	Answer     string `json:"answer,omitempty"`
	HandoverID string `json:"handoverId,omitempty"`
	Say        string `json:"say,omitempty"`
}

// TestRouteUtterance: what an utterance does in each state of the task the panel shows — a
// confirmation's yes/no answers it and starts no task, a question takes a choice by name or
// position (or a free answer), a hand-over resumes on continue/done, stop stops at any time,
// and with nothing waiting it is a new request.
func TestRouteUtterance(t *testing.T) {
	yes, no := true, false
	confirming := map[string]any{"id": "t1", "status": "waiting_confirmation", "steps": []any{
		map[string]any{"id": "s1", "tool": "click", "confirmation": map[string]any{"prompt": `click button "Buy"`, "approved": true}},
		map[string]any{"id": "s2", "tool": "click", "confirmation": map[string]any{"prompt": `click button "Place order"`}},
	}}
	asking := map[string]any{"id": "t2", "status": "waiting_input", "question": map[string]any{"id": "q1", "text": "Which address?", "choices": []string{"Home", "Work", "P.O. Box 12"}}}
	free := map[string]any{"id": "t3", "status": "waiting_input", "question": map[string]any{"id": "q2", "text": "What name goes on the order?"}}
	handing := map[string]any{"id": "t4", "status": "waiting_user", "handover": map[string]any{"id": "h1", "instruction": "Sign in to your bank in this tab, then press Continue."}}
	running := map[string]any{"id": "t5", "status": "running"}
	finished := map[string]any{"id": "t6", "status": "succeeded"}
	again := func(id string) decision { return decision{Kind: "again", TaskID: id} }
	cases := []struct {
		name string
		task any
		said string
		want decision
	}{
		{"confirm yes", confirming, "yes", decision{Kind: "confirm", TaskID: "t1", StepID: "s2", Approve: &yes}},
		{"confirm Yes.", confirming, "Yes.", decision{Kind: "confirm", TaskID: "t1", StepID: "s2", Approve: &yes}},
		{"confirm approve", confirming, "approve", decision{Kind: "confirm", TaskID: "t1", StepID: "s2", Approve: &yes}},
		{"confirm ok go ahead", confirming, "OK, go ahead please", decision{Kind: "confirm", TaskID: "t1", StepID: "s2", Approve: &yes}},
		{"confirm confirm", confirming, "confirm", decision{Kind: "confirm", TaskID: "t1", StepID: "s2", Approve: &yes}},
		{"confirm no", confirming, "no", decision{Kind: "confirm", TaskID: "t1", StepID: "s2", Approve: &no}},
		{"confirm cancel declines", confirming, "cancel", decision{Kind: "confirm", TaskID: "t1", StepID: "s2", Approve: &no}},
		{"confirm reject", confirming, "Reject", decision{Kind: "confirm", TaskID: "t1", StepID: "s2", Approve: &no}},
		{"confirm stop", confirming, "stop", decision{Kind: "stop", TaskID: "t1"}},
		{"confirm other asks again", confirming, "buy a kettle", again("t1")},
		{"confirm yes in a sentence asks again", confirming, "yes and also buy a kettle", again("t1")},
		{"question choice", asking, "work", decision{Kind: "answer", TaskID: "t2", QuestionID: "q1", Answer: "Work"}},
		{"question choice in words", asking, "the work address please", decision{Kind: "answer", TaskID: "t2", QuestionID: "q1", Answer: "Work"}},
		{"question choice punctuated", asking, "P O box 12", decision{Kind: "answer", TaskID: "t2", QuestionID: "q1", Answer: "P.O. Box 12"}},
		{"question ordinal", asking, "the second one", decision{Kind: "answer", TaskID: "t2", QuestionID: "q1", Answer: "Work"}},
		{"question number", asking, "number three", decision{Kind: "answer", TaskID: "t2", QuestionID: "q1", Answer: "P.O. Box 12"}},
		{"question free answer", asking, "my office", decision{Kind: "answer", TaskID: "t2", QuestionID: "q1", Answer: "my office"}},
		{"question cancel stops", asking, "cancel", decision{Kind: "stop", TaskID: "t2"}},
		{"question stop", asking, "Stop.", decision{Kind: "stop", TaskID: "t2"}},
		{"question yes is a free answer", free, "Ada Lovelace", decision{Kind: "answer", TaskID: "t3", QuestionID: "q2", Answer: "Ada Lovelace"}},
		{"hand-over continue", handing, "continue", decision{Kind: "continue", TaskID: "t4", HandoverID: "h1"}},
		{"hand-over done", handing, "done", decision{Kind: "continue", TaskID: "t4", HandoverID: "h1"}},
		{"hand-over I'm done", handing, "I'm done.", decision{Kind: "continue", TaskID: "t4", HandoverID: "h1"}},
		{"hand-over other asks again", handing, "what now", again("t4")},
		{"hand-over stop", handing, "stop", decision{Kind: "stop", TaskID: "t4"}},
		{"hand-over cancel stops", handing, "cancel", decision{Kind: "stop", TaskID: "t4"}},
		{"running stop", running, "stop", decision{Kind: "stop", TaskID: "t5"}},
		{"running stop the task", running, "stop the task", decision{Kind: "stop", TaskID: "t5"}},
		{"running cancel stops", running, "cancel", decision{Kind: "stop", TaskID: "t5"}},
		{"running new request", running, "scroll down", decision{Kind: "command", Text: "scroll down"}},
		{"running yes is a request", running, "yes", decision{Kind: "command", Text: "yes"}},
		{"finished request", finished, "open the second one", decision{Kind: "command", Text: "open the second one"}},
		{"finished stop is quiet", finished, "stop", decision{Kind: "quiet"}},
		{"no task request", nil, "find the cheapest kettle", decision{Kind: "command", Text: "find the cheapest kettle"}},
		{"no task cancel is quiet", nil, "cancel", decision{Kind: "quiet"}},
	}
	args := make([][]any, len(cases))
	for i, c := range cases {
		args[i] = []any{c.task, c.said}
	}
	for i, raw := range runConverse(t, "route", args) {
		c := cases[i]
		var got decision
		if err := json.Unmarshal(raw, &got); err != nil {
			t.Fatalf("%s: %s: %v", c.name, raw, err)
		}
		if c.want.Kind == "again" {
			if got.Say == "" {
				t.Errorf("%s: asks again with nothing to say: %s", c.name, raw)
			}
			got.Say = ""
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %q → %s, want %+v", c.name, c.said, raw, c.want)
		}
	}
}

// TestSpokenPrompts: the waiting confirmation, question (with its choices) and hand-over are
// said once each (the key names which), in words that sound right.
func TestSpokenPrompts(t *testing.T) {
	cases := []struct {
		task      any
		key, text string
	}{
		{map[string]any{"id": "t1", "status": "waiting_confirmation", "steps": []any{map[string]any{"id": "s2", "tool": "click", "confirmation": map[string]any{"prompt": `click button "Place order"`}}}},
			"confirm:t1:s2", "Should I click button Place order? Say yes or no."},
		{map[string]any{"id": "t2", "status": "waiting_input", "question": map[string]any{"id": "q1", "text": "Which address?", "choices": []string{"Home", "Work", "Office"}}},
			"question:t2:q1", "Which address? Home, Work or Office?"},
		{map[string]any{"id": "t3", "status": "waiting_input", "question": map[string]any{"id": "q2", "text": "What name goes on the order?"}},
			"question:t3:q2", "What name goes on the order?"},
		{map[string]any{"id": "t4", "status": "waiting_user", "handover": map[string]any{"id": "h1", "instruction": "Sign in to your bank in this tab, then press Continue."}},
			"handover:t4:h1", "Sign in to your bank in this tab, then press Continue. Say continue when you are done."},
		{map[string]any{"id": "t5", "status": "running"}, "", ""},
		{map[string]any{"id": "t6", "status": "waiting_confirmation", "steps": []any{map[string]any{"id": "s1", "confirmation": map[string]any{"prompt": "x", "approved": false}}}}, "", ""},
	}
	args := make([][]any, len(cases))
	for i, c := range cases {
		args[i] = []any{c.task}
	}
	for i, raw := range runConverse(t, "promptFor", args) {
		var got struct{ Key, Text string }
		_ = json.Unmarshal(raw, &got)
		if got.Key != cases[i].key || got.Text != cases[i].text {
			t.Errorf("case %d: %s, want key %q text %q", i, raw, cases[i].key, cases[i].text)
		}
	}
}

// TestSpokenSummary: answers are said short — a table, a CSV or a long list is described and
// never read, long prose is cut to its first sentences, short text is said as it is.
func TestSpokenSummary(t *testing.T) {
	long := "The cheapest kettle is the Acme K1 at 19.99 dollars. It holds 1.5 litres and boils in three minutes. " +
		"The second cheapest is the Brio at 24 dollars, which is larger. The reviews for both are good. Shipping is free for both."
	cases := []struct{ in, want string }{
		{"Order placed for Ada.", "Order placed for Ada."},
		{"Here are the kettles:\nname,price\nAcme,19.99\nBrio,24\n\"Cosy, large\",31", "Here are the kettles: a table of 3 rows with columns name, price, shown in the panel."},
		{"name,price,stock\nA,1,yes\nB,2,no", "A table of 2 rows with columns name, price, stock, shown in the panel."},
		{"| Name | Price |\n|---|---|\n| Acme | 19.99 |\n| Brio | 24 |", "A table of 2 rows with columns Name, Price, shown in the panel."},
		{"a\tb\tc\td\te\tf\n1\t2\t3\t4\t5\t6\n1\t2\t3\t4\t5\t6", "A table of 2 rows with columns a, b, c, d and 2 more, shown in the panel."},
		{"I found these:\n- one\n- two\n- three\n- four\n- five\n- six", "I found these: a list of 6 items, shown in the panel."},
		{"Two things:\n- one\n- two", "Two things: one two"},
		{`[{"name":"Acme"},{"name":"Brio"}]`, "A list of 2 items, shown in the panel."},
		{long, "The cheapest kettle is the Acme K1 at 19.99 dollars. It holds 1.5 litres and boils in three minutes. More in the panel."},
		{"", ""},
	}
	args := make([][]any, len(cases))
	for i, c := range cases {
		args[i] = []any{c.in}
	}
	for i, raw := range runConverse(t, "spokenSummary", args) {
		var got string
		_ = json.Unmarshal(raw, &got)
		if got != cases[i].want {
			t.Errorf("spokenSummary(%q)\n got %q\nwant %q", cases[i].in, got, cases[i].want)
		}
	}
}

// TestAnswerWordsInStep checks that the panel's router routes every answer the offline grammar
// can hear (agent/voice), each to what the grammar means by it: a word the grammar hears but the
// router does not know would be heard and then asked again.
func TestAnswerWordsInStep(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("this test runs the panel's converse.js in Node.js 20+ (Debian: apt-get install nodejs): %v", err)
	}
	abs, err := filepath.Abs("converse.js")
	if err != nil {
		t.Fatal(err)
	}
	script := `const m = await import(process.argv[1]);
console.log(JSON.stringify({approve: m.APPROVE, decline: m.DECLINE, continue: m.CONTINUE}));`
	out, err := exec.Command(node, "--input-type=module", "-e", script, "file://"+filepath.ToSlash(abs)).CombinedOutput()
	if err != nil {
		t.Fatalf("node converse.js: %v\n%s", err, out)
	}
	var panel map[string][]string
	if err := json.Unmarshal(out, &panel); err != nil {
		t.Fatalf("converse.js lists: %v\n%s", err, out)
	}
	for what, words := range voice.AnswerWords() {
		if len(words) == 0 || len(panel[what]) == 0 {
			t.Fatalf("%s: grammar %v, panel %v: both must list words", what, words, panel[what])
		}
		for _, w := range words {
			if !slices.Contains(panel[what], w) {
				t.Errorf("the offline grammar hears %q as %s, but the panel's router (converse.js) does not list it", w, what)
			}
		}
	}
}
