package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/rs/zerolog"

	"github.com/tabrelay/tabrelay/agent/actions"
	"github.com/tabrelay/tabrelay/agent/actions/gate"
	"github.com/tabrelay/tabrelay/agent/adapter"
	"github.com/tabrelay/tabrelay/agent/api"
	"github.com/tabrelay/tabrelay/agent/llmtest"
	"github.com/tabrelay/tabrelay/skills"
	"github.com/tabrelay/tabrelay/snapshot"
)

// skillsEnv is the agent environment with the skills service on the agent's own action
// service, task runner and task store, served by the API package (api.Register) on an echo group.
type skillsEnv struct {
	*agentEnv
	svc *skills.Service
	api *httptest.Server
}

func startSkillsEnv(t *testing.T, model *llmtest.Server) *skillsEnv {
	t.Helper()
	opts := api.Options{}
	if model != nil {
		opts.Model, opts.ModelName = model.Model(t), "scripted"
	}
	ae := startAgentEnv(t, opts)
	log := zerolog.Nop()
	if os.Getenv("TABRELAY_E2E_LOG") != "" {
		log = zerolog.New(zerolog.ConsoleWriter{Out: os.Stderr}).With().Timestamp().Str("side", "skills").Logger()
	}
	so := skills.Options{
		Dir:     filepath.Join(ae.home, "skills"),
		Browser: adapter.New(ae.agent.Actions()),
		Actions: ae.agent.Actions(),
		Store:   ae.agent.Store(),
		Log:     log,
	}
	if model != nil {
		so.Runner = ae.agent.Runner()
	}
	svc := skills.New(so)
	e := echo.New()
	api.Register(e.Group("/api"), api.Services{Skills: svc})
	ts := httptest.NewServer(e)
	t.Cleanup(ts.Close)
	return &skillsEnv{agentEnv: ae, svc: svc, api: ts}
}

// skillsCall calls the skills API.
func (se *skillsEnv) skillsCall(t *testing.T, method, path string, body any) apiResp {
	t.Helper()
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(raw)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, method, se.api.URL+"/api"+path, rd)
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return apiResp{Status: resp.StatusCode, Header: resp.Header, Body: b}
}

// user acts on the tab the way a person does: real input events through the extension's
// debugger session, aimed by role and name.
type user struct {
	t   *testing.T
	svc *actions.Service
	tab string
}

func (u user) ref(role, name string) string {
	u.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s, err := u.svc.Snapshot(ctx, u.tab, snapshot.Options{})
	if err != nil {
		u.t.Fatal(err)
	}
	for _, n := range s.Nodes() {
		if n.Ref != "" && n.Role == role && strings.EqualFold(n.Name, name) {
			return n.Ref
		}
	}
	u.t.Fatalf("no %s %q on the page:\n%s", role, name, s.Text)
	return ""
}

// only returns the ref of the page's one element of role, and fails when there is not exactly one.
func (u user) only(role string) string {
	u.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s, err := u.svc.Snapshot(ctx, u.tab, snapshot.Options{})
	if err != nil {
		u.t.Fatal(err)
	}
	var refs []string
	for _, n := range s.Nodes() {
		if n.Ref != "" && n.Role == role {
			refs = append(refs, n.Ref)
		}
	}
	if len(refs) != 1 {
		u.t.Fatalf("%d elements of role %s on the page, want one:\n%s", len(refs), role, s.Text)
	}
	return refs[0]
}

func (u user) do(a actions.Action) *actions.Result {
	u.t.Helper()
	ctx, cancel := context.WithTimeout(gate.With(context.Background(), gate.Request{Who: gate.Caller}), 20*time.Second)
	defer cancel()
	res, err := u.svc.Act(ctx, u.tab, a)
	if err != nil {
		u.t.Fatalf("%s: %v", a.Kind, err)
	}
	return res
}

