package actions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/tabrelay/tabrelay/snapshot"
)

// Action is one thing to do in a tab. It decodes from JSON as documented in the package doc;
// Validate reports missing or unknown fields in words an agent can act on.
type Action struct {
	Kind string `json:"kind"`
	// Ref is the element acted on (e.g. "e7"), from the tab's latest snapshot.
	Ref string `json:"ref,omitempty"`
	// To is the drop target of a drag.
	To string `json:"to,omitempty"`
	// Text is what to type, or the text to wait for.
	Text string `json:"text,omitempty"`
	// TextGone is the text to wait to disappear.
	TextGone string `json:"textGone,omitempty"`
	// Key is a key or combination for press, e.g. "Enter" or "Control+A".
	Key string `json:"key,omitempty"`
	// Button is left (default), right or middle.
	Button string `json:"button,omitempty"`
	// Double makes a click a double click.
	Double bool `json:"double,omitempty"`
	// Modifiers are held during a click: Control, Shift, Alt, Meta.
	Modifiers []string `json:"modifiers,omitempty"`
	// Append types after the current content instead of replacing it.
	Append bool `json:"append,omitempty"`
	// Slowly types one key at a time (for pages that react to each key).
	Slowly bool `json:"slowly,omitempty"`
	// Submit presses Enter after typing.
	Submit bool `json:"submit,omitempty"`
	// Values are the options to select (by label or value).
	Values []string `json:"values,omitempty"`
	// Fields are the fields to fill.
	Fields []Field `json:"fields,omitempty"`
	// URL is where to navigate or open a tab, or (for wait) a URL or part of it to wait for.
	URL string `json:"url,omitempty"`
	// Direction of a scroll: up, down, left or right.
	Direction string `json:"direction,omitempty"`
	// Amount of a scroll in CSS pixels (default: most of the viewport).
	Amount float64 `json:"amount,omitempty"`
	// Expression is JavaScript to evaluate or to wait for (truthy); with Ref, a function
	// receiving the element, e.g. "el => el.value".
	Expression string `json:"expression,omitempty"`
	// State is a load state to wait for: load, domcontentloaded or networkidle.
	State string `json:"state,omitempty"`
	// Seconds to wait.
	Seconds float64 `json:"seconds,omitempty"`
	// Timeout in seconds for this action (default: the service's).
	Timeout float64 `json:"timeout,omitempty"`
	// Width and Height of the viewport for resize (both 0: back to the window size).
	Width  int `json:"width,omitempty"`
	Height int `json:"height,omitempty"`
	// Files to upload (paths on the machine running the browser).
	Files []string `json:"files,omitempty"`
	// Accept (default true) or dismiss a JavaScript dialog.
	Accept *bool `json:"accept,omitempty"`
	// PromptText answers a prompt dialog.
	PromptText string `json:"promptText,omitempty"`
	// FullPage screenshots the whole page, not just the viewport.
	FullPage bool `json:"fullPage,omitempty"`
	// Labels draws each ref over its element in a screenshot.
	Labels bool `json:"labels,omitempty"`
	// Format of a screenshot: png (default) or jpeg.
	Format string `json:"format,omitempty"`
	// Limit is how many history entries to return (console, errors, network; default 50).
	Limit int `json:"limit,omitempty"`
	// Snapshot options for kind snapshot.
	Snapshot *snapshot.Options `json:"snapshot,omitempty"`
}

// Field is one form field to fill: text for text fields, an option for selects, and
// true/false (also on/off, yes/no, checked/unchecked) for checkboxes, radios and switches.
type Field struct {
	Ref   string `json:"ref"`
	Value string `json:"value"`
}

