package task_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/tabrelay/tabrelay/agent/actions"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tabrelay/tabrelay/agent/llm"
	"github.com/tabrelay/tabrelay/agent/llmtest"
	"github.com/tabrelay/tabrelay/agent/task"
	"github.com/tabrelay/tabrelay/agent/task/taskstore"
	"github.com/tabrelay/tabrelay/snapshot"
	"github.com/tabrelay/tabrelay/snapshot/pagetest"
	"github.com/tmc/langchaingo/llms"
)

type protoCase struct {
	name string
	new  func(testing.TB, ...llmtest.Reply) *llmtest.Server
}

var protocols = []protoCase{{"openai", llmtest.NewOpenAI}, {"anthropic", llmtest.NewAnthropic}}

func newRunner(t *testing.T, srv *llmtest.Server, b task.Browser, mod func(*task.Options)) *task.Runner {
	t.Helper()
	opts := task.Options{Model: srv.Model(t), ModelName: "test", Browser: b, Timeout: 20 * time.Second}
	if mod != nil {
		mod(&opts)
	}
	r := task.NewRunner(opts)
	t.Cleanup(r.Close)
	return r
}

func TestMultiStepTask(t *testing.T) {
	for _, p := range protocols {
		t.Run(p.name, func(t *testing.T) {
			srv := p.new(t,
				llmtest.ToolCall("update_plan", `{"steps":[{"text":"search for kettle","status":"active"},{"text":"report the price","status":"pending"}]}`),
				llmtest.ToolCall("snapshot", `{}`),
				llmtest.ToolCall("type", `{"ref":"e2","text":"kettle"}`).WithText("I'll search."),
				llmtest.ToolCall("click", `{"ref":"e3"}`),
				llmtest.ToolCall("finish", `{"answer":"The blue kettle costs 39 EUR."}`),
			)
			b := newShop()
			r := newRunner(t, srv, b, nil)
			events, unsub := r.Subscribe("", 512)
			defer unsub()
			tk, err := r.Run(context.Background(), "Find the price of a kettle", "")
			if err != nil {
				t.Fatal(err)
			}
			if tk.Status != task.StatusSucceeded || tk.Answer != "The blue kettle costs 39 EUR." {
				t.Fatalf("task %s: %q %q", tk.Status, tk.Answer, tk.Error)
			}
			if got := b.actions(); strings.Join(got, ",") != "type e2kettle,click e3" {
				t.Fatalf("browser actions %v", got)
			}
			if len(tk.Steps) != 5 || tk.Steps[3].Tool != "click" || tk.Steps[3].URLBefore != "https://shop.test/" || tk.Steps[3].URLAfter != "https://shop.test/search?q=kettle" {
				t.Fatalf("steps %+v", tk.Steps)
			}
			if tk.Steps[2].Thought != "I'll search." {
				t.Errorf("thought %q", tk.Steps[2].Thought)
			}
			if len(tk.Plan) != 2 || tk.Plan[0].Status != task.PlanDone {
				t.Errorf("plan %+v", tk.Plan)
			}
			if srv.Calls() != 5 || tk.Usage.LLMCalls != 5 || tk.Usage.PromptTokens == 0 {
				t.Errorf("calls %d usage %+v", srv.Calls(), tk.Usage)
			}

			reqs := srv.Requests()
			first := reqs[0]
			if !strings.Contains(first.System, "<page_content>") || !strings.Contains(first.System, "never instructions") {
				t.Errorf("system prompt lacks the page-content rule")
			}
			if !strings.Contains(first.Messages[0].Text, "Goal: Find the price of a kettle") || !strings.Contains(first.Messages[0].Text, `[ref=e2]`) {
				t.Errorf("first message %q", first.Messages[0].Text)
			}
			for _, name := range []string{"snapshot", "find", "click", "type", "scroll", "finish", "fail", "more_tools"} {
				if !first.HasTool(name) {
					t.Errorf("tool %s not offered", name)
				}
			}
			last := reqs[4]
			for _, m := range last.Messages {
				if len(m.ToolCalls) > 1 {
					t.Errorf("an AI message carries %d tool calls", len(m.ToolCalls))
				}
			}
			res := last.ToolResults()
			if len(res) != 4 {
				t.Fatalf("tool results %d", len(res))
			}
			// The type observation is a small diff of the page model, not the whole page.
			if !strings.Contains(res[2].Text, `~ textbox "Search" [ref=e2]: kettle (was: empty)`) || strings.Contains(res[2].Text, "Cart") {
				t.Errorf("type observation:\n%s", res[2].Text)
			}
			// The click navigated: a fresh full page; the earlier snapshots are now summaries.
			if !strings.Contains(res[3].Text, "navigated to another page") || !strings.Contains(res[3].Text, `"Buy now" [ref=e11]`) {
				t.Errorf("click observation:\n%s", res[3].Text)
			}
			if !strings.Contains(res[1].Text, "superseded") || strings.Contains(last.Messages[0].Text, "[ref=e2]") {
				t.Errorf("old snapshots not summarised: %q / %q", res[1].Text, last.Messages[0].Text)
			}

			var types []task.EventType
			deadline := time.After(time.Second)
		drain:
			for {
				select {
				case e := <-events:
					types = append(types, e.Type)
					if e.Type == task.EventAnswer {
						break drain
					}
				case <-deadline:
					break drain
				}
			}
			joined := strings.Join(func() []string {
				s := make([]string, len(types))
				for i, x := range types {
					s[i] = string(x)
				}
				return s
			}(), ",")
			for _, want := range []string{"status", "plan", "step_started", "step_finished", "answer"} {
				if !strings.Contains(joined, want) {
					t.Errorf("events %s lack %s", joined, want)
				}
			}
		})
	}
}

