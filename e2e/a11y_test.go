package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tabrelay/tabrelay/internal/browser"
)

// axeResult is what axe-core reports for one page: its serious and critical violations, and
// the landmarks and heading the page has.
type axeResult struct {
	Violations []struct {
		ID     string `json:"id"`
		Impact string `json:"impact"`
		Help   string `json:"help"`
		Nodes  []struct {
			Target  []any  `json:"target"`
			Summary string `json:"failureSummary"`
		} `json:"nodes"`
	} `json:"violations"`
	Main int `json:"main"`
	H1   int `json:"h1"`
	// Checked counts the rules that ran (passes and violations), so a run that checked
	// nothing is noticed.
	Checked int `json:"checked"`
}

// runAxe runs axe-core (the version in e2e/clients' node_modules) in tab, with every rule axe
// runs by default (WCAG 2.x A and AA, best practices), and returns its serious and critical
// violations with the page's landmark and heading counts.
func runAxe(t *testing.T, ctx context.Context, b *browser.Browser, tab browser.Tab) axeResult {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(clientsDir(t), "node_modules", "axe-core", "axe.min.js"))
	if err != nil {
		t.Fatalf("axe-core is not installed (npm ci in e2e/clients): %v", err)
	}
	if err := b.PageEval(ctx, tab, string(src)+";true", nil); err != nil {
		t.Fatalf("load axe-core into %s: %v", tab.URL, err)
	}
	var r axeResult
	if err := b.PageEval(ctx, tab, `(async () => {
		const res = await axe.run(document);
		return {
			violations: res.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')
				.map((v) => ({id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => ({target: n.target, failureSummary: n.failureSummary}))})),
			main: document.querySelectorAll('main, [role=main]').length,
			h1: document.querySelectorAll('h1').length,
			checked: res.passes.length + res.violations.length,
		};
	})()`, &r); err != nil {
		t.Fatalf("axe-core on %s: %v", tab.URL, err)
	}
	return r
}

// checkAxe fails the test for every serious or critical violation, a page without exactly one
// main landmark or without a level-one heading.
func checkAxe(t *testing.T, ctx context.Context, b *browser.Browser, tab browser.Tab, name string) {
	t.Helper()
	r := runAxe(t, ctx, b, tab)
	if r.Checked < 10 {
		t.Errorf("%s: axe-core checked only %d rules", name, r.Checked)
	}
	for _, v := range r.Violations {
		var where []string
		for _, n := range v.Nodes {
			where = append(where, fmt.Sprintf("%v: %s", n.Target, strings.ReplaceAll(n.Summary, "\n", " ")))
		}
		t.Errorf("%s: %s violation %s (%s):\n  %s", name, v.Impact, v.ID, v.Help, strings.Join(where, "\n  "))
	}
	if r.Main != 1 || r.H1 < 1 {
		t.Errorf("%s: %d main landmarks and %d level-one headings, want 1 and at least 1", name, r.Main, r.H1)
	}
	t.Logf("%s: axe-core ran %d rules; %d serious or critical violations", name, r.Checked, len(r.Violations))
}

// TestExtensionPagesAccessible runs axe-core on every page of the extension, opened as the
// extension's own pages in real Chromium with the real extension and server: the side panel
// (idle, then showing a failed request and the status pills), the options page (with its model
// section), the welcome page and the tab chooser. None may have a serious or critical
// violation (colour contrast included), and each has a main landmark and a level-one heading.
func TestExtensionPagesAccessible(t *testing.T) {
	environ := &fakeEnviron{vars: map[string]string{}}
	pe, _ := startModelEnv(t, environ)
	ctx, cancel := context.WithTimeout(context.Background(), 180*time.Second)
	defer cancel()
	pe.waitText(t, "tabstate", "This tab is shared", 20*time.Second)
	pe.waitText(t, "model-hint", "No language model yet", 20*time.Second)
	checkAxe(t, ctx, pe.b, pe.panel, "side panel (idle)")
	pe.ask(t, "compare the kettles and buy the cheapest")
	pe.waitText(t, "task-status", "failed", 30*time.Second)
	checkAxe(t, ctx, pe.b, pe.panel, "side panel (a failed request)")

	ext := "chrome-extension://" + pe.b.ExtensionID + "/"
	for _, page := range []struct{ name, path, ready string }{
		{"options page", "options.html", "model-active"},
		{"welcome page", "welcome.html", "pair-state"},
		{"tab chooser", "chooser.html", "tabs"},
	} {
		tab, err := pe.b.NewTab(ctx, ext+page.path)
		if err != nil {
			t.Fatal(err)
		}
		eventually(t, 20*time.Second, page.name+" is drawn", func() (bool, string) {
			s := pageText(t, ctx, pe.b, tab, page.ready)
			return s != "" && s != "Checking…", s
		})
		checkAxe(t, ctx, pe.b, tab, page.name)
	}
}
