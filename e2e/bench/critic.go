package main

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/tabrelay/tabrelay/agent/actions/gate"
	"github.com/tabrelay/tabrelay/agent/llm"
	"github.com/tabrelay/tabrelay/agent/llmtest"
)

// criticGoal is the person's words of the critic group's steps.
const criticGoal = "archive the newsletter from Ada, then turn on login alerts in my notification settings"

// criticSteps are steps of the kinds the alignment check reviews, as the element reader reads
// them from real pages: a settings form's Save with its fields, an icon-only control, Enter in
// a search form, a bulk-action list with many options, a link named in a script outside the
// gate's lists.
func criticSteps() []gate.Proposal {
	settings := &gate.Form{Method: "post", Fields: []gate.Field{
		{Name: "authenticity_token", Kind: "hidden", Value: "q8ZtV1pD3Xw0R5mYk2LhN7sJc9bFgA4uTeE6oI"},
		{Name: "display_name", Kind: "text", Label: "Display name", Value: "Ada Lovelace"},
		{Name: "email", Kind: "email", Label: "E-mail", Value: "ada@example.com"},
		{Name: "alerts", Kind: "checkbox", Label: "Login alerts", Checked: true, Value: "1"},
		{Name: "digest", Kind: "checkbox", Label: "Weekly digest", Value: "1"},
		{Name: "lang", Kind: "select", Label: "Language", Chosen: []string{"English"}, Value: "en"},
		{Name: "tz", Kind: "select", Label: "Time zone", Chosen: []string{"(UTC+01:00) Amsterdam, Berlin"}, Value: "Europe/Berlin"},
		{Name: "password", Kind: "password", Label: "Current password", Secret: true},
	}}
	var opts []string
	for i := range 20 {
		opts = append(opts, fmt.Sprintf("Label %d", i+1))
	}
	return []gate.Proposal{
		{Action: gate.Action{Kind: "click"}, URL: "https://app.example/settings/notifications",
			Element: &gate.Element{Ref: "e41", Role: "button", Tag: "button", Type: "submit", Name: "Save changes", Text: "Save changes",
				Scope: "form", Submits: true, FormAction: "/settings/notifications", Form: settings, URL: "https://app.example/settings/notifications"}},
		{Action: gate.Action{Kind: "click"}, URL: "https://mail.example/inbox",
			Element: &gate.Element{Ref: "e12", Role: "button", Tag: "div", Icons: []string{"fa-box-archive"}, Data: []string{"id archive-btn", "tooltip archive"},
				Inferred: "box archive", URL: "https://mail.example/inbox"}},
		{Action: gate.Action{Kind: "type", Text: "newsletter from:ada", Submit: true}, URL: "https://mail.example/inbox",
			Element: &gate.Element{Ref: "e3", Role: "searchbox", Tag: "input", Type: "search", Name: "Search mail", Scope: "form", Submits: true,
				FormAction: "/search", Form: &gate.Form{Method: "get", Fields: []gate.Field{{Name: "q", Kind: "search", Value: "newsletter from:ada"}}}, URL: "https://mail.example/inbox"}},
		{Action: gate.Action{Kind: "select", Values: []string{"Label 7"}}, URL: "https://mail.example/inbox",
			Element: &gate.Element{Ref: "e19", Role: "combobox", Tag: "select", Name: "Move to label", Options: opts, URL: "https://mail.example/inbox"}},
		{Action: gate.Action{Kind: "click"}, URL: "https://mail.example/inbox",
			Element: &gate.Element{Ref: "e77", Role: "link", Tag: "a", Name: "შემდეგი გვერდი", Text: "შემდეგი გვერდი", URL: "https://mail.example/inbox"}},
	}
}

// runCritic measures what the alignment check costs per step: the model critic (the agent's
// own langchaingo openai provider) reviewing each of criticSteps against a real HTTP server
// standing in for the model, which answers at once. Tokens are the request's and the answer's
// size (bytes/4: the stand-in reports no usage); time is the gate's decision with the check
// (the request's encoding, the HTTP round trip, the answer's parsing) next to the rules alone.
// A real model adds its own answer time (for a small model, typically 0.3–1.5 s for this
// input and a 20-token answer), which no stand-in measures.
func runCritic(cfg config, r *Results) error {
	ctx := context.Background()
	srv := llmtest.NewServer("openai")
	defer srv.Close()
	m, err := llm.New(ctx, srv.Config("critic-bench"))
	if err != nil {
		return err
	}
	answer := `{"verdict":"allow","reason":"part of what you asked"}`
	withCritic := gate.New(gate.Options{UserHome: "/nonexistent", Critic: gate.ModelCritic{Model: m}})
	rules := gate.New(gate.Options{UserHome: "/nonexistent"})
	steps := criticSteps()
	reps := max(cfg.reps/20, 10)
	var with, alone []float64
	req := gate.Request{Goal: criticGoal}
	for range reps {
		for _, p := range steps {
			start := time.Now()
			_, _ = rules.CheckAll(ctx, []gate.Proposal{p}, req, nil)
			alone = append(alone, float64(time.Since(start).Microseconds())/1000)
			srv.Push(llmtest.Text(answer))
			start = time.Now()
			if _, err := withCritic.CheckAll(ctx, []gate.Proposal{p}, req, nil); err != nil {
				return fmt.Errorf("the check asked on an allowed answer: %w", err)
			}
			with = append(with, float64(time.Since(start).Microseconds())/1000)
		}
	}
	var in []float64
	for _, q := range srv.Requests() {
		in = append(in, float64(q.ApproxTokens()))
	}
	if len(in) != reps*len(steps) {
		return fmt.Errorf("the critic made %d model calls for %d steps", len(in), reps*len(steps))
	}
	sort.Float64s(in)
	r.add(Figure{Group: "critic", Name: "alignment check: model calls per step that changes something", Unit: "calls", Value: float64(len(in)) / float64(reps*len(steps))})
	r.add(Figure{Group: "critic", Name: "alignment check: input tokens per step (median)", Unit: "tokens", Value: median(in), Target: "≤ 1500", Met: met(median(in) <= 1500)})
	r.add(Figure{Group: "critic", Name: "alignment check: input tokens per step (largest: a settings form)", Unit: "tokens", Value: in[len(in)-1]})
	r.add(Figure{Group: "critic", Name: "alignment check: answer tokens per step", Unit: "tokens", Value: float64(len(answer)) / 4})
	r.add(Figure{Group: "critic", Name: "gate decision with the check over HTTP, model answering at once (median)", Unit: "ms", Value: median(with), Reference: median(alone), RefName: "rules alone"})
	return nil
}
