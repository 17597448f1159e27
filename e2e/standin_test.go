package e2e

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/tabrelay/tabrelay/agent/api"
	"github.com/tabrelay/tabrelay/agent/llm"
	"github.com/tabrelay/tabrelay/agent/llmtest"
	"github.com/tabrelay/tabrelay/agent/task"
	"github.com/tabrelay/tabrelay/e2e/standin"
	"github.com/tabrelay/tabrelay/internal/browser"
	"github.com/tabrelay/tabrelay/internal/testlimit"
	"github.com/tabrelay/tabrelay/relay"
)

// conversationsDir holds the recorded conversations (NAME.json) and the pages only they use
// (pages/).
const conversationsDir = "testdata/conversations"

// envStandinRecord, set to a folder, makes TestStandin record instead of replay: each request
// is written to FOLDER/<episode>/req-NNN.md and .json and waits for ans-NNN.json there (see
// standin.Files); the conversation is saved to testdata/conversations/<episode>.json.
//
//	TABRELAY_STANDIN_RECORD=/tmp/standin go test ./e2e -run 'TestStandin/mail-icons' -timeout 3h
const envStandinRecord = "TABRELAY_STANDIN_RECORD"

// standinEpisode is one task a stand-in model solved: where it starts, its goal and what the
// page or the answer must show at its end.
type standinEpisode struct {
	// name is the conversation's file name (without .json).
	name string
	// page is the path the task starts on (/miniwob/…, /pages/…, /standin/…).
	page string
	// goal is the task's goal; for a MiniWoB++ task, "" (the episode's instruction, seeded).
	goal string
	// seed seeds a MiniWoB++ episode's random instruction.
	seed string
	// small marks a small page, where a request must fit in 1,500 tokens.
	small bool
	// evidence marks a page whose every control carries what it is (icon classes, ids, data
	// attributes, …): none may reach the model as a bare unnamed line.
	evidence bool
	// check is JavaScript that must be true on the page at the end.
	check string
	// answer are words the task's answer must hold.
	answer []string
	// ask is a word the confirmation asked of the person must name ("" when none is asked).
	ask string
}

// miniwobStart seeds, lifts the time limit (a person stands in for the model) and starts the
// episode; it returns the instruction.
func miniwobStart(seed string) string {
	return fmt.Sprintf(`(() => { core.EPISODE_MAX_TIME = 36e5; Math.seedrandom(%q); core.startEpisodeReal(); return document.getElementById('query').innerText; })()`, seed)
}

// miniwobSolved is true once the episode ended with a positive reward.
const miniwobSolved = `WOB_RAW_REWARD_GLOBAL > 0`

// standinEpisodes are the recorded set: MiniWoB++ development-set episodes that need reading
// or several steps (each seeded, so its instruction is the recorded one), reading questions on
// saved real articles, and a mail client whose controls are icons with no names.
var standinEpisodes = []standinEpisode{
	{name: "mail-icons", page: "/standin/mail.html", goal: "Delete the second email, then reply to Ana's email saying: Yes, noon works.", small: true, evidence: true,
		check: `JSON.stringify(state.deleted) === '["m2"]' && state.sent.length === 1 && state.sent[0].to === 'm1' && state.sent[0].text.includes('noon works') && state.starred.length + state.liked.length === 0`,
		ask:   "trash"},
	withEvidence(miniwobEpisode("email-inbox", "1")),
	miniwobEpisode("read-table", "1"),
	miniwobEpisode("copy-paste", "1"),
	miniwobEpisode("simple-arithmetic", "1"),
	miniwobEpisode("navigate-tree", "1"),
	miniwobEpisode("search-engine", "1"),
	miniwobEpisode("click-tab-2-easy", "1"),
	miniwobEpisode("multi-layouts", "1"),
	miniwobEpisode("form-sequence", "1"),
	miniwobEpisode("login-user-popup", "1"),
	miniwobEpisode("use-autocomplete-nodelay", "1"),
	{name: "read-gitlab-survey", page: "/pages/gitlab-blog.html", goal: "Who wrote this post, when was it published, and how many people took the survey?",
		answer: []string{"Dave Steer", "2024", "5,000"}},
	{name: "read-v8-standalone", page: "/pages/v8-blog.html", goal: "When was this post published, and which emcc command does it give to build add.c into a Wasm file alone?",
		answer: []string{"2019", "-o add.wasm"}},
	{name: "read-wikipedia-1993", page: "/pages/wikipedia-4.html", goal: "Which films in this list came out in 1993?",
		answer: []string{"Groundhog Day", "12:01"}},
}