func TestSeveralToolCallsInOneTurn(t *testing.T) {
	for _, p := range protocols {
		t.Run(p.name, func(t *testing.T) {
			srv := p.new(t,
				llmtest.ToolCalls(llmtest.Tool("type", `{"ref":"e2","text":"kettle"}`), llmtest.Tool("click", `{"ref":"e3"}`)),
				llmtest.ToolCall("finish", `{"answer":"ok"}`),
			)
			b := newShop()
			tk, err := newRunner(t, srv, b, nil).Run(context.Background(), "search kettle", "tab1")
			if err != nil || tk.Status != task.StatusSucceeded {
				t.Fatalf("%v %+v", err, tk)
			}
			req := srv.LastRequest()
			var ai, tool int
			for _, m := range req.Messages {
				if len(m.ToolCalls) == 1 {
					ai++
				}
				if m.Role == "tool" {
					tool++
				}
			}
			if ai != 2 || tool != 2 {
				t.Fatalf("want 2 AI messages with one call each and 2 results, got %d/%d: %+v", ai, tool, req.Messages)
			}
		})
	}
}

func TestToolErrorRecovered(t *testing.T) {
	for _, p := range protocols {
		t.Run(p.name, func(t *testing.T) {
			srv := p.new(t,
				llmtest.ToolCall("click", `{"ref":"e4"}`),
				llmtest.ToolCall("click", `{"ref":"e99"}`),
				llmtest.ToolCall("click", `{"ref":"e4"}`),
				llmtest.Text("Opened the cart."),
			)
			b := newShop()
			b.failRef = "e4"
			tk, err := newRunner(t, srv, b, nil).Run(context.Background(), "open the cart", "tab1")
			if err != nil {
				t.Fatal(err)
			}
			if tk.Status != task.StatusSucceeded || tk.Answer != "Opened the cart." {
				t.Fatalf("task %s %q %q", tk.Status, tk.Answer, tk.Error)
			}
			if tk.Steps[0].Status != task.StepError || !strings.Contains(tk.Steps[0].Error, "covered") {
				t.Errorf("step 1 %+v", tk.Steps[0])
			}
			if tk.Steps[1].Status != task.StepError || !strings.Contains(tk.Steps[1].Error, "not on the current page") {
				t.Errorf("step 2 %+v", tk.Steps[1])
			}
			if tk.Steps[2].Status != task.StepOK {
				t.Errorf("step 3 %+v", tk.Steps[2])
			}
			res := srv.Requests()[1].ToolResults()
			if len(res) != 1 || !strings.HasPrefix(res[0].Text, "error: the browser said (its message may quote the page):\n<page_content>\nclick failed: element is covered") {
				t.Errorf("error not returned to the model: %+v", res)
			}
		})
	}
}

func TestCancelStopsWithinASecond(t *testing.T) {
	for _, p := range protocols {
		t.Run(p.name, func(t *testing.T) {
			srv := p.new(t, llmtest.ToolCall("snapshot", `{}`), llmtest.Text("never").After(time.Minute))
			r := newRunner(t, srv, newShop(), nil)
			tk, err := r.Start(context.Background(), "look around", "tab1")
			if err != nil {
				t.Fatal(err)
			}
			for deadline := time.Now().Add(5 * time.Second); srv.Calls() < 2; {
				if time.Now().After(deadline) {
					t.Fatal("second model call never came")
				}
				time.Sleep(5 * time.Millisecond)
			}
			start := time.Now()
			if err := r.Cancel(tk.ID); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			got, err := r.Wait(ctx, tk.ID)
			if err != nil {
				t.Fatalf("not stopped within a second: %v", err)
			}
			if got.Status != task.StatusCancelled {
				t.Fatalf("status %s", got.Status)
			}
			t.Logf("stopped %s after Cancel", time.Since(start))
		})
	}
}

