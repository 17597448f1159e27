package standin

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tabrelay/tabrelay/agent/llm"
	"github.com/tabrelay/tabrelay/agent/llmtest"
	"github.com/tabrelay/tabrelay/internal/testlimit"
	"github.com/tabrelay/tabrelay/snapshot"
	"github.com/tmc/langchaingo/llms"
)

// page makes a request whose messages are the given texts (user, then alternating tool
// results), as the agent sends outlines.
func page(texts ...string) llmtest.Request {
	var r llmtest.Request
	for i, t := range texts {
		role := "user"
		if i > 0 {
			r.Messages = append(r.Messages, llmtest.Message{Role: "assistant"})
			role = "tool"
		}
		r.Messages = append(r.Messages, llmtest.Message{Role: role, Text: t})
	}
	return r
}

const recorded = `<page_content>
- heading "Inbox" [level=1]
- button "star" [icon] [ref=e1]
- button "trash" [icon] [ref=e2]
- button "star" [icon] [ref=e6]
- button "trash" [icon] [ref=e7]
- textbox "Reply" [ref=e20]: hello
</page_content>`

func TestReanchor(t *testing.T) {
	rec := page(recorded)
	cases := []struct {
		name, args, current, want, err string
	}{
		{"same outline", `{"ref":"e7"}`, recorded, `{"ref":"e7"}`, ""},
		{"refs renumbered", `{"ref":"e7"}`,
			"- button \"star\" [icon] [ref=e3]\n- button \"trash\" [icon] [ref=e4]\n- button \"star\" [icon] [ref=e8]\n- button \"trash\" [icon] [ref=e9]", `{"ref":"e9"}`, ""},
		{"a diff line", `{"ref":"e2"}`, "+ - button \"trash\" [icon] [ref=e31] [focused]", `{"ref":"e31"}`, ""},
		{"the ref now names another element", `{"ref":"e2"}`, "- button \"like\" [ref=e2]\n- button \"trash\" [icon] [ref=e5]", `{"ref":"e5"}`, ""},
		{"nested fields", `{"fields":[{"ref":"e20","value":"x"}]}`, "- textbox \"Reply\" [ref=e40]", `{"fields":[{"ref":"e40","value":"x"}]}`, ""},
		{"a drag target", `{"ref":"e1","to":"e2"}`, "- button \"star\" [icon] [ref=e10]\n- button \"trash\" [icon] [ref=e11]", `{"ref":"e10","to":"e11"}`, ""},
		{"not a ref", `{"ref":"Search"}`, "- button \"x\" [ref=e1]", `{"ref":"Search"}`, ""},
		{"gone", `{"ref":"e7"}`, "- button [ref=e7]", "", "no line `button \"trash\" [icon]`"},
		{"fewer of them", `{"ref":"e7"}`, "- button \"trash\" [icon] [ref=e4]", "", "has 1 line(s)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Reanchor(json.RawMessage(c.args), rec, page(c.current))
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("Reanchor = %s, %v; want an error saying %q", got, err, c.err)
				}
				return
			}
			if err != nil || string(got) != c.want {
				t.Fatalf("Reanchor = %s, %v; want %s", got, err, c.want)
			}
		})
	}
}

func TestReplay(t *testing.T) {
	conv := &Conversation{Name: "mail", Exchanges: []Exchange{
		{Request: page(recorded), Answer: Answer{Text: "Deleting the second email.", Calls: []Call{{Name: "click", Args: json.RawMessage(`{"ref":"e7"}`)}}}},
	}}
	conv.Exchanges[0].Request.Tools = []string{"click"}
	r := Replay{Conv: conv, Record: "TABRELAY_STANDIN_RECORD=DIR go test ./e2e -run TestStandin/mail"}
	cur := page("- button \"trash\" [icon] [ref=e2]\n- button \"trash\" [icon] [ref=e9]")
	cur.Tools = []string{"click", "finish"}
	a, err := r.Answer(context.Background(), 1, cur)
	if err != nil || a.Text != conv.Exchanges[0].Answer.Text || len(a.Calls) != 1 || string(a.Calls[0].Args) != `{"ref":"e9"}` {
		t.Fatalf("Answer = %+v, %v", a, err)
	}
	for _, c := range []struct {
		name string
		n    int
		req  llmtest.Request
		want string
	}{
		{"past the end", 2, cur, "the recording does not have"},
		{"element gone", 1, func() llmtest.Request { r := page("- button [ref=e9]"); r.Tools = []string{"click"}; return r }(), "no line"},
		{"tool gone", 1, page(recorded), "no longer offers"},
	} {
		_, err := r.Answer(context.Background(), c.n, c.req)
		var se *StaleError
		if !errors.Is(err, ErrRecordAgain) || !errors.As(err, &se) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), r.Record) {
			t.Errorf("%s: %v; want a StaleError saying %q and how to record again", c.name, err, c.want)
		}
	}
}

