package skills

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/tabrelay/tabrelay/agent/actions"
	"github.com/tabrelay/tabrelay/agent/actions/gate"

	"github.com/google/uuid"

	"github.com/tabrelay/tabrelay/agent/task"
	"github.com/tabrelay/tabrelay/snapshot"
)

// RunRequest asks for a skill run.
type RunRequest struct {
	// Params are the parameter values by name.
	Params map[string]string `json:"params,omitempty"`
	// Tab is the tab to run on ("" for the active tab).
	Tab string `json:"tab,omitempty"`
	// Request is the user's words, from which missing parameters are taken (by the model when
	// one is configured, else from "name=value" pairs and the text after the skill's name).
	Request string `json:"request,omitempty"`
	// Approve approves beforehand each step whose target the skill names in its own words
	// (not through a parameter or a pattern), even one the safety gate would ask about (a
	// purchase, sending, deleting…): an approval bound to that step's element, used once.
	// Every other risky step asks the person when it comes (or fails the run when nobody can
	// be asked); steps handed to the model always ask.
	Approve bool `json:"approve,omitempty"`
	// ModelParams marks Params as a model's words (an MCP client's run_skill), not the
	// person's: a step handed to the model then acts only for the words that started the run.
	// Only the MCP door sets it; an HTTP caller holding the secret speaks for the person.
	ModelParams bool `json:"-"`
}

// RunResult is what a run did.
type RunResult struct {
	// TaskID is the task recording the run (in the agent's task store).
	TaskID string `json:"taskId"`
	Skill  string `json:"skill"`
	// Status is succeeded, failed, or cancelled (the run's context ended: the user cancelled
	// its task, or the agent shut down).
	Status task.Status `json:"status"`
	// Error says why a failed run failed and what to do.
	Error string `json:"error,omitempty"`
	// Output is what the skill returned (the value of its last evaluate step), if anything.
	Output string `json:"output,omitempty"`
	// Steps reports each structured step.
	Steps []StepReport `json:"steps"`
	// Handovers counts the steps handed to the model; ModelCalls all the run's model calls (the
	// handovers', and the one that took parameter values from the request, if any).
	Handovers  int `json:"handovers"`
	ModelCalls int `json:"modelCalls"`
	// DurationMS is the run's wall time.
	DurationMS int64 `json:"durationMs"`
	// Draft is an updated SKILL.md when the model did a step differently than written: review it
	// and save it (PUT /api/skills/{name}) to replay the new way without the model.
	Draft string `json:"draft,omitempty"`
	// Confirm describes the step the safety gate held when a run with nobody to ask
	// (WithoutAsking) stopped there: nothing of it was done; run again with approve to do it.
	Confirm []string `json:"confirm,omitempty"`
}

// StepReport is the outcome of one structured step.
type StepReport struct {
	Index int    `json:"index"`
	Do    string `json:"do"`
	// Target is the step's target as written (`button "Save"`).
	Target string `json:"target,omitempty"`
	// Ref is the element it resolved to.
	Ref string `json:"ref,omitempty"`
	// Status is ok, skipped, model (done by the model) or failed.
	Status  string `json:"status"`
	Message string `json:"message,omitempty"`
	// HandoverTask is the model task that did the step.
	HandoverTask string `json:"handoverTask,omitempty"`
	DurationMS   int64  `json:"durationMs"`
}

// MissingParamsError refuses a run whose required parameters were not given.
type MissingParamsError struct {
	Skill   string
	Missing []Param
	// How says how to give them where the run was asked for; empty: as --param or "params".
	How string
}

// MissingParams returns the names of the missing parameters.
func (e *MissingParamsError) MissingParams() []string {
	names := make([]string, len(e.Missing))
	for i, p := range e.Missing {
		names[i] = p.Name
	}
	return names
}

// Error names each missing parameter with its description and example.
func (e *MissingParamsError) Error() string {
	parts := make([]string, len(e.Missing))
	for i, p := range e.Missing {
		s := p.Name
		var extra []string
		if p.Description != "" {
			extra = append(extra, p.Description)
		}
		if p.Example != "" && !p.Secret {
			extra = append(extra, fmt.Sprintf("e.g. %q", p.Example))
		}
		if len(extra) > 0 {
			s += " (" + strings.Join(extra, ", ") + ")"
		}
		parts[i] = s
	}
	how := e.How
	if how == "" {
		how = fmt.Sprintf("Give it as --param %s=… or {\"params\":{\"%s\":\"…\"}}", e.Missing[0].Name, e.Missing[0].Name)
	}
	return fmt.Sprintf("skill %s needs %s before it can run: %s; nothing was done. %s",
		e.Skill, plural(len(e.Missing), "parameter", "parameters"), strings.Join(parts, "; "), how)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "a required " + one
	}
	return fmt.Sprintf("%d required %s", n, many)
}

