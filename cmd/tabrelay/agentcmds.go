package main

import (
	"context"
	"encoding/json"
	"flag"
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
)

// synopsis shows a client command's arguments in its -h output.
func synopsis(name string) string {
	switch name {
	case "tabs":
		return "[--json]"
	case "snapshot":
		return "[--tab ID] [--interactive] [--max-chars N] [--json]"
	case "act":
		return "[--tab ID] <kind> [ref] [text…]   e.g. click e3 | type e4 hello world | press Enter | select e5 Blue | navigate https://… | fill e3=Ann e4=true | scroll down | wait Saved | back\n" +
			"       tabrelay act [--tab ID] --json '{\"kind\":\"click\",\"ref\":\"e3\"}'"
	case "screenshot":
		return "[--tab ID] [-o file.png] [--full-page] [--labels] [--ref e7]"
	case "run":
		return "[--tab ID] [--yes] \"goal\""
	case "eval":
		return "[--tab ID] [--site URL] [--json FILE] [--approve] [--tag T] SUITE\n       tabrelay eval --compare A.json B.json"
	}
	return "[flags]"
}

// parseClient parses the flags of a client command; extra registers the command's own flags.
func parseClient(name string, args []string, io stdio, extra func(fs *flag.FlagSet)) (*clientFlags, *flag.FlagSet, error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.err)
	fs.Usage = func() {
		fmt.Fprintf(io.err, "usage: tabrelay %s %s\n\nflags (before the arguments):\n", name, synopsis(name))
		fs.PrintDefaults()
	}
	var f clientFlags
	f.register(fs)
	if extra != nil {
		extra(fs)
	}
	if err := fs.Parse(args); err != nil {
		return nil, nil, err
	}
	return &f, fs, nil
}

func cmdTabs(ctx context.Context, args []string) error { return runTabs(ctx, args, osStdio()) }

