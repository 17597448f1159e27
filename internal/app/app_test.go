package app

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tabrelay/tabrelay/agent/api"
	"github.com/tabrelay/tabrelay/agent/voice"
	"github.com/tabrelay/tabrelay/internal/secret"
	"github.com/tabrelay/tabrelay/relay"
)

const userSkill = `---
name: say-hello
description: Type hello into the greeting field.
kind: action
sites: ["example.com"]
---
# Say hello

` + "```steps" + `
- do: type
  target: textbox "Greeting"
  text: hello
` + "```\n"

// TestStartWiresEveryPart checks that one Start serves the relay, the agent, the skills
// (bundled and the home's own) and voice, all behind the secret, and that Close ends it.
func TestStartWiresEveryPart(t *testing.T) {
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, "skills", "say-hello"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "skills", "say-hello", "SKILL.md"), []byte(userSkill), 0o644); err != nil {
		t.Fatal(err)
	}
	store, err := secret.NewStore(home)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv, err := Start(ctx, Config{
		Relay: relay.Options{Addr: "127.0.0.1:0", Secret: store},
		Agent: api.Options{Home: home},
		Voice: voice.Options{Getenv: func(string) string { return "" }},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()

	get := func(path, token string) (int, []byte) {
		t.Helper()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.HTTPURL()+path, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		return res.StatusCode, body
	}

	for _, path := range []string{"/api/tabs", "/api/skills", "/api/voice/status", "/api/tasks", "/json/list"} {
		if code, _ := get(path, ""); code != http.StatusUnauthorized {
			t.Errorf("GET %s without the secret: status %d, want 401", path, code)
		}
		if code, body := get(path, store.Token()); code != http.StatusOK {
			t.Errorf("GET %s: status %d (%s), want 200", path, code, body)
		}
	}

	_, body := get("/api/skills", store.Token())
	var list struct {
		Skills []struct {
			Name string `json:"name"`
		} `json:"skills"`
		Problems []json.RawMessage `json:"problems"`
	}
	if err := json.Unmarshal(body, &list); err != nil {
		t.Fatalf("decode /api/skills: %v: %s", err, body)
	}
	names := map[string]bool{}
	for _, s := range list.Skills {
		names[s.Name] = true
	}
	for _, want := range []string{"site-search", "extract-table", "fill-form", "say-hello"} {
		if !names[want] {
			t.Errorf("/api/skills lacks %q (bundled and <home>/skills): %s", want, body)
		}
	}
	if len(list.Problems) != 0 {
		t.Errorf("/api/skills reports problems: %s", body)
	}

	// ctx ending closes the agent: its task store refuses new work, then Close still succeeds
	cancel()
	select {
	case <-srv.Agent.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the agent's hub connection did not end with ctx")
	}
	if err := srv.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if err := srv.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}
