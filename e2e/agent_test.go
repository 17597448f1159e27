package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/tabrelay/tabrelay/agent/api"
	"github.com/tabrelay/tabrelay/agent/llmtest"
	"github.com/tabrelay/tabrelay/agent/task"
	"github.com/tabrelay/tabrelay/internal/browser"
	"github.com/tabrelay/tabrelay/internal/testlimit"
)

// TestAgent drives the agent through its HTTP API on real Chromium with the real extension:
// with no model (API errors, the fast path on 40+ phrasings, the CLI), then with the model
// played by a real OpenAI-protocol server, then by an Anthropic-protocol one, restarting the
// relay and agent on the same home in between (task history must survive).
func TestAgent(t *testing.T) {
	began := time.Now()
	ae := startAgentEnv(t, api.Options{})
	mail := ae.share(t, ae.site.URL("/agent/mail.html"))
	controls := ae.share(t, ae.site.URL("/agent/controls.html"))
	t.Logf("environment ready in %v", time.Since(began).Round(time.Millisecond))

	t.Run("API", func(t *testing.T) { testAPI(t, ae, controls) })
	t.Run("FastPath", func(t *testing.T) { testFastPath(t, ae, controls, mail) })
	t.Run("CLI/Ordinals", func(t *testing.T) { testCLIOrdinals(t, ae) })
	t.Run("CLI/Compound", func(t *testing.T) { testCLICompound(t, ae) })
	fastTasks := ae.call(t, http.MethodGet, "/api/tasks?limit=1000", nil)
	if fastTasks.Status != http.StatusOK {
		t.Fatalf("GET /api/tasks: HTTP %d %s", fastTasks.Status, fastTasks.Body)
	}
	var before api.TaskList
	if err := json.Unmarshal(fastTasks.Body, &before); err != nil {
		t.Fatal(err)
	}
	if t.Failed() {
		return
	}

	// with the model played by a real OpenAI-protocol server; the relay and agent restart on
	// the same home first, so the fast-path tasks above must come back as history
	shop := ae.share(t, ae.site.URL("/agent/shop.html"))
	oa := llmtest.NewOpenAI(t)
	ae.restart(t, api.Options{Model: oa.Model(t), ModelName: "openai/test"}, mail, controls, shop)
	t.Run("HistoryAfterRestart", func(t *testing.T) { testHistory(t, ae, before.Tasks) })
	var openaiTask string
	t.Run("OpenAI/MultiStep", func(t *testing.T) { openaiTask = testMultiStep(t, ae, oa, shop, false) })
	t.Run("OpenAI/ToolError", func(t *testing.T) { testToolError(t, ae, oa, shop) })
	t.Run("OpenAI/Cancel", func(t *testing.T) { testCancel(t, ae, oa) })
	t.Run("OpenAI/ConfirmRefused", func(t *testing.T) { testRefuse(t, ae, oa, shop) })
	t.Run("CLI", func(t *testing.T) { testCLI(t, ae, oa, shop, controls) })
	t.Run("PromptSize", func(t *testing.T) { testPromptSize(t, ae, oa, shop) })
	if oa.Remaining() != 0 {
		t.Errorf("%d scripted OpenAI replies unused", oa.Remaining())
	}

	// the same multi-step task with an Anthropic-protocol server, after another restart
	an := llmtest.NewAnthropic(t)
	// (streaming on, as `tabrelay serve` runs it)
	ae.restart(t, api.Options{Model: an.Model(t), ModelName: "anthropic/test", Stream: true}, mail, controls, shop)
	t.Run("Anthropic/MultiStep", func(t *testing.T) {
		if openaiTask != "" {
			tk := ae.getTask(t, openaiTask)
			if tk.Status != task.StatusSucceeded || len(tk.Steps) != 5 || tk.Model != "openai/test" {
				t.Errorf("the OpenAI task after the restart: %s, %d steps, model %q", tk.Status, len(tk.Steps), tk.Model)
			}
		}
		testMultiStep(t, ae, an, shop, true)
	})
	t.Logf("TestAgent took %v", time.Since(began).Round(time.Millisecond))
}

