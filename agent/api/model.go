package api

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/tabrelay/tabrelay/agent/llm"
	"github.com/tabrelay/tabrelay/internal/reqbody"
)

// ModelSettings is the model choice of the options page as GET /api/model answers it and PUT
// /api/model takes it. The key is sent only to set it: answers carry its hint (KeyHint, e.g.
// "…f00d"), never the key.
type ModelSettings struct {
	// Provider is a provider's name (Providers lists them).
	Provider string `json:"provider"`
	// Model is the model name ("": the provider's default).
	Model string `json:"model"`
	// BaseURL is the endpoint ("": the provider's default).
	BaseURL string `json:"baseUrl"`
	// APIKey, in a request, is a new key ("" keeps the saved key of the same provider); never
	// in an answer.
	APIKey string `json:"apiKey,omitempty"`
	// ClearKey, in a request, forgets the saved key.
	ClearKey bool `json:"clearKey,omitempty"`
}

// ModelProvider describes a provider the options page offers.
type ModelProvider struct {
	Name         string `json:"name"`
	BaseURL      string `json:"baseUrl,omitempty"`
	KeyRequired  bool   `json:"keyRequired"`
	DefaultModel string `json:"defaultModel,omitempty"`
	ExampleModel string `json:"exampleModel,omitempty"`
	// KeyEnv is the environment variable the server also reads the key from.
	KeyEnv string `json:"keyEnv,omitempty"`
}

// ModelState is the answer of GET and PUT /api/model.
type ModelState struct {
	// Saved is the choice saved from the options page (without its key).
	Saved ModelSettings `json:"saved"`
	// KeyHint shows the saved key's last characters ("…f00d"), "set" for a short key, "" for none.
	KeyHint string `json:"keyHint"`
	// Active describes the model the next request uses ("" when none).
	Active string `json:"active"`
	// KeySource names where the active model's key comes from (an environment variable or
	// "options page").
	KeySource string `json:"keySource,omitempty"`
	// Problem says why no model is in use.
	Problem string `json:"problem,omitempty"`
	// Missing, when no model is in use because a setting is missing, names it (as in
	// ModelTestResult.Missing).
	Missing string `json:"missing,omitempty"`
	// EnvOverrides names the server's environment variables that override the choice here.
	EnvOverrides []string `json:"envOverrides"`
	// Providers are the providers to choose from.
	Providers []ModelProvider `json:"providers"`
}

// ModelTestResult is the answer of POST /api/model/test.
type ModelTestResult struct {
	// OK is true when the model answered.
	OK bool `json:"ok"`
	// Model describes the configuration tried.
	Model string `json:"model"`
	// Reply is the start of the model's answer.
	Reply string `json:"reply,omitempty"`
	// Error says what went wrong.
	Error string `json:"error,omitempty"`
	// Missing, when the settings are incomplete, names the field to fill in ("provider",
	// "model", "base URL", "API key"), so the page can say so instead of Error's general advice.
	Missing string `json:"missing,omitempty"`
	// MS is how long the call took, in milliseconds.
	MS int64 `json:"ms"`
}

const modelExample = `{"provider":"openai","model":"gpt-4o-mini","apiKey":"sk-…"}`

func (a *Agent) models() (*llm.Source, *httpError) {
	if a.opts.Models == nil {
		return nil, errorf(http.StatusServiceUnavailable, "this server takes its model from the environment only (%s, %s and the provider's key)", llm.EnvProvider, llm.EnvModel)
	}
	return a.opts.Models, nil
}

func modelState(st llm.State) ModelState {
	out := ModelState{
		Saved:   ModelSettings{Provider: st.Saved.Provider, Model: st.Saved.Model, BaseURL: st.Saved.BaseURL},
		KeyHint: st.KeyHint, Active: st.Active, KeySource: st.KeySource, EnvOverrides: st.EnvOverrides,
	}
	if out.EnvOverrides == nil {
		out.EnvOverrides = []string{}
	}
	if st.Problem != nil {
		out.Problem, out.Missing = st.Problem.Error(), missing(st.Problem)
	}
	ps := llm.Providers()
	for _, n := range llm.ProviderNames() {
		p := ps[n]
		mp := ModelProvider{Name: p.Name, BaseURL: p.BaseURL, KeyRequired: p.KeyRequired, DefaultModel: p.DefaultModel, ExampleModel: p.ExampleModel}
		if len(p.KeyEnv) > 0 {
			mp.KeyEnv = p.KeyEnv[0]
		}
		out.Providers = append(out.Providers, mp)
	}
	return out
}

// getModel is GET /api/model.
func (a *Agent) getModel(c echo.Context) *httpError {
	src, he := a.models()
	if he != nil {
		return he
	}
	return jsonOK(c, http.StatusOK, modelState(src.State()))
}

// putModel is PUT /api/model: saves the choice (the key with owner-only permissions) and makes
// the next request use it.
func (a *Agent) putModel(c echo.Context) *httpError {
	src, he := a.models()
	if he != nil {
		return he
	}
	var req ModelSettings
	if he := decode(c, reqbody.Default, &req, "model settings", modelExample, false); he != nil {
		return he
	}
	st, err := src.Save(c.Request().Context(), llm.Settings{Provider: req.Provider, Model: req.Model, BaseURL: req.BaseURL, APIKey: req.APIKey}, req.ClearKey)
	if err != nil {
		return errorf(http.StatusBadRequest, "model settings not saved: %v", err)
	}
	a.log.Info().Str("model", st.Active).Bool("ready", st.Problem == nil).Msg("model settings saved from the options page")
	return jsonOK(c, http.StatusOK, modelState(st))
}

// testModel is POST /api/model/test: a tiny real call with the settings sent (not saved).
func (a *Agent) testModel(c echo.Context) *httpError {
	src, he := a.models()
	if he != nil {
		return he
	}
	var req ModelSettings
	if he := decode(c, reqbody.Default, &req, "model settings", modelExample, false); he != nil {
		return he
	}
	cfg, reply, took, err := src.Test(c.Request().Context(), llm.Settings{Provider: req.Provider, Model: req.Model, BaseURL: req.BaseURL, APIKey: req.APIKey})
	res := ModelTestResult{OK: err == nil, Model: cfg.String(), MS: took.Milliseconds()}
	if cfg.Provider == "" {
		res.Model = ""
	}
	if err != nil {
		res.Error, res.Missing = err.Error(), missing(err)
		if !errors.Is(err, llm.ErrTestFailed) && !errors.Is(err, llm.ErrNotConfigured) {
			return errorf(http.StatusBadRequest, "%v", err)
		}
	}
	if len(reply) > 200 {
		reply = reply[:200]
	}
	res.Reply = reply
	return jsonOK(c, http.StatusOK, res)
}

// missing names the setting err says is missing, or "".
func missing(err error) string {
	if nce := (*llm.NotConfiguredError)(nil); errors.As(err, &nce) {
		return nce.Missing
	}
	return ""
}
