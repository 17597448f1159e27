package main

import (
	"context"
	"strings"
	"testing"

	"github.com/tabrelay/tabrelay/agent/actions/gate"
	"github.com/tabrelay/tabrelay/agent/llm"
	"github.com/tabrelay/tabrelay/agent/llmtest"
)

func TestCriticSetting(t *testing.T) {
	own := llmtest.NewOpenAI(t, llmtest.Text(`{"verdict":"ask","reason":"not asked for"}`))
	env := func(m map[string]string) func(string) (string, bool) {
		return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
	}
	agent := &llm.Switch{}
	step := gate.Review{Goal: "find a kettle", Kind: "click", Element: &gate.ReviewElement{Role: "button", Name: "Futa"}}
	for _, c := range []struct {
		name    string
		setting string
		env     map[string]string
		want    string // "none", "agent", "own", or "error"
	}{
		{"off", "off", nil, "none"},
		{"default is the agent's model", "", nil, "agent"},
		{"agent", "agent", nil, "agent"},
		{"a model of its own", "openai:critic-mini", map[string]string{envCriticBaseURL: own.URL, envCriticAPIKey: "critic-key"}, "own"},
		{"not provider:model", "gpt-4o", nil, "error"},
		{"unknown provider", "nosuch:model", nil, "error"},
		{"the agent's key is not sent to another endpoint", "openai:critic-mini", map[string]string{envCriticBaseURL: own.URL, llm.EnvAPIKey: "agent-key"}, "error"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cr, err := criticFrom(context.Background(), c.setting, agent, env(c.env))
			switch c.want {
			case "error":
				if err == nil {
					t.Fatalf("no error for %q", c.setting)
				}
				return
			case "none":
				if err != nil || cr != nil {
					t.Fatalf("critic %v, err %v", cr, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			mc, ok := cr.(gate.ModelCritic)
			if !ok {
				t.Fatalf("critic %T", cr)
			}
			if c.want == "agent" {
				if mc.Model != agent {
					t.Errorf("the critic does not follow the agent's model")
				}
				return
			}
			before := own.Calls()
			v, err := mc.Review(context.Background(), step)
			if err != nil || !v.Ask {
				t.Fatalf("review: %+v %v", v, err)
			}
			if own.Calls() != before+1 {
				t.Fatalf("the critic's own endpoint was not asked")
			}
			r := own.LastRequest()
			if r.Model != "critic-mini" || !strings.Contains(r.Header.Get("Authorization"), "critic-key") {
				t.Errorf("model %q, key not the critic's", r.Model)
			}
		})
	}
}
