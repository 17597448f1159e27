// Package llm builds the language model tabrelay's agent talks to, from environment variables,
// through langchaingo only.
//
// The variables are TABRELAY_LLM_PROVIDER, TABRELAY_LLM_MODEL, TABRELAY_LLM_BASE_URL,
// TABRELAY_LLM_VISION (the model reads screenshots) and the providers' usual key variables
// (OPENAI_API_KEY, ANTHROPIC_API_KEY, GOOGLE_API_KEY, MISTRAL_API_KEY, GROQ_API_KEY,
// OPENROUTER_API_KEY, …); TABRELAY_LLM_API_KEY overrides the provider's key. Every OpenAI-compatible endpoint (OpenAI, Mistral, Groq, OpenRouter, DeepSeek,
// Ollama's /v1, LM Studio, vLLM, Google's Gemini API at its OpenAI-compatible endpoint, any
// other) goes through langchaingo's openai provider with a base URL, because the native ollama
// and mistral providers cannot carry tool calls; Anthropic uses the anthropic provider. Those
// two providers are the only ones linked: langchaingo's googleai provider would link Google's
// gRPC and Vertex AI SDKs (about 180 packages, a third of the binary) for what Gemini's
// OpenAI-compatible endpoint serves as well (tool calls, images as data URLs, streaming).
//
// With nothing configured, [FromEnv] returns a [*NotConfiguredError] whose message says exactly
// what to set.
package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"

	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/anthropic"
	"github.com/tmc/langchaingo/llms/openai"
)

// Environment variable names read by [FromEnv].
const (
	EnvProvider = "TABRELAY_LLM_PROVIDER"
	EnvModel    = "TABRELAY_LLM_MODEL"
	EnvBaseURL  = "TABRELAY_LLM_BASE_URL"
	EnvAPIKey   = "TABRELAY_LLM_API_KEY"
	// EnvLegacyMaxTokens, when true, sends max_tokens instead of max_completion_tokens to
	// OpenAI-compatible servers that only know the older field.
	EnvLegacyMaxTokens = "TABRELAY_LLM_LEGACY_MAX_TOKENS"
	// EnvVision, when true (1, true, yes, on), says the model reads images: the agent then
	// offers it the screenshot tool.
	EnvVision = "TABRELAY_LLM_VISION"
)

// Protocol is the wire protocol a provider speaks, which decides the langchaingo provider used.
type Protocol string

// Protocols.
const (
	ProtocolOpenAI    Protocol = "openai"
	ProtocolAnthropic Protocol = "anthropic"
)

// ImageMode tells how a screenshot must be attached to a message for a provider.
type ImageMode int

// Image modes.
const (
	// ImageDataURL sends llms.ImageURLPart("data:image/png;base64,…") (OpenAI-compatible).
	ImageDataURL ImageMode = iota
	// ImageBinary sends llms.BinaryPart (Anthropic: it rejects or downloads URLs).
	ImageBinary
)

// Provider describes one known provider.
type Provider struct {
	// Name is the value of TABRELAY_LLM_PROVIDER.
	Name string
	// Protocol decides which langchaingo provider is used.
	Protocol Protocol
	// BaseURL is the default endpoint ("" means the langchaingo default).
	BaseURL string
	// KeyEnv lists the environment variables holding the API key, first wins.
	KeyEnv []string
	// KeyRequired is false for local servers, which get a placeholder token.
	KeyRequired bool
	// DefaultModel is used when TABRELAY_LLM_MODEL is empty; "" means a model must be named.
	DefaultModel string
	// ExampleModel is shown in error messages.
	ExampleModel string
}

