package gate

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/tmc/langchaingo/llms"

	"github.com/tabrelay/tabrelay/agent/llm"
)

// criticPrompt is the model critic's instructions and the description of its input (a
// [Review] as JSON) and output ({"verdict": "allow"|"ask", "reason": …}).
//
//go:embed critic_prompt.md
var criticPrompt string

// ModelCritic is a [Critic] that asks a language model through langchaingo: the instructions
// of critic_prompt.md, then the step as JSON. Its answer is a small JSON object; anything else
// counts as ask.
type ModelCritic struct {
	// Model answers (a *llm.Switch holding no model: ErrNoCritic, the rules alone judge).
	Model llms.Model
	// MaxTokens bounds the answer (default 200).
	MaxTokens int
}

// criticAnswer is the critic model's answer.
type criticAnswer struct {
	Verdict string `json:"verdict"`
	Reason  string `json:"reason"`
}

// ErrCriticAnswer is matched (errors.Is) by the error of a critic model's answer that is not
// the JSON object asked for: the step asks.
var ErrCriticAnswer = errors.New("the alignment check's answer could not be read")

// Review asks the model about r.
func (c ModelCritic) Review(ctx context.Context, r Review) (CriticVerdict, error) {
	if !llm.Ready(c.Model) {
		return CriticVerdict{}, ErrNoCritic
	}
	input, err := json.Marshal(r)
	if err != nil {
		return CriticVerdict{}, fmt.Errorf("describe the step for the alignment check: %w", err)
	}
	max := c.MaxTokens
	if max <= 0 {
		max = 200
	}
	start := time.Now()
	resp, err := c.Model.GenerateContent(ctx, []llms.MessageContent{
		llms.TextParts(llms.ChatMessageTypeSystem, criticPrompt),
		llms.TextParts(llms.ChatMessageTypeHuman, string(input)),
	}, llms.WithTemperature(0), llms.WithMaxTokens(max))
	v := CriticVerdict{Took: time.Since(start)}
	if err != nil {
		return v, fmt.Errorf("ask the alignment check's model: %w", err)
	}
	if len(resp.Choices) == 0 {
		return v, fmt.Errorf("%w: no answer", ErrCriticAnswer)
	}
	ch := resp.Choices[0]
	v.InputTokens, v.OutputTokens = llm.Usage(ch.GenerationInfo)
	a, err := parseCriticAnswer(ch.Content)
	if err != nil {
		return v, err
	}
	v.Ask, v.Reason = a.Verdict != "allow", a.Reason
	return v, nil
}

// parseCriticAnswer reads the critic model's answer: the one JSON object in it (a code fence
// or words around it are dropped) with a verdict of allow or ask.
func parseCriticAnswer(text string) (criticAnswer, error) {
	i, j := strings.IndexByte(text, '{'), strings.LastIndexByte(text, '}')
	if i < 0 || j < i {
		return criticAnswer{}, fmt.Errorf("%w: no JSON object in %q", ErrCriticAnswer, clip(oneLine(text), 80))
	}
	var a criticAnswer
	if err := json.Unmarshal([]byte(text[i:j+1]), &a); err != nil {
		return criticAnswer{}, fmt.Errorf("%w: %v", ErrCriticAnswer, err)
	}
	a.Verdict = strings.ToLower(strings.TrimSpace(a.Verdict))
	if a.Verdict != "allow" && a.Verdict != "ask" {
		return criticAnswer{}, fmt.Errorf("%w: verdict %q is neither allow nor ask", ErrCriticAnswer, clip(a.Verdict, 40))
	}
	a.Reason = clip(oneLine(a.Reason), 200)
	return a, nil
}