// withEvidence marks an episode whose page says what each control is (the MiniWoB++ mail
// client's star and trash, the social feed's reply, retweet, like and more are classes).
func withEvidence(ep standinEpisode) standinEpisode { ep.evidence = true; return ep }

// miniwobEpisode is a MiniWoB++ task's episode with this seed, solved when the page's reward
// is positive.
func miniwobEpisode(task, seed string) standinEpisode {
	return standinEpisode{name: "miniwob-" + task, page: "/miniwob/" + task + ".html", seed: seed, small: true, check: miniwobSolved}
}

// TestStandin replays each recorded conversation with the real agent, the real extension and
// Chromium: the stand-in model server answers every request from the recording (refs moved onto
// the current outline) and every request is checked for what a model needs: tool schemas in 500
// tokens (besides those of tools the model itself enabled), a small page's request in 1,500, icon-only controls named, page text inside
// <page_content>, the model's earlier text kept, a reply stopped at its failed call; then the
// page's state and the answer. With TABRELAY_STANDIN_RECORD set it records instead.
func TestStandin(t *testing.T) {
	recordDir := os.Getenv(envStandinRecord)
	ws := startStandinWorld(t, recordDir != "")
	var small []int
	ran := 0 // episodes the -run pattern chose
	for _, ep := range standinEpisodes {
		path := filepath.Join(conversationsDir, ep.name+".json")
		t.Run(ep.name, func(t *testing.T) {
			ran++
			var ans standin.Answerer
			var conv *standin.Conversation
			if recordDir != "" {
				dir := filepath.Join(recordDir, ep.name)
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				ans = standin.Files{Dir: dir}
				t.Logf("recording %s: answer the requests in %s", ep.name, dir)
			} else {
				var err error
				if conv, err = standin.Load(path); err != nil {
					t.Fatalf("%v (record it: %s=/tmp/standin go test ./e2e -run 'TestStandin/%s$' -timeout 3h)", err, envStandinRecord, ep.name)
				}
				ans = standin.Replay{Conv: conv, Record: fmt.Sprintf("%s=/tmp/standin go test ./e2e -run 'TestStandin/%s$' -timeout 3h", envStandinRecord, ep.name)}
			}
			run := ws.run(t, ep, ans)
			if recordDir != "" {
				out := &standin.Conversation{Name: ep.name, Goal: run.goal, Page: ep.page, Exchanges: run.exchanges}
				if old, err := standin.Load(path); err == nil {
					out.Notes = old.Notes
				}
				if err := out.Save(path); err != nil {
					t.Fatal(err)
				}
				t.Logf("saved %s (%d exchanges)", path, len(run.exchanges))
			} else {
				if run.goal != conv.Goal {
					t.Errorf("the episode's goal is %q, the recording's %q: the page changed; record again", run.goal, conv.Goal)
				}
				if len(run.exchanges) != len(conv.Exchanges) {
					t.Errorf("the agent sent %d requests, the recording has %d: the agent's behaviour changed; record again", len(run.exchanges), len(conv.Exchanges))
				}
			}
			if recordDir == "" {
				defer keepReplay(t, ep.name, run)
			}
			checkStandinRequests(t, ep, run.exchanges)
			ws.checkOutcome(t, ep, run)
			for i, ex := range run.exchanges {
				s := ex.Split
				t.Logf("request %d: %d tokens (system %d, tools %d, page %d, history %d)", i+1, s.Total, s.System, s.Tools, s.Page, s.History)
				if ep.small {
					small = append(small, s.Total)
				}
			}
		})
	}
	if recordDir == "" {
		// the median is the set's: only when every episode ran
		if ran == len(standinEpisodes) {
			if m := median(small); m > 1500 {
				t.Errorf("the median request on small pages is %d tokens, over 1,500", m)
			} else {
				t.Logf("median request on small pages: %d tokens (%d requests)", m, len(small))
			}
		}
	}
}

