package task

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/tabrelay/tabrelay/agent/actions"
	"github.com/tabrelay/tabrelay/agent/actions/gate"
	"github.com/tabrelay/tabrelay/agent/fastpath"
	"github.com/tabrelay/tabrelay/agent/llm"
	"github.com/tabrelay/tabrelay/snapshot"
	"github.com/tmc/langchaingo/llms"
)

// ModelFastPath is the Model recorded on tasks the fast path ran (see Runner.Command).
const ModelFastPath = "fastpath"

// fastMatch is a command understood without the model.
type fastMatch struct {
	action *actions.Action // nil for a page question (answer)
	answer string
	what   string
	// rest are the further steps of a compound command ("type Ada in name and click submit"),
	// each matched on a fresh page model after the step before it ran; tabs are the shared tabs
	// they are matched with.
	rest []string
	tabs []fastpath.Tab
	// snap is the page model of tab the command was matched on (nil for none).
	snap *snapshot.Snapshot
	tab  string
	// ref is the element the user's words named (the one candidate the match found; "" for
	// none): the command approves acting on it at ordinary risk.
	ref string
	// approve: the user approved beforehand the steps the fast path runs on the elements their
	// words named (CommandRequest.Approve), however grave; each approval is bound to its step's
	// element and used once.
	approve bool
}

// Command handles a typed or spoken request: simple one-step commands ("click sign in",
// "scroll down", "what is on this page?") run at once through the fast path, without the model
// but with the same confirmation rules, records and events; anything else starts a model task.
// It returns the new task at once (see Wait). With no model configured, requests the fast
// path cannot handle fail with an llm.NotConfiguredError that also says why the fast path
// passed.
func (r *Runner) Command(ctx context.Context, command, tabID string) (*Task, error) {
	return r.CommandWith(ctx, CommandRequest{Text: command, Tab: tabID})
}

// CommandRequest is a command for [Runner.CommandWith].
type CommandRequest struct {
	// Text is the typed or spoken request.
	Text string
	// Tab is the tab's target id ("" for the active tab).
	Tab string
	// Approve approves beforehand each step the fast path runs on an element the command
	// names, even one that would wait for the user's confirmation (a purchase, sending,
	// deleting…). It approves nothing else: a step on another element, and every step of a
	// model (a compound command's rest handed to the model included), still asks.
	Approve bool
}

// CommandWith is Command with options (see CommandRequest).
func (r *Runner) CommandWith(ctx context.Context, req CommandRequest) (*Task, error) {
	command, tabID := req.Text, req.Tab
	if r.opts.Browser == nil {
		return nil, fmt.Errorf("task: no browser connection: the agent needs the relay's in-process client")
	}
	fm, reason, err := r.matchFast(ctx, command, &tabID)
	if err != nil && !llm.Ready(r.opts.Model) {
		// the browser failed, not the lack of a model: say so (a model task would fail the same way)
		return nil, err
	}
	if fm == nil && !llm.Ready(r.opts.Model) {
		return nil, fmt.Errorf("%q is not a simple command (%s): %w", command, reason,
			&llm.NotConfiguredError{Reason: "requests other than simple commands need a language model"})
	}
	if fm != nil {
		fm.approve = req.Approve
	}
	rn, err := r.start(context.WithoutCancel(ctx), StartRequest{Goal: command, Tab: tabID, Conversation: true}, fm)
	if err != nil {
		return nil, err
	}
	return r.snapshotOf(rn), nil
}

// matchFast tries the fast path on the tab (resolving an empty tabID to the active tab). It
// returns the match, or why the fast path passed, or the browser's error when it could not
// look at the tab.
func (r *Runner) matchFast(ctx context.Context, command string, tabID *string) (*fastMatch, string, error) {
	tabs, err := r.opts.Browser.Tabs(ctx)
	if err != nil {
		return nil, "", fmt.Errorf("listing the tabs failed: %w", err)
	}
	ftabs := make([]fastpath.Tab, 0, len(tabs))
	for _, t := range tabs {
		ftabs = append(ftabs, fastpath.Tab{ID: t.ID, Title: t.Title, URL: t.URL})
		if *tabID == "" && t.Active {
			*tabID = t.ID
		}
	}
	if *tabID == "" && len(tabs) > 0 {
		*tabID = tabs[0].ID
	}
	var snap *snapshot.Snapshot
	if *tabID != "" {
		if snap, err = r.opts.Browser.Snapshot(ctx, *tabID); err != nil {
			return nil, "", fmt.Errorf("reading the page failed: %w", err)
		}
	}
	steps := fastpath.Split(command, snap)
	res := fastpath.Match(steps[0], snap, ftabs)
	if !res.OK() {
		if len(steps) > 1 {
			return nil, fmt.Sprintf("step 1 of %d, %q: %s", len(steps), steps[0], res.Reason), nil
		}
		return nil, res.Reason, nil
	}
	if res.Action == nil {
		if len(steps) > 1 {
			return nil, "a page question cannot be one step of several", nil
		}
		return &fastMatch{answer: res.Answer, what: "describe"}, "", nil
	}
	quiet := fastpath.LeavesPage(res, snap)
	for i, step := range steps[1:] {
		// Refuse before touching the page a later part the fast path refuses whatever the page
		// (a text it would have to guess), or one that names nothing on the page when the parts
		// before it only type into fields; any other part whose element is not there yet may
		// appear once the parts before it ran.
		later := fastpath.Match(step, snap, ftabs)
		if (later.Outcome == fastpath.NotSimple && later.Reason != fastpath.ReasonUnread) || (quiet && later.Outcome == fastpath.NotFound) {
			return nil, fmt.Sprintf("step %d of %d, %q: %s", i+2, len(steps), step, later.Reason), nil
		}
		quiet = quiet && fastpath.LeavesPage(later, snap)
	}
	fm := fastStep(res)
	fm.rest, fm.tabs, fm.snap, fm.tab = steps[1:], ftabs, snap, *tabID
	return fm, "", nil
}