// Result is what an action did, small enough to hand back to a model.
type Result struct {
	Kind string `json:"kind"`
	// Message says what happened.
	Message string `json:"message"`
	// TargetID is the tab acted on (for open: the new tab).
	TargetID string `json:"targetId,omitempty"`
	// URL and Title are set when the action changed them (and by navigations).
	URL   string `json:"url,omitempty"`
	Title string `json:"title,omitempty"`
	// Dialog is a JavaScript dialog the action opened.
	Dialog *snapshot.Dialog `json:"dialog,omitempty"`
	// Value is the result of evaluate.
	Value json.RawMessage `json:"value,omitempty"`
	// Data is a screenshot or PDF, of type MIME.
	Data []byte `json:"data,omitempty"`
	MIME string `json:"mime,omitempty"`
	// Snapshot is the result of kind snapshot.
	Snapshot *snapshot.Snapshot `json:"snapshot,omitempty"`
	// History entries for console, errors and network.
	Console  []ConsoleMessage `json:"console,omitempty"`
	Errors   []PageError      `json:"errors,omitempty"`
	Requests []Request        `json:"requests,omitempty"`
	// Tabs for kind tabs.
	Tabs []TabInfo `json:"tabs,omitempty"`
}

// kinds lists every action kind with the fields it needs, for validation and help.
var kinds = map[string]string{
	"snapshot": "", "click": "ref", "type": "ref, text", "press": "key", "hover": "ref", "drag": "ref, to",
	"select": "ref, values", "fill": "fields", "scroll": "", "wait": "one of text, textGone, url, state, expression, seconds",
	"evaluate": "expression", "resize": "width and height", "navigate": "url", "back": "", "forward": "",
	"reload": "", "upload": "ref, files", "dialog": "", "screenshot": "", "pdf": "", "console": "",
	"errors": "", "network": "", "tabs": "", "open": "", "focus": "", "close": "",
}