// testHistory checks that the tasks listed before the restart are listed after it, with their
// status and steps, and that paging works.
func testHistory(t *testing.T, ae *agentEnv, before []*task.Task) {
	r := ae.call(t, http.MethodGet, "/api/tasks?limit=1000", nil)
	var after api.TaskList
	if r.Status != http.StatusOK || json.Unmarshal(r.Body, &after) != nil {
		t.Fatalf("GET /api/tasks after the restart: HTTP %d %s", r.Status, r.Body)
	}
	if len(before) < 40 || len(after.Tasks) != len(before) {
		t.Fatalf("%d tasks before the restart, %d after", len(before), len(after.Tasks))
	}
	for i := range before {
		b, a := before[i], after.Tasks[i]
		if a.ID != b.ID || a.Status != b.Status || a.Goal != b.Goal || len(a.Steps) != len(b.Steps) || a.Answer != b.Answer {
			t.Errorf("task %d: before %s %s %q %d steps, after %s %s %q %d steps", i, b.ID, b.Status, b.Goal, len(b.Steps), a.ID, a.Status, a.Goal, len(a.Steps))
		}
	}
	r = ae.call(t, http.MethodGet, "/api/tasks?limit=5&offset=5", nil)
	var page api.TaskList
	if json.Unmarshal(r.Body, &page) != nil || len(page.Tasks) != 5 || page.Tasks[0].ID != before[5].ID || page.NextOffset != 10 {
		t.Errorf("page 2 of 5: HTTP %d, %d tasks, next %d", r.Status, len(page.Tasks), page.NextOffset)
	}
	tk := ae.getTask(t, before[len(before)-1].ID)
	if tk.ID != before[len(before)-1].ID {
		t.Errorf("GET the oldest task after the restart: %+v", tk)
	}
}

