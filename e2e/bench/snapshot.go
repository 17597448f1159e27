package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/tabrelay/tabrelay/agent/actions"
	"github.com/tabrelay/tabrelay/internal/cdpclient"
	"github.com/tabrelay/tabrelay/snapshot"
)

// interactiveRoles are the roles counted for coverage in both snapshots.
var interactiveRoles = map[string]bool{
	"button": true, "link": true, "textbox": true, "searchbox": true, "checkbox": true, "radio": true,
	"combobox": true, "listbox": true, "option": true, "menuitem": true, "menuitemcheckbox": true,
	"menuitemradio": true, "slider": true, "spinbutton": true, "switch": true, "tab": true, "treeitem": true,
	// Chrome's roles for date, time and colour inputs (Playwright renders them as textbox)
	"date": true, "time": true, "datetime": true, "colorpicker": true,
}

// pwRefLine matches a line of Playwright's aria snapshot (text only: it has no page model of
// ours) with a ref, capturing its role.
var pwRefLine = regexp.MustCompile(`(?m)^\s*- ([a-z]+)\b[^\n]*\[ref=`)

// modelRefs counts the elements of our page model with a ref and an interactive role.
func modelRefs(s *snapshot.Snapshot) int {
	n := 0
	for _, e := range s.Nodes() {
		if e.Ref != "" && interactiveRoles[e.Role] {
			n++
		}
	}
	return n
}

// pwInteractiveRefs counts lines of Playwright's snapshot that give a ref to an interactive role.
func pwInteractiveRefs(text string) int {
	n := 0
	for _, m := range pwRefLine.FindAllStringSubmatch(text, -1) {
		if interactiveRoles[m[1]] {
			n++
		}
	}
	return n
}

// runSnapshotGroup is the snapshot group: runSnapshot, then runRepeat unless the repeat group
// runs on its own.
func runSnapshotGroup(cfg config, r *Results) error {
	if err := runSnapshot(cfg, r); err != nil {
		return err
	}
	if cfg.repeatAlone {
		return nil
	}
	return runRepeat(cfg, r)
}

// runSnapshot compares our snapshots with Playwright's AI snapshot on the fixture pages: build
// time, size and interactive elements with a ref.
func runSnapshot(cfg config, r *Results) error {
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	pages := []string{"/index.html?frame=FRAME", "/hard/shadow.html", "/hard/frames.html", "/hard/form.html", "/hard/dupes.html",
		"/hard/combobox.html", "/hard/modal.html", "/hard/virtual.html", "/hard/editor.html", "/hard/menu.html",
		"/gen.html?n=1000", "/gen.html?n=5000", "/gen.html?n=20000"}
	m := measurement{rounds: 3, small: 5, large: 1}
	runs := 3 // the reference builder's
	if cfg.short {
		pages = []string{"/index.html?frame=FRAME", "/hard/form.html", "/hard/frames.html", "/gen.html?n=1000"}
		if p := os.Getenv("BENCH_PAGES"); p != "" {
			pages = strings.Split(p, ",")
		}
		m = measurement{rounds: 2, small: 3, large: 1}
		runs = 1
	}
	s, err := startReal(ctx, "/index.html")
	if err != nil {
		return err
	}
	defer s.close()
	c, err := cdpclient.Dial(ctx, s.rp.cdpURL(), nil)
	if err != nil {
		return err
	}
	defer c.Close()
	endpoint := "http://" + s.rp.addr + "/?token=" + s.rp.token
	var totalOurs, totalPW, timeOurs, timePW, timeAX float64
	for _, p := range pages {
		p = strings.Replace(p, "FRAME", s.site.CrossURL("/frame.html"), 1)
		tab, err := s.b.ShareURL(ctx, s.site.URL(p))
		if err != nil {
			return fmt.Errorf("share %s: %w", p, err)
		}
		name := p
		if i := strings.Index(name, "?frame="); i >= 0 {
			name = name[:i] + " (cross-origin iframe)"
		}
		// the in-page builder (the default) and Playwright, in alternate rounds, then the
		// accessibility-tree builder (the reference: last, as on the largest page it may leave
		// the tab busy)
		ms, pwMS, last, pwText, err := m.compare(ctx, c, endpoint, tab.TargetID, tab.URL)
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		text := last.Text
		var axMS []float64
		if os.Getenv("BENCH_SKIP_AX") == "" && p != "/gen.html?n=20000" {
			// (on the 20k page the reference does not finish within the relay's timeout)
			if axMS, _, err = timeSnapshots(ctx, c, tab.TargetID, false, func(time.Duration) int { return runs }); err != nil {
				fmt.Fprintf(os.Stderr, "  %s: the accessibility-tree builder failed: %v\n", name, err)
			}
		}
		oursTok, pwTok := float64(snapshot.Tokens(text)), float64(snapshot.Tokens(pwText))
		oursRefs, pwRefs := modelRefs(last), pwInteractiveRefs(pwText)
		oursMS, pwMed := median(ms), median(pwMS)
		totalOurs += oursTok
		totalPW += pwTok
		timeOurs += oursMS
		timePW += pwMed
		r.add(Figure{Group: "snapshot", Name: name + ": build time", Unit: "ms", Value: oursMS, Reference: pwMed, RefName: "Playwright AI snapshot", Target: "≤ 1×", Met: met(oursMS <= pwMed)})
		if len(axMS) > 0 {
			r.add(Figure{Group: "snapshot", Name: name + ": build time from the accessibility tree", Unit: "ms", Value: median(axMS), Reference: pwMed, RefName: "Playwright AI snapshot"})
			timeAX += median(axMS)
		}
		r.add(Figure{Group: "snapshot", Name: name + ": size", Unit: "tokens", Value: oursTok, Reference: pwTok, RefName: "Playwright AI snapshot", Target: "≤ 0.7×", Met: met(oursTok <= 0.7*pwTok)})
		r.add(Figure{Group: "snapshot", Name: name + ": interactive elements with a ref", Unit: "refs", Value: float64(oursRefs), Reference: float64(pwRefs), RefName: "Playwright AI snapshot", Target: "≥ 1×", Met: met(oursRefs >= pwRefs)})
		if strings.HasPrefix(p, "/gen.html") {
			budgetFigures(r, name, last)
		}
		if os.Getenv("BENCH_DUMP") != "" {
			fmt.Fprintf(os.Stderr, "--- ours %s\n%s\n--- playwright\n%s\n", name, text, pwText)
		}
	}
	if err := firstOnSaved(ctx, cfg, s, c, endpoint, m, r); err != nil {
		return err
	}
	r.add(Figure{Group: "snapshot", Name: "all pages: total size", Unit: "tokens", Value: totalOurs, Reference: totalPW, RefName: "Playwright AI snapshot", Target: "≤ 0.7×", Met: met(totalOurs <= 0.7*totalPW)})
	r.add(Figure{Group: "snapshot", Name: "all pages: total build time", Unit: "ms", Value: timeOurs, Reference: timePW, RefName: "Playwright AI snapshot", Target: "≤ 1×", Met: met(timeOurs <= timePW)})
	if timeAX > 0 {
		r.add(Figure{Group: "snapshot", Name: "all pages: total build time from the accessibility tree (pages where it finished)", Unit: "ms", Value: timeAX, Reference: timePW, RefName: "Playwright AI snapshot"})
	}
	return nil
}