// keepReplay saves a failed replay's exchanges beside the temporary files, for comparing with
// the recording.
func keepReplay(t *testing.T, name string, run standinRun) {
	if !t.Failed() {
		return
	}
	path := filepath.Join(os.TempDir(), "standin-replay-"+name+".json")
	conv := &standin.Conversation{Name: name, Goal: run.goal, Exchanges: run.exchanges}
	if err := conv.Save(path); err != nil {
		t.Logf("keeping the replay: %v", err)
		return
	}
	t.Logf("the replay's requests and answers: %s", path)
}

// median is the middle value of xs (the upper one of an even count).
func median(xs []int) int {
	s := slices.Clone(xs)
	sort.Ints(s)
	return s[len(s)/2]
}

// standinWorld is the agent (relay, extension, Chromium), its switchable model and the server
// of the episodes' pages.
type standinWorld struct {
	ae     *agentEnv
	model  *llm.Switch
	pages  string
	record bool
}

// startStandinWorld serves the pages (the MiniWoB++ development set at /miniwob/, the saved
// real pages at /pages/, the conversations' own pages at /standin/) and starts the agent with a
// model chosen the way a user chooses one (TABRELAY_LLM_PROVIDER=openai and a base URL), set
// per episode.
func startStandinWorld(t *testing.T, record bool) *standinWorld {
	mux := http.NewServeMux()
	mux.Handle("/", http.FileServer(http.Dir(filepath.Join("bench", "miniwob"))))
	mux.Handle("/pages/", http.StripPrefix("/pages/", http.FileServer(http.Dir(filepath.Join("bench", "testdata", "pages")))))
	mux.Handle("/standin/", http.StripPrefix("/standin/", http.FileServer(http.Dir(filepath.Join(conversationsDir, "pages")))))
	site := httptest.NewServer(mux)
	t.Cleanup(site.Close)
	sw := &llm.Switch{}
	opts := api.Options{Model: sw, ModelName: "stand-in"}
	var hub relay.HubOptions
	if record {
		// A person standing in for the model takes minutes where a model takes seconds: the
		// task's time limit and the relay's release of an unused tab's debugger (after which
		// the page's refs are gone) wait as long as the person does.
		opts.TaskTimeout = 3 * time.Hour
		hub.DetachAfter = 3 * time.Hour
	}
	return &standinWorld{ae: startAgentEnvWith(t, opts, hub), model: sw, pages: site.URL, record: record}
}

// standinRun is what one episode did.
type standinRun struct {
	goal      string
	task      *task.Task
	exchanges []standin.Exchange
	asked     []string // the confirmations' prompts
	tab       browser.Tab
}