// testAPI checks the read and act endpoints and that bad input gets a clear 4xx.
func testAPI(t *testing.T, ae *agentEnv, controls browser.Tab) {
	// tabs: most recently shared first
	r := ae.call(t, http.MethodGet, "/api/tabs", nil)
	var tabs struct {
		Tabs []struct {
			TargetID, URL, Title string
		} `json:"tabs"`
	}
	if r.Status != http.StatusOK || json.Unmarshal(r.Body, &tabs) != nil || len(tabs.Tabs) < 2 || tabs.Tabs[0].TargetID != controls.TargetID {
		t.Fatalf("GET /api/tabs: HTTP %d %s (want the controls tab first)", r.Status, r.Body)
	}

	// snapshot: text by default (of the most recent tab), JSON on request, options honoured
	r = ae.call(t, http.MethodGet, "/api/snapshot", nil)
	if r.Status != http.StatusOK || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/plain") ||
		!strings.Contains(string(r.Body), `button "Sign in" [ref=`) {
		t.Fatalf("GET /api/snapshot: HTTP %d %s\n%s", r.Status, r.Header.Get("Content-Type"), r.Body)
	}
	full := len(r.Body)
	r = ae.call(t, http.MethodGet, "/api/snapshot?format=json&interactive=true&tab="+controls.TargetID, nil)
	snap := r.JSON(t)
	if r.Status != http.StatusOK || snap["refs"].(float64) < 10 || strings.Contains(snap["text"].(string), "End of the page") {
		t.Fatalf("interactive JSON snapshot: HTTP %d %v", r.Status, snap)
	}
	r = ae.call(t, http.MethodGet, "/api/snapshot?maxChars=300", nil)
	if r.Status != http.StatusOK || len(r.Body) >= full || len(r.Body) > 600 {
		t.Fatalf("maxChars=300 gave %d bytes (full: %d): %s", len(r.Body), full, r.Body)
	}

	// act: the wrapped form and the bare Action with ?tab=, checked on the page itself
	ref := refOf2(string(ae.call(t, http.MethodGet, "/api/snapshot", nil).Body), "button", "Sign in")
	ae.pageEval(t, controls, "window.log = [], true", nil)
	r = ae.call(t, http.MethodPost, "/api/act", map[string]any{"action": map[string]any{"kind": "click", "ref": ref}})
	if r.Status != http.StatusOK {
		t.Fatalf("POST /api/act click %s: HTTP %d %s", ref, r.Status, r.Body)
	}
	r = ae.call(t, http.MethodPost, "/api/act?tab="+controls.TargetID, map[string]any{"kind": "click", "ref": ref})
	if r.Status != http.StatusOK {
		t.Fatalf("POST /api/act?tab= click %s: HTTP %d %s", ref, r.Status, r.Body)
	}
	var log []string
	ae.pageEval(t, controls, "window.log", &log)
	if strings.Join(log, ",") != "click:signin,click:signin" {
		t.Fatalf("after two clicks on Sign in the page logged %v", log)
	}
	r = ae.call(t, http.MethodPost, "/api/act", map[string]any{"kind": "evaluate", "expression": "document.title"})
	if res := r.JSON(t); r.Status != http.StatusOK || fmt.Sprint(res["value"]) != "Agent controls" {
		t.Fatalf("evaluate: HTTP %d %s", r.Status, r.Body)
	}

	// screenshot: a PNG
	r = ae.call(t, http.MethodGet, "/api/screenshot?labels=true", nil)
	if r.Status != http.StatusOK || r.Header.Get("Content-Type") != "image/png" || !strings.HasPrefix(string(r.Body), "\x89PNG") {
		t.Fatalf("GET /api/screenshot: HTTP %d %s, %d bytes", r.Status, r.Header.Get("Content-Type"), len(r.Body))
	}

	// bad input: each gets a clear 4xx JSON error
	bad := []struct {
		name, method, path string
		body               any
		status             int
		want               []string
	}{
		{"unknown tab (snapshot)", "GET", "/api/snapshot?tab=NOSUCHTAB", nil, 404, []string{`"NOSUCHTAB"`, "not a shared tab"}},
		{"unknown tab (act)", "POST", "/api/act", map[string]any{"tab": "NOSUCHTAB", "action": map[string]any{"kind": "click", "ref": "e1"}}, 404, []string{"NOSUCHTAB"}},
		{"unknown tab (screenshot)", "GET", "/api/screenshot?tab=NOSUCHTAB", nil, 404, []string{"NOSUCHTAB"}},
		{"unknown tab (command)", "POST", "/api/command", map[string]any{"text": "scroll down", "tab": "NOSUCHTAB"}, 404, []string{"NOSUCHTAB"}},
		{"unknown ref", "POST", "/api/act", map[string]any{"kind": "click", "ref": "e9999"}, 400, []string{"e9999"}},
		{"bad kind", "POST", "/api/act", map[string]any{"kind": "explode", "ref": "e1"}, 400, []string{`unknown action kind "explode"`, "click", "navigate"}},
		{"no kind", "POST", "/api/act", map[string]any{"ref": "e1"}, 400, []string{"no kind", "click"}},
		{"type without text", "POST", "/api/act", map[string]any{"kind": "type", "ref": ref}, 400, []string{"type needs text"}},
		{"click without ref", "POST", "/api/act", map[string]any{"kind": "click"}, 400, []string{"click needs ref"}},
		{"unknown field", "POST", "/api/act", map[string]any{"kind": "click", "ref": ref, "rfe": "x"}, 400, []string{`unknown field "rfe"`}},
		{"malformed JSON", "POST", "/api/act", `{"kind":`, 400, []string{"not a JSON object"}},
		{"empty body", "POST", "/api/act", ``, 400, []string{"send a JSON object"}},
		{"bad maxChars", "GET", "/api/snapshot?maxChars=lots", nil, 400, []string{"maxChars"}},
		{"bad format", "GET", "/api/snapshot?format=xml", nil, 400, []string{"text", "json"}},
		{"command without text", "POST", "/api/command", map[string]any{"text": "  "}, 400, []string{"no text"}},
		{"task without goal", "POST", "/api/tasks", map[string]any{"goal": ""}, 400, []string{"no goal"}},
		{"task without model", "POST", "/api/tasks", map[string]any{"goal": "buy a kettle"}, 503, []string{"TABRELAY_LLM_PROVIDER"}},
		{"unknown task", "GET", "/api/tasks/nosuchtask", nil, 404, []string{`"nosuchtask"`}},
		{"unknown task events", "GET", "/api/tasks/nosuchtask/events", nil, 404, []string{"nosuchtask"}},
		{"cancel unknown task", "POST", "/api/tasks/nosuchtask/cancel", nil, 404, []string{"nosuchtask"}},
		{"report format", "GET", "/api/tasks/nosuchtask/report?format=pdf", nil, 400, []string{"json, csv or markdown"}},
		{"bad paging", "GET", "/api/tasks?limit=0", nil, 400, []string{"limit"}},
	}
	for _, c := range bad {
		r := ae.call(t, c.method, c.path, c.body)
		var e api.ErrorBody
		if r.Status != c.status || json.Unmarshal(r.Body, &e) != nil || e.Error == "" {
			t.Errorf("%s: HTTP %d %s, want %d with a JSON error", c.name, r.Status, r.Body, c.status)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(e.Error, w) {
				t.Errorf("%s: error %q does not mention %q", c.name, e.Error, w)
			}
		}
		if c.name == "bad kind" && len(e.Kinds) < 20 {
			t.Errorf("bad kind: the answer lists %d kinds, want all of them", len(e.Kinds))
		}
		if strings.HasPrefix(c.name, "unknown tab") && e.Tab != "NOSUCHTAB" {
			t.Errorf("%s: the answer's tab is %q", c.name, e.Tab)
		}
	}
	// without the secret: 401 and no tab data
	resp, err := http.Get(ae.httpURL() + "/api/tabs")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("GET /api/tabs without the secret: HTTP %d, want 401", resp.StatusCode)
	}
	// nothing in the bad cases touched the page
	ae.pageEval(t, controls, "window.log", &log)
	if len(log) != 2 {
		t.Errorf("bad requests changed the page: log %v", log)
	}
}