// firstOnSaved compares a first snapshot (a whole build: nothing of an earlier one reused) with
// Playwright's AI snapshot on the saved real-world pages (repeatPages; -short takes the first
// repeatShortPages), measured as on the fixture pages (measurement.compare, the sides
// alternating): a page's ratio is the median of our times over the median of Playwright's, and
// the figures are the median and 90th percentile of the ratios.
func firstOnSaved(ctx context.Context, cfg config, s *realSetup, c *cdpclient.Client, endpoint string, m measurement, r *Results) error {
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	pages := repeatPages
	if cfg.short {
		pages = repeatPages[:repeatShortPages]
	}
	saved, err := serveDir(filepath.Join(root, "e2e", "bench", "testdata", "pages"))
	if err != nil {
		return err
	}
	defer saved.Close()
	var ratios []float64
	for _, p := range pages {
		tab, err := s.b.ShareURL(ctx, "http://"+saved.Addr().String()+"/"+p)
		if err != nil {
			return fmt.Errorf("share %s: %w", p, err)
		}
		ms, pwMS, _, _, err := m.compare(ctx, c, endpoint, tab.TargetID, tab.URL)
		s.b.CloseTab(context.WithoutCancel(ctx), tab)
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		ours, pw := median(ms), median(pwMS)
		ratios = append(ratios, ours/pw)
		r.add(Figure{Group: "snapshot", Name: "first snapshot, " + p, Unit: "ms", Value: ours, Reference: pw, RefName: "Playwright AI snapshot"})
	}
	r.add(Figure{Group: "snapshot", Name: fmt.Sprintf("first snapshot, %d real pages: median ratio", len(pages)), Unit: "×", Value: median(ratios), Target: "≤ 0.5×", Met: met(median(ratios) <= 0.5)})
	r.add(Figure{Group: "snapshot", Name: fmt.Sprintf("first snapshot, %d real pages: p90 ratio", len(pages)), Unit: "×", Value: p90(ratios), Target: "≤ 0.8×", Met: met(p90(ratios) <= 0.8)})
	return nil
}

// measurement is how the bench compares our snapshots with Playwright's on a page, the same way
// on both sides: in rounds that alternate between the two (so that a burst of load from
// elsewhere on the machine does not fall on one side only), each side starting every round with
// a new connection or attachment and an untimed warm-up snapshot, then taking small timed
// snapshots, or large on a page whose warm-up (ours) took longer than largeAfter; Playwright
// takes as many as we did in the round. The figure of each side is the median of all its timed
// snapshots.
type measurement struct {
	rounds, small, large int
}

// largeAfter is the warm-up time past which a page gets measurement.large snapshots a round.
const largeAfter = 200 * time.Millisecond