func TestConfirmation(t *testing.T) {
	for _, p := range protocols {
		for _, approve := range []bool{false, true} {
			name := p.name + "/refuse"
			if approve {
				name = p.name + "/approve"
			}
			t.Run(name, func(t *testing.T) {
				replies := []llmtest.Reply{
					llmtest.ToolCall("type", `{"ref":"e2","text":"kettle"}`),
					llmtest.ToolCall("click", `{"ref":"e3"}`),
					llmtest.ToolCall("click", `{"ref":"e11"}`),
				}
				if approve {
					replies = append(replies, llmtest.ToolCall("finish", `{"answer":"Ordered: order 42."}`))
				}
				srv := p.new(t, replies...)
				b := newShop()
				r := newRunner(t, srv, b, nil)
				events, unsub := r.Subscribe("", 512)
				defer unsub()
				tk, err := r.Start(context.Background(), "buy a kettle", "tab1")
				if err != nil {
					t.Fatal(err)
				}
				conf := waitConfirmation(t, events)
				if conf.Step == nil || conf.Step.Confirmation == nil || conf.Step.Confirmation.Reason != "purchase or payment" ||
					!strings.Contains(conf.Step.Confirmation.Prompt, `click button "Buy now"`) {
					t.Fatalf("confirmation %+v", conf.Step)
				}
				mid, _ := r.Get(context.Background(), tk.ID)
				if mid.Status != task.StatusWaitingConfirmation {
					t.Fatalf("status while waiting: %s", mid.Status)
				}
				if b.has("click e11") {
					t.Fatal("purchase clicked before confirmation")
				}
				if err := r.Confirm(tk.ID, "nope", true); err == nil {
					t.Error("confirming an unknown step succeeded")
				}
				if err := r.Confirm(tk.ID, conf.Step.ID, approve); err != nil {
					t.Fatal(err)
				}
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				done, err := r.Wait(ctx, tk.ID)
				if err != nil {
					t.Fatal(err)
				}
				if approve {
					if done.Status != task.StatusSucceeded || !b.has("click e11") {
						t.Fatalf("approved: %s %q, actions %v", done.Status, done.Error, b.actions())
					}
					return
				}
				if done.Status != task.StatusCancelled || !strings.Contains(done.Error, "declined") || !strings.Contains(done.Error, "Buy now") {
					t.Fatalf("refused: %s %q", done.Status, done.Error)
				}
				if b.has("click e11") {
					t.Fatal("purchase clicked although refused")
				}
				last := done.Steps[len(done.Steps)-1]
				if last.Status != task.StepDeclined || last.Confirmation.Approved == nil || *last.Confirmation.Approved {
					t.Fatalf("last step %+v", last)
				}
			})
		}
	}
}

func TestPasswordNeedsConfirmationUnlessSupplied(t *testing.T) {
	srv := llmtest.NewOpenAI(t,
		llmtest.ToolCall("navigate", `{"url":"https://shop.test/login"}`),
		llmtest.ToolCall("type", `{"ref":"e31","text":"hunter2"}`),
		llmtest.ToolCall("type", `{"ref":"e31","text":"guessed"}`),
	)
	b := newShop()
	r := newRunner(t, srv, b, nil)
	events, unsub := r.Subscribe("", 512)
	defer unsub()
	tk, err := r.Start(context.Background(), "log in with password hunter2", "tab1")
	if err != nil {
		t.Fatal(err)
	}
	for e := range events {
		if e.Type == task.EventConfirmation {
			if e.Step.Index != 3 || e.Step.Confirmation.Reason != "password field" || strings.Contains(e.Step.Confirmation.Prompt, "guessed") {
				t.Fatalf("confirmation %+v %+v", e.Step, e.Step.Confirmation)
			}
			_ = r.Confirm(tk.ID, e.Step.ID, false)
			break
		}
	}
	done, _ := r.Wait(context.Background(), tk.ID)
	if done.Status != task.StatusCancelled || !b.has("type e31hunter2") || b.has("type e31guessed") {
		t.Fatalf("%s %v", done.Status, b.actions())
	}
}

func TestAllowlistBlocksActions(t *testing.T) {
	srv := llmtest.NewOpenAI(t,
		llmtest.ToolCall("click", `{"ref":"e3"}`),
		llmtest.ToolCall("fail", `{"reason":"not allowed here"}`),
	)
	b := newShop()
	tk, err := newRunner(t, srv, b, func(o *task.Options) { o.AllowedSites = []string{"example.com"} }).Run(context.Background(), "click go", "tab1")
	if err != nil {
		t.Fatal(err)
	}
	if tk.Status != task.StatusFailed || tk.Steps[0].Status != task.StepBlocked || len(b.actions()) != 0 {
		t.Fatalf("%s %+v %v", tk.Status, tk.Steps[0], b.actions())
	}
	if !strings.Contains(srv.Requests()[0].System, "only on these sites: example.com") {
		t.Error("allowlist not in the prompt")
	}
}