// fastStep describes a matched fast-path action for the task's records.
func fastStep(res fastpath.Result) *fastMatch {
	what := actions.Default().Kind(res.Action.Kind).ToolName()
	if len(res.Candidates) == 1 {
		c := res.Candidates[0]
		if c.Ref != "" {
			what += fmt.Sprintf(" %s %q", c.Role, c.Name)
		} else {
			what += fmt.Sprintf(" tab %q", c.Name)
		}
	}
	switch p := res.Action.Params.(type) {
	case *actions.Navigate:
		what += " " + p.URL
	case *actions.Open:
		what += " " + p.URL
	case *actions.Press:
		what += " " + p.Key
	case *actions.Scroll:
		what += " " + p.Direction
	}
	fm := &fastMatch{action: res.Action, answer: res.Answer, what: what}
	if len(res.Candidates) == 1 {
		fm.ref = res.Candidates[0].Ref
	}
	return fm
}

// runFast runs a fast-path command as a task of one step, or of one step per part of a
// compound command: each later part is matched on a fresh page model after the one before ran,
// and the task stops at the first part that fails or is not understood (the parts before it
// have run; the error says which).
func (l *loop) runFast(fm *fastMatch) {
	if fm.snap != nil && fm.tab == l.tabID {
		// the page model the command was matched on, read moments ago: the task starts from it
		l.lastSnap, l.snapTab, l.lastText = fm.snap, fm.tab, capSnapshot(fm.snap.Text, l.opts.MaxSnapshotChars)
	}
	l.start()
	if fm.action == nil {
		l.end(StatusSucceeded, fm.answer, "")
		return
	}
	total := 1 + len(fm.rest)
	var done []string
	for i, cur := 0, fm; ; i++ {
		said, ok := l.runFastStep(cur, i+1)
		if !ok {
			return
		}
		done = append(done, said)
		if i == len(fm.rest) {
			break
		}
		step := fm.rest[i]
		snap, err := l.snapshot() // the next step's refs are found in it (findRef)
		if err != nil {
			l.end(StatusFailed, "", fmt.Sprintf("reading the page before step %d of %d (%q) failed: %v; done so far: %s", i+2, total, step, err, strings.Join(done, "; ")))
			return
		}
		res := fastpath.Match(step, snap, fm.tabs)
		if (!res.OK() || res.Action == nil) && llm.Ready(l.opts.Model) {
			l.handToModel(done, fm.rest[i:], res.Reason)
			return
		}
		if !res.OK() || res.Action == nil {
			l.end(StatusFailed, "", fmt.Sprintf("step %d of %d, %q, was not run: %s; done so far: %s", i+2, total, step, res.Reason, strings.Join(done, "; ")))
			return
		}
		cur = fastStep(res)
		cur.approve = fm.approve
	}
	l.end(StatusSucceeded, "Done: "+strings.Join(done, "; then "), "")
}

// handToModel continues a compound command with the model when the fast path ran its first
// parts but does not understand the next one: the model sees the steps already run (as its own
// earlier tool calls), what is left to do and the page as it is now.
func (l *loop) handToModel(done, rest []string, why string) {
	l.rn.mu.Lock()
	l.rn.task.Model = llm.Name(l.opts.Model, l.opts.ModelName)
	l.rn.mu.Unlock()
	// why may quote the page (element names): it goes in a page block
	note := fmt.Sprintf("Done so far without a model: %s. Still to do: %s. Read the page again if you need it, then continue. The fast path could not go on because:\n%s",
		strings.Join(done, "; then "), strings.Join(rest, ", then "), pageBlock(why))
	l.hist = append(l.hist, entry{role: llms.ChatMessageTypeHuman, text: note, step: l.turn})
	l.think()
}

// runFastStep runs one fast-path action as the model's tool call would (the same records,
// rules and checks) and says what it did; false when the task ended (failed or cancelled).
func (l *loop) runFastStep(fm *fastMatch, n int) (string, bool) {
	tool := actions.Default().Kind(fm.action.Kind).ToolName()
	args, err := json.Marshal(fm.action.Params)
	if err != nil {
		l.end(StatusFailed, "", fmt.Sprintf("encoding the action: %v", err))
		return "", false
	}
	call := llms.ToolCall{ID: fmt.Sprintf("fast_%d", n), Type: "function", FunctionCall: &llms.FunctionCall{Name: tool, Arguments: string(args)}}
	if fm.ref != "" {
		// The user's command named this element: it approves acting on it at ordinary risk
		// (or, sent with approve, at any), for this step only.
		level := gate.Ordinary
		if fm.approve {
			level = gate.Grave
		}
		l.named = &gate.Grant{Kind: fm.action.Kind, Ref: fm.ref, Level: level}
	}
	// With no model, nobody reads the page after the step: a later part of the command is
	// matched on a page model of its own.
	l.unobserved = !llm.Ready(l.opts.Model)
	ended, _ := l.exec(call, "fast path (no model): "+fm.what)
	l.named, l.unobserved = nil, false
	if ended {
		return "", false
	}
	l.rn.mu.Lock()
	last := l.rn.task.Steps[len(l.rn.task.Steps)-1]
	l.rn.mu.Unlock()
	if last.Status != StepOK {
		l.end(StatusFailed, "", last.Error)
		return "", false
	}
	said := fm.what
	if last.URLAfter != last.URLBefore {
		said += fmt.Sprintf(" (now at %s)", last.URLAfter)
	}
	return said, true
}
