package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"

	"github.com/tabrelay/tabrelay/agent/actions"
	"github.com/tabrelay/tabrelay/agent/api"
	"github.com/tabrelay/tabrelay/agent/task"
	"github.com/tabrelay/tabrelay/internal/config"
)

// tabsCmd is `tabrelay tabs`.
type tabsCmd struct {
	config.Client `embed:""`
	JSON          bool `name:"json" help:"print the JSON answer"`
}

func runTabs(ctx context.Context, args []string, io stdio) error {
	return runCommand(ctx, "tabs", args, io)
}

// Run lists the shared tabs, most recently shared or focused first.
func (c *tabsCmd) Run(ctx context.Context, io stdio) error {
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	var res api.TabList
	if err := newClient(&c.Client).getJSON(ctx, "/tabs", nil, &res); err != nil {
		return err
	}
	if c.JSON {
		return writeJSON(io.out, res)
	}
	if len(res.Tabs) == 0 {
		fmt.Fprintln(io.out, "no shared tabs: share one with Alt+Shift+S on it, or the tabrelay icon (in the browser's extensions menu until pinned)")
		return nil
	}
	for i, t := range res.Tabs {
		mark := " "
		if i == 0 {
			mark = "*"
		}
		fmt.Fprintf(io.out, "%s %s  %s  %s\n", mark, t.TargetID, oneLine(t.Title, 60), t.URL)
	}
	return nil
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// snapshotCmd is `tabrelay snapshot`.
type snapshotCmd struct {
	config.Client `embed:""`
	Interactive   bool   `help:"list only elements with refs, one per line"`
	Full          bool   `help:"keep unnamed structure (the default output is compact)"`
	MaxChars      int    `name:"max-chars" help:"truncate the outline to this many characters (0: no limit)"`
	MaxTokens     int    `name:"max-tokens" help:"at most this many tokens (cl100k_base), what matters first; the header says what was left out (0: no limit)"`
	MaxDepth      int    `name:"max-depth" help:"limit the nesting depth (0: no limit)"`
	Scope         string `help:"render only the subtree of this ref"`
	Frame         string `help:"render only this frame (an iframe's ref, a frame id or part of its URL)"`
	JSON          bool   `name:"json" help:"print the JSON answer (url, title, refs, text, …)"`
	// Extra catches arguments to refuse them with a hint.
	Extra []string `arg:"" sep:"none" optional:"" hidden:""`
}

func runSnapshot(ctx context.Context, args []string, io stdio) error {
	return runCommand(ctx, "snapshot", args, io)
}

// Run prints the tab's role outline with refs.
func (c *snapshotCmd) Run(ctx context.Context, io stdio) error {
	interactive, full, asJSON := c.Interactive, c.Full, c.JSON
	maxChars, maxTokens, maxDepth := c.MaxChars, c.MaxTokens, c.MaxDepth
	scope, frame := c.Scope, c.Frame
	f := &c.Client
	if maxTokens < 0 {
		return fmt.Errorf("--max-tokens %d: use a number of tokens, or 0 for no limit", maxTokens)
	}
	if len(c.Extra) > 0 {
		return fmt.Errorf("snapshot takes no arguments (got %q); name a tab with --tab <targetId>", c.Extra)
	}
	q := url.Values{}
	setQ := func(k, v string) {
		if v != "" {
			q.Set(k, v)
		}
	}
	setQ("tab", f.Tab)
	if interactive {
		q.Set("interactive", "true")
	}
	if full {
		q.Set("full", "true")
	}
	if maxChars > 0 {
		q.Set("maxChars", strconv.Itoa(maxChars))
	}
	if maxTokens > 0 {
		q.Set("maxTokens", strconv.Itoa(maxTokens))
	}
	if maxDepth > 0 {
		q.Set("maxDepth", strconv.Itoa(maxDepth))
	}
	setQ("scope", scope)
	setQ("frame", frame)
	if asJSON {
		q.Set("format", "json")
	}
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	b, _, err := newClient(f).do(ctx, http.MethodGet, "/snapshot", q, nil)
	if err != nil {
		return err
	}
	if _, err := io.out.Write(b); err != nil {
		return err
	}
	if len(b) > 0 && b[len(b)-1] != '\n' {
		fmt.Fprintln(io.out)
	}
	return nil
}

// buildAction turns `act <kind> [args…]` into an action, as the action registry reads
// command lines (see actions.Registry.ParseArgs); --submit and --append set those parameters.
func buildAction(kind string, rest []string, submit, appendText bool) (actions.Action, error) {
	var flags []string
	if submit {
		flags = append(flags, "submit")
	}
	if appendText {
		flags = append(flags, "append")
	}
	return actions.Default().ParseArgs(kind, rest, flags...)
}

// actCmd is `tabrelay act <kind> [ref] [text…]` (or --json '{…}'). Its arguments are read by
// the action registry (actions.Registry.ParseArgs), which also writes its help.
type actCmd struct {
	config.Client `embed:""`
	JSON          string `name:"json" placeholder:"'{…}'" help:"the action as JSON, e.g. '{\"kind\":\"click\",\"ref\":\"e3\"}'"`
	Submit        bool   `help:"type: press Enter after typing"`
	Append        bool   `help:"type: add to the field's content instead of replacing it"`
	Out           string `name:"o" short:"o" placeholder:"FILE" help:"screenshot/pdf: write the image or PDF to this file"`
	PrintJSON     bool   `name:"print-json" help:"print the whole JSON result"`
	Format        string `default:"text" help:"extract: how to print the records: text (one JSON object a line), csv or json"`
	// Args are the kind and its arguments, taken as they are from the first one on (text to
	// type may start with a dash).
	Args []string `arg:"" sep:"none" optional:"" passthrough:"partial" placeholder:"kind [ref] [text…]"`
}

// Help lists the actions, from the action registry.
func (c *actCmd) Help() string {
	return "e.g. tabrelay act click e3 | type e4 hello world | press Enter | select e5 Blue | navigate https://… | fill e3=Ann e4=true | scroll down | wait Saved | back\n" +
		"     tabrelay act --json '{\"kind\":\"click\",\"ref\":\"e3\"}'\n\n" +
		"actions (refs like e3 come from `tabrelay snapshot`):\n" + actions.Default().Usage()
}

func runAct(ctx context.Context, args []string, io stdio) error {
	return runCommand(ctx, "act", args, io)
}

// Run sends the action to the tab and prints its result.
func (c *actCmd) Run(ctx context.Context, io stdio) error {
	raw, out, asJSON := c.JSON, c.Out, c.PrintJSON
	f := &c.Client
	format := strings.ToLower(c.Format)
	switch format {
	case "text", "csv", "json":
	default:
		return fmt.Errorf("--format %q: use text, csv or json", c.Format)
	}
	var action any
	switch {
	case raw != "":
		if len(c.Args) > 0 {
			return fmt.Errorf("give the action either as --json or as arguments, not both (got %q)", c.Args)
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(raw), &m); err != nil {
			return fmt.Errorf("--json is not a JSON object: %w", err)
		}
		action = m
	case len(c.Args) == 0:
		return fmt.Errorf("act needs an action: tabrelay act click e3 | type e4 hello | press Enter | navigate https://…; the actions:\n%s", actions.Default().Usage())
	default:
		a, err := buildAction(strings.ToLower(c.Args[0]), c.Args[1:], c.Submit, c.Append)
		if err != nil {
			return err
		}
		action = a
	}
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	var res actions.Result
	if err := newClient(f).postJSON(ctx, "/act", map[string]any{"tab": f.Tab, "action": action}, &res); err != nil {
		return err
	}
	if out != "" && len(res.Data) > 0 {
		if err := os.WriteFile(out, res.Data, 0o644); err != nil {
			return fmt.Errorf("write %s: %w", out, err)
		}
		fmt.Fprintf(io.out, "wrote %d bytes of %s to %s\n", len(res.Data), res.MIME, out)
		res.Data = nil
	}
	if asJSON {
		res.Data = nil
		return writeJSON(io.out, res)
	}
	if format != "text" {
		if res.Records == nil {
			return fmt.Errorf("--format %s prints the records of the extract action; %s has none (%s)", format, res.Kind, res.Message)
		}
		fmt.Fprintln(io.err, res.Message)
		if format == "csv" {
			return res.Records.WriteCSV(io.out)
		}
		return writeJSON(io.out, res.Records)
	}
	printResult(io.out, &res)
	return nil
}

// printResult shows an action's result in a few lines.
func printResult(w io.Writer, r *actions.Result) {
	fmt.Fprintln(w, r.Message)
	if r.URL != "" {
		fmt.Fprintf(w, "url: %s\n", r.URL)
	}
	if r.Title != "" {
		fmt.Fprintf(w, "title: %s\n", r.Title)
	}
	if r.Dialog != nil {
		b, _ := json.Marshal(r.Dialog)
		fmt.Fprintf(w, "dialog: %s\n", b)
	}
	if len(r.Value) > 0 {
		fmt.Fprintf(w, "value: %s\n", r.Value)
	}
	if r.Snapshot != nil {
		fmt.Fprintln(w, r.Snapshot.Text)
	}
	if r.Records != nil {
		_ = r.Records.WriteJSONLines(w) // as the other lines here, best effort on a terminal
	}
	for _, t := range r.Tabs {
		fmt.Fprintf(w, "%s  %s  %s\n", t.TargetID, oneLine(t.Title, 60), t.URL)
	}
	for _, m := range r.Console {
		fmt.Fprintf(w, "console.%s: %s\n", m.Type, oneLine(m.Text, 200))
	}
	for _, e := range r.Errors {
		fmt.Fprintf(w, "error: %s\n", oneLine(e.Text, 200))
	}
	for _, q := range r.Requests {
		fmt.Fprintf(w, "%s %s %d %s\n", q.Method, q.URL, q.Status, q.Failed)
	}
}

// screenshotCmd is `tabrelay screenshot [-o file.png]`.
type screenshotCmd struct {
	config.Client `embed:""`
	Out           string `name:"o" short:"o" default:"screenshot.png" placeholder:"FILE" help:"file to write the PNG to (- for stdout)"`
	FullPage      bool   `name:"full-page" help:"capture the whole page, not just the viewport"`
	Labels        bool   `help:"draw each element's ref over it"`
	Ref           string `help:"capture only this element"`
	// Extra catches arguments to refuse them with a hint.
	Extra []string `arg:"" sep:"none" optional:"" hidden:""`
}

// Run saves a PNG of the tab.
func (c *screenshotCmd) Run(ctx context.Context, io stdio) error {
	out, ref, fullPage, labels := c.Out, c.Ref, c.FullPage, c.Labels
	f := &c.Client
	if len(c.Extra) > 0 {
		return fmt.Errorf("screenshot takes no arguments (got %q); use -o file.png", c.Extra)
	}
	q := url.Values{}
	if f.Tab != "" {
		q.Set("tab", f.Tab)
	}
	if fullPage {
		q.Set("fullPage", "true")
	}
	if labels {
		q.Set("labels", "true")
	}
	if ref != "" {
		q.Set("ref", ref)
	}
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	b, _, err := newClient(f).do(ctx, http.MethodGet, "/screenshot", q, nil)
	if err != nil {
		return err
	}
	if out == "-" {
		_, err := io.out.Write(b)
		return err
	}
	if err := os.WriteFile(out, b, 0o644); err != nil {
		return fmt.Errorf("write the screenshot to %s: %w", out, err)
	}
	fmt.Fprintf(io.out, "wrote %s (%d bytes)\n", out, len(b))
	return nil
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// errTaskFailed is returned by run when the task ends without success (exit code 1).
type errTaskFailed struct {
	status task.Status
	reason string
}

func (e *errTaskFailed) Error() string {
	if e.reason == "" {
		return "the task " + string(e.status)
	}
	return fmt.Sprintf("the task %s: %s", e.status, e.reason)
}
