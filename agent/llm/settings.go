package llm

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// SettingsFile is the name, in tabrelay's home, of the model settings chosen in the
// extension's options page. It holds the API key: it is written with owner-only permissions
// (0600), and its key is never logged nor returned by any route (see [Settings.KeyHint]).
const SettingsFile = "model.json"

// Settings are the model settings a person chose in the extension's options page. The
// environment variables read by [FromEnv] override them field by field ([FromSettings]).
type Settings struct {
	// Provider is a provider's name (see [Providers]) or an alias.
	Provider string `json:"provider,omitempty"`
	// Model is the model name ("" for the provider's default).
	Model string `json:"model,omitempty"`
	// BaseURL is the endpoint ("" for the provider's default).
	BaseURL string `json:"baseUrl,omitempty"`
	// APIKey is the secret; never log it, never send it back.
	APIKey string `json:"apiKey,omitempty"`
}

// KeyHint is the key as it may be shown again: its last four characters after an ellipsis
// ("…f00d"), only "set" for keys too short to hide anything, and "" when there is none.
func (s Settings) KeyHint() string {
	return keyHint(s.APIKey)
}

func keyHint(k string) string {
	switch {
	case k == "":
		return ""
	case len(k) < 12:
		return "set"
	}
	return "…" + k[len(k)-4:]
}

// settingsPath is the settings file in home.
func settingsPath(home string) string { return filepath.Join(home, SettingsFile) }

// LoadSettings reads the saved settings from home; none saved is the zero Settings.
func LoadSettings(home string) (Settings, error) {
	var s Settings
	if home == "" {
		return s, nil
	}
	b, err := os.ReadFile(settingsPath(home))
	if errors.Is(err, fs.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return s, fmt.Errorf("read the model settings: %w", err)
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return Settings{}, fmt.Errorf("read the model settings in %s: %w (save them again from the extension's options page)", settingsPath(home), err)
	}
	return s, nil
}

// SaveSettings writes s to home with owner-only permissions, replacing the file at once (a
// reader sees the old settings or the new ones).
func SaveSettings(home string, s Settings) error {
	if home == "" {
		return errors.New("save the model settings: the server has no home directory (--home)")
	}
	if err := os.MkdirAll(home, 0o700); err != nil {
		return fmt.Errorf("save the model settings: %w", err)
	}
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return fmt.Errorf("save the model settings: %w", err)
	}
	f, err := os.CreateTemp(home, ".model-*.json")
	if err != nil {
		return fmt.Errorf("save the model settings: %w", err)
	}
	tmp := f.Name()
	defer os.Remove(tmp) // after a successful rename there is nothing left to remove
	if err := f.Chmod(0o600); err != nil && !errors.Is(err, errors.ErrUnsupported) {
		f.Close()
		return fmt.Errorf("save the model settings: %w", err)
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return fmt.Errorf("save the model settings: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("save the model settings: %w", err)
	}
	if err := os.Rename(tmp, settingsPath(home)); err != nil {
		return fmt.Errorf("save the model settings: %w", err)
	}
	return nil
}

// normalProvider is name in lower case with aliases resolved.
func normalProvider(name string) string {
	name = strings.ToLower(strings.TrimSpace(name))
	if a, ok := providerAliases()[name]; ok {
		return a
	}
	return name
}

// Check says what is wrong with s before it is saved: an unknown provider, a base URL that is
// not http(s). Empty settings are valid (they clear the choice).
func (s Settings) Check() error {
	if s.Provider == "" {
		return nil
	}
	if _, ok := Providers()[normalProvider(s.Provider)]; !ok {
		return fmt.Errorf("unknown provider %q: use one of %s", s.Provider, strings.Join(ProviderNames(), ", "))
	}
	if u := strings.TrimSpace(s.BaseURL); u != "" && !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
		return fmt.Errorf("base URL %q: use an http:// or https:// address, e.g. http://localhost:11434/v1", u)
	}
	return nil
}

// ProviderNames are the known providers' names, sorted.
func ProviderNames() []string {
	names := make([]string, 0, len(Providers()))
	for n := range Providers() {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// FromSettings resolves the configuration from the environment (lookup) over the saved
// settings s: each variable that is set wins over the field it names. The saved model, base URL
// and key apply only to the saved provider (a provider named in the environment uses none of
// them), and the saved key comes after the provider's key variables.
func FromSettings(lookup func(string) (string, bool), s Settings) (Config, error) {
	saved := normalProvider(s.Provider)
	layered := func(k string) (string, bool) {
		if v, ok := lookup(k); ok && strings.TrimSpace(v) != "" {
			return v, true
		}
		if saved == "" {
			return "", false
		}
		envProvider, _ := lookup(EnvProvider)
		if ep := normalProvider(envProvider); ep != "" && ep != saved {
			return "", false
		}
		switch k {
		case EnvProvider:
			return saved, true
		case EnvModel:
			return s.Model, s.Model != ""
		case EnvBaseURL:
			return s.BaseURL, s.BaseURL != ""
		}
		return "", false
	}
	cfg, err := fromLookup(layered, func(p Provider) (string, string) {
		if p.Name == saved && s.APIKey != "" {
			return s.APIKey, "options page"
		}
		return "", ""
	})
	return cfg, err
}

// EnvOverrides names the variables set in the environment (lookup) that override settings
// saved from the options page, sorted: the TABRELAY_LLM_* variables and the providers' key
// variables.
func EnvOverrides(lookup func(string) (string, bool)) []string {
	seen := map[string]bool{}
	for _, k := range []string{EnvProvider, EnvModel, EnvBaseURL, EnvAPIKey} {
		seen[k] = true
	}
	for _, p := range Providers() {
		for _, k := range p.KeyEnv {
			seen[k] = true
		}
	}
	var out []string
	for k := range seen {
		if v, ok := lookup(k); ok && strings.TrimSpace(v) != "" {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}
