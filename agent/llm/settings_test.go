package llm_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/tabrelay/tabrelay/agent/llm"
	"github.com/tabrelay/tabrelay/agent/llmtest"
)

func lookupOf(env map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := env[k]; return v, ok }
}

// TestFromSettings: the environment wins over the saved settings field by field; the saved
// model, base URL and key belong to the saved provider only; the saved key comes after the
// provider's key variables.
func TestFromSettings(t *testing.T) {
	saved := llm.Settings{Provider: "openai-compatible", Model: "saved-model", BaseURL: "http://127.0.0.1:9/v1", APIKey: "saved-key-0123456789"}
	tests := []struct {
		name                       string
		env                        map[string]string
		saved                      llm.Settings
		provider, model, base, key string
		keySource, errHas          string
	}{
		{name: "saved only", saved: saved, provider: "openai-compatible", model: "saved-model", base: "http://127.0.0.1:9/v1", key: "saved-key-0123456789", keySource: "options page"},
		{name: "env model wins", saved: saved, env: map[string]string{llm.EnvModel: "env-model"}, provider: "openai-compatible", model: "env-model", base: "http://127.0.0.1:9/v1", key: "saved-key-0123456789"},
		{name: "env key wins", saved: saved, env: map[string]string{"OPENAI_API_KEY": "env-key"}, provider: "openai-compatible", model: "saved-model", key: "env-key", keySource: "OPENAI_API_KEY"},
		{name: "env provider drops the saved fields", saved: saved, env: map[string]string{llm.EnvProvider: "ollama", llm.EnvModel: "qwen"}, provider: "ollama", model: "qwen", base: "http://localhost:11434/v1", key: "local"},
		{name: "alias in saved", saved: llm.Settings{Provider: "Claude", APIKey: "k"}, provider: "anthropic", model: "claude-sonnet-4-5", key: "k"},
		{name: "nothing", errHas: "not set"},
		{name: "saved provider without key", saved: llm.Settings{Provider: "openai"}, errHas: "needs an API key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := llm.FromSettings(lookupOf(tt.env), tt.saved)
			if tt.errHas != "" {
				if !errors.Is(err, llm.ErrNotConfigured) || !strings.Contains(err.Error(), tt.errHas) {
					t.Fatalf("err = %v, want a NotConfiguredError with %q", err, tt.errHas)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Provider != tt.provider || cfg.Model != tt.model || cfg.APIKey != tt.key || (tt.base != "" && cfg.BaseURL != tt.base) || (tt.keySource != "" && cfg.KeySource != tt.keySource) {
				t.Fatalf("got %s key %q from %q, want %s/%s at %s key %q from %q", cfg, cfg.APIKey, cfg.KeySource, tt.provider, tt.model, tt.base, tt.key, tt.keySource)
			}
		})
	}
}

// TestSettingsFileOwnerOnly: the saved settings hold the key in a file only its owner reads.
func TestSettingsFileOwnerOnly(t *testing.T) {
	home := t.TempDir()
	want := llm.Settings{Provider: "openai", Model: "m", APIKey: "sk-secret-abcd1234"}
	if err := llm.SaveSettings(home, want); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(home, llm.SettingsFile))
	if err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600 {
		t.Errorf("settings file mode %v, want 0600", fi.Mode().Perm())
	}
	got, err := llm.LoadSettings(home)
	if err != nil || got != want {
		t.Fatalf("loaded %+v, %v; want %+v", got, err, want)
	}
	if h := got.KeyHint(); h != "…1234" {
		t.Errorf("KeyHint = %q, want …1234", h)
	}
	if h := (llm.Settings{APIKey: "short"}).KeyHint(); h != "set" {
		t.Errorf("KeyHint of a short key = %q, want set", h)
	}
}

// TestSourceSwitchesWithoutRestart: a Switch set from the saved settings answers with the
// model saved last: a request after Save goes to the new server with the new key.
func TestSourceSwitchesWithoutRestart(t *testing.T) {
	first, second := llmtest.NewOpenAI(t, llmtest.Text("one")), llmtest.NewOpenAI(t, llmtest.Text("two"))
	src := &llm.Source{Home: t.TempDir(), Lookup: lookupOf(nil), Switch: &llm.Switch{}}
	ctx := context.Background()
	if _, err := src.Load(ctx); !errors.Is(err, llm.ErrNotConfigured) || llm.Ready(src.Switch) {
		t.Fatalf("Load with nothing saved: %v (ready %v)", err, llm.Ready(src.Switch))
	}
	if _, err := src.Switch.Call(ctx, "hi"); !errors.Is(err, llm.ErrNotConfigured) {
		t.Fatalf("a call with no model: %v", err)
	}
	for i, s := range []*llmtest.Server{first, second} {
		key := []string{"first-key-0000000001", "second-key-000000002"}[i]
		st, err := src.Save(ctx, llm.Settings{Provider: "openai-compatible", Model: "m", BaseURL: s.URL, APIKey: key}, false)
		if err != nil || st.Problem != nil || st.KeyHint != "…"+key[len(key)-4:] {
			t.Fatalf("Save %d: %+v %v", i, st, err)
		}
		reply, err := src.Switch.Call(ctx, "hi")
		if err != nil || reply != []string{"one", "two"}[i] {
			t.Fatalf("call after Save %d: %q %v", i, reply, err)
		}
		if got := s.LastRequest().Header.Get("Authorization"); got != "Bearer "+key {
			t.Errorf("server %d got Authorization %q", i, got)
		}
	}
	// an empty key keeps the saved one of the same provider
	if _, err := src.Save(ctx, llm.Settings{Provider: "openai-compatible", Model: "m", BaseURL: second.URL}, false); err != nil {
		t.Fatal(err)
	}
	if saved, _ := llm.LoadSettings(src.Home); saved.APIKey != "second-key-000000002" {
		t.Errorf("saving without a key lost the saved key: %+v", saved.KeyHint())
	}
	if _, err := src.Save(ctx, llm.Settings{Provider: "skynet"}, false); err == nil {
		t.Error("an unknown provider was saved")
	}
}

// TestSourceTest: Test makes one real call with the settings given, without saving them, and
// says what went wrong when the server refuses.
func TestSourceTest(t *testing.T) {
	s := llmtest.NewOpenAI(t, llmtest.Text("ready"), llmtest.HTTPError(401, "invalid api key"))
	src := &llm.Source{Home: t.TempDir(), Lookup: lookupOf(nil), Switch: &llm.Switch{}}
	set := llm.Settings{Provider: "openai-compatible", Model: "m", BaseURL: s.URL, APIKey: "k-0000000000001"}
	_, reply, _, err := src.Test(context.Background(), set)
	if err != nil || reply != "ready" {
		t.Fatalf("Test: %q %v", reply, err)
	}
	if _, _, _, err := src.Test(context.Background(), set); !errors.Is(err, llm.ErrTestFailed) {
		t.Fatalf("Test against a refusing server: %v", err)
	}
	if saved, _ := llm.LoadSettings(src.Home); saved != (llm.Settings{}) || llm.Ready(src.Switch) {
		t.Errorf("Test saved or applied the settings: %+v", saved)
	}
}

// TestEnvOverrides names the variables set, and only those.
func TestEnvOverrides(t *testing.T) {
	got := llm.EnvOverrides(lookupOf(map[string]string{llm.EnvModel: "x", "OPENAI_API_KEY": "k", "HOME": "/root", llm.EnvBaseURL: " "}))
	if strings.Join(got, ",") != "OPENAI_API_KEY,TABRELAY_LLM_MODEL" {
		t.Fatalf("EnvOverrides = %q", got)
	}
}