// fillParams merges given values, defaults and values found in the request, and refuses a run
// that still lacks a required parameter.
// calls counts the model calls made to find parameter values in the request.
func (s *Service) fillParams(ctx context.Context, sk *Skill, req RunRequest) (params map[string]string, calls int, err error) {
	params = map[string]string{}
	for k, v := range req.Params {
		if _, ok := sk.Param(k); !ok {
			var names []string
			for _, p := range sk.Parameters {
				names = append(names, p.Name)
			}
			if len(names) == 0 {
				names = []string{"none"}
			}
			return nil, calls, fmt.Errorf("skill %s has no parameter %q (its parameters: %s)", sk.Name, k, strings.Join(names, ", "))
		}
		params[k] = v
	}
	missing := func() []Param {
		var out []Param
		for _, p := range sk.Parameters {
			if _, ok := params[p.Name]; !ok && p.Required {
				out = append(out, p)
			}
		}
		return out
	}
	if m := missing(); len(m) > 0 && strings.TrimSpace(req.Request) != "" {
		found, n := s.paramsFromRequest(ctx, sk, req.Request, m)
		calls += n
		for k, v := range found {
			if _, ok := params[k]; !ok {
				params[k] = v
			}
		}
	}
	if m := missing(); len(m) > 0 {
		return nil, calls, &MissingParamsError{Skill: sk.Name, Missing: m}
	}
	for _, p := range sk.Parameters {
		if _, ok := params[p.Name]; !ok {
			params[p.Name] = p.Default
		}
	}
	return params, calls, nil
}

// Run runs skill name: parameters are checked first (a missing required one refuses the run
// with a *MissingParamsError before anything happens), then each structured step is replayed
// against a fresh snapshot; a step that cannot be resolved or whose effect does not appear is
// handed to the model when one is configured. The run is recorded as a task. The error is
// non-nil only when the run was refused; a run that failed has Status failed and Error set.
func (s *Service) Run(ctx context.Context, name string, req RunRequest) (*RunResult, error) {
	sk, err := s.lib.Get(name)
	if err != nil {
		return nil, err
	}
	return s.RunSkill(ctx, sk, req)
}

// RunSkill is Run for a skill that need not be in the library (e.g. a draft).
func (s *Service) RunSkill(ctx context.Context, sk *Skill, req RunRequest) (*RunResult, error) {
	r, err := s.prepare(ctx, sk, req)
	if err != nil {
		return nil, err
	}
	lock := s.tabLock(req.Tab)
	lock.Lock()
	defer lock.Unlock()
	ctx = r.begin(ctx)
	r.exec(ctx)
	return r.finish(ctx), nil
}

// StartSkill is RunSkill in the background: the checks that may refuse the run (parameters,
// confirmation) happen first, then the run's task is recorded and returned at once while the
// steps run (after any other run on the tab). The run outlives ctx; with the agent's runner as
// Options.Runner it is one of the runner's tasks: Runner.Wait waits for it, Runner.Cancel
// stops it, Runner.Close waits for it, and its events are published on the runner's bus.
// Without a runner nothing can stop it: it ends with its steps (each bounded by its timeouts).
func (s *Service) StartSkill(ctx context.Context, sk *Skill, req RunRequest) (*task.Task, error) {
	r, err := s.prepare(ctx, sk, req)
	if err != nil {
		return nil, err
	}
	rctx := r.begin(context.WithoutCancel(ctx))
	t := r.t.Clone()
	go func() {
		lock := s.tabLock(req.Tab)
		lock.Lock()
		defer lock.Unlock()
		r.exec(rctx)
		r.finish(rctx)
	}()
	return t, nil
}

// prepare checks a run before anything happens: a browser, the parameters (taken from the
// request when missing), a model for a prose skill, and approval for risky steps.
func (s *Service) prepare(ctx context.Context, sk *Skill, req RunRequest) (*run, error) {
	if s.opts.Browser == nil {
		return nil, errors.New("skills cannot run: no browser is connected to the skills service")
	}
	params, calls, err := s.fillParams(ctx, sk, req)
	if err != nil {
		return nil, err
	}
	if len(sk.Steps) == 0 {
		if s.opts.Runner == nil {
			return nil, fmt.Errorf("skill %s has no ```steps block to replay and no model is configured to follow its prose; add structured steps or configure a model (TABRELAY_LLM_PROVIDER)", sk.Name)
		}
	}
	// the run's sites: those of the tab it starts on, of the person's request, and those the
	// skill itself names (the person saved it)
	sites := append([]string(nil), sk.Sites...)
	for _, site := range gate.SitesIn(sk.Raw) {
		sites = append(sites, string(site))
	}
	return &run{s: s, sk: sk, params: params, tab: req.Tab, request: strings.TrimSpace(req.Request), start: time.Now(), paramCalls: calls,
		approve: req.Approve, modelParams: req.ModelParams, noAsk: ctx.Value(noAskKey{}) != nil, bound: gate.NewTask(strings.TrimSpace(req.Request), sites)}, nil
}

