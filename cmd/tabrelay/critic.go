package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/tmc/langchaingo/llms"

	"github.com/tabrelay/tabrelay/agent/actions/gate"
	"github.com/tabrelay/tabrelay/agent/llm"
)

// Environment variables of a critic model of its own (--agent-critic provider:model).
const (
	envCriticBaseURL = "TABRELAY_CRITIC_BASE_URL"
	envCriticAPIKey  = "TABRELAY_CRITIC_API_KEY"
)

// criticFrom builds the alignment check the setting names (--agent-critic, TABRELAY_CRITIC):
// "off" none; "agent" (or "") the agent's own model, following it when the options page
// changes it (with no model, the rules alone); "provider:model" a model of its own, its
// endpoint in TABRELAY_CRITIC_BASE_URL and its key in TABRELAY_CRITIC_API_KEY or the
// provider's key variable (the agent's TABRELAY_LLM_API_KEY and base URL are never sent to
// it: they belong to another endpoint).
func criticFrom(ctx context.Context, setting string, agent llms.Model, lookup func(string) (string, bool)) (gate.Critic, error) {
	setting = strings.TrimSpace(setting)
	switch strings.ToLower(setting) {
	case "off", "none", "false", "0":
		return nil, nil
	case "", "agent":
		return gate.ModelCritic{Model: agent}, nil
	}
	provider, model, ok := strings.Cut(setting, ":")
	if !ok || strings.TrimSpace(provider) == "" || strings.TrimSpace(model) == "" {
		return nil, fmt.Errorf("--agent-critic %q: say off, agent, or provider:model (e.g. openai:gpt-4o-mini)", setting)
	}
	cfg, err := llm.FromLookup(func(k string) (string, bool) {
		switch k {
		case llm.EnvProvider:
			return strings.TrimSpace(provider), true
		case llm.EnvModel:
			return strings.TrimSpace(model), true
		case llm.EnvBaseURL:
			return lookup(envCriticBaseURL)
		case llm.EnvAPIKey:
			return lookup(envCriticAPIKey)
		}
		return lookup(k)
	})
	if err != nil {
		return nil, fmt.Errorf("--agent-critic %q: %w (its endpoint goes in %s, its key in %s)", setting, err, envCriticBaseURL, envCriticAPIKey)
	}
	m, err := llm.New(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("--agent-critic %q: %w", setting, err)
	}
	return gate.ModelCritic{Model: m}, nil
}
