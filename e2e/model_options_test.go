package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tabrelay/tabrelay/agent/api"
	"github.com/tabrelay/tabrelay/agent/llm"
	"github.com/tabrelay/tabrelay/agent/llmtest"
	"github.com/tabrelay/tabrelay/internal/browser"
	"github.com/tabrelay/tabrelay/relay"
)

// fakeEnviron is a server environment the test can change: what llm.Source reads as the
// process environment.
type fakeEnviron struct {
	mu   sync.Mutex
	vars map[string]string
}

func (f *fakeEnviron) lookup(k string) (string, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	v, ok := f.vars[k]
	return v, ok
}

func (f *fakeEnviron) set(k, v string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.vars[k] = v
}

// startModelEnv starts the server with no model and the model settings of the options page
// (as `tabrelay serve` with no model variables set), the real extension paired, and one shared
// fixture tab; it returns the side panel opened as a tab about that tab.
func startModelEnv(t *testing.T, environ *fakeEnviron) (*panelEnv, *llm.Source) {
	t.Helper()
	models := &llm.Source{Lookup: environ.lookup, Switch: &llm.Switch{}}
	ae := startAgentEnvWith(t, api.Options{Model: models.Switch, Models: models}, relay.HubOptions{})
	models.Home = ae.home // the server's home, known once the environment runs; no route was called yet
	if _, err := models.Load(context.Background()); err == nil {
		t.Fatal("a model is configured before one was chosen")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	page := ae.share(t, ae.site.URL("/?client=model-options"))
	panel, err := ae.b.NewWindowTab(ctx, fmt.Sprintf("chrome-extension://%s/sidepanel.html?tabId=%d", ae.b.ExtensionID, page.TabID))
	if err != nil {
		t.Fatal(err)
	}
	return &panelEnv{agentEnv: ae, page: page, panel: panel}, models
}

// TestModelChosenInOptions: with no model, the side panel says before anything is sent that
// only simple commands run and where to choose a model, and a request that needs one fails in
// one sentence that links there. In the options page the person picks a provider, model, base
// URL and key (a local OpenAI-compatible server); Test makes one real call and says what it
// answered; Save keeps the key in the server's home readable by its owner only and never shows
// it again (its last four characters at most); the very next request in the side panel uses
// that model with that key, with no restart. A variable in the server's environment that
// overrides the choice is named on the page.
func TestModelChosenInOptions(t *testing.T) {
	environ := &fakeEnviron{vars: map[string]string{}}
	pe, models := startModelEnv(t, environ)
	ctx, cancel := context.WithTimeout(context.Background(), 180*time.Second)
	defer cancel()

	pe.waitText(t, "model-hint", "No language model yet: only simple commands run", 20*time.Second)
	var placeholder string
	pe.js(t, `document.getElementById('request').placeholder`, &placeholder)
	if !strings.HasPrefix(placeholder, "A simple command") {
		t.Errorf("with no model, the request box suggests %q", placeholder)
	}
	pe.ask(t, "compare the kettles and buy the cheapest")
	ans := pe.waitText(t, "answer", "needs a language model", 30*time.Second)
	if strings.Contains(ans, "\n") || strings.Contains(ans, "TABRELAY_LLM") || !strings.Contains(ans, "choose a model in Settings") {
		t.Errorf("the no-model answer is not one line naming where to choose a model:\n%s", ans)
	}
	var href string
	pe.js(t, `document.querySelector('#answer a')?.href ?? ''`, &href)
	if href != fmt.Sprintf("chrome-extension://%s/options.html#model", pe.b.ExtensionID) {
		t.Errorf("the no-model answer links to %q", href)
	}
	pageShot(t, ctx, pe.b, pe.panel, 400, 860, "sidepanel-no-model")

	model := llmtest.NewOpenAI(t, llmtest.Text("ready"))
	const key = "sk-e2e-options-key-9876"
	opts, err := pe.b.NewTab(ctx, fmt.Sprintf("chrome-extension://%s/options.html#model", pe.b.ExtensionID))
	if err != nil {
		t.Fatal(err)
	}
	var active string
	eventually(t, 20*time.Second, "the options page reads the model settings", func() (bool, string) {
		active = pageText(t, ctx, pe.b, opts, "model-active")
		return strings.HasPrefix(active, "No model in use"), active
	})
	// nothing chosen anywhere: the page says what to do on it, not the server's general advice
	// (which sends the person to the page they are on, and lists environment variables)
	if !strings.HasPrefix(active, "No model in use yet: choose a provider below") || strings.Contains(active, "TABRELAY_LLM") || strings.Contains(active, "options page") {
		t.Errorf("with no model chosen anywhere, the options page says: %q", active)
	}
	fill := fmt.Sprintf(`(() => { const set = (id, v) => { const e = document.getElementById(id); e.value = v; e.dispatchEvent(new Event('input', {bubbles: true})); e.dispatchEvent(new Event('change', {bubbles: true})); };
		set('model-provider', 'openai-compatible'); set('model-name', 'tiny'); set('model-base', %q); set('model-key', %q); return true; })()`, model.URL, key)
	if err := pe.b.PageEval(ctx, opts, fill, nil); err != nil {
		t.Fatal(err)
	}
	// openai-compatible has no endpoint of its own: the base URL is needed, not optional
	if note := pageText(t, ctx, pe.b, opts, "model-base-note"); !strings.Contains(note, "needed") || strings.Contains(note, "leave empty") {
		t.Errorf("for openai-compatible the base URL's label says %q", note)
	}
	// Test with the base URL left empty names that field, not every environment variable
	if err := pe.b.PageEval(ctx, opts, `(() => { const e = document.getElementById('model-base'); e.value = ''; return true; })()`, nil); err != nil {
		t.Fatal(err)
	}
	realClick(t, ctx, pe.b, opts, "#model-test")
	eventually(t, 20*time.Second, "Test names the empty base URL", func() (bool, string) {
		s := pageText(t, ctx, pe.b, opts, "model-result")
		return s == "Not tried yet: fill in the base URL first.", s
	})
	if err := pe.b.PageEval(ctx, opts, fmt.Sprintf(`(() => { document.getElementById('model-base').value = %q; return true; })()`, model.URL), nil); err != nil {
		t.Fatal(err)
	}
	realClick(t, ctx, pe.b, opts, "#model-test")
	eventually(t, 45*time.Second, "Test says what the model answered", func() (bool, string) {
		s := pageText(t, ctx, pe.b, opts, "model-result")
		return strings.HasPrefix(s, "It works: openai-compatible/tiny at "+model.URL) && strings.Contains(s, "answered “ready”"), s
	})
	if got := model.LastRequest().Header.Get("Authorization"); got != "Bearer "+key {
		t.Errorf("the test call carried Authorization %q", got)
	}
	if llm.Ready(models.Switch) {
		t.Fatal("Test applied the settings without Save")
	}
	realClick(t, ctx, pe.b, opts, "#model-save")
	eventually(t, 20*time.Second, "Save says the next request uses the model", func() (bool, string) {
		s := pageText(t, ctx, pe.b, opts, "model-result")
		return strings.HasPrefix(s, "Saved: the next request uses openai-compatible/tiny"), s
	})
	var html string
	if err := pe.b.PageEval(ctx, opts, `document.documentElement.outerHTML + [...document.querySelectorAll('input')].map((i) => i.value).join(' ')`, &html); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(html, key) {
		t.Error("the options page shows the saved key again")
	}
	if hint := pageText(t, ctx, pe.b, opts, "model-key-hint"); !strings.Contains(hint, "ending 9876") {
		t.Errorf("the key hint: %q", hint)
	}
	fi, err := os.Stat(filepath.Join(pe.home, llm.SettingsFile))
	if err != nil || (runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600) {
		t.Fatalf("the saved settings: %v %v", fi, err)
	}
	pageShot(t, ctx, pe.b, opts, 1000, 1800, "options-model")

	// the next request uses it: no restart
	pe.waitText(t, "model-hint", "Model: openai-compatible/tiny", 20*time.Second)
	pe.js(t, `document.getElementById('request').placeholder`, &placeholder)
	if !strings.Contains(placeholder, "find the cheapest kettle") {
		t.Errorf("with a model, the request box suggests %q", placeholder)
	}
	before := model.Calls()
	model.Push(llmtest.ToolCall("finish", `{"answer":"Hello from the model chosen in the options page."}`))
	pe.ask(t, "greet me in one sentence")
	pe.waitText(t, "answer", "Hello from the model chosen in the options page.", 60*time.Second)
	if model.Calls() <= before {
		t.Fatal("the request did not call the model chosen")
	}
	if got := model.LastRequest().Header.Get("Authorization"); got != "Bearer "+key {
		t.Errorf("the request carried Authorization %q", got)
	}
	pageShot(t, ctx, pe.b, pe.panel, 400, 860, "sidepanel-with-model")

	// an environment variable overrides the choice, and the page says so
	environ.set(llm.EnvModel, "from-the-environment")
	if err := pe.b.PageEval(ctx, opts, `(location.reload(), true)`, nil); err != nil {
		t.Fatal(err)
	}
	eventually(t, 20*time.Second, "the options page names the overriding variable", func() (bool, string) {
		s := pageText(t, ctx, pe.b, opts, "model-env")
		return strings.Contains(s, llm.EnvModel) && strings.Contains(s, "override"), s
	})
}

// TestPanelForgetsOtherTabsTask: the side panel follows the active tab; a request that failed
// in one tab is not shown once the person switches to another tab.
func TestPanelForgetsOtherTabsTask(t *testing.T) {
	ae := startAgentEnvWith(t, api.Options{}, relay.HubOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	other := ae.share(t, ae.site.URL("/other.html?client=panel-other"))
	first := ae.share(t, ae.site.URL("/?client=panel-first"))
	// the panel as a tab in a window of its own is about the most recently used web tab
	panel, err := ae.b.NewWindowTab(ctx, fmt.Sprintf("chrome-extension://%s/sidepanel.html", ae.b.ExtensionID))
	if err != nil {
		t.Fatal(err)
	}
	pe := &panelEnv{agentEnv: ae, page: first, panel: panel}
	activate := func(tab browser.Tab) {
		t.Helper()
		if err := ae.b.CDP.Call(ctx, "", "Target.activateTarget", map[string]any{"targetId": tab.TargetID}, nil); err != nil {
			t.Fatal(err)
		}
	}
	activate(first)
	pe.waitText(t, "tabstate", "This tab is shared", 20*time.Second)
	var about int
	pe.js(t, `tabrelayPanel.state.tabId`, &about)
	if about != first.TabID {
		t.Fatalf("the panel is about tab %d, want %d", about, first.TabID)
	}
	pe.ask(t, "compare the kettles and buy the cheapest")
	pe.waitText(t, "task-status", "failed", 30*time.Second)

	activate(other)
	eventually(t, 20*time.Second, "the panel follows the switch and drops the other tab's failed task", func() (bool, string) {
		var s struct {
			Tab    int  `json:"tab"`
			Hidden bool `json:"hidden"`
		}
		pe.js(t, `({tab: tabrelayPanel.state.tabId, hidden: document.getElementById('task').hidden})`, &s)
		return s.Tab == other.TabID && s.Hidden, fmt.Sprintf("about tab %d, task hidden %v", s.Tab, s.Hidden)
	})
}