// Providers returns the known providers, keyed by name. It returns a fresh map on each call.
func Providers() map[string]Provider {
	ps := []Provider{
		{Name: "openai", Protocol: ProtocolOpenAI, BaseURL: "https://api.openai.com/v1", KeyEnv: []string{"OPENAI_API_KEY"}, KeyRequired: true, DefaultModel: "gpt-4o-mini", ExampleModel: "gpt-4o-mini"},
		{Name: "anthropic", Protocol: ProtocolAnthropic, BaseURL: "https://api.anthropic.com/v1", KeyEnv: []string{"ANTHROPIC_API_KEY"}, KeyRequired: true, DefaultModel: "claude-sonnet-4-5", ExampleModel: "claude-sonnet-4-5"},
		{Name: "google", Protocol: ProtocolOpenAI, BaseURL: "https://generativelanguage.googleapis.com/v1beta/openai", KeyEnv: []string{"GOOGLE_API_KEY", "GEMINI_API_KEY"}, KeyRequired: true, DefaultModel: "gemini-2.0-flash", ExampleModel: "gemini-2.0-flash"},
		{Name: "mistral", Protocol: ProtocolOpenAI, BaseURL: "https://api.mistral.ai/v1", KeyEnv: []string{"MISTRAL_API_KEY"}, KeyRequired: true, DefaultModel: "mistral-large-latest", ExampleModel: "mistral-large-latest"},
		{Name: "groq", Protocol: ProtocolOpenAI, BaseURL: "https://api.groq.com/openai/v1", KeyEnv: []string{"GROQ_API_KEY"}, KeyRequired: true, DefaultModel: "llama-3.3-70b-versatile", ExampleModel: "llama-3.3-70b-versatile"},
		{Name: "openrouter", Protocol: ProtocolOpenAI, BaseURL: "https://openrouter.ai/api/v1", KeyEnv: []string{"OPENROUTER_API_KEY"}, KeyRequired: true, ExampleModel: "openai/gpt-4o-mini"},
		{Name: "deepseek", Protocol: ProtocolOpenAI, BaseURL: "https://api.deepseek.com/v1", KeyEnv: []string{"DEEPSEEK_API_KEY"}, KeyRequired: true, DefaultModel: "deepseek-chat", ExampleModel: "deepseek-chat"},
		{Name: "together", Protocol: ProtocolOpenAI, BaseURL: "https://api.together.xyz/v1", KeyEnv: []string{"TOGETHER_API_KEY"}, KeyRequired: true, ExampleModel: "meta-llama/Llama-3.3-70B-Instruct-Turbo"},
		{Name: "ollama", Protocol: ProtocolOpenAI, BaseURL: "http://localhost:11434/v1", KeyEnv: []string{"OLLAMA_API_KEY"}, ExampleModel: "qwen2.5:7b"},
		{Name: "lmstudio", Protocol: ProtocolOpenAI, BaseURL: "http://localhost:1234/v1", KeyEnv: []string{"LMSTUDIO_API_KEY"}, ExampleModel: "qwen2.5-7b-instruct"},
		{Name: "vllm", Protocol: ProtocolOpenAI, BaseURL: "http://localhost:8000/v1", KeyEnv: []string{"VLLM_API_KEY"}, ExampleModel: "Qwen/Qwen2.5-7B-Instruct"},
		// openai-compatible: any other server speaking /chat/completions; needs a base URL.
		{Name: "openai-compatible", Protocol: ProtocolOpenAI, KeyEnv: []string{"OPENAI_API_KEY"}, ExampleModel: "my-model"},
	}
	m := make(map[string]Provider, len(ps))
	for _, p := range ps {
		m[p.Name] = p
	}
	return m
}

// providerAliases maps other spellings to provider names.
func providerAliases() map[string]string {
	return map[string]string{
		"claude": "anthropic", "gemini": "google", "googleai": "google", "lm-studio": "lmstudio",
		"lm_studio": "lmstudio", "openai_compatible": "openai-compatible", "compatible": "openai-compatible",
		"custom": "openai-compatible",
	}
}

// inferOrder is the order in which key variables are looked at when no provider is named.
var inferOrder = [...]string{"anthropic", "openai", "google", "mistral", "groq", "openrouter", "deepseek"}

// Config is a resolved model configuration.
type Config struct {
	// Provider is the provider's name, e.g. "openai" or "ollama".
	Provider string
	// Protocol is the wire protocol.
	Protocol Protocol
	// Model is the model name sent to the provider.
	Model string
	// BaseURL is the endpoint ("" for the provider's default).
	BaseURL string
	// APIKey is the secret; never log it.
	APIKey string
	// KeySource names the variable the key came from ("options page" for the saved settings,
	// "" for a placeholder).
	KeySource string
	// LegacyMaxTokens sends max_tokens instead of max_completion_tokens (OpenAI protocol).
	LegacyMaxTokens bool
	// Vision says the model reads images (TABRELAY_LLM_VISION): the agent offers it screenshots.
	Vision bool
	// HTTPClient, when set, carries the requests (tests, proxies).
	HTTPClient *http.Client
}

// String describes the configuration without its secret, e.g. "openai/gpt-4o at
// https://api.openai.com/v1 with vision".
func (c Config) String() string {
	s := c.Provider + "/" + c.Model
	if c.BaseURL != "" {
		s += " at " + c.BaseURL
	}
	if c.Vision {
		s += " with vision"
	}
	return s
}

