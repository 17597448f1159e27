package llm

import (
	"errors"
	"strings"
	"testing"
)

func lookup(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestFromLookup(t *testing.T) {
	tests := []struct {
		name     string
		env      map[string]string
		provider string
		model    string
		baseURL  string
		key      string
		vision   bool
		errHas   string
	}{
		{name: "nothing", env: map[string]string{}, errHas: "TABRELAY_LLM_PROVIDER is not set"},
		{name: "openai explicit", env: map[string]string{"TABRELAY_LLM_PROVIDER": "openai", "OPENAI_API_KEY": "sk-secret-123", "TABRELAY_LLM_MODEL": "gpt-4.1"}, provider: "openai", model: "gpt-4.1", baseURL: "https://api.openai.com/v1", key: "sk-secret-123"},
		{name: "openai default model", env: map[string]string{"TABRELAY_LLM_PROVIDER": "openai", "OPENAI_API_KEY": "k1"}, provider: "openai", model: "gpt-4o-mini"},
		{name: "openai missing key", env: map[string]string{"TABRELAY_LLM_PROVIDER": "openai"}, errHas: "OPENAI_API_KEY"},
		{name: "inferred anthropic", env: map[string]string{"ANTHROPIC_API_KEY": "a"}, provider: "anthropic", key: "a"},
		{name: "alias claude", env: map[string]string{"TABRELAY_LLM_PROVIDER": "Claude", "ANTHROPIC_API_KEY": "a"}, provider: "anthropic"},
		{name: "google via gemini key", env: map[string]string{"TABRELAY_LLM_PROVIDER": "google", "GEMINI_API_KEY": "g"}, provider: "google", key: "g"},
		{name: "mistral", env: map[string]string{"TABRELAY_LLM_PROVIDER": "mistral", "MISTRAL_API_KEY": "m"}, provider: "mistral", baseURL: "https://api.mistral.ai/v1"},
		{name: "groq", env: map[string]string{"TABRELAY_LLM_PROVIDER": "groq", "GROQ_API_KEY": "q"}, provider: "groq", baseURL: "https://api.groq.com/openai/v1"},
		{name: "openrouter needs model", env: map[string]string{"TABRELAY_LLM_PROVIDER": "openrouter", "OPENROUTER_API_KEY": "o"}, errHas: "TABRELAY_LLM_MODEL"},
		{name: "ollama local token", env: map[string]string{"TABRELAY_LLM_PROVIDER": "ollama", "TABRELAY_LLM_MODEL": "qwen2.5:7b"}, provider: "ollama", baseURL: "http://localhost:11434/v1", key: "local"},
		{name: "ollama needs model", env: map[string]string{"TABRELAY_LLM_PROVIDER": "ollama"}, errHas: "qwen2.5:7b"},
		{name: "lmstudio", env: map[string]string{"TABRELAY_LLM_PROVIDER": "lmstudio", "TABRELAY_LLM_MODEL": "x"}, provider: "lmstudio", baseURL: "http://localhost:1234/v1"},
		{name: "vllm base override", env: map[string]string{"TABRELAY_LLM_PROVIDER": "vllm", "TABRELAY_LLM_MODEL": "x", "TABRELAY_LLM_BASE_URL": "http://gpu:9000/v1"}, provider: "vllm", baseURL: "http://gpu:9000/v1"},
		{name: "generic key override", env: map[string]string{"TABRELAY_LLM_PROVIDER": "openai", "OPENAI_API_KEY": "k1", "TABRELAY_LLM_API_KEY": "k2"}, key: "k2"},
		{name: "compatible needs base", env: map[string]string{"TABRELAY_LLM_PROVIDER": "openai-compatible", "TABRELAY_LLM_MODEL": "x"}, errHas: "TABRELAY_LLM_BASE_URL"},
		{name: "base url alone", env: map[string]string{"TABRELAY_LLM_BASE_URL": "http://h/v1", "TABRELAY_LLM_MODEL": "m"}, provider: "openai-compatible", key: "local"},
		{name: "unknown provider", env: map[string]string{"TABRELAY_LLM_PROVIDER": "skynet"}, errHas: `unknown provider "skynet"`},
		{name: "vision on", env: map[string]string{"TABRELAY_LLM_PROVIDER": "openai", "OPENAI_API_KEY": "k", "TABRELAY_LLM_VISION": "1"}, provider: "openai", vision: true},
		{name: "vision yes", env: map[string]string{"TABRELAY_LLM_PROVIDER": "anthropic", "ANTHROPIC_API_KEY": "k", "TABRELAY_LLM_VISION": " Yes "}, provider: "anthropic", vision: true},
		{name: "vision off", env: map[string]string{"TABRELAY_LLM_PROVIDER": "openai", "OPENAI_API_KEY": "k", "TABRELAY_LLM_VISION": "0"}, provider: "openai"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := FromLookup(lookup(tt.env))
			if tt.errHas != "" {
				var nc *NotConfiguredError
				if !errors.As(err, &nc) || !errors.Is(err, ErrNotConfigured) {
					t.Fatalf("want NotConfiguredError, got %v", err)
				}
				for _, want := range []string{tt.errHas, "TABRELAY_LLM_PROVIDER", "TABRELAY_LLM_MODEL", "OPENAI_API_KEY", "ollama"} {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("error %q lacks %q", err, want)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.provider != "" && cfg.Provider != tt.provider {
				t.Errorf("provider %q, want %q", cfg.Provider, tt.provider)
			}
			if tt.model != "" && cfg.Model != tt.model {
				t.Errorf("model %q, want %q", cfg.Model, tt.model)
			}
			if tt.baseURL != "" && cfg.BaseURL != tt.baseURL {
				t.Errorf("base %q, want %q", cfg.BaseURL, tt.baseURL)
			}
			if tt.key != "" && cfg.APIKey != tt.key {
				t.Errorf("key %q, want %q", cfg.APIKey, tt.key)
			}
			if cfg.Vision != tt.vision || strings.Contains(cfg.String(), "with vision") != tt.vision {
				t.Errorf("vision %v (%s), want %v", cfg.Vision, cfg, tt.vision)
			}
			if len(cfg.APIKey) > 5 && strings.Contains(cfg.String(), cfg.APIKey) {
				t.Errorf("String() leaks the key: %s", cfg)
			}
		})
	}
}

func TestIsToolCallDelta(t *testing.T) {
	if !isToolCallDelta([]byte(`[{"index":0,"function":{"arguments":"{\"a"}}]`)) {
		t.Error("tool delta not recognised")
	}
	if isToolCallDelta([]byte(`[{ is prose`)) || isToolCallDelta([]byte("hello")) {
		t.Error("prose taken for a tool delta")
	}
}

func TestNewEachProtocol(t *testing.T) {
	for _, env := range []map[string]string{
		{"TABRELAY_LLM_PROVIDER": "openai", "OPENAI_API_KEY": "k"},
		{"TABRELAY_LLM_PROVIDER": "ollama", "TABRELAY_LLM_MODEL": "m", "TABRELAY_LLM_LEGACY_MAX_TOKENS": "1"},
		{"TABRELAY_LLM_PROVIDER": "anthropic", "ANTHROPIC_API_KEY": "k"},
		{"TABRELAY_LLM_PROVIDER": "google", "GOOGLE_API_KEY": "k"},
	} {
		cfg, err := FromLookup(lookup(env))
		if err != nil {
			t.Fatal(err)
		}
		m, err := New(t.Context(), cfg)
		if err != nil || m == nil {
			t.Fatalf("%s: %v", cfg, err)
		}
		if want := cfg.Protocol == ProtocolOpenAI; (cfg.ImageMode() == ImageDataURL) != want {
			t.Errorf("%s: image mode %v", cfg, cfg.ImageMode())
		}
	}
}

func TestVisionFromEnv(t *testing.T) {
	t.Setenv(EnvVision, "true")
	if !VisionFromEnv() {
		t.Error("TABRELAY_LLM_VISION=true not read")
	}
	t.Setenv(EnvVision, "")
	if VisionFromEnv() {
		t.Error("empty TABRELAY_LLM_VISION read as on")
	}
}