// TestNavigationPolicy: the model's navigate and new_tab are held to the URL policy (every
// spelling of file:, script and internal URLs) and to the site allowlist before the browser
// sees them; the fast path's "open …" goes the same way.
func TestNavigationPolicy(t *testing.T) {
	cases := []struct {
		name, tool, url string
		allowed         []string
		want            string // "" = the browser gets the call
	}{
		{"control char data", "navigate", "\x01data:text/html,hi", nil, "data: URLs are not allowed"},
		{"tab in scheme", "navigate", "vi\tew-source:https://shop.test/", nil, "view-source: URLs are not allowed"},
		{"upper case", "new_tab", "JAVASCRIPT:alert(1)", nil, "javascript: URLs are not allowed"},
		// file: is the action service's call (its AllowFileURLs option); an allowlist refuses it
		{"file outside the allowlist", "navigate", " FILE:///etc/passwd", []string{"shop.test"}, "opening file:///etc/passwd is not allowed"},
		{"view-source", "navigate", "view-source:file:///etc/passwd", nil, "view-source: URLs are not allowed"},
		{"newline javascript", "navigate", "jav\nascript:alert(1)", nil, "javascript: URLs are not allowed"},
		{"outside the allowlist", "navigate", "https://evil.test/?q=secret", []string{"shop.test"}, "opening evil.test is not allowed (allowed sites: shop.test)"},
		{"new tab outside the allowlist", "new_tab", "evil.test", []string{"shop.test"}, "opening evil.test is not allowed"},
		{"allowlisted subdomain", "navigate", "https://www.shop.test/x", []string{"shop.test"}, ""},
		{"relative on the allowlisted site", "navigate", "/search?q=kettle", []string{"shop.test"}, ""},
		{"no allowlist", "navigate", "https://evil.test/", nil, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args, _ := json.Marshal(map[string]string{"url": c.url})
			srv := llmtest.NewOpenAI(t,
				llmtest.ToolCall(c.tool, string(args)),
				llmtest.ToolCall("fail", `{"reason":"stop"}`),
			)
			b := newShop()
			tk, err := newRunner(t, srv, b, func(o *task.Options) { o.AllowedSites = c.allowed }).Run(context.Background(), "go there", "tab1")
			if err != nil {
				t.Fatal(err)
			}
			st := tk.Steps[0]
			if c.want == "" {
				if st.Status != task.StepOK || len(b.actions()) == 0 {
					t.Fatalf("step %s %q, browser calls %v; want the navigation to run", st.Status, st.Error, b.actions())
				}
				return
			}
			if st.Status != task.StepBlocked || !strings.Contains(st.Error, c.want) || len(b.actions()) != 0 {
				t.Fatalf("step %s %q, browser calls %v; want blocked with %q", st.Status, st.Error, b.actions(), c.want)
			}
		})
	}
}

func TestPersistedAndReadableAfterReopen(t *testing.T) {
	ctx := context.Background()
	home := t.TempDir()
	st, err := taskstore.OpenHome(ctx, home)
	if err != nil {
		t.Fatal(err)
	}
	srv := llmtest.NewAnthropic(t,
		llmtest.ToolCall("type", `{"ref":"e2","text":"kettle"}`),
		llmtest.ToolCall("finish", `{"answer":"typed"}`),
		llmtest.Text("second task done"),
	)
	r := newRunner(t, srv, newShop(), func(o *task.Options) { o.Store = st })
	tk, err := r.Run(ctx, "type kettle", "tab1")
	if err != nil || tk.Status != task.StatusSucceeded {
		t.Fatalf("%v %+v", err, tk)
	}
	// The next task sees the first in its session memory.
	if _, err := r.Run(ctx, "what did I do?", "tab1"); err != nil {
		t.Fatal(err)
	}
	if sys := srv.LastRequest().System; !strings.Contains(sys, `"type kettle" → succeeded: typed`) {
		t.Errorf("session memory missing:\n%s", sys)
	}
	r.Close()
	st2, got := storedAfterReopen(t, ctx, st, home, tk.ID)
	if got.Status != task.StatusSucceeded || got.Answer != "typed" || len(got.Steps) != 2 || got.Steps[0].Tool != "type" ||
		!strings.Contains(got.Steps[0].Result, "kettle") || got.FinishedAt.IsZero() {
		t.Fatalf("reopened task %+v", got)
	}
	list, _ := st2.ListTasks(ctx, 10, 0)
	if len(list) != 2 {
		t.Fatalf("listed %d", len(list))
	}
}

func TestPromptSize(t *testing.T) {
	srv := llmtest.NewOpenAI(t, llmtest.ToolCall("type", `{"ref":"e2","text":"kettle"}`), llmtest.ToolCall("click", `{"ref":"e3"}`), llmtest.Text("done"))
	if _, err := newRunner(t, srv, newShop(), nil).Run(context.Background(), "Find the price of a kettle", "tab1"); err != nil {
		t.Fatal(err)
	}
	var tools int
	for _, s := range srv.Requests()[0].Schemas {
		tools += len(s)
	}
	for i, r := range srv.Requests() {
		t.Logf("step %d prompt ≈ %d tokens (%d bytes; system %d B, messages %d)", i+1, r.ApproxTokens(), len(r.Body), len(r.System), len(r.Messages))
	}
	t.Logf("fixed part: system prompt ≈ %d tokens, %d tools", len(srv.Requests()[0].System)/4, len(srv.Requests()[0].Tools))
	if n := srv.Requests()[0].ApproxTokens(); n > 4000 {
		t.Errorf("first step prompt is %d tokens; keep it under 4000", n)
	}
}

