package api_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/tabrelay/tabrelay/agent/api"
	"github.com/tabrelay/tabrelay/agent/llm"
	"github.com/tabrelay/tabrelay/agent/llmtest"
	"github.com/tabrelay/tabrelay/internal/app"
	"github.com/tabrelay/tabrelay/internal/secret"
	"github.com/tabrelay/tabrelay/relay"
	"github.com/tabrelay/tabrelay/relay/relaytest"
)

// TestModelRoutes: PUT /api/model saves the choice (the key in a file only its owner reads)
// and the next request that needs a model uses it, with no restart; no answer carries the key
// (GET shows its last four characters); the routes need the secret; the environment's
// variables are named as overriding; POST /api/model/test says what the model answered.
func TestModelRoutes(t *testing.T) {
	home := t.TempDir()
	store, err := secret.NewStore(home)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	env := map[string]string{"TABRELAY_LLM_VISION": "0"}
	models := &llm.Source{Home: home, Lookup: func(k string) (string, bool) { v, ok := env[k]; return v, ok }, Switch: &llm.Switch{}}
	if _, err := models.Load(ctx); err == nil {
		t.Fatal("a model is configured before any was chosen")
	}
	srv, err := app.Start(ctx, app.Config{
		Relay: relay.Options{Addr: "127.0.0.1:0", Secret: store},
		Agent: api.Options{Home: home, Model: models.Switch, Models: models},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	base, tok := srv.HTTPURL(), srv.Token()
	ext, err := relaytest.Dial(ctx, srv.Addr(), tok, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ext.Close)
	if err := ext.Share("AAAA1111BBBB2222CCCC3333DDDD4444", "https://example.com/", "Example"); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); len(srv.Hub().Tabs()) == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the simulated tab was not shared")
		}
	}

	if a := call(t, base, "", "GET", "/api/model", "", nil); a.status != 401 {
		t.Fatalf("GET /api/model without the secret: HTTP %d", a.status)
	}
	// with no model, a task says so in one sentence that names the options page
	a := call(t, base, tok, "POST", "/api/tasks", "application/json", []byte(`{"goal":"compare the kettles"}`))
	if e := a.errorBody(t); a.status != 503 || !e.NeedsModel || !strings.Contains(e.Error, "options page") || strings.Count(e.Error, "no language model") != 1 {
		t.Fatalf("a task with no model: HTTP %d %s", a.status, a.body)
	}

	// incomplete settings name the field to fill in
	for _, c := range []struct{ body, missing string }{
		{`{"provider":"openai-compatible","model":"tiny"}`, llm.MissingBaseURL},
		{`{"provider":"openai-compatible","baseUrl":"http://127.0.0.1:1/v1"}`, llm.MissingModel},
		{`{"provider":"openai"}`, llm.MissingAPIKey},
	} {
		a := call(t, base, tok, "POST", "/api/model/test", "application/json", []byte(c.body))
		var res api.ModelTestResult
		if a.status != 200 || json.Unmarshal(a.body, &res) != nil || res.OK || res.Missing != c.missing {
			t.Errorf("POST /api/model/test %s: HTTP %d %s; want missing %q", c.body, a.status, a.body, c.missing)
		}
	}

	model := llmtest.NewOpenAI(t, llmtest.Text("ready"))
	const key = "sk-test-secret-key-9876"
	body := `{"provider":"openai-compatible","model":"tiny","baseUrl":"` + model.URL + `","apiKey":"` + key + `"}`
	if a := call(t, base, tok, "POST", "/api/model/test", "application/json", []byte(body)); a.status != 200 || !strings.Contains(string(a.body), `"ok":true`) || !strings.Contains(string(a.body), `"reply":"ready"`) {
		t.Fatalf("POST /api/model/test: HTTP %d %s", a.status, a.body)
	}
	if got := model.LastRequest().Header.Get("Authorization"); got != "Bearer "+key {
		t.Errorf("the test call carried Authorization %q", got)
	}
	if llm.Ready(models.Switch) {
		t.Fatal("POST /api/model/test applied the settings")
	}
	a = call(t, base, tok, "PUT", "/api/model", "application/json", []byte(body))
	var st api.ModelState
	if a.status != 200 || json.Unmarshal(a.body, &st) != nil || st.KeyHint != "…9876" || !strings.Contains(st.Active, "openai-compatible/tiny") || st.Problem != "" {
		t.Fatalf("PUT /api/model: HTTP %d %s", a.status, a.body)
	}
	for _, b := range [][]byte{a.body, call(t, base, tok, "GET", "/api/model", "", nil).body} {
		if strings.Contains(string(b), key) || strings.Contains(string(b), "apiKey") {
			t.Fatalf("an answer carries the key: %s", b)
		}
	}
	fi, err := os.Stat(filepath.Join(home, llm.SettingsFile))
	if err != nil || (runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600) {
		t.Fatalf("settings file: %v %v", fi, err)
	}
	// the next task uses the model chosen, with no restart
	model.Push(llmtest.Text("Nothing to do."))
	before := model.Calls()
	a = call(t, base, tok, "POST", "/api/tasks", "application/json", []byte(`{"goal":"say hello"}`))
	if a.status != 202 {
		t.Fatalf("a task after the model was chosen: HTTP %d %s", a.status, a.body)
	}
	for deadline := time.Now().Add(20 * time.Second); model.Calls() == before; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the task did not call the model chosen")
		}
	}
	if r := model.LastRequest(); r.Model != "tiny" || r.Header.Get("Authorization") != "Bearer "+key {
		t.Errorf("the task called model %q with the wrong key", r.Model)
	}

	// a variable in the environment is named as overriding the choice
	env["TABRELAY_LLM_MODEL"] = "from-env"
	a = call(t, base, tok, "GET", "/api/model", "", nil)
	if json.Unmarshal(a.body, &st) != nil || strings.Join(st.EnvOverrides, ",") != "TABRELAY_LLM_MODEL" {
		t.Fatalf("GET /api/model with TABRELAY_LLM_MODEL set: %s", a.body)
	}
	if a := call(t, base, tok, "PUT", "/api/model", "application/json", []byte(`{"provider":"skynet","model":"x"}`)); a.status != 400 {
		t.Fatalf("PUT an unknown provider: HTTP %d %s", a.status, a.body)
	}
}