// runTabs implements `tabrelay tabs`: the shared tabs, most recently shared or focused first.
func runTabs(ctx context.Context, args []string, io stdio) error {
	var asJSON bool
	f, _, err := parseClient("tabs", args, io, func(fs *flag.FlagSet) {
		fs.BoolVar(&asJSON, "json", false, "print the JSON answer")
	})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	var res api.TabList
	if err := f.client().getJSON(ctx, "/tabs", nil, &res); err != nil {
		return err
	}
	if asJSON {
		return writeJSON(io.out, res)
	}
	if len(res.Tabs) == 0 {
		fmt.Fprintln(io.out, "no shared tabs: click the tabrelay icon on a tab to share it")
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

func cmdSnapshot(ctx context.Context, args []string) error { return runSnapshot(ctx, args, osStdio()) }

// runSnapshot implements `tabrelay snapshot`: the tab's role outline with refs.
func runSnapshot(ctx context.Context, args []string, io stdio) error {
	var interactive, full, asJSON bool
	var maxChars, maxTokens, maxDepth int
	var scope, frame string
	f, fs, err := parseClient("snapshot", args, io, func(fs *flag.FlagSet) {
		fs.BoolVar(&interactive, "interactive", false, "list only elements with refs, one per line")
		fs.BoolVar(&full, "full", false, "keep unnamed structure (the default output is compact)")
		fs.IntVar(&maxChars, "max-chars", 0, "truncate the outline to this many characters (0: no limit)")
		fs.IntVar(&maxTokens, "max-tokens", 0, "at most this many tokens (4 bytes each), what matters first; the header says what was left out (0: no limit)")
		fs.IntVar(&maxDepth, "max-depth", 0, "limit the nesting depth (0: no limit)")
		fs.StringVar(&scope, "scope", "", "render only the subtree of this ref")
		fs.StringVar(&frame, "frame", "", "render only this frame (an iframe's ref, a frame id or part of its URL)")
		fs.BoolVar(&asJSON, "json", false, "print the JSON answer (url, title, refs, text, …)")
	})
	if err != nil {
		return err
	}
	if maxTokens < 0 {
		return fmt.Errorf("--max-tokens %d: use a number of tokens, or 0 for no limit", maxTokens)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("snapshot takes no arguments (got %q); name a tab with --tab <targetId>", fs.Args())
	}
	q := url.Values{}
	setQ := func(k, v string) {
		if v != "" {
			q.Set(k, v)
		}
	}
	setQ("tab", f.tab)
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
	b, _, err := f.client().do(ctx, http.MethodGet, "/snapshot", q, nil)
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

func cmdAct(ctx context.Context, args []string) error { return runAct(ctx, args, osStdio()) }

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

// runAct implements `tabrelay act <kind> [ref] [text…]` (or --json '{…}').
func runAct(ctx context.Context, args []string, io stdio) error {
	var raw, out, format string
	var submit, appendText, asJSON bool
	f, fs, err := parseClient("act", args, io, func(fs *flag.FlagSet) {
		fs.StringVar(&format, "format", "text", "extract: how to print the records: text (one JSON object a line), csv or json")
		fs.StringVar(&raw, "json", "", `the action as JSON, e.g. '{"kind":"click","ref":"e3"}'`)
		fs.BoolVar(&submit, "submit", false, "type: press Enter after typing")
		fs.BoolVar(&appendText, "append", false, "type: add to the field's content instead of replacing it")
		fs.StringVar(&out, "o", "", "screenshot/pdf: write the image or PDF to this file")
		fs.BoolVar(&asJSON, "print-json", false, "print the whole JSON result")
		flagsUsage := fs.Usage
		fs.Usage = func() {
			flagsUsage()
			fmt.Fprintf(io.err, "\nactions (refs like e3 come from `tabrelay snapshot`):\n%s", actions.Default().Usage())
		}
	})
	if err != nil {
		return err
	}
	format = strings.ToLower(format)
	switch format {
	case "text", "csv", "json":
	default:
		return fmt.Errorf("--format %q: use text, csv or json", format)
	}
	var action any
	switch {
	case raw != "":
		if fs.NArg() > 0 {
			return fmt.Errorf("give the action either as --json or as arguments, not both (got %q)", fs.Args())
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(raw), &m); err != nil {
			return fmt.Errorf("--json is not a JSON object: %w", err)
		}
		action = m
	case fs.NArg() == 0:
		return fmt.Errorf("act needs an action: tabrelay act click e3 | type e4 hello | press Enter | navigate https://…; the actions:\n%s", actions.Default().Usage())
	default:
		a, err := buildAction(strings.ToLower(fs.Arg(0)), fs.Args()[1:], submit, appendText)
		if err != nil {
			return err
		}
		action = a
	}
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	var res actions.Result
	if err := f.client().postJSON(ctx, "/act", map[string]any{"tab": f.tab, "action": action}, &res); err != nil {
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

func cmdScreenshot(ctx context.Context, args []string) error {
	return runScreenshot(ctx, args, osStdio())
}

// runScreenshot implements `tabrelay screenshot [-o file.png]`.
func runScreenshot(ctx context.Context, args []string, io stdio) error {
	var out, ref string
	var fullPage, labels bool
	f, fs, err := parseClient("screenshot", args, io, func(fs *flag.FlagSet) {
		fs.StringVar(&out, "o", "screenshot.png", "file to write the PNG to (- for stdout)")
		fs.BoolVar(&fullPage, "full-page", false, "capture the whole page, not just the viewport")
		fs.BoolVar(&labels, "labels", false, "draw each element's ref over it")
		fs.StringVar(&ref, "ref", "", "capture only this element")
	})
	if err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("screenshot takes no arguments (got %q); use -o file.png", fs.Args())
	}
	q := url.Values{}
	if f.tab != "" {
		q.Set("tab", f.tab)
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
	b, _, err := f.client().do(ctx, http.MethodGet, "/screenshot", q, nil)
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