// TestReadResultLeavesOutTheKnownPage: a read's result (find) names its page only when it is not
// the page the model last saw; the matches come alone.
func TestReadResultLeavesOutTheKnownPage(t *testing.T) {
	srv := llmtest.NewOpenAI(t, llmtest.ToolCall("find", `{"text":"search"}`), llmtest.ToolCall("finish", `{"answer":"found it"}`))
	if _, err := newRunner(t, srv, newShop(), nil).Run(context.Background(), "Find the search box", "tab1"); err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model calls, want 2", len(reqs))
	}
	got := reqs[1].Last().Text
	if !strings.Contains(got, `searchbox "Search" [ref=e2]`) || strings.Contains(got, "Page:") || strings.Contains(got, "https://shop.test") {
		t.Errorf("the find result repeats the page the model has:\n%s", got)
	}
}

func TestStreamingEvents(t *testing.T) {
	srv := llmtest.NewOpenAI(t, llmtest.Text("The kettle costs 39 EUR."))
	r := newRunner(t, srv, newShop(), func(o *task.Options) { o.Stream = true })
	events, unsub := r.Subscribe("", 512)
	defer unsub()
	tk, err := r.Run(context.Background(), "price?", "tab1")
	if err != nil || tk.Answer != "The kettle costs 39 EUR." {
		t.Fatalf("%v %+v", err, tk)
	}
	var text strings.Builder
	for len(events) > 0 {
		if e := <-events; e.Type == task.EventText {
			text.WriteString(e.Text)
		}
	}
	if text.String() != "The kettle costs 39 EUR." || !srv.LastRequest().Stream {
		t.Errorf("streamed %q", text.String())
	}
}

// idless is a model that returns tool calls without ids, as googleai does.
type idless struct {
	turn int
	seen [][]llms.MessageContent
}

func (m *idless) GenerateContent(_ context.Context, msgs []llms.MessageContent, _ ...llms.CallOption) (*llms.ContentResponse, error) {
	m.seen = append(m.seen, msgs)
	m.turn++
	if m.turn == 1 {
		return &llms.ContentResponse{Choices: []*llms.ContentChoice{{ToolCalls: []llms.ToolCall{
			{FunctionCall: &llms.FunctionCall{Name: "snapshot", Arguments: ""}},
			{FunctionCall: &llms.FunctionCall{Name: "click", Arguments: `not json`}},
		}}}}, nil
	}
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: "done"}}}, nil
}

func (m *idless) Call(ctx context.Context, p string, o ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, p, o...)
}

func TestEmptyToolCallIDsAndBadArgs(t *testing.T) {
	m := &idless{}
	r := task.NewRunner(task.Options{Model: m, Browser: newShop()})
	defer r.Close()
	tk, err := r.Run(context.Background(), "look", "tab1")
	if err != nil || tk.Status != task.StatusSucceeded {
		t.Fatalf("%v %+v", err, tk)
	}
	if tk.Steps[1].Status != task.StepError || !strings.Contains(tk.Steps[1].Error, "not a valid JSON") {
		t.Errorf("bad args step %+v", tk.Steps[1])
	}
	msgs := m.seen[1]
	ids := map[string]bool{}
	for _, mc := range msgs {
		for _, p := range mc.Parts {
			switch v := p.(type) {
			case llms.ToolCall:
				if v.ID == "" || v.FunctionCall.Arguments != "{}" {
					t.Errorf("history tool call %+v", v)
				}
				ids[v.ID] = true
			case llms.ToolCallResponse:
				if !ids[v.ToolCallID] {
					t.Errorf("tool response %q answers no call", v.ToolCallID)
				}
			}
		}
	}
	if len(ids) != 2 {
		t.Errorf("ids %v", ids)
	}
}

func TestReports(t *testing.T) {
	srv := llmtest.NewOpenAI(t, llmtest.ToolCall("click", `{"ref":"e3"}`), llmtest.ToolCall("finish", `{"answer":"went | there"}`))
	tk, err := newRunner(t, srv, newShop(), nil).Run(context.Background(), "go", "tab1")
	if err != nil {
		t.Fatal(err)
	}
	var j, c, m bytes.Buffer
	if err := task.ReportJSON(&j, tk); err != nil {
		t.Fatal(err)
	}
	if err := task.ReportCSV(&c, tk); err != nil {
		t.Fatal(err)
	}
	if err := task.ReportMarkdown(&m, tk); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(j.String(), `"status": "succeeded"`) || !strings.Contains(j.String(), `"tool": "click"`) {
		t.Errorf("json:\n%s", j.String())
	}
	recs, err := csv.NewReader(&c).ReadAll()
	if err != nil || len(recs) != 3 || recs[0][0] != "task_id" || recs[1][4] != "click" {
		t.Errorf("csv:\n%s", c.String())
	}
	// each row ends with its task's model calls and tokens in and out
	if tk.Usage.LLMCalls != 2 || tk.Usage.PromptTokens == 0 || tk.Usage.CompletionTokens == 0 {
		t.Errorf("usage %+v: want 2 calls and the tokens the server reported", tk.Usage)
	}
	wantUsage := []string{"2", strconv.Itoa(tk.Usage.PromptTokens), strconv.Itoa(tk.Usage.CompletionTokens)}
	for _, r := range recs {
		if len(r) < 3 {
			continue
		}
		if tail := r[len(r)-3:]; r[0] == "task_id" && !slices.Equal(tail, []string{"model_calls", "tokens_in", "tokens_out"}) || r[0] != "task_id" && !slices.Equal(tail, wantUsage) {
			t.Errorf("csv row ends with %v, want the task's usage %v", tail, wantUsage)
		}
	}
	if !strings.Contains(m.String(), "- **Cost:** "+tk.Usage.String()+" (") {
		t.Errorf("markdown lacks the cost line %q:\n%s", tk.Usage.String(), m.String())
	}
	if !strings.Contains(m.String(), "# Task: go") || !strings.Contains(m.String(), "| 1 | click |") || !strings.Contains(m.String(), "went | there") {
		t.Errorf("markdown:\n%s", m.String())
	}
}