// run plays one episode: a fresh shared tab on the page, the goal sent as a task through the
// HTTP API, every confirmation approved as the person would (their prompts kept).
func (ws *standinWorld) run(t *testing.T, ep standinEpisode, ans standin.Answerer) standinRun {
	t.Helper()
	srv := standin.Start(ans)
	t.Cleanup(srv.Close)
	cfg, err := llm.FromLookup(srv.Lookup)
	if err != nil {
		t.Fatal(err)
	}
	m, err := llm.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	ws.model.Set(m, cfg, nil)
	defer ws.model.Set(nil, llm.Config{}, errors.New("between episodes"))

	ae := ws.ae
	tab := ae.share(t, ws.pages+ep.page)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), testlimit.Scale(10*time.Second))
		defer cancel()
		_ = ae.b.CloseTab(ctx, tab)
	})
	run := standinRun{goal: ep.goal, tab: tab}
	if ep.seed != "" {
		ae.waitPage(t, tab, "the MiniWoB++ page loads", `typeof core === 'object' && !!core.startEpisodeReal && document.readyState === 'complete'`)
		ae.pageEval(t, tab, miniwobStart(ep.seed), &run.goal)
	}
	r := ae.call(t, http.MethodPost, "/api/tasks", map[string]any{"goal": run.goal, "tab": tab.TargetID})
	res := r.JSON(t)
	id, _ := res["id"].(string)
	if r.Status != http.StatusAccepted || id == "" {
		t.Fatalf("POST /api/tasks: HTTP %d %s", r.Status, r.Body)
	}
	limit := testlimit.Scale(90 * time.Second)
	if ws.record {
		limit = 3 * time.Hour
	}
	deadline := time.Now().Add(limit)
	approved := map[string]bool{}
	for {
		tk := ae.getTask(t, id)
		if errs := srv.Problems(); len(errs) > 0 {
			ae.call(t, http.MethodPost, "/api/tasks/"+url.PathEscape(id)+"/cancel", nil)
			t.Fatalf("the stand-in model: %v", errors.Join(errs...))
		}
		if tk.Status == task.StatusWaitingConfirmation && len(tk.Steps) > 0 {
			st := tk.Steps[len(tk.Steps)-1]
			if !approved[st.ID] {
				approved[st.ID] = true
				if st.Confirmation != nil {
					run.asked = append(run.asked, st.Confirmation.Prompt)
				}
				ae.call(t, http.MethodPost, "/api/tasks/"+url.PathEscape(id)+"/confirm", map[string]any{"stepId": st.ID, "approve": true})
			}
		}
		if tk.Status == task.StatusWaitingInput || tk.Status == task.StatusWaitingUser {
			ae.call(t, http.MethodPost, "/api/tasks/"+url.PathEscape(id)+"/cancel", nil)
			t.Fatalf("the task waits for the user (%s): the episodes give everything they need in the goal", tk.Status)
		}
		if tk.Status.Done() {
			run.task = tk
			break
		}
		if time.Now().After(deadline) {
			ae.call(t, http.MethodPost, "/api/tasks/"+url.PathEscape(id)+"/cancel", nil)
			t.Fatalf("task %s still %s after %v (%d model calls)", id, tk.Status, limit, len(srv.Exchanges()))
		}
		time.Sleep(50 * time.Millisecond)
	}
	run.exchanges = srv.Exchanges()
	return run
}

// bareControlRe is an outline line of a control with no name at all.
var bareControlRe = regexp.MustCompile(`^(clickable|button|link|img|image|generic|checkbox|menuitem)$`)

// checkStandinRequests checks every request the agent sent in the episode.
func checkStandinRequests(t *testing.T, ep standinEpisode, exs []standin.Exchange) {
	t.Helper()
	if len(exs) == 0 {
		t.Fatal("the agent sent no request to the model")
	}
	if s := exs[0].Split; ep.small && s.Total > 1500 {
		t.Errorf("request 1 on a small page: %d tokens, over 1,500 (system %d, tools %d, page %d, history %d)", s.Total, s.System, s.Tools, s.Page, s.History)
	}
	for i, ex := range exs {
		n, req := i+1, ex.Request
		// the tools a request offers by itself fit in 500 tokens; a tool the model enabled
		// (more_tools loads its schema when asked) is its own choice and counts apart
		tools, per := ex.Split.Tools, standin.ToolTokens(req)
		var enabled []string
		for _, name := range req.Tools {
			if !slices.Contains(exs[0].Request.Tools, name) {
				tools -= per[name]
				enabled = append(enabled, name)
			}
		}
		if tools > 500 {
			t.Errorf("request %d: the tool definitions take %d tokens, over 500, besides the %d of tools the model enabled (%s) (%d tools: %s)",
				n, tools, ex.Split.Tools-tools, strings.Join(enabled, ", "), len(req.Tools), strings.Join(req.Tools, ", "))
		}
		seen := 0 // the messages an earlier request already had, checked there
		if i > 0 {
			seen = len(exs[i-1].Request.Messages)
		}
		for j, m := range req.Messages {
			if j < seen {
				continue
			}
			if els := standin.Elements(standin.OutsidePage(m.Text)); len(els) > 0 {
				t.Errorf("request %d, message %d (%s): page text outside <page_content>: %q", n, j+1, m.Role, els[0].Line)
			}
			if !ep.evidence {
				continue
			}
			var bare []string
			for _, e := range standin.Elements(m.Text) {
				if bareControlRe.MatchString(e.Elem) {
					bare = append(bare, e.Line)
				}
			}
			if len(bare) > 0 {
				t.Errorf("request %d, message %d: %d control(s) reach the model unnamed although the page says what each is (icon class, id, data attribute…): %q", n, j+1, len(bare), bare)
			}
		}
		if i == 0 {
			continue
		}
		prev := exs[i-1].Answer
		if text := strings.TrimSpace(prev.Text); text != "" && len(prev.Calls) > 0 && !slices.ContainsFunc(req.Messages, func(m llmtest.Message) bool {
			return m.Role == "assistant" && strings.Contains(m.Text, text)
		}) {
			t.Errorf("request %d: the model's text beside its calls in the turn before (%.80q) is not in the history", n, text)
		}
		checkStoppedAtFailure(t, n, prev, req)
	}
}

