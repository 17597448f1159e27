package task

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/tmc/langchaingo/llms"
)

// Toolbox is a set of tools the task loop offers the model next to its browser tools: the
// skills service's list_skills, read_skill and run_skill (package skills implements it; this
// package cannot import skills, which needs the Runner). The runner builds it at construction with [Options.Toolbox].
//
// Each call is recorded as a step like any browser action. A tool that is not read-only is
// held to the site allowlist of page-changing actions (checked on the current page) and is
// followed by a look at the page, so the model sees what it changed.
type Toolbox interface {
	// Tools returns the tool definitions to offer. A tool named like a browser tool is left out.
	Tools() []llms.Tool
	// CallTool runs tool name with its JSON arguments on tab (whose URL is pageURL) and returns
	// the text for the model. An error is given to the model as the tool's result: word it for
	// the model to act on.
	CallTool(ctx context.Context, name string, args json.RawMessage, tab, pageURL string) (string, error)
	// ReadOnlyTool reports whether tool name never changes a page.
	ReadOnlyTool(name string) bool
}

// ToolboxFit is implemented by a Toolbox whose tools serve only some goals (skills replay saved
// procedures for some requests on some sites): the loop offers its tools to a task only when
// Fits says they could serve the task's goal on the page at pageURL. A Toolbox without it is
// offered to every task.
type ToolboxFit interface {
	Fits(goal, pageURL string) bool
}

type noToolboxKey struct{}

// WithoutToolbox returns a context under which new tasks are offered no toolbox tools. Use it
// for tasks started on behalf of a toolbox tool (a skill handing a step to the model), which
// must not call back into the toolbox; the loop passes such a context to CallTool itself.
func WithoutToolbox(ctx context.Context) context.Context {
	return context.WithValue(ctx, noToolboxKey{}, true)
}

func toolboxOff(ctx context.Context) bool {
	off, _ := ctx.Value(noToolboxKey{}).(bool)
	return off
}

// toolbox returns the runner's toolbox (nil when none).
func (r *Runner) toolbox() Toolbox { return r.box }

// useToolbox gives the loop the runner's toolbox unless ctx says otherwise or the toolbox
// says it cannot serve the goal on the current page ([ToolboxFit]), leaving out tools whose
// names clash with the browser tools.
func (l *loop) useToolbox(ctx context.Context) {
	tb := l.r.toolbox()
	if tb == nil || toolboxOff(ctx) || l.box != nil {
		return
	}
	if fit, ok := tb.(ToolboxFit); ok && !fit.Fits(l.rn.task.Goal, l.lastURL) {
		return
	}
	builtin := map[string]bool{}
	for _, t := range Tools(true) {
		builtin[t.Function.Name] = true
	}
	l.boxNames = map[string]bool{}
	for _, t := range tb.Tools() {
		if t.Function == nil || t.Function.Name == "" || builtin[t.Function.Name] || l.boxNames[t.Function.Name] {
			if t.Function != nil {
				l.opts.Log.Warn().Str("tool", t.Function.Name).Msg("toolbox tool left out: its name is taken or empty")
			}
			continue
		}
		l.boxNames[t.Function.Name] = true
		l.boxTools = append(l.boxTools, t)
	}
	if len(l.boxTools) > 0 {
		l.box = tb
	}
}

// isBoxTool reports whether name is one of the toolbox's tools offered to this task.
func (l *loop) isBoxTool(name string) bool { return l.box != nil && l.boxNames[name] }

// readOnly reports whether the tool never changes a page (browser or toolbox tool).
func (l *loop) readOnly(name string) bool {
	if l.isBoxTool(name) {
		return l.box.ReadOnlyTool(name)
	}
	return isReadOnlyTool(name)
}

// callBox runs a toolbox tool. Tools that may change the page are held to the site allowlist,
// their result is page data (a skill's output is read from the page) and the page is looked at
// afterwards like after a browser action.
func (l *loop) callBox(name string, args map[string]any) result {
	ro := l.box.ReadOnlyTool(name)
	if !ro && !siteAllowed(l.opts.AllowedSites, l.lastURL) {
		return result{blocked: true, err: fmt.Errorf("%s may change the page and acting on %s is not allowed (allowed sites: %s); the user can extend the allowlist",
			name, hostOf(l.lastURL), strings.Join(l.opts.AllowedSites, ", "))}
	}
	raw, err := json.Marshal(args)
	if err != nil {
		return result{err: fmt.Errorf("encoding the %s arguments: %w", name, err)}
	}
	out, err := l.box.CallTool(WithoutToolbox(l.ctx), name, raw, l.tabID, l.lastURL)
	if err != nil {
		if l.ctx.Err() != nil {
			return result{err: context.Cause(l.ctx)}
		}
		return result{err: fmt.Errorf("%s: %w", name, err)}
	}
	if ro {
		return result{text: out}
	}
	head := fmt.Sprintf("result of %s:\n%s\n", name, pageBlock(truncate(out, 8000)))
	if l.tabID == "" {
		if err := l.refreshTab(); err != nil || l.tabID == "" {
			return result{text: head}
		}
	}
	res := l.observeWith(head)
	if res.full {
		// Keep the tool's own result when the page it led to is superseded later.
		res.summary = fmt.Sprintf("result of %s:\n%s\n%s", name, pageBlock(truncate(out, 2000)), res.summary)
	}
	return res
}

// toolboxPrompt tells the model when to use the toolbox's tools (their schemas, with what each
// does, are in the tool list).
func toolboxPrompt(tools []llms.Tool) string {
	if len(tools) == 0 {
		return ""
	}
	names := make([]string, len(tools))
	for i, t := range tools {
		names[i] = t.Function.Name
	}
	return "\n\nSkills (" + strings.Join(names, ", ") + ") replay the user's saved procedures; one may fit this goal: run it with parameters from the goal (never invented), then check the page."
}