// Kinds returns the action kinds, sorted.
func Kinds() []string {
	out := make([]string, 0, len(kinds))
	for k := range kinds {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Validate checks that the action has a known kind and the fields that kind needs.
func (a *Action) Validate() error {
	a.Kind = strings.ToLower(strings.TrimSpace(a.Kind))
	need, ok := kinds[a.Kind]
	if !ok {
		if a.Kind == "" {
			return fmt.Errorf("action has no kind: use one of %s", strings.Join(Kinds(), ", "))
		}
		return fmt.Errorf("unknown action kind %q: use one of %s", a.Kind, strings.Join(Kinds(), ", "))
	}
	missing := func(what string) error {
		return fmt.Errorf("%s needs %s", a.Kind, what)
	}
	checkRef := func(r, field string) error {
		if r == "" {
			return missing(field + " (an element ref like e7 from a snapshot)")
		}
		if _, err := snapshot.ParseRef(r); err != nil {
			return fmt.Errorf("%s: %s: %w", a.Kind, field, err)
		}
		return nil
	}
	if a.Ref != "" {
		if err := checkRef(a.Ref, "ref"); err != nil {
			return err
		}
	}
	switch a.Kind {
	case "click", "hover", "upload":
		if err := checkRef(a.Ref, "ref"); err != nil {
			return err
		}
		if a.Kind == "upload" && len(a.Files) == 0 {
			return missing("files (paths to upload)")
		}
		if a.Kind == "click" {
			switch strings.ToLower(a.Button) {
			case "", "left", "right", "middle":
			default:
				return fmt.Errorf("click: bad button %q: use left, right or middle", a.Button)
			}
			if _, err := parseModifiers(a.Modifiers); err != nil {
				return fmt.Errorf("click: %w", err)
			}
		}
	case "type":
		if err := checkRef(a.Ref, "ref"); err != nil {
			return err
		}
		if a.Text == "" && a.Append {
			return missing("text")
		}
	case "press":
		if a.Key == "" {
			a.Key = a.Text
		}
		if _, err := ParseKeys(a.Key); err != nil {
			return fmt.Errorf("press: %w", err)
		}
	case "drag":
		if err := checkRef(a.Ref, "ref"); err != nil {
			return err
		}
		if err := checkRef(a.To, "to"); err != nil {
			return err
		}
	case "select":
		if err := checkRef(a.Ref, "ref"); err != nil {
			return err
		}
		if len(a.Values) == 0 && a.Text != "" {
			a.Values = []string{a.Text}
		}
		if len(a.Values) == 0 {
			return missing("values (option labels or values)")
		}
	case "fill":
		if len(a.Fields) == 0 {
			return missing(`fields: [{"ref":"e3","value":"..."}]`)
		}
		for i, f := range a.Fields {
			if err := checkRef(f.Ref, fmt.Sprintf("fields[%d].ref", i)); err != nil {
				return err
			}
		}
	case "scroll":
		switch strings.ToLower(a.Direction) {
		case "", "up", "down", "left", "right":
		default:
			return fmt.Errorf("scroll: bad direction %q: use up, down, left or right", a.Direction)
		}
		if a.Direction == "" && a.Ref == "" {
			a.Direction = "down"
		}
	case "wait":
		n := 0
		for _, set := range []bool{a.Text != "", a.TextGone != "", a.URL != "", a.State != "", a.Expression != "", a.Seconds > 0} {
			if set {
				n++
			}
		}
		if n == 0 {
			return missing(need)
		}
		if n > 1 {
			return fmt.Errorf("wait takes only one of text, textGone, url, state, expression, seconds")
		}
		switch strings.ToLower(a.State) {
		case "", "load", "domcontentloaded", "networkidle":
		default:
			return fmt.Errorf("wait: bad state %q: use load, domcontentloaded or networkidle", a.State)
		}
		if a.Seconds > 60 {
			return fmt.Errorf("wait: at most 60 seconds")
		}
	case "evaluate":
		if a.Expression == "" {
			a.Expression = a.Text
		}
		if a.Expression == "" {
			return missing("expression")
		}
	case "resize":
		if a.Width < 0 || a.Height < 0 || a.Width > 10000 || a.Height > 10000 || (a.Width == 0) != (a.Height == 0) {
			return fmt.Errorf("resize needs width and height between 1 and 10000 (both 0 to restore the window size)")
		}
	case "navigate":
		if a.URL == "" {
			return missing("url")
		}
	case "screenshot":
		switch strings.ToLower(a.Format) {
		case "", "png", "jpeg", "jpg":
		default:
			return fmt.Errorf("screenshot: bad format %q: use png or jpeg", a.Format)
		}
	}
	if a.Timeout < 0 || a.Timeout > 600 {
		return fmt.Errorf("%s: timeout must be between 0 and 600 seconds", a.Kind)
	}
	return nil
}

// Act validates and runs action a on tab targetID ("" for the first tab). Actions on one tab
// run one after another; errors are written for the agent to act on.
func (s *Service) Act(ctx context.Context, targetID string, a Action) (*Result, error) {
	if err := a.Validate(); err != nil {
		return nil, err
	}
	timeout := s.opts.Timeout
	if a.Timeout > 0 {
		timeout = time.Duration(a.Timeout * float64(time.Second))
	}
	if a.Kind == "wait" && a.Seconds > 0 && timeout < time.Duration(a.Seconds*float64(time.Second))+5*time.Second {
		timeout = time.Duration(a.Seconds*float64(time.Second)) + 5*time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	switch a.Kind {
	case "tabs":
		tabs, err := s.Tabs(ctx)
		if err != nil {
			return nil, err
		}
		return &Result{Kind: a.Kind, Message: fmt.Sprintf("%d tabs", len(tabs)), Tabs: tabs}, nil
	case "open":
		return s.openTab(ctx, a)
	}
	ts, err := s.tabFor(ctx, targetID)
	if err != nil {
		return nil, err
	}
	if err := ts.lock(ctx); err != nil {
		return nil, err
	}
	defer ts.unlock()
	r, err := s.run(ctx, ts, a)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil {
			return nil, fmt.Errorf("%s timed out after %v: %w", a.Kind, timeout, err)
		}
		return nil, err
	}
	r.Kind = a.Kind
	if r.TargetID == "" {
		r.TargetID = ts.id
	}
	return r, nil
}

// run dispatches an action on a locked tab.
func (s *Service) run(ctx context.Context, ts *tabState, a Action) (*Result, error) {
	if d := ts.tab.Dialog(); d != nil && a.Kind != "dialog" && a.Kind != "close" && a.Kind != "console" && a.Kind != "errors" && a.Kind != "network" && a.Kind != "snapshot" && a.Kind != "focus" {
		return nil, ts.tab.DialogError()
	}
	switch a.Kind {
	case "snapshot":
		o := snapshot.Options{}
		if a.Snapshot != nil {
			o = *a.Snapshot
		}
		snap, err := ts.tab.Snapshot(ctx, o)
		if err != nil {
			return nil, err
		}
		return &Result{Message: fmt.Sprintf("snapshot with %d refs", snap.Refs), Snapshot: snap, URL: snap.URL, Title: snap.Title}, nil
	case "click", "hover", "drag", "type", "press", "select", "fill", "upload", "scroll":
		return s.observe(ctx, ts, func() (string, error) {
			switch a.Kind {
			case "click":
				return s.click(ctx, ts, a)
			case "hover":
				return s.hover(ctx, ts, a)
			case "drag":
				return s.drag(ctx, ts, a)
			case "type":
				return s.typeText(ctx, ts, a)
			case "press":
				return s.press(ctx, ts, a)
			case "select":
				return s.selectOption(ctx, ts, a.Ref, a.Values)
			case "fill":
				return s.fill(ctx, ts, a)
			case "upload":
				return s.upload(ctx, ts, a)
			default:
				return s.scroll(ctx, ts, a)
			}
		})
	case "wait":
		return s.wait(ctx, ts, a)
	case "evaluate":
		return s.evaluate(ctx, ts, a)
	case "resize":
		return s.resize(ctx, ts, a)
	case "navigate", "back", "forward", "reload":
		return s.navigate(ctx, ts, a)
	case "dialog":
		return s.handleDialog(ctx, ts, a)
	case "screenshot":
		return s.screenshot(ctx, ts, a)
	case "pdf":
		return s.pdf(ctx, ts)
	case "console", "errors", "network":
		return s.history(ts, a), nil
	case "focus":
		if err := s.c.Call(ctx, "", "Target.activateTarget", map[string]any{"targetId": ts.id}, nil); err != nil {
			return nil, fmt.Errorf("focus tab: %w", err)
		}
		return &Result{Message: "tab focused"}, nil
	case "close":
		if err := s.c.Call(ctx, "", "Target.closeTarget", map[string]any{"targetId": ts.id}, nil); err != nil {
			return nil, fmt.Errorf("close tab: %w", err)
		}
		go s.forget(ts.id)
		return &Result{Message: "tab closed"}, nil
	}
	return nil, fmt.Errorf("unknown action kind %q", a.Kind)
}

func (s *Service) openTab(ctx context.Context, a Action) (*Result, error) {
	u := "about:blank"
	if a.URL != "" {
		var err error
		if u, err = s.checkURL(a.URL, ""); err != nil {
			return nil, err
		}
	}
	var r struct {
		TargetID string `json:"targetId"`
	}
	if err := s.c.Call(ctx, "", "Target.createTarget", map[string]any{"url": u}, &r); err != nil {
		return nil, fmt.Errorf("open tab: %w", err)
	}
	return &Result{Kind: "open", Message: "opened a new tab", TargetID: r.TargetID, URL: u}, nil
}

func (s *Service) history(ts *tabState, a Action) *Result {
	limit := a.Limit
	if limit <= 0 {
		limit = 50
	}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	tail := func(n int) int {
		if n > limit {
			return n - limit
		}
		return 0
	}
	r := &Result{}
	switch a.Kind {
	case "console":
		r.Console = append([]ConsoleMessage(nil), ts.console[tail(len(ts.console)):]...)
		r.Message = fmt.Sprintf("%d console messages", len(r.Console))
	case "errors":
		r.Errors = append([]PageError(nil), ts.errs[tail(len(ts.errs)):]...)
		r.Message = fmt.Sprintf("%d page errors", len(r.Errors))
	default:
		r.Requests = append([]Request(nil), ts.requests[tail(len(ts.requests)):]...)
		r.Message = fmt.Sprintf("%d requests", len(r.Requests))
	}
	return r
}