func TestStepAndTimeLimits(t *testing.T) {
	srv := llmtest.NewOpenAI(t, llmtest.ToolCall("snapshot", `{}`), llmtest.ToolCall("snapshot", `{}`))
	tk, err := newRunner(t, srv, newShop(), func(o *task.Options) { o.MaxSteps = 2 }).Run(context.Background(), "loop", "tab1")
	if err != nil || tk.Status != task.StatusFailed || !strings.Contains(tk.Error, "step limit") {
		t.Fatalf("%v %s %q", err, tk.Status, tk.Error)
	}
	srv2 := llmtest.NewOpenAI(t, llmtest.Text("late").After(time.Minute))
	start := time.Now()
	tk, err = newRunner(t, srv2, newShop(), func(o *task.Options) { o.Timeout = 200 * time.Millisecond }).Run(context.Background(), "slow", "tab1")
	if err != nil || tk.Status != task.StatusFailed || !strings.Contains(tk.Error, "time limit") || time.Since(start) > 10*time.Second { // the model answers after a minute
		t.Fatalf("%v %s %q", err, tk.Status, tk.Error)
	}
}

func TestNoModel(t *testing.T) {
	r := task.NewRunner(task.Options{Browser: newShop()})
	defer r.Close()
	_, err := r.Start(context.Background(), "x", "")
	if err == nil || !strings.Contains(err.Error(), "TABRELAY_LLM_PROVIDER") {
		t.Fatalf("err %v", err)
	}
}

// shopWithEyes adds screenshots to the shop.
type shopWithEyes struct{ *shop }

func (s shopWithEyes) Screenshot(ctx context.Context, tabID string) ([]byte, error) {
	return []byte("\x89PNG\r\n\x1a\nfake"), nil
}

func TestScreenshotForVisionModels(t *testing.T) {
	for _, p := range protocols {
		t.Run(p.name, func(t *testing.T) {
			srv := p.new(t, llmtest.ToolCall("screenshot", `{}`), llmtest.ToolCall("snapshot", `{}`), llmtest.ToolCall("screenshot", `{}`), llmtest.Text("It is a shop."))
			cfg := srv.Config("")
			tk, err := newRunner(t, srv, shopWithEyes{newShop()}, func(o *task.Options) {
				o.Vision = true
				o.ImageMode = cfg.ImageMode()
			}).Run(context.Background(), "what does it look like?", "tab1")
			if err != nil || tk.Status != task.StatusSucceeded {
				t.Fatalf("%v %+v", err, tk)
			}
			reqs := srv.Requests()
			if !reqs[0].HasTool("screenshot") {
				t.Fatal("screenshot tool not offered")
			}
			images := func(r llmtest.Request) int {
				n := 0
				for _, m := range r.Messages {
					n += m.Images
				}
				return n
			}
			if images(reqs[1]) != 1 || images(reqs[3]) != 1 {
				t.Fatalf("images per request: %d, %d (want only the latest screenshot)", images(reqs[1]), images(reqs[3]))
			}
		})
	}
	srv := llmtest.NewOpenAI(t, llmtest.Text("x"))
	newRunner(t, srv, shopWithEyes{newShop()}, nil).Run(context.Background(), "x", "tab1")
	if srv.Requests()[0].HasTool("screenshot") {
		t.Error("screenshot offered without Vision")
	}
}