// ImageMode tells how screenshots must be attached for this configuration.
func (c Config) ImageMode() ImageMode {
	if c.Protocol == ProtocolOpenAI {
		return ImageDataURL
	}
	return ImageBinary
}

// NotConfiguredError says that no usable model is configured, and how to configure one.
type NotConfiguredError struct {
	// Reason is the specific problem (no provider, missing key, missing model, unknown provider).
	Reason string
	// Missing names the setting to fill in, as the options page labels it (one of the Missing*
	// constants), or is "" when something else is wrong.
	Missing string
}

// The settings a [NotConfiguredError] can name as missing.
const (
	MissingProvider = "provider"
	MissingModel    = "model"
	MissingBaseURL  = "base URL"
	MissingAPIKey   = "API key"
)

// Error says the problem in one sentence and where to choose a model: the extension's options
// page, or the environment variables (which need a server restart).
func (e *NotConfiguredError) Error() string {
	return fmt.Sprintf("no language model configured (%s): choose a provider, model and key in the extension's options page (no restart needed), "+
		"or set %s, %s and the provider's key (e.g. %s; ollama needs none) where the server runs",
		e.Reason, EnvProvider, EnvModel, "OPENAI_API_KEY")
}

// ErrNotConfigured matches every [*NotConfiguredError] with errors.Is.
var ErrNotConfigured = errors.New("no language model configured")

// Is makes errors.Is(err, ErrNotConfigured) true.
func (e *NotConfiguredError) Is(target error) bool { return target == ErrNotConfigured }

// FromEnv resolves the configuration from the process environment.
func FromEnv() (Config, error) { return FromLookup(os.LookupEnv) }

// FromLookup resolves the configuration from a lookup function (os.LookupEnv or a test map).
func FromLookup(lookup func(string) (string, bool)) (Config, error) {
	return fromLookup(lookup, nil)
}

// fromLookup is FromLookup with savedKey, when not nil, giving a key (and its source) for the
// provider when no key variable is set.
func fromLookup(lookup func(string) (string, bool), savedKey func(Provider) (key, source string)) (Config, error) {
	get := func(k string) string {
		v, _ := lookup(k)
		return strings.TrimSpace(v)
	}
	providers := Providers()
	name := normalProvider(get(EnvProvider))
	if name == "" {
		for _, n := range inferOrder {
			for _, k := range providers[n].KeyEnv {
				if get(k) != "" {
					name = n
					break
				}
			}
			if name != "" {
				break
			}
		}
		if name == "" && get(EnvBaseURL) != "" {
			name = "openai-compatible"
		}
		if name == "" {
			return Config{}, &NotConfiguredError{Reason: EnvProvider + " is not set and no provider key variable is set", Missing: MissingProvider}
		}
	}
	p, ok := providers[name]
	if !ok {
		return Config{}, &NotConfiguredError{Reason: fmt.Sprintf("unknown provider %q in %s", name, EnvProvider)}
	}
	cfg := Config{
		Provider: p.Name, Protocol: p.Protocol, Model: get(EnvModel), BaseURL: get(EnvBaseURL),
		LegacyMaxTokens: parseBool(get(EnvLegacyMaxTokens)), Vision: parseBool(get(EnvVision)),
	}
	if cfg.BaseURL == "" {
		cfg.BaseURL = p.BaseURL
	}
	if cfg.BaseURL == "" && p.Name == "openai-compatible" {
		return Config{}, &NotConfiguredError{Reason: fmt.Sprintf("provider %q needs %s (e.g. http://localhost:8080/v1)", p.Name, EnvBaseURL), Missing: MissingBaseURL}
	}
	if k := get(EnvAPIKey); k != "" {
		cfg.APIKey, cfg.KeySource = k, EnvAPIKey
	} else {
		for _, k := range p.KeyEnv {
			if v := get(k); v != "" {
				cfg.APIKey, cfg.KeySource = v, k
				break
			}
		}
	}
	if cfg.APIKey == "" && savedKey != nil {
		cfg.APIKey, cfg.KeySource = savedKey(p)
	}
	if cfg.APIKey == "" {
		if p.KeyRequired {
			return Config{}, &NotConfiguredError{Reason: fmt.Sprintf("provider %q needs an API key in %s (or %s)", p.Name, p.KeyEnv[0], EnvAPIKey), Missing: MissingAPIKey}
		}
		// Local servers ignore the token but langchaingo's openai provider insists on one.
		cfg.APIKey = "local"
	}
	if cfg.Model == "" {
		cfg.Model = p.DefaultModel
	}
	if cfg.Model == "" {
		return Config{}, &NotConfiguredError{Reason: fmt.Sprintf("provider %q needs a model name in %s (e.g. %s)", p.Name, EnvModel, p.ExampleModel), Missing: MissingModel}
	}
	return cfg, nil
}