func (u user) eval(expr string, out any) {
	u.t.Helper()
	res := u.do(actions.Do(actions.Evaluate{Expression: expr}))
	if err := json.Unmarshal(res.Value, out); err != nil {
		u.t.Fatalf("evaluate %s: %v (%s)", expr, err, res.Value)
	}
}

func (u user) open(url string) {
	u.t.Helper()
	u.do(actions.Do(actions.Navigate{URL: url}))
	u.do(actions.Do(actions.Wait{State: "load"}))
}

type added struct {
	Name           string `json:"name"`
	Email          string `json:"email"`
	Team           string `json:"team"`
	Subscribe      bool   `json:"subscribe"`
	PasswordLength int    `json:"passwordLength"`
}

// TestSkillsRecordReplayHeal is the skills story end to end on real Chromium through the real
// extension: record a demonstration over CDP, save the draft, replay it with zero model calls,
// heal a renamed button with the (scripted) model, refuse a run missing a parameter and report
// a malformed skill file by line — all through the HTTP handlers.
func TestSkillsRecordReplayHeal(t *testing.T) {
	refRE := regexp.MustCompile(`button "Create contact" \[ref=(e\d+)\]`)
	model := llmtest.NewOpenAI(t,
		llmtest.Dynamic(func(r llmtest.Request) llmtest.Reply {
			all := r.System
			for _, m := range r.Messages {
				all += "\n" + m.Text
			}
			if m := refRE.FindStringSubmatch(all); m != nil && strings.Contains(all, `button "Add contact"`) {
				return llmtest.ToolCall("click", fmt.Sprintf(`{"ref":%q}`, m[1]))
			}
			return llmtest.ToolCall("fail", `{"reason":"the goal or the page is not what the test expects"}`)
		}),
		llmtest.ToolCall("finish", `{"answer":"Pressed Create contact."}`),
	)
	se := startSkillsEnv(t, model)
	page := se.site.URL("/skills/contacts.html")
	tab := se.share(t, page)
	u := user{t: t, svc: se.agent.Actions(), tab: tab.TargetID}

	// Record: the user fills the form and adds a contact.
	r := se.skillsCall(t, http.MethodPost, "/skills/record/start", map[string]string{"tab": tab.TargetID})
	if r.Status != http.StatusOK {
		t.Fatalf("record/start: HTTP %d %s", r.Status, r.Body)
	}
	if r := se.skillsCall(t, http.MethodPost, "/skills/record/start", map[string]string{"tab": tab.TargetID}); r.Status != http.StatusConflict {
		t.Fatalf("second record/start: HTTP %d %s", r.Status, r.Body)
	}
	const secretPW = "hunter2-secret"
	u.do(actions.Do(actions.Click{Ref: u.ref("textbox", "Name")}))
	u.do(actions.Do(actions.Type{Ref: u.ref("textbox", "Name"), Text: "Ada Lovelace"}))
	u.do(actions.Do(actions.Type{Ref: u.ref("textbox", "Email"), Text: "ada@example.com"}))
	u.do(actions.Do(actions.Select{Ref: u.ref("combobox", "Team"), Values: []string{"Green"}}))
	u.do(actions.Do(actions.Click{Ref: u.ref("checkbox", "Subscribe to news")}))
	u.do(actions.Do(actions.Type{Ref: u.ref("textbox", "Password"), Text: secretPW}))
	u.do(actions.Do(actions.Click{Ref: u.ref("button", "Add contact")}))
	u.do(actions.Do(actions.Wait{Text: "Added Ada Lovelace"}))
	r = se.skillsCall(t, http.MethodPost, "/skills/record/stop", map[string]string{"tab": tab.TargetID, "narration": "Add a contact to the team address book"})
	if r.Status != http.StatusOK {
		t.Fatalf("record/stop: HTTP %d %s", r.Status, r.Body)
	}
	var draft skills.Draft
	if err := json.Unmarshal(r.Body, &draft); err != nil {
		t.Fatal(err)
	}
	t.Logf("recorded draft:\n%s", draft.Markdown)
	if strings.Contains(draft.Markdown, secretPW) {
		t.Fatalf("the password was recorded:\n%s", draft.Markdown)
	}
	for _, want := range []string{
		`target: textbox "Name"`, `text: '{{name}}'`, `example: Ada Lovelace`, `target: textbox "Email"`,
		`target: combobox "Team"`, `- Green`, `do: check`, `target: checkbox "Subscribe to news"`,
		`text: '{{password}}'`, `secret: true`, `do: click`, `target: button "Add contact"`,
	} {
		if !strings.Contains(draft.Markdown, want) {
			t.Errorf("draft lacks %q", want)
		}
	}
	if n := len(draft.Skill.Steps); n != 6 {
		t.Errorf("draft has %d steps, want 6 (type name, type email, select, check, type password, click)", n)
	}
	// the click's effect (the status line the page updated) is the step's check, with the typed
	// name as its parameter
	if n := len(draft.Skill.Steps); n > 0 {
		if e := draft.Skill.Steps[n-1].Expect; e == nil || e.Text != "Added {{name}}" {
			t.Errorf("the click step does not expect its recorded effect: %+v", e)
		}
	}
	name := draft.Skill.Name
	if name != "add-contact-team-address" {
		t.Errorf("default name from the narration: %q", name)
	}

	// Save through the API, then it is listed.
	if r := se.skillsCall(t, http.MethodPut, "/skills/"+name, api.SkillSave{Markdown: draft.Markdown}); r.Status != http.StatusOK {
		t.Fatalf("save: HTTP %d %s", r.Status, r.Body)
	}
	var list api.SkillList
	_ = json.Unmarshal(se.skillsCall(t, http.MethodGet, "/skills?q=add+a+contact&url="+page, nil).Body, &list)
	if len(list.Skills) == 0 || list.Skills[0].Name != name {
		t.Fatalf("ranked list for the request: %+v", list.Skills)
	}
	// without a page URL (the CLI's `skills list --q` without --url) the recorded, site-specific
	// skill is found too: no URL filters nothing
	list = api.SkillList{}
	_ = json.Unmarshal(se.skillsCall(t, http.MethodGet, "/skills?q=add+a+contact", nil).Body, &list)
	if len(list.Skills) == 0 || list.Skills[0].Name != name {
		t.Errorf("ranked list for the request without a page URL: %+v", list.Skills)
	}

	// Replay on a fresh page: zero model calls.
	u.open(page)
	params := map[string]string{"name": "Grace Hopper", "email": "grace@example.com", "password": "pw-2"}
	// Ticking "Subscribe to news" needs the user's approval, as it would for the agent: the
	// safety gate holds that step when it comes, on the live page, and over HTTP nobody can be
	// asked: the run answers at once, failed with the confirmation it needs, the box unticked,
	// the contact not added, and no model asked to work around it.
	r = se.skillsCall(t, http.MethodPost, "/skills/"+name+"/run", skills.RunRequest{Params: params, Tab: tab.TargetID})
	var held skills.RunResult
	if err := json.Unmarshal(r.Body, &held); err != nil || r.Status != http.StatusOK || held.Status != "failed" ||
		!strings.Contains(held.Error, "needs the user's confirmation") || !strings.Contains(held.Error, `check checkbox "Subscribe to news"`) {
		t.Fatalf("run without approval: HTTP %d %s", r.Status, r.Body)
	}
	var heldState struct {
		Added int  `json:"added"`
		Sub   bool `json:"sub"`
	}
	u.eval(`({added: window.added.length, sub: document.getElementById("subscribe").checked})`, &heldState)
	if heldState.Added != 0 || heldState.Sub || model.Calls() != 0 {
		t.Fatalf("the held run went on: %+v, model calls %d", heldState, model.Calls())
	}
	u.open(page)
	start := time.Now()
	r = se.skillsCall(t, http.MethodPost, "/skills/"+name+"/run", skills.RunRequest{Params: params, Tab: tab.TargetID, Approve: true})
	took := time.Since(start)
	var res skills.RunResult
	if err := json.Unmarshal(r.Body, &res); err != nil || r.Status != http.StatusOK {
		t.Fatalf("run: HTTP %d %s", r.Status, r.Body)
	}
	if res.Status != "succeeded" || res.ModelCalls != 0 || model.Calls() != 0 {
		t.Fatalf("replay: %s (%s), model calls %d (server saw %d)", res.Status, res.Error, res.ModelCalls, model.Calls())
	}
	var got []added
	u.eval("window.added", &got)
	if len(got) != 1 || got[0] != (added{Name: "Grace Hopper", Email: "grace@example.com", Team: "Green", Subscribe: true, PasswordLength: 4}) {
		t.Fatalf("replay did not add the contact as recorded: %+v", got)
	}
	var per []string
	for _, st := range res.Steps {
		per = append(per, fmt.Sprintf("%s %dms", st.Do, st.DurationMS))
	}
	t.Logf("replay: %d steps in %v (server-side %d ms: %s), 0 model calls", len(res.Steps), took.Round(time.Millisecond), res.DurationMS, strings.Join(per, ", "))

	// The run is a task in the agent's store, visible through the agent API, without the password.
	tr := se.call(t, http.MethodGet, "/api/tasks/"+res.TaskID, nil)
	if tr.Status != http.StatusOK || !strings.Contains(string(tr.Body), "Run skill "+name) || strings.Contains(string(tr.Body), "pw-2") {
		t.Fatalf("the run's task: HTTP %d %.600s", tr.Status, tr.Body)
	}
	if !strings.Contains(string(tr.Body), `"expect"`) || !strings.Contains(string(tr.Body), `Added Grace Hopper`) {
		t.Errorf("the replay did not check the click's effect: %.2000s", tr.Body)
	}

	// The site renames the button: that step goes to the model, the run finishes.
	u.open(page + "?rename=1")
	params["name"] = "Alan Turing"
	r = se.skillsCall(t, http.MethodPost, "/skills/"+name+"/run", skills.RunRequest{Params: params, Tab: tab.TargetID, Approve: true})
	res = skills.RunResult{}
	if err := json.Unmarshal(r.Body, &res); err != nil || r.Status != http.StatusOK {
		t.Fatalf("run after rename: HTTP %d %s", r.Status, r.Body)
	}
	if res.Status != "succeeded" || res.Handovers != 1 || model.Calls() != 2 || res.ModelCalls != 2 {
		t.Fatalf("healed run: %s (%s), handovers %d, model calls %d (server saw %d)", res.Status, res.Error, res.Handovers, res.ModelCalls, model.Calls())
	}
	got = nil
	u.eval("window.added", &got)
	if len(got) != 1 || got[0].Name != "Alan Turing" {
		t.Fatalf("healed run did not add the contact: %+v", got)
	}
	if last := res.Steps[len(res.Steps)-1]; last.Status != "model" || last.HandoverTask == "" {
		t.Fatalf("last step: %+v", last)
	}
	if !strings.Contains(res.Draft, `target: button "Create contact"`) {
		t.Fatalf("no updated draft with the new button:\n%s", res.Draft)
	}
	t.Logf("healed run: %d ms, %d model calls", res.DurationMS, res.ModelCalls)

	// A run missing a required parameter is refused before anything happens.
	u.open(page)
	r = se.skillsCall(t, http.MethodPost, "/skills/"+name+"/run", skills.RunRequest{Params: map[string]string{"email": "x@example.com"}, Tab: tab.TargetID})
	body := r.JSON(t)
	if r.Status != http.StatusBadRequest || !strings.Contains(fmt.Sprint(body["error"]), "name (") || !strings.Contains(fmt.Sprint(body["error"]), "nothing was done") {
		t.Fatalf("missing parameter: HTTP %d %s", r.Status, r.Body)
	}
	var name0 string
	u.eval(`document.getElementById("name").value`, &name0)
	if name0 != "" || model.Calls() != 2 {
		t.Fatalf("a refused run touched the page (%q) or the model (%d calls)", name0, model.Calls())
	}

	// A malformed skill file on disk is reported with its line, and the rest still works.
	bad := filepath.Join(se.home, "skills", "broken", skills.FileName)
	_ = os.MkdirAll(filepath.Dir(bad), 0o755)
	if err := os.WriteFile(bad, []byte("---\nname: broken\ndescription: d\n---\n```steps\n- do: click\n  target: button \"Go\"\n- do: teleport\n```\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	list = api.SkillList{}
	_ = json.Unmarshal(se.skillsCall(t, http.MethodGet, "/skills", nil).Body, &list)
	if len(list.Problems) != 1 || list.Problems[0].Line != 8 || !strings.Contains(list.Problems[0].Error(), bad+":8: ") || !strings.Contains(list.Problems[0].Reason, "teleport") {
		t.Fatalf("problems: %+v", list.Problems)
	}
	if r := se.skillsCall(t, http.MethodGet, "/skills/broken", nil); r.Status != http.StatusUnprocessableEntity || r.JSON(t)["line"] != float64(8) {
		t.Fatalf("GET broken: HTTP %d %s", r.Status, r.Body)
	}
	// The click's effect does not follow (the page lost its status line): the step goes to the
	// model, which gives up here, and the run fails saying what did not appear.
	u.open(page)
	var ok bool
	u.eval(`(document.getElementById("status").id = "status-gone", true)`, &ok)
	model.Push(llmtest.ToolCall("fail", `{"reason":"the contact shows no confirmation"}`))
	params["name"] = "Katherine Johnson"
	r = se.skillsCall(t, http.MethodPost, "/skills/"+name+"/run", skills.RunRequest{Params: params, Tab: tab.TargetID, Approve: true})
	res = skills.RunResult{}
	if err := json.Unmarshal(r.Body, &res); err != nil {
		t.Fatalf("run without the effect: HTTP %d %s", r.Status, r.Body)
	}
	if res.Status != "failed" || res.Handovers != 1 || model.Calls() != 3 || !strings.Contains(res.Error, `"Added Katherine Johnson"`) {
		t.Fatalf("run without the effect: %s (%s), handovers %d, model calls %d", res.Status, res.Error, res.Handovers, model.Calls())
	}
	t.Logf("run without the effect: %s", res.Error)

	if r := se.skillsCall(t, http.MethodDelete, "/skills/"+name, nil); r.Status != http.StatusNoContent {
		t.Fatalf("delete: HTTP %d %s", r.Status, r.Body)
	}
}

// TestSkillsBundled runs the bundled skills on the fixture site with no model at all.
func TestSkillsBundled(t *testing.T) {
	se := startSkillsEnv(t, nil)
	page := se.site.URL("/skills/contacts.html")
	tab := se.share(t, page)
	u := user{t: t, svc: se.agent.Actions(), tab: tab.TargetID}
	run := func(name string, params map[string]string) skills.RunResult {
		t.Helper()
		r := se.skillsCall(t, http.MethodPost, "/skills/"+name+"/run", skills.RunRequest{Params: params, Tab: tab.TargetID})
		var res skills.RunResult
		if err := json.Unmarshal(r.Body, &res); err != nil || r.Status != http.StatusOK {
			t.Fatalf("run %s: HTTP %d %s", name, r.Status, r.Body)
		}
		return res
	}

	t.Run("extract-table", func(t *testing.T) {
		res := run("extract-table", nil)
		want := "Name,Email,Team,News\nAda Lovelace,ada@example.com,Red,yes\nAlan Turing,alan@example.com,Blue,no\n" +
			"\"Grace \"\"Amazing\"\" Hopper\",grace@example.com,\"Green, Navy\",yes\n"
		if res.Status != "succeeded" || res.Output != want {
			t.Fatalf("%s (%s): output\n%s\nwant\n%s", res.Status, res.Error, res.Output, want)
		}
		res = run("extract-table", map[string]string{"table": "legend"})
		if res.Output != "yes,subscribed\n" {
			t.Fatalf("labelled table: %q (%s)", res.Output, res.Error)
		}
	})
	t.Run("fill-form", func(t *testing.T) {
		values := map[string]string{"values": "Name: Ada Byron\nEmail: ab@example.com\nTeam: Blue\nSubscribe to news: yes", "submit": "Add contact"}
		// Ticking "Subscribe to news" needs the user's approval: the safety gate holds the fill
		// when it comes, on the live page, and nothing is done (nobody to ask over HTTP).
		held := run("fill-form", values)
		if held.Status != "failed" || !strings.Contains(held.Error, "needs the user's confirmation") ||
			!strings.Contains(held.Error, `check checkbox "Subscribe to news"`) {
			t.Fatalf("subscribing without approval: %s %s", held.Status, held.Error)
		}
		var state struct {
			Added int    `json:"added"`
			Name  string `json:"name"`
			Sub   bool   `json:"sub"`
		}
		u.eval(`({added: window.added.length, name: document.getElementById("name").value, sub: document.getElementById("subscribe").checked})`, &state)
		if state.Added != 0 || state.Name != "" || state.Sub {
			t.Fatalf("the held fill changed the page: %+v", state)
		}
		// Approve covers only targets the skill names in its own words (RunRequest.Approve), not
		// fields named through a parameter: the fill is still held, nothing done.
		r := se.skillsCall(t, http.MethodPost, "/skills/fill-form/run", skills.RunRequest{Params: values, Tab: tab.TargetID, Approve: true})
		var res skills.RunResult
		if err := json.Unmarshal(r.Body, &res); err != nil || r.Status != http.StatusOK {
			t.Fatalf("fill-form: HTTP %d %s", r.Status, r.Body)
		}
		if res.Status != "failed" || !strings.Contains(res.Error, "needs the user's confirmation") {
			t.Fatalf("approved beforehand through a parameter: %s: %s", res.Status, res.Error)
		}
		u.eval(`({added: window.added.length, name: document.getElementById("name").value, sub: document.getElementById("subscribe").checked})`, &state)
		if state.Added != 0 || state.Name != "" || state.Sub {
			t.Fatalf("the held fill changed the page: %+v", state)
		}
		// Without the held field the form is filled and submitted.
		values["values"] = "Name: Ada Byron\nEmail: ab@example.com\nTeam: Blue"
		res = run("fill-form", values)
		if res.Status != "succeeded" {
			t.Fatalf("%s: %s", res.Status, res.Error)
		}
		var got []added
		u.eval("window.added", &got)
		if len(got) != 1 || got[0] != (added{Name: "Ada Byron", Email: "ab@example.com", Team: "Blue"}) {
			t.Fatalf("form filled as %+v", got)
		}
		res = run("fill-form", map[string]string{"values": "Phone: 123"})
		if res.Status != "failed" || !strings.Contains(res.Error, `no field labelled "Phone"`) || !strings.Contains(res.Error, "no language model") {
			t.Fatalf("unknown field: %s %s", res.Status, res.Error)
		}
	})
	t.Run("site-search", func(t *testing.T) {
		r := se.skillsCall(t, http.MethodPost, "/skills/site-search/run", skills.RunRequest{Tab: tab.TargetID})
		if r.Status != http.StatusBadRequest || !strings.Contains(string(r.Body), "query (What to search for") {
			t.Fatalf("no query: HTTP %d %s", r.Status, r.Body)
		}
		res := run("site-search", map[string]string{"query": "Turing"})
		if res.Status != "succeeded" {
			t.Fatalf("%s: %s", res.Status, res.Error)
		}
		var title string
		u.eval(`document.getElementById("title").textContent + " @ " + location.pathname`, &title)
		if title != "Results for Turing @ /skills/results.html" {
			t.Fatalf("search landed on %q", title)
		}
		t.Logf("site-search: %d ms", res.DurationMS)
	})
	t.Run("named request", func(t *testing.T) {
		u.open(page)
		res, err := se.svc.Do(context.Background(), "run site-search for Hopper", tab.TargetID)
		if err != nil || res.Status != "succeeded" {
			t.Fatalf("%v %+v", err, res)
		}
		var title string
		u.eval(`document.getElementById("title").textContent`, &title)
		if title != "Results for Hopper" {
			t.Fatalf("search landed on %q", title)
		}
	})
}

// TestSkillsRecordNavigation records a search submitted with Enter that loads another page: the
// draft types with submit and expects the new path, and replays with another query.
func TestSkillsRecordNavigation(t *testing.T) {
	se := startSkillsEnv(t, nil)
	page := se.site.URL("/skills/contacts.html")
	tab := se.share(t, page)
	u := user{t: t, svc: se.agent.Actions(), tab: tab.TargetID}
	if r := se.skillsCall(t, http.MethodPost, "/skills/record/start", map[string]string{}); r.Status != http.StatusOK {
		t.Fatalf("record/start on the active tab: HTTP %d %s", r.Status, r.Body)
	}
	u.do(actions.Do(actions.Type{Ref: u.ref("searchbox", "Search contacts"), Text: "Lovelace", Submit: true}))
	u.do(actions.Do(actions.Wait{Text: "Results for Lovelace"}))
	u.do(actions.Do(actions.Click{Ref: u.ref("searchbox", "Search contacts")}))
	r := se.skillsCall(t, http.MethodPost, "/skills/record/stop", map[string]string{})
	if r.Status != http.StatusOK {
		t.Fatalf("record/stop: HTTP %d %s", r.Status, r.Body)
	}
	var d skills.Draft
	_ = json.Unmarshal(r.Body, &d)
	t.Logf("draft steps:\n%s", d.Markdown[strings.Index(d.Markdown, "```steps"):])
	if len(d.Skill.Steps) < 1 {
		t.Fatalf("no steps")
	}
	st := d.Skill.Steps[0]
	if st.Do != "type" || !st.Submit || st.Text != "{{search_contacts}}" || st.Expect == nil || st.Expect.URL != "/skills/results.html" {
		t.Fatalf("first step %+v (expect %+v)", st, st.Expect)
	}
	if r := se.skillsCall(t, http.MethodPut, "/skills/"+d.Skill.Name, api.SkillSave{Markdown: d.Markdown}); r.Status != http.StatusOK {
		t.Fatalf("save: HTTP %d %s", r.Status, r.Body)
	}
	u.open(page)
	r = se.skillsCall(t, http.MethodPost, "/skills/"+d.Skill.Name+"/run", skills.RunRequest{Params: map[string]string{"search_contacts": "Hopper"}})
	var res skills.RunResult
	if err := json.Unmarshal(r.Body, &res); err != nil || res.Status != "succeeded" {
		t.Fatalf("replay: HTTP %d %s", r.Status, r.Body)
	}
	var title string
	u.eval(`document.getElementById("title").textContent`, &title)
	if title != "Results for Hopper" {
		t.Fatalf("replay landed on %q", title)
	}

	// Shutting the service down leaves no capture script behind in the user's tab.
	if r := se.skillsCall(t, http.MethodPost, "/skills/record/start", map[string]string{"tab": tab.TargetID}); r.Status != http.StatusOK {
		t.Fatalf("record/start: HTTP %d %s", r.Status, r.Body)
	}
	var installed string
	u.eval(`typeof window.__tabrelayRec`, &installed)
	if installed != "object" {
		t.Fatalf("capture script not installed: %s", installed)
	}
	if err := se.svc.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	u.eval(`typeof window.__tabrelayRec + "/" + typeof window.__tabrelayRecord`, &installed)
	if installed != "undefined/undefined" || len(se.svc.Recordings()) != 0 {
		t.Fatalf("after Close: %s, %d recordings", installed, len(se.svc.Recordings()))
	}
}