func TestCallJSON(t *testing.T) {
	cases := []struct {
		in, args, err string
	}{
		{`{"name":"click","args":{"ref":"e1"}}`, `{"ref":"e1"}`, ""},
		{`{"name":"click","args":"{\"ref\":\"e1\"}"}`, `{"ref":"e1"}`, ""},
		{`{"name":"click","arguments":"{\"ref\":\"e1\"}"}`, `{"ref":"e1"}`, ""},
		{`{"name":"snapshot"}`, `{}`, ""},
		{`{"name":"click","args":[1]}`, "", "not a JSON object"},
		{`{"name":"click","args":"{ref"}`, "", "not a JSON object"},
		{`{"args":{}}`, "", "no name"},
	}
	for _, c := range cases {
		var call Call
		err := json.Unmarshal([]byte(c.in), &call)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: %+v, %v; want an error saying %q", c.in, call, err, c.err)
			}
			continue
		}
		if err != nil || string(call.Args) != c.args {
			t.Errorf("%s: %s, %v; want %s", c.in, call.Args, err, c.args)
		}
	}
}

func FuzzCallJSON(f *testing.F) {
	f.Add(`{"name":"click","args":{"ref":"e1"}}`)
	f.Add(`{"name":"type","args":"{\"ref\":\"e1\",\"text\":\"hi\"}"}`)
	f.Add(`{"name":"x","arguments":""}`)
	f.Fuzz(func(t *testing.T, s string) {
		var c Call
		if json.Unmarshal([]byte(s), &c) != nil {
			return
		}
		var obj map[string]any
		if c.Name == "" || json.Unmarshal(c.Args, &obj) != nil {
			t.Fatalf("%q read as %+v: a call must have a name and an object of arguments", s, c)
		}
	})
}

func FuzzReanchor(f *testing.F) {
	f.Add(`{"ref":"e2"}`, recorded, "- button \"trash\" [icon] [ref=e9]")
	f.Add(`{"fields":[{"ref":"e20"}]}`, "+ - textbox [ref=e20]", "~ textbox [ref=e1]")
	f.Fuzz(func(t *testing.T, args, rec, cur string) {
		out, err := Reanchor(json.RawMessage(args), page(rec), page(cur))
		if err == nil && !json.Valid(out) {
			t.Fatalf("Reanchor(%q) = %q: not JSON", args, out)
		}
	})
}

// TestFiles drives the server through langchaingo's real openai provider, configured as a user
// configures a model, and answers through the files.
func TestFiles(t *testing.T) {
	dir := t.TempDir()
	srv := Start(Files{Dir: dir, Poll: 10 * time.Millisecond})
	defer srv.Close()
	cfg, err := llm.FromLookup(srv.Lookup)
	if err != nil {
		t.Fatal(err)
	}
	m, err := llm.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), testlimit.Scale(20*time.Second))
	defer cancel()
	go func() {
		// the person: a wrong answer first, then a right one once told why
		ans := filepath.Join(dir, "ans-001.json")
		waitFile(ctx, filepath.Join(dir, "req-001.md"))
		_ = os.WriteFile(ans, []byte(`{"text":"oops"`), 0o644)
		waitFile(ctx, filepath.Join(dir, "ans-001.error"))
		_ = os.WriteFile(ans, []byte(`{"text":"Opening it.","tool_calls":[{"name":"click","args":{"ref":"e2"}}]}`), 0o644)
	}()
	tool := llms.Tool{Type: "function", Function: &llms.FunctionDefinition{Name: "click", Description: "Click an element.",
		Parameters: map[string]any{"type": "object", "properties": map[string]any{"ref": map[string]any{"type": "string"}}}}}
	resp, err := m.GenerateContent(ctx, []llms.MessageContent{
		llms.TextParts(llms.ChatMessageTypeSystem, "You are a browser agent."),
		llms.TextParts(llms.ChatMessageTypeHuman, "Goal: open the second email.\n<page_content>\n- button \"mail 2\" [ref=e2]\n</page_content>"),
	}, llms.WithTools([]llms.Tool{tool}))
	if err != nil {
		t.Fatalf("the model call: %v", err)
	}
	ch := resp.Choices[0]
	if ch.Content != "Opening it." || len(ch.ToolCalls) != 1 || ch.ToolCalls[0].FunctionCall.Name != "click" || ch.ToolCalls[0].FunctionCall.Arguments != `{"ref":"e2"}` || ch.ToolCalls[0].ID != "call_1_1" {
		t.Fatalf("the provider read %+v", ch)
	}
	md, err := os.ReadFile(filepath.Join(dir, "req-001.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"# Request 1: ", "## System prompt (", "You are a browser agent.", "- click (", "Click an element.", "### 1. user (", `button "mail 2" [ref=e2]`, "Write ans-001.json"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("req-001.md does not show %q:\n%s", want, md)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "ans-001.json.bad")); err != nil {
		t.Errorf("the unreadable answer was not set aside: %v", err)
	}
	ex := srv.Exchanges()
	if len(ex) != 1 || ex[0].Answer.Calls[0].ID != "call_1_1" || ex[0].Request.System != "You are a browser agent." {
		t.Fatalf("exchanges %+v", ex)
	}
	if s := ex[0].Split; s.System == 0 || s.Tools == 0 || s.Page == 0 || s.History == 0 || s.Total != s.System+s.Tools+s.Page+s.History {
		t.Errorf("token split %+v", s)
	}
	if p := srv.Problems(); len(p) != 0 {
		t.Errorf("problems: %v", p)
	}
}