// VisionFromEnv reports whether TABRELAY_LLM_VISION is true in the process environment (the
// default of the server's --agent-vision flag).
func VisionFromEnv() bool { v, _ := os.LookupEnv(EnvVision); return parseBool(strings.TrimSpace(v)) }

func parseBool(s string) bool {
	switch strings.ToLower(s) {
	case "1", "true", "yes", "on":
		return true
	}
	return false
}

// New builds the langchaingo model for cfg.
func New(ctx context.Context, cfg Config) (llms.Model, error) {
	switch cfg.Protocol {
	case ProtocolOpenAI:
		opts := []openai.Option{openai.WithToken(cfg.APIKey), openai.WithModel(cfg.Model)}
		if cfg.BaseURL != "" {
			opts = append(opts, openai.WithBaseURL(cfg.BaseURL))
		}
		if cfg.HTTPClient != nil {
			opts = append(opts, openai.WithHTTPClient(cfg.HTTPClient))
		}
		m, err := openai.New(opts...)
		if err != nil {
			return nil, fmt.Errorf("llm: openai-compatible client for %s: %w", cfg, err)
		}
		if cfg.LegacyMaxTokens {
			return legacyMaxTokens{m}, nil
		}
		return m, nil
	case ProtocolAnthropic:
		opts := []anthropic.Option{anthropic.WithToken(cfg.APIKey), anthropic.WithModel(cfg.Model)}
		if cfg.BaseURL != "" {
			opts = append(opts, anthropic.WithBaseURL(cfg.BaseURL))
		}
		if cfg.HTTPClient != nil {
			opts = append(opts, anthropic.WithHTTPClient(cfg.HTTPClient))
		}
		m, err := anthropic.New(opts...)
		if err != nil {
			return nil, fmt.Errorf("llm: anthropic client for %s: %w", cfg, err)
		}
		return m, nil
	}
	return nil, fmt.Errorf("llm: protocol %q of provider %q is not supported", cfg.Protocol, cfg.Provider)
}

// FromEnvModel resolves the configuration from the environment and builds the model.
func FromEnvModel(ctx context.Context) (llms.Model, Config, error) {
	cfg, err := FromEnv()
	if err != nil {
		return nil, cfg, err
	}
	m, err := New(ctx, cfg)
	return m, cfg, err
}

// legacyMaxTokens adds openai.WithLegacyMaxTokensField to every call.
type legacyMaxTokens struct{ *openai.LLM }

// GenerateContent implements llms.Model.
func (l legacyMaxTokens) GenerateContent(ctx context.Context, msgs []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
	return l.LLM.GenerateContent(ctx, msgs, append(opts, openai.WithLegacyMaxTokensField())...)
}

// Streaming returns a call option that passes each streamed text chunk to fn (a no-op option
// when fn is nil). The openai and anthropic providers stream. Tool-call deltas, which the openai provider also hands to the streaming function as
// JSON, are not passed on: fn sees the model's prose only.
func Streaming(fn func(ctx context.Context, chunk string) error) llms.CallOption {
	if fn == nil {
		return func(*llms.CallOptions) {}
	}
	return llms.WithStreamingFunc(func(ctx context.Context, chunk []byte) error {
		if len(chunk) == 0 || isToolCallDelta(chunk) {
			return nil
		}
		return fn(ctx, string(chunk))
	})
}

// isToolCallDelta recognises the JSON array of tool-call deltas the openai provider streams.
func isToolCallDelta(chunk []byte) bool {
	if len(chunk) < 2 || chunk[0] != '[' || chunk[1] != '{' {
		return false
	}
	var deltas []struct {
		Function *json.RawMessage `json:"function"`
	}
	return json.Unmarshal(chunk, &deltas) == nil && len(deltas) > 0 && deltas[0].Function != nil
}

// Usage is the input and output tokens a provider reports in a choice's generation info
// (langchaingo's openai provider names them PromptTokens and CompletionTokens, its anthropic
// provider InputTokens and OutputTokens); 0 where it reports none.
func Usage(info map[string]any) (in, out int) {
	return intOf(info["PromptTokens"]) + intOf(info["InputTokens"]), intOf(info["CompletionTokens"]) + intOf(info["OutputTokens"])
}

func intOf(v any) int {
	switch n := v.(type) {
	case int:
		return n
	case int64:
		return int(n)
	case int32:
		return int(n)
	case float64:
		return int(n)
	}
	return 0
}
