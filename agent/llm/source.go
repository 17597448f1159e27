package llm

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/tmc/langchaingo/llms"
)

// Source keeps a [Switch] in step with the settings saved from the extension's options page
// (in Home) and the environment (Lookup), which overrides them: [Source.Load] at start,
// [Source.Save] when the person chooses again (the next request uses the new model, with no
// restart).
type Source struct {
	// Home is tabrelay's home, where [SettingsFile] is kept ("": nothing is saved).
	Home string
	// Lookup reads the environment (os.LookupEnv, read by the command; a map in tests).
	Lookup func(string) (string, bool)
	// Vision, when set, says every configured model reads images (the --agent-vision flag).
	Vision bool
	// HTTPClient, when set, carries the model's requests.
	HTTPClient *http.Client
	// Switch receives the model; it must not be nil.
	Switch *Switch

	mu sync.Mutex // serialises Load and Save
}

// State is what the options page shows: the saved choice (with the key only as a hint), the
// model in use, why there is none, and the environment variables that override the choice.
type State struct {
	// Saved is the choice saved from the options page, its APIKey empty.
	Saved Settings
	// KeyHint is the saved key's hint (see [Settings.KeyHint]).
	KeyHint string
	// Active describes the model requests use now ("" when none).
	Active string
	// KeySource names where the active model's key comes from.
	KeySource string
	// Problem says why there is no model (nil when there is one).
	Problem error
	// EnvOverrides names the environment variables that override the saved choice.
	EnvOverrides []string
}

func (s *Source) lookup() func(string) (string, bool) {
	if s.Lookup == nil {
		return func(string) (string, bool) { return "", false }
	}
	return s.Lookup
}

// resolve builds the model for saved under the environment.
func (s *Source) resolve(ctx context.Context, saved Settings) (llms.Model, Config, error) {
	cfg, err := FromSettings(s.lookup(), saved)
	if err != nil {
		return nil, Config{}, err
	}
	if s.Vision {
		cfg.Vision = true
	}
	cfg.HTTPClient = s.HTTPClient
	m, err := New(ctx, cfg)
	if err != nil {
		return nil, cfg, err
	}
	return m, cfg, nil
}

// Load reads the saved settings and sets the Switch from them and the environment; the error
// says why there is no model (a [*NotConfiguredError] when nothing is configured).
func (s *Source) Load(ctx context.Context) (Config, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	saved, err := LoadSettings(s.Home)
	if err != nil {
		s.Switch.Set(nil, Config{}, err)
		return Config{}, err
	}
	m, cfg, err := s.resolve(ctx, saved)
	s.Switch.Set(m, cfg, err)
	return cfg, err
}

// merge is next with the saved key kept when next leaves it empty for the same provider.
func merge(saved, next Settings, clearKey bool) Settings {
	next.Provider = normalProvider(next.Provider)
	next.Model, next.BaseURL, next.APIKey = strings.TrimSpace(next.Model), strings.TrimSpace(next.BaseURL), strings.TrimSpace(next.APIKey)
	if next.APIKey == "" && !clearKey && normalProvider(saved.Provider) == next.Provider {
		next.APIKey = saved.APIKey
	}
	return next
}

// Save saves next (an empty APIKey keeps the saved key of the same provider unless clearKey)
// and sets the Switch from it: the next request uses it. A choice the environment overrides is
// saved all the same. It fails, saving nothing, when next is not valid.
func (s *Source) Save(ctx context.Context, next Settings, clearKey bool) (State, error) {
	if err := next.Check(); err != nil {
		return State{}, err
	}
	s.mu.Lock()
	saved, err := LoadSettings(s.Home)
	if err != nil {
		saved = Settings{} // a broken file is replaced
	}
	next = merge(saved, next, clearKey)
	if err := SaveSettings(s.Home, next); err != nil {
		s.mu.Unlock()
		return State{}, err
	}
	m, cfg, err := s.resolve(ctx, next)
	s.Switch.Set(m, cfg, err)
	s.mu.Unlock()
	return s.State(), nil
}

// State is what the options page shows.
func (s *Source) State() State {
	saved, lerr := LoadSettings(s.Home)
	st := State{KeyHint: saved.KeyHint(), EnvOverrides: EnvOverrides(s.lookup())}
	saved.APIKey = ""
	st.Saved = saved
	if m, cfg, err := s.Switch.Current(); m != nil {
		st.Active, st.KeySource = cfg.String(), cfg.KeySource
	} else {
		st.Problem = err
	}
	if lerr != nil && st.Problem == nil {
		st.Problem = lerr
	}
	return st
}

// ErrTestFailed wraps what went wrong in a [Source.Test] call to the model.
var ErrTestFailed = errors.New("the model did not answer")

// Test makes a tiny real call with next (merged with the saved key as [Source.Save] does),
// without saving it, and returns the model's reply and how long it took. A configuration
// problem is a [*NotConfiguredError]; a failed call wraps [ErrTestFailed].
func (s *Source) Test(ctx context.Context, next Settings) (cfg Config, reply string, took time.Duration, err error) {
	if err := next.Check(); err != nil {
		return Config{}, "", 0, err
	}
	saved, _ := LoadSettings(s.Home)
	m, cfg, err := s.resolve(ctx, merge(saved, next, false))
	if err != nil {
		return cfg, "", 0, err
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	start := time.Now()
	reply, err = llms.GenerateFromSinglePrompt(ctx, m, "Reply with the single word: ready", llms.WithMaxTokens(16))
	took = time.Since(start)
	if err != nil {
		return cfg, "", took, fmt.Errorf("%w: %s: %w", ErrTestFailed, cfg, err)
	}
	return cfg, strings.TrimSpace(reply), took, nil
}