func waitFile(ctx context.Context, path string) {
	_ = wait(ctx, 5*time.Millisecond, func() (bool, error) { _, err := os.Stat(path); return err == nil, nil })
}

// TestSplit counts the parts of a later request: the history is up to the model's last turn.
func TestSplit(t *testing.T) {
	req := llmtest.Request{System: "sys", Messages: []llmtest.Message{
		{Role: "user", Text: "Goal: star the first email"},
		{Role: "assistant", Text: "Starring it.", ToolCalls: []llmtest.Call{{Name: "click", Args: `{"ref":"e1"}`}}},
		{Role: "tool", Text: "clicked; the page:\n<page_content>\n+ button \"starred\" [ref=e1]\n</page_content>"},
	}}
	s := SplitOf(req)
	_, rest := pageParts(req.Messages[2])
	if s.History == 0 || s.Page == 0 || s.Total != s.System+s.Tools+s.Page+s.History || rest != snapshot.Tokens("clicked; the page:\n") {
		t.Fatalf("split %+v", s)
	}
}

// TestReplayDiverged: a replay stops where the agent's tool results no longer match the
// recording's (a call that failed when recorded succeeds now, or the reverse).
func TestReplayDiverged(t *testing.T) {
	withResult := func(text string) llmtest.Request {
		r := page(recorded, text)
		r.Tools = []string{"click", "snapshot"}
		return r
	}
	conv := &Conversation{Name: "mail", Exchanges: []Exchange{
		{Request: page(recorded), Answer: Answer{Calls: []Call{{Name: "click", Args: json.RawMessage(`{"ref":"e7"}`)}}}},
		{Request: withResult("error: click failed: unknown ref e7"), Answer: Answer{Calls: []Call{{Name: "snapshot", Args: json.RawMessage(`{}`)}}}},
	}}
	r := Replay{Conv: conv}
	if _, err := r.Answer(context.Background(), 2, withResult("error: click failed: unknown ref e7")); err != nil {
		t.Fatalf("the same failure: %v", err)
	}
	_, err := r.Answer(context.Background(), 2, withResult("result: clicked e7"))
	if !errors.Is(err, ErrRecordAgain) || !strings.Contains(err.Error(), "tool result 1 differs from the recording") {
		t.Fatalf("a call that failed when recorded succeeds now: %v", err)
	}
}

// TestConversationFile: a conversation saved and loaded again gives its calls' arguments back
// compact, as they were sent.
func TestConversationFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.json")
	c := &Conversation{Name: "c", Exchanges: []Exchange{{Answer: Answer{Calls: []Call{{Name: "fill", Args: json.RawMessage(`{"fields":[{"ref":"e1","value":"a b"}]}`)}}}}}}
	if err := c.Save(path); err != nil {
		t.Fatal(err)
	}
	got, err := Load(path)
	if err != nil || string(got.Exchanges[0].Answer.Calls[0].Args) != `{"fields":[{"ref":"e1","value":"a b"}]}` {
		t.Fatalf("loaded %+v, %v", got, err)
	}
}