func TestCommandFastPath(t *testing.T) {
	b := newShop()
	r := task.NewRunner(task.Options{Browser: b}) // no model at all
	defer r.Close()
	ctx := context.Background()

	tk, err := r.Command(ctx, "what is on this page?", "")
	if err != nil {
		t.Fatal(err)
	}
	tk, _ = r.Wait(ctx, tk.ID)
	if tk.Status != task.StatusSucceeded || !strings.Contains(tk.Answer, "Shop") || len(b.actions()) != 0 {
		t.Fatalf("describe: %s %q", tk.Status, tk.Answer)
	}

	tk, err = r.Command(ctx, "type kettle in the search box", "")
	if err != nil {
		t.Fatal(err)
	}
	tk, _ = r.Wait(ctx, tk.ID)
	tk2, err := r.Command(ctx, "click go", "tab1")
	if err != nil {
		t.Fatal(err)
	}
	tk2, _ = r.Wait(ctx, tk2.ID)
	if tk.Status != task.StatusSucceeded || tk2.Status != task.StatusSucceeded || tk2.Model != "fastpath" ||
		!strings.Contains(tk2.Answer, `click button "Go"`) || !strings.Contains(tk2.Answer, "search?q=kettle") {
		t.Fatalf("type/click: %s %q / %s %q", tk.Status, tk.Error, tk2.Status, tk2.Answer)
	}
	if got := strings.Join(b.actions(), ","); got != "type e2kettle,click e3" {
		t.Fatalf("actions %s", got)
	}

	// The fast path keeps the confirmation rules.
	events, unsub := r.Subscribe("", 64)
	defer unsub()
	tk, err = r.Command(ctx, "click buy now", "tab1")
	if err != nil {
		t.Fatal(err)
	}
	for e := range events {
		if e.Type == task.EventConfirmation {
			_ = r.Confirm(tk.ID, e.Step.ID, false)
			break
		}
	}
	tk, _ = r.Wait(ctx, tk.ID)
	if tk.Status != task.StatusCancelled || b.has("click e11") {
		t.Fatalf("purchase via fast path: %s %v", tk.Status, b.actions())
	}
	// …unless the command approves it beforehand: it runs without waiting, the approval recorded.
	tk, err = r.CommandWith(ctx, task.CommandRequest{Text: "click buy now", Tab: "tab1", Approve: true})
	if err != nil {
		t.Fatal(err)
	}
	tk, _ = r.Wait(ctx, tk.ID)
	if tk.Status != task.StatusSucceeded || !b.has("click e11") {
		t.Fatalf("approved purchase via fast path: %s %q %v", tk.Status, tk.Error, b.actions())
	}
	if last := tk.Steps[len(tk.Steps)-1]; last.Confirmation == nil || last.Confirmation.Approved == nil || !*last.Confirmation.Approved ||
		last.Confirmation.Reason != "purchase or payment" {
		t.Fatalf("approved step's confirmation %+v", last.Confirmation)
	}

	// Not simple, and no model: a plain error saying how to configure one.
	if _, err := r.Command(ctx, "compare the kettles and buy the cheapest", "tab1"); err == nil || !strings.Contains(err.Error(), "TABRELAY_LLM_PROVIDER") {
		t.Fatalf("err %v", err)
	}
	// Ambiguous with a model: handed to the model.
	srv := llmtest.NewOpenAI(t, llmtest.Text("handled by the model"))
	r2 := newRunner(t, srv, newShop(), nil)
	tk, err = r2.Command(ctx, "compare the kettles", "tab1")
	if err != nil {
		t.Fatal(err)
	}
	tk, _ = r2.Wait(ctx, tk.ID)
	if tk.Answer != "handled by the model" || srv.Calls() != 1 {
		t.Fatalf("model task %+v", tk)
	}
}

// listPage is a page with many items; clicking one marks it, a small change each time.
type listPage struct {
	mu      sync.Mutex
	clicked map[string]bool
}

func (p *listPage) Snapshot(ctx context.Context, tabID string) (*snapshot.Snapshot, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	list := E("list", "", ref("e2"))
	for i := 3; i < 153; i++ {
		r := fmt.Sprintf("e%d", i)
		link := E("link", fmt.Sprintf("Message %d from someone about something", i), ref(r))
		if p.clicked[r] {
			link.States = []string{"selected"}
		}
		list.Children = append(list.Children, link)
	}
	return pagetest.Page("https://mail.test/", "Inbox", E("heading", "Inbox", "level=1", ref("e1")), list), nil
}

func (p *listPage) Act(ctx context.Context, tabID string, act actions.Action) (*actions.Result, error) {
	action, _ := json.Marshal(act) // the action as the HTTP API shows it
	var a struct{ Ref string }
	_ = json.Unmarshal(action, &a)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clicked[a.Ref] = true
	return &actions.Result{Message: "clicked"}, nil
}

func (p *listPage) Tabs(ctx context.Context) ([]task.Tab, error) {
	return []task.Tab{{ID: "tab1", URL: "https://mail.test/", Title: "Inbox", Active: true}}, nil
}