// refOf2 finds the ref of `role "name"` in a snapshot text.
func refOf2(snap, role, name string) string {
	// the outline's line of the element (the header's summary names elements too, with bare refs)
	for line := range strings.Lines(snap) {
		if !strings.Contains(line, role+` "`+name+`"`) {
			continue
		}
		if _, after, ok := strings.Cut(line, "[ref="); ok {
			ref, _, _ := strings.Cut(after, "]")
			return ref
		}
	}
	return ""
}

// fastCase is one command for the fast path with its effect on the page.
type fastCase struct {
	cmd   string
	setup string // JavaScript run on the controls tab first
	check string // JavaScript on the controls tab that must be true afterwards
	// answer, when set, must appear in the task's answer
	answer string
}

// testFastPath runs 40+ phrasings through POST /api/command with no model configured and
// checks each effect on the page; ambiguous or complex ones must be handed to the model (here:
// the "configure a model" answer) and leave the page alone.
func testFastPath(t *testing.T, ae *agentEnv, controls, mail browser.Tab) {
	snap := string(ae.call(t, http.MethodGet, "/api/snapshot?tab="+controls.TargetID, nil).Body)
	googleRef := refOf2(snap, "button", "Sign up with Google")
	if googleRef == "" {
		t.Fatalf("no ref for the Google button in:\n%s", snap)
	}
	const reset = "window.log = []; "
	const top = "document.activeElement && document.activeElement.blur(); window.scrollTo(0, 0); "
	val := func(id, v string) string { return fmt.Sprintf("document.getElementById(%q).value === %q", id, v) }
	logged := func(s string) string { return fmt.Sprintf("window.log.includes(%q)", s) }
	cases := []fastCase{
		{cmd: "hover over home", check: logged("hover:home")},
		{cmd: "click sign in", check: logged("click:signin")},
		{cmd: "Click Sign In.", check: logged("click:signin")},
		{cmd: "press the sign in button", check: logged("click:signin")},
		{cmd: "tap sign in", check: logged("click:signin")},
		{cmd: "please click the google button", check: logged("click:google")},
		{cmd: "click " + googleRef, check: logged("click:google")},
		{cmd: "click the home link", check: logged("click:home")},
		{cmd: "click read more", check: logged("click:readmore")},
		{cmd: "click the email field", check: "document.activeElement.id === 'email'"},
		{cmd: "type hello in the search box", check: val("search", "hello")},
		{cmd: "Type Ada Lovelace into full name", check: val("fullname", "Ada Lovelace")},
		{cmd: "enter ada@example.com in the email field", check: val("email", "ada@example.com")},
		{cmd: `type "two words" in search`, check: val("search", "two words")},
		{cmd: "fill email with bob@example.org", check: val("email", "bob@example.org")},
		{cmd: "search for blue kettles", check: logged("submit:search=blue kettles")},
		// Enter lands on the search field, whose form has no buttons: the safety gate judges Enter
		// in a field by the buttons of its form, else of the nearest container with buttons, and
		// for "Full name" (in no form) that is the page's "Place order" and "Delete" (risky words),
		// so Enter there waits for the user's confirmation by design.
		{cmd: "press enter", setup: "document.getElementById('search').focus(); ", check: logged("key:Enter")},
		{cmd: "hit escape", check: logged("key:Escape")},
		{cmd: "press the tab key", check: logged("key:Tab")},
		{cmd: "press ctrl+a", check: logged("key:Control+a")},
		{cmd: "check remember me", check: "document.getElementById('remember').checked"},
		{cmd: "tick the newsletter box", check: "document.getElementById('newsletter').checked"},
		{cmd: "uncheck weekly newsletter", check: "!document.getElementById('newsletter').checked"},
		{cmd: "uncheck remember me", check: "!document.getElementById('remember').checked"},
		{cmd: "select Blue in color", check: val("color", "blue")},
		{cmd: "choose red from the color dropdown", check: val("color", "red")},
		{cmd: "select green in color", check: val("color", "green")},
		{cmd: "scroll down", setup: top, check: "window.scrollY > 100"},
		{cmd: "scroll to the bottom of the page", setup: top, check: "window.scrollY + window.innerHeight >= document.documentElement.scrollHeight - 5"},
		{cmd: "scroll up a bit", setup: "window.__y = window.scrollY; ", check: "window.scrollY < window.__y"},
		{cmd: "scroll to the top of the page", check: "window.scrollY === 0"},
		{cmd: "page down", setup: top, check: "window.scrollY > 100"},
		{cmd: "what is on this page?", answer: "Agent controls"},
		{cmd: "What's on the page", answer: "Controls:"},
	}
	var lat, stepLat []time.Duration
	run := func(c fastCase) (map[string]any, bool) {
		t.Helper()
		start := time.Now()
		r := ae.call(t, http.MethodPost, "/api/command", map[string]any{"text": c.cmd})
		took := time.Since(start)
		res := r.JSON(t)
		if r.Status != http.StatusOK || res["fastPath"] != true || res["status"] != "succeeded" {
			t.Errorf("%q: HTTP %d fastPath=%v status=%v error=%v", c.cmd, r.Status, res["fastPath"], res["status"], res["error"])
			return res, false
		}
		lat = append(lat, took)
		if steps, _ := res["steps"].([]any); len(steps) > 0 {
			ms, _ := steps[len(steps)-1].(map[string]any)["durationMs"].(float64)
			stepLat = append(stepLat, time.Duration(ms)*time.Millisecond)
		}
		return res, true
	}
	for _, c := range cases {
		ae.pageEval(t, controls, reset+c.setup+"true", nil)
		res, ok := run(c)
		if !ok {
			continue
		}
		if c.check != "" {
			var good bool
			// effects such as smooth scrolling land a moment after the action returns
			for deadline := time.Now().Add(testlimit.Scale(2 * time.Second)); ; time.Sleep(50 * time.Millisecond) {
				ae.pageEval(t, controls, "!!("+c.check+")", &good)
				if good || time.Now().After(deadline) {
					break
				}
			}
			if !good {
				var log []string
				ae.pageEval(t, controls, "window.log", &log)
				t.Errorf("%q: the page does not show the effect (%s); page log %v; task answer %v", c.cmd, c.check, log, res["answer"])
			}
		}
		if c.answer != "" && !strings.Contains(fmt.Sprint(res["answer"]), c.answer) {
			t.Errorf("%q: answer %q does not mention %q", c.cmd, res["answer"], c.answer)
		}
	}
	n := len(cases)

	// navigation, checked by where the tab is
	where := func() string {
		var p string
		ae.pageEval(t, controls, "location.pathname", &p)
		return p
	}
	loads := func() string {
		var s string
		ae.pageEval(t, controls, "sessionStorage.loads", &s)
		return s
	}
	page2 := ae.site.URL("/agent/page2.html")
	for _, c := range []struct{ cmd, want string }{
		{"go to " + page2, "/agent/page2.html"},
		{"go back", "/agent/controls.html"},
		{"go forward", "/agent/page2.html"},
		{"Back!", "/agent/controls.html"},
	} {
		n++
		if _, ok := run(fastCase{cmd: c.cmd}); ok {
			eventually(t, 5*time.Second, c.cmd+" reaches "+c.want, func() (bool, string) { p := where(); return p == c.want, p })
		}
	}
	before := loads()
	n++
	if _, ok := run(fastCase{cmd: "refresh the page"}); ok {
		eventually(t, 5*time.Second, "the page reloads", func() (bool, string) { l := loads(); return l != before && l != "", l })
	}

	// tabs, checked by the relay's own tab list (most recently shared or focused first)
	first := func() string {
		tabs := ae.srv.Hub().Tabs()
		if len(tabs) == 0 {
			return ""
		}
		return tabs[0].Title
	}
	newURL := ae.site.URL("/agent/page2.html?tab=new")
	n++
	if _, ok := run(fastCase{cmd: "open " + newURL + " in a new tab"}); ok {
		eventually(t, 5*time.Second, "the new tab is shared", func() (bool, string) {
			for _, tab := range ae.srv.Hub().Tabs() {
				if tab.URL == newURL {
					return true, ""
				}
			}
			return false, fmt.Sprint(ae.srv.Hub().Tabs())
		})
	}
	active := func(tab browser.Tab) bool {
		var ok bool
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := ae.b.ServiceWorkerEval(ctx, fmt.Sprintf("chrome.tabs.get(%d).then(t => t.active)", tab.TabID), &ok); err != nil {
			t.Fatal(err)
		}
		return ok
	}
	for _, c := range []struct {
		cmd  string
		want browser.Tab
	}{
		{"switch to the inbox tab", mail},
		{"switch to the agent controls tab", controls},
	} {
		n++
		if _, ok := run(fastCase{cmd: c.cmd}); ok {
			eventually(t, 5*time.Second, c.cmd, func() (bool, string) { return active(c.want), "not the active tab; relay's first: " + first() })
		}
	}
	n++
	if _, ok := run(fastCase{cmd: "close the second page tab"}); ok {
		eventually(t, 5*time.Second, "the opened tab is closed", func() (bool, string) {
			for _, tab := range ae.srv.Hub().Tabs() {
				if tab.URL == newURL {
					return false, "still listed"
				}
			}
			return true, ""
		})
	}

	// a fast-path step that needs confirmation waits for it like a model's step
	n++
	ae.pageEval(t, controls, reset+"true", nil)
	r := ae.call(t, http.MethodPost, "/api/command", map[string]any{"text": "click place order"})
	res := r.JSON(t)
	if r.Status != http.StatusAccepted || res["status"] != "waiting_confirmation" {
		t.Errorf("click place order: HTTP %d %s; want 202 waiting_confirmation", r.Status, r.Body)
	} else {
		var log []string
		ae.pageEval(t, controls, "window.log", &log)
		if len(log) != 0 {
			t.Errorf("the order was placed before the user confirmed: %v", log)
		}
		id := res["id"].(string)
		steps := res["steps"].([]any)
		stepID := steps[len(steps)-1].(map[string]any)["id"].(string)
		if r := ae.call(t, http.MethodPost, "/api/tasks/"+id+"/confirm", map[string]any{"stepId": stepID, "approve": true}); r.Status != http.StatusOK {
			t.Errorf("confirm: HTTP %d %s", r.Status, r.Body)
		}
		eventually(t, 5*time.Second, "the confirmed order is placed", func() (bool, string) {
			var log []string
			ae.pageEval(t, controls, "window.log", &log)
			return slices.Contains(log, "click:order"), fmt.Sprint(log)
		})
	}

	// "approve": true approves such a step beforehand: it runs at once, the approval recorded
	n++
	ae.pageEval(t, controls, reset+"true", nil)
	r = ae.call(t, http.MethodPost, "/api/command", map[string]any{"text": "click place order", "approve": true})
	res = r.JSON(t)
	if r.Status != http.StatusOK || res["status"] != "succeeded" {
		t.Errorf("click place order, approved: HTTP %d %s; want 200 succeeded", r.Status, r.Body)
	} else {
		var log []string
		ae.pageEval(t, controls, "window.log", &log)
		steps := res["steps"].([]any)
		conf, _ := steps[len(steps)-1].(map[string]any)["confirmation"].(map[string]any)
		if !slices.Contains(log, "click:order") || conf == nil || conf["approved"] != true {
			t.Errorf("approved order: page log %v, step confirmation %v; want click:order and approved", log, conf)
		}
	}

	// ambiguous, unknown or complex: handed to the model, which is not configured; never guessed
	handed := []string{
		"click delete",            // two Delete buttons
		"click add",               // two Add to cart buttons
		"type hello",              // several text fields
		"click sign",              // Sign in, Sign up with Google
		"click the purple button", // nothing fits
		"find the cheapest kettle and add it to my cart",
		"book a flight to Paris and pay with my card",
	}
	for _, cmd := range handed {
		n++
		ae.pageEval(t, controls, reset+"window.__v = [...document.querySelectorAll('input,select')].map(e => e.value + e.checked).join(); true", nil)
		r := ae.call(t, http.MethodPost, "/api/command", map[string]any{"text": cmd})
		var e api.ErrorBody
		if r.Status != http.StatusServiceUnavailable || json.Unmarshal(r.Body, &e) != nil || !e.NeedsModel ||
			!strings.Contains(e.Error, "TABRELAY_LLM_PROVIDER") {
			t.Errorf("%q: HTTP %d %s; want 503 with the configure-a-model message", cmd, r.Status, r.Body)
			continue
		}
		var untouched bool
		ae.pageEval(t, controls, "window.log.length === 0 && window.__v === [...document.querySelectorAll('input,select')].map(e => e.value + e.checked).join()", &untouched)
		if !untouched {
			t.Errorf("%q was handed to the model but the page changed", cmd)
		}
		if cmd == "click delete" && !strings.Contains(e.Error, "2 elements match") {
			t.Errorf("%q: the answer does not say which elements fit: %s", cmd, e.Error)
		}
	}
	if n < 40 {
		t.Errorf("only %d phrasings", n)
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	sort.Slice(stepLat, func(i, j int) bool { return stepLat[i] < stepLat[j] })
	var snapLat []time.Duration
	for range 10 {
		start := time.Now()
		ae.call(t, http.MethodGet, "/api/snapshot?tab="+controls.TargetID, nil)
		snapLat = append(snapLat, time.Since(start))
	}
	sort.Slice(snapLat, func(i, j int) bool { return snapLat[i] < snapLat[j] })
	if len(stepLat) > 0 {
		t.Logf("fast path breakdown: the action step itself (act + observation) median %v; one GET /api/snapshot of the page median %v",
			stepLat[len(stepLat)/2], snapLat[len(snapLat)/2].Round(time.Millisecond))
	}
	if len(lat) > 0 {
		t.Logf("fast path: %d phrasings (%d executed, %d handed to the model); latency request→action done: median %v, p90 %v, max %v",
			n, len(lat), len(handed), lat[len(lat)/2].Round(time.Millisecond), lat[len(lat)*9/10].Round(time.Millisecond), lat[len(lat)-1].Round(time.Millisecond))
	}
}