// settle is the pause before each side's round: what the other side's connection left running
// (the relay cleaning up after Playwright disconnected) is over before the timing starts.
const settle = 200 * time.Millisecond

// compare measures our in-page snapshots and Playwright's AI snapshots of the tab targetID at
// pageURL, and returns the times of both in ms, our last snapshot and Playwright's last text.
func (m measurement) compare(ctx context.Context, c *cdpclient.Client, endpoint, targetID, pageURL string) (ours, pw []float64, last *snapshot.Snapshot, pwText string, err error) {
	runs := func(warm time.Duration) int {
		if warm > largeAfter {
			return m.large
		}
		return m.small
	}
	for range m.rounds {
		time.Sleep(settle)
		ms, snaps, err := timeSnapshots(ctx, c, targetID, true, runs)
		if err != nil {
			return nil, nil, nil, "", fmt.Errorf("snapshot: %w", err)
		}
		ours, last = append(ours, ms...), snaps[len(snaps)-1]
		time.Sleep(settle)
		pms, text, err := ariaSnapshot(ctx, endpoint, pageURL, len(ms)+1)
		if err != nil {
			return nil, nil, nil, "", fmt.Errorf("the Playwright ariaSnapshot: %w", err)
		}
		pw, pwText = append(pw, pms[1:]...), text // its first snapshot is its warm-up
	}
	return ours, pw, last, pwText, nil
}

// timeSnapshots attaches to the tab, takes a warm-up snapshot and then runs(its time) timed
// ones with the in-page builder or the accessibility-tree builder, and returns their times in
// ms.
func timeSnapshots(ctx context.Context, c *cdpclient.Client, targetID string, inPage bool, runs func(warm time.Duration) int) ([]float64, []*snapshot.Snapshot, error) {
	st, err := snapshot.Attach(ctx, c, targetID)
	if err != nil {
		return nil, nil, err
	}
	defer st.Close(ctx)
	st.UseInPage(inPage)
	st.ReuseUnchanged(false) // the build itself, as Playwright's ariaSnapshot always builds
	t0 := time.Now()
	if _, err := st.Snapshot(ctx, snapshot.Options{}); err != nil { // warm-up
		return nil, nil, err
	}
	n := runs(time.Since(t0))
	var ms []float64
	var snaps []*snapshot.Snapshot
	for range n {
		t0 := time.Now()
		snap, err := st.Snapshot(ctx, snapshot.Options{})
		if err != nil {
			return nil, nil, err
		}
		ms = append(ms, float64(time.Since(t0).Microseconds())/1000)
		snaps = append(snaps, snap)
	}
	return ms, snaps, nil
}

// budgetFigures adds the token budget's figures for a page's full snapshot: its size rendered
// with maxTokens=4000, and the share of its interactive elements (refs) that the search action
// finds by their name, as the model would look for one the budget left out.
func budgetFigures(r *Results, name string, full *snapshot.Snapshot) {
	budgeted := *full
	budgeted.Render(snapshot.Options{MaxTokens: 4000})
	tok := float64(snapshot.Tokens(budgeted.Text))
	r.add(Figure{Group: "snapshot", Name: name + ": size with maxTokens=4000", Unit: "tokens", Value: tok, Target: "≤ 4000", Met: met(tok <= 4000)})
	total, found := 0, 0
	for _, n := range full.Nodes() {
		if n.Ref == "" {
			continue
		}
		total++
		p := &actions.Search{Text: n.Name, Role: n.Role, Limit: 1 << 20}
		if p.Validate() != nil {
			continue
		}
		ms, _ := actions.SearchPage(full, p)
		for _, m := range ms {
			if m.Ref == n.Ref {
				found++
				break
			}
		}
	}
	share := 100 * float64(found) / float64(max(total, 1))
	r.add(Figure{Group: "snapshot", Name: name + ": interactive elements found by search", Unit: "%", Value: share, Target: "100%", Met: met(found == total)})
}

// ariaSnapshot runs e2e/clients/bench-aria.mjs.
func ariaSnapshot(ctx context.Context, endpoint, pageURL string, runs int) ([]float64, string, error) {
	root, err := moduleRoot()
	if err != nil {
		return nil, "", err
	}
	cmd := exec.CommandContext(ctx, "node", filepath.Join(root, "e2e", "clients", "bench-aria.mjs"))
	cmd.Env = append(os.Environ(), "ENDPOINT="+endpoint, "PAGE_URL="+pageURL, fmt.Sprintf("RUNS=%d", runs))
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	runErr := cmd.Run()
	var res struct {
		MS    []float64 `json:"ms"`
		Text  string    `json:"text"`
		Error string    `json:"error"`
	}
	if err := json.Unmarshal(bytes.TrimSpace(out.Bytes()), &res); err != nil {
		return nil, "", fmt.Errorf("node: %v: %.300s %s", runErr, out.String(), strings.TrimSpace(errb.String()))
	}
	if res.Error != "" {
		return nil, "", fmt.Errorf("%s", res.Error)
	}
	return res.MS, res.Text, nil
}