func TestPromptStaysBounded(t *testing.T) {
	replies := []llmtest.Reply{}
	for i := 0; i < 6; i++ {
		replies = append(replies, llmtest.ToolCall("click", fmt.Sprintf(`{"ref":"e%d"}`, 10+i)))
		if i == 2 {
			replies = append(replies, llmtest.ToolCall("snapshot", `{}`))
		}
	}
	replies = append(replies, llmtest.Text("done"))
	srv := llmtest.NewOpenAI(t, replies...)
	if _, err := newRunner(t, srv, &listPage{clicked: map[string]bool{}}, nil).Run(context.Background(), "select six messages", "tab1"); err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	for i, r := range reqs {
		t.Logf("150-element page, step %d: prompt ≈ %d tokens", i+1, r.ApproxTokens())
	}
	// One full snapshot in context at a time: later steps grow by small diffs only.
	first, last := reqs[0].ApproxTokens(), reqs[len(reqs)-1].ApproxTokens()
	if last > first+150*len(reqs) {
		t.Errorf("prompt grew from %d to %d tokens over %d steps", first, last, len(reqs))
	}
}

// TestCommandFastPathCompound runs a compound command with no model: each step is matched on
// the page as it is after the step before (Buy now only exists once Go was clicked), and a step
// that is not understood stops the task with the steps before it done and a reason naming it.
func TestCommandFastPathCompound(t *testing.T) {
	b := newShop()
	r := task.NewRunner(task.Options{Browser: b}) // no model at all
	defer r.Close()
	ctx := context.Background()
	tk, err := r.CommandWith(ctx, task.CommandRequest{Text: "Type kettle in the search box and click Go, then click buy now", Tab: "tab1", Approve: true})
	if err != nil {
		t.Fatal(err)
	}
	tk, _ = r.Wait(ctx, tk.ID)
	if got := strings.Join(b.actions(), ","); tk.Status != task.StatusSucceeded || got != "type e2kettle,click e3,click e11" || len(tk.Steps) != 3 {
		t.Fatalf("compound: %s %q %q, actions %s, %d steps", tk.Status, tk.Answer, tk.Error, got, len(tk.Steps))
	}
	if !strings.Contains(tk.Answer, `click button "Go"`) || !strings.Contains(tk.Answer, `click button "Buy now"`) {
		t.Fatalf("answer %q", tk.Answer)
	}

	b2 := newShop()
	r2 := task.NewRunner(task.Options{Browser: b2})
	defer r2.Close()
	tk, err = r2.Command(ctx, "type tea in the search box and click go, then click the moon", "tab1")
	if err != nil {
		t.Fatal(err)
	}
	tk, _ = r2.Wait(ctx, tk.ID)
	if got := strings.Join(b2.actions(), ","); tk.Status != task.StatusFailed || got != "type e2tea,click e3" ||
		!strings.Contains(tk.Error, `step 3 of 3, "click the moon", was not run`) {
		t.Fatalf("stopped compound: %s %q, actions %s", tk.Status, tk.Error, got)
	}
	// A first step that is not understood runs nothing.
	if _, err := r2.Command(ctx, "click the moon and click go", "tab1"); err == nil || !strings.Contains(err.Error(), `step 1 of 2, "click the moon"`) {
		t.Fatalf("err %v", err)
	}
	// Nor does a command whose later step would have to guess a text, or names nothing on a
	// page that the steps before it (typing into a field) leave as it is.
	b3 := newShop()
	r3 := task.NewRunner(task.Options{Browser: b3})
	defer r3.Close()
	for _, c := range []struct{ say, why string }{
		{"click go, then type your answer in the search box", `step 2 of 2, "type your answer in the search box"`},
		{"type tea in the search box and press login", `step 2 of 2, "press login"`},
	} {
		if _, err := r3.Command(ctx, c.say, "tab1"); err == nil || !strings.Contains(err.Error(), c.why) {
			t.Fatalf("%q: err %v, want it refused at %s", c.say, err, c.why)
		}
		if got := b3.actions(); len(got) != 0 {
			t.Fatalf("%q was refused, yet ran %v", c.say, got)
		}
	}
}

// storedAfterReopen closes st, the task store in home, opens it again (as a restarted server
// does) and returns the store opened again and task id as it was stored.
func storedAfterReopen(t *testing.T, ctx context.Context, st *taskstore.Store, home, id string) (*taskstore.Store, *task.Task) {
	t.Helper()
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	st2, err := taskstore.Open(ctx, filepath.Join(home, taskstore.FileName))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st2.Close() })
	got, err := st2.GetTask(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	return st2, got
}

// brokenPage is the shop whose page cannot be read: the browser fails, not the model.
type brokenPage struct{ *shop }

var errBrowser = errors.New("Page.getFrameTree: the browser failed")

func (brokenPage) Snapshot(context.Context, string) (*snapshot.Snapshot, error) {
	return nil, errBrowser
}

// TestCommandBrowserErrorIsNotAModelError: with no model, a command on a page that cannot be
// read fails with the browser's error, not with "no language model configured".
func TestCommandBrowserErrorIsNotAModelError(t *testing.T) {
	r := task.NewRunner(task.Options{Browser: brokenPage{newShop()}})
	defer r.Close()
	_, err := r.Command(context.Background(), "click buy now", "tab1")
	if !errors.Is(err, errBrowser) || errors.Is(err, llm.ErrNotConfigured) || !strings.Contains(err.Error(), "reading the page failed") {
		t.Fatalf("err %v: want the browser's error, not a missing model", err)
	}
}