// approvedPrefix begins the tool result of a step the person approved.
const approvedPrefix = "approved by the person"

// checkStoppedAtFailure checks that, in the request after a turn with several calls, every call
// after the first that failed, or that the person approved (the page changed under their
// decision), came back as not run.
func checkStoppedAtFailure(t *testing.T, n int, prev standin.Answer, req llmtest.Request) {
	t.Helper()
	if len(prev.Calls) < 2 {
		return
	}
	results := map[string]string{}
	for _, m := range req.ToolResults() {
		results[m.ToolCallID] = m.Text
	}
	failed := ""
	for _, c := range prev.Calls {
		res, ok := results[c.ID]
		switch {
		case !ok:
			t.Errorf("request %d: no result for the call %s %s of the turn before", n, c.Name, c.Args)
		case failed != "" && !strings.HasPrefix(res, "not run"):
			t.Errorf("request %d: %s ran after %s in the same reply (its result: %.120q)", n, c.Name, failed, res)
		case failed == "" && strings.HasPrefix(res, "error"):
			failed = c.Name
		case failed == "" && strings.HasPrefix(res, approvedPrefix):
			failed = c.Name + " (approved by the person)"
		}
	}
}

// checkOutcome checks the task's end: its status, the page's state, the answer's words
// and the confirmation asked.
func (ws *standinWorld) checkOutcome(t *testing.T, ep standinEpisode, run standinRun) {
	t.Helper()
	if run.task.Status != task.StatusSucceeded {
		t.Errorf("task %s: %s (%s)", run.task.ID, run.task.Status, run.task.Error)
	}
	if ep.check != "" {
		var ok bool
		ws.ae.pageEval(t, run.tab, ep.check, &ok)
		if !ok {
			t.Errorf("the page's state at the end is not what the goal asked (%s)", ep.check)
		}
	}
	for _, w := range ep.answer {
		if !strings.Contains(strings.ToLower(run.task.Answer), strings.ToLower(w)) {
			t.Errorf("the answer %q does not say %q", run.task.Answer, w)
		}
	}
	if len(run.exchanges) > 0 && len(run.asked) > 0 {
		// the model's next request says each approval
		said := 0
		for _, m := range run.exchanges[len(run.exchanges)-1].Request.ToolResults() {
			if strings.HasPrefix(m.Text, approvedPrefix) {
				said++
			}
		}
		if said < len(run.asked) {
			t.Errorf("the person approved %d step(s) but %d tool result(s) say so (%q)", len(run.asked), said, approvedPrefix)
		}
	}
	switch {
	case ep.ask == "" && len(run.asked) > 0:
		t.Logf("confirmations asked: %q", run.asked)
	case ep.ask != "" && !slices.ContainsFunc(run.asked, func(p string) bool { return strings.Contains(strings.ToLower(p), ep.ask) }):
		t.Errorf("no confirmation named %q (asked: %q)", ep.ask, run.asked)
	}
}