type noAskKey struct{}

// WithoutAsking marks ctx for a run that has nobody to ask (a synchronous call such as the
// HTTP API's): a step the safety gate holds fails at once with the gate's error (a
// *gate.ConfirmError, "needs the user's confirmation") instead of waiting for an answer.
func WithoutAsking(ctx context.Context) context.Context {
	return context.WithValue(ctx, noAskKey{}, true)
}

// run is one skill run in progress.
type run struct {
	s      *Service
	sk     *Skill
	params map[string]string
	tab    string
	// request is the user's words that started the run ("" when it was started by name).
	request string
	// bound is the run's boundary for the safety gate: its sites and what it read.
	bound *gate.Task
	start time.Time
	t     *task.Task
	tr    *task.Tracked // the task as the runner tracks it (nil without a runner)
	res   *RunResult
	draft []Step // steps as they actually ran (nil until a step is done differently)
	diff  bool
	// paramCalls counts the model calls that found parameter values in the request.
	paramCalls int
	// failErr is the error the run failed with, which finish checks for the stop's cause.
	failErr error
	// modelParams is RunRequest.ModelParams.
	modelParams bool
	// approve is RunRequest.Approve.
	approve bool
	// noAsk is set for a run with nobody to ask (see WithoutAsking).
	noAsk bool
	// named is the element the current step's target names in the skill's own words ("" when
	// it names none): the skill, the user's procedure, approves acting on it.
	named string
	// conf is the confirmation the current step waited for, recorded with it (nil if none).
	conf *task.Confirmation
}

func (r *run) secretValues() []string {
	var out []string
	for _, p := range r.sk.Parameters {
		if v := r.params[p.Name]; p.Secret && v != "" {
			out = append(out, v)
		}
	}
	return out
}

// mask hides secret parameter values in text meant for records and logs.
func (r *run) mask(s string) string {
	for _, v := range r.secretValues() {
		s = strings.ReplaceAll(s, v, "••••")
	}
	return s
}

// begin records the run's task and returns the context to run it under (the runner's, which
// Cancel ends, when there is a runner).
func (r *run) begin(ctx context.Context) context.Context {
	var shown []string
	keys := make([]string, 0, len(r.params))
	for k := range r.params {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if r.params[k] != "" {
			shown = append(shown, fmt.Sprintf("%s=%q", k, r.mask(r.params[k])))
		}
	}
	goal := "Run skill " + r.sk.Name
	if len(shown) > 0 {
		goal += " (" + strings.Join(shown, ", ") + ")"
	}
	now := time.Now()
	r.t = &task.Task{ID: uuid.NewString(), Goal: goal, Request: r.mask(r.request), TabID: r.tab, Status: task.StatusRunning,
		Model: "skill:" + r.sk.Name, CreatedAt: now, UpdatedAt: now}
	for _, st := range r.sk.Steps {
		r.t.Plan = append(r.t.Plan, task.PlanItem{Text: r.mask(describe(st, r.params)), Status: task.PlanPending})
	}
	r.res = &RunResult{TaskID: r.t.ID, Skill: r.sk.Name, ModelCalls: r.paramCalls}
	if r.s.opts.Runner != nil {
		ctx, r.tr = r.s.opts.Runner.Track(ctx, r.t)
	}
	r.save(ctx)
	r.publish(task.Event{Type: task.EventStatus, Status: r.t.Status})
	r.publish(task.Event{Type: task.EventPlan, Plan: slices.Clone(r.t.Plan)})
	r.s.log.Info().Str("skill", r.sk.Name).Str("task", r.t.ID).Int("steps", len(r.sk.Steps)).Msg("skill run started")
	return ctx
}

func (r *run) save(ctx context.Context) {
	r.t.UpdatedAt = time.Now()
	if r.tr != nil { // saved as the runner saves its tasks: kept and saved later when it cannot be
		r.tr.Save(ctx, r.t)
		return
	}
	if r.s.opts.Store == nil {
		return
	}
	if err := r.s.opts.Store.SaveTask(context.WithoutCancel(ctx), r.t.Clone()); err != nil {
		r.s.log.Warn().Err(err).Str("task", r.t.ID).Msg("cannot record the skill run")
	}
}

