package llm

import (
	"context"
	"sync"

	"github.com/tmc/langchaingo/llms"
)

// Switch is the server's language model as it is now: the model chosen in the options page
// can change while the server runs, and the next request uses it. It is an [llms.Model] that
// hands each call to the current model, or fails with why there is none; [Ready], [Name] and
// [ImageModeOf] read what it holds. The zero Switch has no model.
type Switch struct {
	mu    sync.RWMutex
	model llms.Model
	cfg   Config
	err   error
}

// Set makes model (built from cfg) the current model; a nil model with err says why there is
// none (a [*NotConfiguredError] when nothing is configured).
func (s *Switch) Set(model llms.Model, cfg Config, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.model, s.cfg, s.err = model, cfg, err
	if model != nil {
		s.err = nil
	}
}

// Current is the current model and its configuration, or nil and why there is none.
func (s *Switch) Current() (llms.Model, Config, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.model == nil {
		err := s.err
		if err == nil {
			err = &NotConfiguredError{Reason: "no model was chosen"}
		}
		return nil, s.cfg, err
	}
	return s.model, s.cfg, nil
}

// GenerateContent implements [llms.Model] with the current model.
func (s *Switch) GenerateContent(ctx context.Context, msgs []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
	m, _, err := s.Current()
	if err != nil {
		return nil, err
	}
	return m.GenerateContent(ctx, msgs, opts...)
}

// Call implements [llms.Model] with the current model.
func (s *Switch) Call(ctx context.Context, prompt string, opts ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, s, prompt, opts...)
}

// Ready reports whether m can answer now: it is not nil and, when it is a [*Switch], it holds
// a model.
func Ready(m llms.Model) bool {
	if s, ok := m.(*Switch); ok {
		cur, _, _ := s.Current()
		return cur != nil
	}
	return m != nil
}

// Name describes m for the records (a [*Switch]'s current configuration), or fallback.
func Name(m llms.Model, fallback string) string {
	if s, ok := m.(*Switch); ok {
		if cur, cfg, _ := s.Current(); cur != nil {
			return cfg.String()
		}
	}
	return fallback
}

// ImageModeOf is how screenshots are attached for m (a [*Switch]'s current configuration), or
// fallback.
func ImageModeOf(m llms.Model, fallback ImageMode) ImageMode {
	if s, ok := m.(*Switch); ok {
		if cur, cfg, _ := s.Current(); cur != nil {
			return cfg.ImageMode()
		}
	}
	return fallback
}

// Why is why m cannot answer now (nil when [Ready]).
func Why(m llms.Model) error {
	if s, ok := m.(*Switch); ok {
		_, _, err := s.Current()
		return err
	}
	if m == nil {
		return &NotConfiguredError{Reason: "the server was started without a model"}
	}
	return nil
}