func (r *run) publish(e task.Event) {
	if r.s.opts.Runner == nil {
		return
	}
	e.TaskID, e.Time = r.t.ID, time.Now()
	r.s.opts.Runner.Events().Publish(e)
}

// record appends a step to the task record.
func (r *run) record(ctx context.Context, tool string, args any, status task.StepStatus, result, errMsg, urlBefore, urlAfter string, started time.Time) {
	raw, _ := json.Marshal(args)
	st := task.Step{ID: fmt.Sprintf("s%d", len(r.t.Steps)+1), Index: len(r.t.Steps) + 1, Tool: tool,
		Args: json.RawMessage(r.mask(string(raw))), Status: status, Result: r.mask(capText(result, 2000)), Error: r.mask(errMsg),
		TabID: r.tab, URLBefore: urlBefore, URLAfter: urlAfter, StartedAt: started, EndedAt: time.Now(),
		DurationMS: time.Since(started).Milliseconds(), Confirmation: r.conf}
	r.conf = nil
	r.t.Steps = append(r.t.Steps, st)
	r.save(ctx)
	r.publish(task.Event{Type: task.EventStepFinished, Step: &st})
}

func (r *run) setPlan(ctx context.Context, i int, ps task.PlanStatus) {
	if i < len(r.t.Plan) {
		r.t.Plan[i].Status = ps
		r.tr.Update(r.t)
		r.publish(task.Event{Type: task.EventPlan, Plan: slices.Clone(r.t.Plan)})
	}
}

func capText(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// fail ends the run as failed because of err, with msg (which tells err) for the user.
func (r *run) fail(err error, msg string) {
	r.failErr = err
	r.res.Status = task.StatusFailed
	r.res.Error = r.mask(msg)
	var ce *gate.ConfirmError
	if errors.As(err, &ce) {
		r.res.Confirm = append(r.res.Confirm, r.mask(ce.Decision.Prompt()))
	}
}

func (r *run) exec(ctx context.Context) {
	if len(r.sk.Steps) == 0 {
		// A prose-only skill: the model follows it.
		rep := StepReport{Index: 1, Do: "follow", Status: "model"}
		err := r.handover(ctx, -1, "the skill has no structured steps", &rep)
		if err != nil {
			rep.Status, rep.Message = "failed", err.Error()
			r.fail(err, err.Error())
		}
		r.res.Steps = append(r.res.Steps, rep)
		return
	}
	for i, st := range r.sk.Steps {
		if ctx.Err() != nil {
			err := fmt.Errorf("the run was stopped before step %d: %w", i+1, context.Cause(ctx))
			r.fail(err, err.Error())
			return
		}
		r.setPlan(ctx, i, task.PlanActive)
		rep := StepReport{Index: i + 1, Do: st.Do}
		if st.Target != nil {
			rep.Target = expandTarget(*st.Target, r.params)
		}
		started := time.Now()
		out, err := r.step(ctx, st, &rep)
		var soft *stepError
		switch {
		case err == nil:
			if rep.Status == "" {
				rep.Status = "ok"
			}
			if out != "" {
				r.res.Output = out
			}
			r.addDraft(st)
			r.setPlan(ctx, i, task.PlanDone)
		case errors.As(err, &soft):
			// The page is not as the skill expects: hand the step to the model.
			rep.Message = r.mask(soft.Error())
			herr := r.handover(ctx, i, soft.Error(), &rep)
			if herr != nil {
				rep.Status = "failed"
				rep.Message = r.mask(fmt.Sprintf("%s; %s", soft.Error(), herr.Error()))
				r.setPlan(ctx, i, task.PlanFailed)
				r.fail(errors.Join(soft, herr), fmt.Sprintf("step %d (%s) failed: %s", i+1, describe(st, r.params), rep.Message))
			} else {
				rep.Status = "model"
				r.setPlan(ctx, i, task.PlanDone)
			}
		default:
			rep.Status, rep.Message = "failed", r.mask(err.Error())
			r.setPlan(ctx, i, task.PlanFailed)
			r.fail(err, fmt.Sprintf("step %d (%s) failed: %s", i+1, describe(st, r.params), err.Error()))
		}
		rep.DurationMS = time.Since(started).Milliseconds()
		r.res.Steps = append(r.res.Steps, rep)
		if r.res.Status == task.StatusFailed {
			return
		}
	}
}

func (r *run) addDraft(st Step) { r.draft = append(r.draft, st) }

func (r *run) finish(ctx context.Context) *RunResult {
	switch {
	case ctx.Err() != nil && r.res.Status == task.StatusFailed:
		r.res.Status = task.StatusCancelled
		if cause := context.Cause(ctx); !errors.Is(r.failErr, cause) { // else the message tells it
			r.res.Error = cause.Error() + "; " + r.res.Error
		}
	case r.res.Status == "":
		r.res.Status = task.StatusSucceeded
	}
	r.res.DurationMS = time.Since(r.start).Milliseconds()
	r.t.Status = r.res.Status
	r.t.Error = r.res.Error
	r.t.Usage.LLMCalls += r.res.ModelCalls
	if r.diff && r.res.Status == task.StatusSucceeded {
		d := *r.sk
		d.Steps = r.draft
		d.Bundled, d.Source = false, ""
		if md, err := d.Markdown(); err == nil {
			r.res.Draft = string(md)
			// kept for the task: a run in the background (StartSkill) offers it too
			r.s.keepDraft(RunDraft{TaskID: r.t.ID, Skill: r.sk.Name, Markdown: r.res.Draft})
		}
	}
	switch {
	case r.res.Output != "":
		r.t.Answer = capText(r.res.Output, 4000)
	case r.res.Status == task.StatusSucceeded:
		r.t.Answer = fmt.Sprintf("Skill %s done: %d steps, %d by the model.", r.sk.Name, len(r.res.Steps), r.res.Handovers)
	}
	if r.res.Draft != "" {
		r.t.Answer += "\nThe model did a step differently than written: an updated skill is ready to review and save, to replay without the model."
	}
	r.t.FinishedAt = time.Now()
	r.save(ctx)
	r.tr.End(r.t)
	// As for the agent's tasks: the status, then the answer (which ends event streams).
	r.publish(task.Event{Type: task.EventStatus, Status: r.t.Status})
	if r.res.Status == task.StatusSucceeded {
		r.publish(task.Event{Type: task.EventAnswer, Status: r.t.Status, Answer: r.t.Answer})
	} else {
		r.publish(task.Event{Type: task.EventAnswer, Status: r.t.Status, Error: r.t.Error})
	}
	r.s.log.Info().Str("skill", r.sk.Name).Str("task", r.t.ID).Str("status", string(r.res.Status)).
		Int("handovers", r.res.Handovers).Int("model_calls", r.res.ModelCalls).Int64("ms", r.res.DurationMS).Msg("skill run ended")
	return r.res
}

// stepError is a step the page did not let run as written (target missing, effect absent,
// action refused): the model may do it another way.
type stepError struct{ msg string }

func (e *stepError) Error() string { return e.msg }

func soft(format string, args ...any) error { return &stepError{msg: fmt.Sprintf(format, args...)} }

// snapshot reads the tab's page model and its URL.
func (r *run) snapshot(ctx context.Context) (*snapshot.Snapshot, string, error) {
	snap, err := r.s.opts.Browser.Snapshot(ctx, r.tab)
	if err != nil {
		return nil, "", fmt.Errorf("read the page: %w", err)
	}
	if snap == nil {
		return nil, "", errors.New("read the page: the browser returned no snapshot")
	}
	return snap, snap.URL, nil
}

// find resolves target t, retrying on fresh snapshots while the page settles.
func (r *run) find(ctx context.Context, t Target) (*snapshot.Node, string, error) {
	start := time.Now()
	deadline := start.Add(r.s.opts.ResolveTimeout)
	prev := ""
	for {
		snap, u, err := r.snapshot(ctx)
		if err != nil {
			return nil, "", err
		}
		n, err := Resolve(snap, t, r.params)
		if err == nil {
			return n, u, nil
		}
		// Give up at the deadline, or earlier once the page has stopped changing for a while
		// (the same outline twice: the rendered text is compared whole, never read).
		settled := snap.Text == prev && time.Since(start) > r.s.opts.ResolveTimeout/3
		if time.Now().After(deadline) || settled || ctx.Err() != nil {
			return nil, u, err
		}
		prev = snap.Text
		select {
		case <-ctx.Done():
		case <-time.After(150 * time.Millisecond):
		}
	}
}

// act runs an action and records it (as the tool the step names). The safety gate judges it
// as an action of the agent for the user's request; a step it holds waits for the person's
// answer (the run's task shows the question), and runs once they approve.
func (r *run) act(ctx context.Context, tool string, action actions.Action, urlBefore string) (*actions.Result, error) {
	started := time.Now()
	after := urlBefore
	if err := action.Validate(); err != nil {
		r.record(ctx, tool, action, task.StepError, "", err.Error(), urlBefore, after, started)
		return nil, err
	}
	grants := gate.NewGrants()
	if r.named != "" {
		level := gate.Ordinary
		if r.approve {
			level = gate.Grave
		}
		grants.Name(action.Kind, r.named, level)
	} else if action.Kind == "evaluate" {
		grants.Name(action.Kind, "", gate.Ordinary) // the skill's own script
	}
	gctx := gate.With(gate.WithTask(ctx, r.bound), gate.Request{Who: gate.Agent, Goal: r.request, Grants: grants})
	var out *actions.Result
	var err error
	for asked := 0; ; asked++ {
		out, err = r.s.opts.Browser.Act(gctx, r.tab, action)
		var held *gate.ConfirmError
		if !errors.As(err, &held) || asked >= 16 {
			break
		}
		ok, cerr := r.confirm(ctx, held.Decision)
		if cerr != nil {
			err = cerr
			break
		}
		if !ok {
			err = fmt.Errorf("%w %s (%s)", errDeclined, held.Decision.Prompt(), held.Decision.Reason)
			break
		}
		grants.Approve(held.Decision)
	}
	if err != nil {
		r.record(ctx, tool, action, task.StepError, "", err.Error(), urlBefore, after, started)
		return nil, err
	}
	if out.URL != "" {
		after = out.URL
	}
	r.record(ctx, tool, action, task.StepOK, out.Text(), "", urlBefore, after, started)
	return out, nil
}

// confirm asks the person about decision d through the run's task (status
// waiting_confirmation, a confirmation event) and waits for the answer. Without the agent's
// runner, or for a run with nobody to ask (WithoutAsking), the gate's error stands.
func (r *run) confirm(ctx context.Context, d gate.Decision) (bool, error) {
	if r.tr == nil || r.noAsk {
		return false, &gate.ConfirmError{Decision: d}
	}
	id := fmt.Sprintf("s%d", len(r.t.Steps)+1)
	r.conf = &task.Confirmation{Reason: d.Reason, Prompt: d.Prompt()}
	ok, err := r.tr.WaitConfirm(ctx, id, func() {
		st := task.Step{ID: id, Index: len(r.t.Steps) + 1, Tool: "confirm", Status: task.StepRunning, TabID: r.tab,
			StartedAt: time.Now(), Confirmation: r.conf}
		r.t.Status = task.StatusWaitingConfirmation
		r.t.Steps = append(r.t.Steps, st) // shown while it waits; recorded with its outcome after
		r.save(ctx)
		r.publish(task.Event{Type: task.EventStatus, Status: task.StatusWaitingConfirmation})
		r.publish(task.Event{Type: task.EventConfirmation, Step: &st})
	})
	if n := len(r.t.Steps); n > 0 && r.t.Steps[n-1].ID == id {
		r.t.Steps = r.t.Steps[:n-1]
	}
	r.t.Status = task.StatusRunning
	r.publish(task.Event{Type: task.EventStatus, Status: task.StatusRunning})
	if err != nil {
		return false, err
	}
	now := time.Now().UTC()
	r.conf.Approved, r.conf.DecidedAt = &ok, now
	return ok, nil
}

// errDeclined is wrapped by the error of a step the person declined.
var errDeclined = errors.New("the user declined")

// literal reports whether target t names its element in the skill's own words: no
// parameter, no pattern, no alternative.
func literal(t Target) bool {
	if len(t.Any) > 0 {
		return false
	}
	return t.Name != "" && !isPattern(t.Name) && !strings.Contains(t.Name, "{{")
}

// step runs one structured step. Errors of type *stepError may be handed to the model.
func (r *run) step(ctx context.Context, st Step, rep *StepReport) (output string, err error) {
	if st.If != "" && strings.TrimSpace(expand(st.If, r.params)) == "" {
		rep.Status, rep.Message = "skipped", "condition "+st.If+" is empty"
		return "", nil
	}
	x := func(s string) string { return expand(s, r.params) }
	var ref, urlBefore string
	target := func() (string, error) {
		n, u, err := r.find(ctx, *st.Target)
		urlBefore = u
		if err != nil {
			if errors.Is(err, errUnresolved) {
				return "", soft("%s", err.Error())
			}
			return "", err
		}
		rep.Ref = n.Ref
		if literal(*st.Target) {
			r.named = n.Ref
		}
		return n.Ref, nil
	}
	r.named = ""
	if st.Target != nil && st.Do != "fill" {
		var err error
		if ref, err = target(); err != nil {
			if st.Optional {
				rep.Status, rep.Message = "skipped", "optional step: "+err.Error()
				return "", nil
			}
			return "", err
		}
	} else if st.Do == "navigate" {
		_, urlBefore, _ = r.snapshot(ctx) // relative URLs resolve against the page's
	}
	if st.Do == "hand_over" {
		return "", r.handOverToPerson(ctx, x(st.Text), rep)
	}
	// The step as an action of the registry (see stepKinds).
	var action actions.Action
	switch st.Do {
	case "click":
		action = actions.Do(actions.Click{Ref: ref})
	case "hover":
		action = actions.Do(actions.Hover{Ref: ref})
	case "type":
		action = actions.Do(actions.Type{Ref: ref, Text: x(st.Text), Submit: st.Submit})
	case "press":
		action = actions.Do(actions.Press{Key: st.Key, Ref: ref})
	case "select":
		vals := make([]string, len(st.Values))
		for i, v := range st.Values {
			vals[i] = x(v)
		}
		action = actions.Do(actions.Select{Ref: ref, Values: vals})
	case "check", "uncheck":
		action = actions.Do(actions.Check{Ref: ref, Checked: st.Do == "check"})
	case "fill":
		snap, u, err := r.snapshot(ctx)
		if err != nil {
			return "", err
		}
		urlBefore = u
		nodes := snap.Nodes()
		var fields []actions.Field
		for _, f := range st.Fields {
			n, err := resolveNodes(nodes, *f.Target, r.params)
			if err != nil {
				return "", soft("%s", err.Error())
			}
			fields = append(fields, actions.Field{Ref: n.Ref, Value: actions.Text(x(f.Value))})
		}
		if st.From != "" {
			vals, err := parseValues(x(st.From))
			if err != nil {
				return "", fmt.Errorf("the values to fill: %w", err)
			}
			for _, kv := range vals {
				n, err := resolveField(nodes, kv[0])
				if err != nil {
					return "", soft("%s", err.Error())
				}
				fields = append(fields, actions.Field{Ref: n.Ref, Value: actions.Text(kv[1])})
			}
		}
		action = actions.Do(actions.Fill{Fields: fields})
	case "navigate":
		u := x(st.URL)
		if base, err := url.Parse(urlBefore); err == nil && urlBefore != "" {
			if ref, err := url.Parse(u); err == nil {
				u = base.ResolveReference(ref).String()
			}
		}
		action = actions.Do(actions.Navigate{URL: u})
	case "wait":
		action = actions.Do(actions.Wait{Text: x(st.Text), URL: x(st.URL)}).WithTimeout(10)
	case "evaluate":
		action = actions.Do(actions.Evaluate{Ref: ref, Expression: expandJS(st.Script, r.params)})
	case "scroll":
		dir := st.Direction
		if dir == "" {
			dir = "down"
		}
		action = actions.Do(actions.Scroll{Direction: dir, Ref: ref})
	case "back":
		action = actions.Do(actions.Back{})
	case "forward":
		action = actions.Do(actions.Forward{})
	case "reload":
		action = actions.Do(actions.Reload{})
	default:
		return "", fmt.Errorf("step kind %q has no action", st.Do)
	}
	out, err := r.act(ctx, st.Do, action, urlBefore)
	r.named = ""
	if err != nil {
		if ctx.Err() != nil || errors.Is(err, gate.ErrConfirm) || errors.Is(err, gate.ErrBlocked) || errors.Is(err, errDeclined) {
			return "", err // the person's say (or the gate's refusal) is not the model's to work around
		}
		// The page refused the action as written (covered, disabled, gone…): the model may
		// find another way.
		return "", soft("%s", err.Error())
	}
	if st.Do == "evaluate" {
		output = evalOutput(out)
	}
	if st.Expect != nil {
		if err := r.expect(ctx, *st.Expect); err != nil {
			return output, err
		}
	}
	return output, nil
}

// expect checks a step's effect.
func (r *run) expect(ctx context.Context, e Expect) error {
	timeout := e.Timeout
	if timeout <= 0 {
		timeout = r.s.opts.ExpectTimeout.Seconds()
	}
	check := func(w actions.Wait, what string) error {
		a := actions.Do(w).WithTimeout(timeout)
		started := time.Now()
		out, err := r.s.opts.Browser.Act(ctx, r.tab, a)
		if err != nil {
			r.record(ctx, "expect", a, task.StepError, "", err.Error(), "", "", started)
			return soft("the step ran but %s did not follow within %gs", what, timeout)
		}
		r.record(ctx, "expect", a, task.StepOK, out.Text(), "", "", "", started)
		return nil
	}
	if e.Text != "" {
		t := expand(e.Text, r.params)
		if err := check(actions.Wait{Text: t}, fmt.Sprintf("the text %q", t)); err != nil {
			return err
		}
	}
	if e.Gone != "" {
		t := expand(e.Gone, r.params)
		if err := check(actions.Wait{TextGone: t}, fmt.Sprintf("the disappearance of %q", t)); err != nil {
			return err
		}
	}
	if e.URL != "" {
		t := expand(e.URL, r.params)
		if err := check(actions.Wait{URL: t}, fmt.Sprintf("a URL containing %q", t)); err != nil {
			return err
		}
	}
	return nil
}

// evalOutput is an evaluate result's value: a JSON string becomes its text.
func evalOutput(out *actions.Result) string {
	if len(out.Value) == 0 {
		return out.Message
	}
	var s string
	if json.Unmarshal(out.Value, &s) == nil {
		return s
	}
	return string(out.Value)
}

// expandJS fills templates in a script with JSON string literals, so values cannot break out.
func expandJS(script string, params map[string]string) string {
	return templateRE.ReplaceAllStringFunc(script, func(m string) string {
		b, _ := json.Marshal(params[templateRE.FindStringSubmatch(m)[1]])
		return string(b)
	})
}

// describe says what a step does, in words (for plans, goals and messages).
func describe(st Step, params map[string]string) string {
	x := func(s string) string { return expand(s, params) }
	tgt := ""
	if st.Target != nil {
		tgt = expandTarget(*st.Target, params)
	}
	var s string
	switch st.Do {
	case "click", "hover":
		s = st.Do + " " + tgt
	case "type":
		s = fmt.Sprintf("type %q into %s", x(st.Text), tgt)
		if st.Submit {
			s += " and press Enter"
		}
	case "press":
		s = "press " + st.Key
		if tgt != "" {
			s += " in " + tgt
		}
	case "select":
		vals := make([]string, len(st.Values))
		for i, v := range st.Values {
			vals[i] = fmt.Sprintf("%q", x(v))
		}
		s = fmt.Sprintf("select %s in %s", strings.Join(vals, ", "), tgt)
	case "check", "uncheck":
		s = st.Do + " " + tgt
	case "fill":
		var parts []string
		for _, f := range st.Fields {
			parts = append(parts, fmt.Sprintf("%s = %q", f.Target.String(), x(f.Value)))
		}
		if st.From != "" {
			parts = append(parts, strings.ReplaceAll(strings.TrimSpace(x(st.From)), "\n", "; "))
		}
		s = "fill the form: " + strings.Join(parts, "; ")
	case "navigate":
		s = "go to " + x(st.URL)
	case "wait":
		s = "wait for " + strings.TrimSpace(x(st.Text)+" "+x(st.URL))
	case "evaluate":
		s = "read the page with a script"
	case "scroll":
		s = "scroll " + st.Direction
	case "hand_over":
		s = "hand the tab to you: " + x(st.Text)
	default:
		s = st.Do
	}
	if st.Expect != nil {
		var e []string
		if st.Expect.Text != "" {
			e = append(e, fmt.Sprintf("the text %q appears", x(st.Expect.Text)))
		}
		if st.Expect.Gone != "" {
			e = append(e, fmt.Sprintf("%q disappears", x(st.Expect.Gone)))
		}
		if st.Expect.URL != "" {
			e = append(e, fmt.Sprintf("the URL contains %q", x(st.Expect.URL)))
		}
		s += " (then " + strings.Join(e, " and ") + ")"
	}
	return s
}

// handOverToPerson runs a hand_over step: the task waits (status waiting_user, with the
// hand-over) until the person presses Continue, then the run goes on. Nobody continuing within
// the time limit fails the run (a model could not do it instead).
func (r *run) handOverToPerson(ctx context.Context, instruction string, rep *StepReport) error {
	started := time.Now()
	_, before, _ := r.snapshot(ctx)
	ok, err := r.tr.WaitHandover(ctx, instruction, func(h task.Handover) {
		r.t.Status, r.t.Handover = task.StatusWaitingUser, &h
		r.save(ctx)
		r.publish(task.Event{Type: task.EventStatus, Status: task.StatusWaitingUser})
		r.publish(task.Event{Type: task.EventHandover, Handover: &h})
	})
	r.t.Status, r.t.Handover = task.StatusRunning, nil
	r.publish(task.Event{Type: task.EventStatus, Status: task.StatusRunning})
	args := map[string]string{"instruction": instruction}
	_, after, _ := r.snapshot(ctx)
	switch {
	case err != nil:
		r.record(ctx, "hand_over", args, task.StepError, "", err.Error(), before, after, started)
		return fmt.Errorf("handing the tab over: %w", err)
	case !ok:
		msg := fmt.Sprintf("nobody pressed Continue in time after: %s", instruction)
		r.record(ctx, "hand_over", args, task.StepError, "", msg, before, after, started)
		return errors.New(msg)
	}
	r.record(ctx, "hand_over", args, task.StepOK, "the person pressed Continue", "", before, after, started)
	rep.Message = "the person pressed Continue"
	return nil
}
