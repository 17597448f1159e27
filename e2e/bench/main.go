// Command bench measures tabrelay side by side with references in the same run, because these
// machines are noisy: ratios mean more than absolute times. It prints a table and writes the same
// figures to bench-results.json. Groups: relay (the relay hop with a simulated extension), real
// (Chromium through the real extension vs the browser's own endpoint), snapshot (our snapshots
// vs Playwright's AI snapshot, and the repeat figure: a repeat snapshot through the HTTP API on saved
// real-world pages; the repeat group runs that figure alone), legs (one command's time through each leg: relay, sockets,
// the extension's JavaScript, chrome.debugger), fastpath (text command to action, no model), load (many
// clients on one real tab, and the head-of-line delay a large response on one tab causes to
// another, both next to Chrome's own endpoint), mcp (tabrelay's MCP server next to Playwright
// MCP and chrome-devtools-mcp: tools/list, a 10-step flow's tokens and wall time), agent (a
// scripted model's task: its requests' tokens, and where they go: system prompt, tool
// definitions, page, history), critic (the alignment check's tokens and time per step, against
// a real HTTP server standing in for the model) and miniwob (the public MiniWoB++ development set played with simple
// commands and no model: share solved, wrong actions, share refused).
//
//	go run ./e2e/bench            # full run
//	go run ./e2e/bench -short     # a few repetitions, as CI runs it
//
// BENCH_LOG_LEVEL=debug runs tabrelay at that log level: the action service then logs, per
// action, where its time went (the gate's read, aiming, the input, the wait after it,
// settling). BENCH_FASTPATH_CORPUS=off leaves the phrasing corpus out of the fastpath group.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"sort"
	"strings"
	"text/tabwriter"
	"time"
)

// Figure is one measured value next to its reference.
type Figure struct {
	Group     string  `json:"group"`
	Name      string  `json:"name"`
	Unit      string  `json:"unit"`
	Value     float64 `json:"value"`
	Reference float64 `json:"reference,omitempty"`
	RefName   string  `json:"referenceName,omitempty"`
	Ratio     float64 `json:"ratio,omitempty"`
	Target    string  `json:"target,omitempty"`
	Met       *bool   `json:"met,omitempty"`
}

// Results collects figures.
type Results struct {
	Started time.Time `json:"started"`
	Short   bool      `json:"short"`
	Figures []Figure  `json:"figures"`
	Errors  []string  `json:"errors,omitempty"`
}

// add records f (computing its ratio when it has a reference) and prints it as it comes.
func (r *Results) add(f Figure) {
	if f.Reference != 0 && f.Ratio == 0 {
		f.Ratio = f.Value / f.Reference
	}
	r.Figures = append(r.Figures, f)
	fmt.Fprintf(os.Stderr, "  %-55s %12.3f %-8s", f.Name, f.Value, f.Unit)
	if f.RefName != "" {
		fmt.Fprintf(os.Stderr, " ref %s %.3f (x%.2f)", f.RefName, f.Reference, f.Ratio)
	}
	fmt.Fprintln(os.Stderr)
}

// met returns a pointer to b, for Figure.Met.
func met(b bool) *bool { return &b }

// config is what every group gets.
type config struct {
	short bool
	reps  int
	// miniwobDir is the MiniWoB++ development set the miniwob group plays.
	miniwobDir string
	// repeatAlone is set when the repeat group runs on its own: the snapshot group then leaves
	// its repeat figure to it.
	repeatAlone bool
}

// group is one named set of benchmarks.
type group struct {
	name string
	run  func(cfg config, r *Results) error
}

// main runs the groups asked for, prints the table and writes the JSON results; it exits 1 if
// a group failed.
func main() {
	short := flag.Bool("short", false, "few repetitions (CI): checks that the benchmarks run, figures are rough")
	out := flag.String("out", "bench-results.json", "where to write the figures as JSON")
	only := flag.String("groups", "relay,real,legs,snapshot,fastpath,load,mcp,agent,critic,miniwob", "comma-separated groups to run")
	miniwob := flag.String("miniwob", miniwobDefault(), "the MiniWoB++ development set the miniwob group plays (its README gives the episode protocol)")
	serveDirect := flag.Bool("serve-direct", false, "internal: serve the relay group's direct reference in this process until stdin closes")
	flag.Parse()
	if *serveDirect {
		if err := serveDirectReference(); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		return
	}

	cfg := config{short: *short, reps: 2000, miniwobDir: *miniwob, repeatAlone: strings.Contains(","+*only+",", ",repeat,")}
	if *short {
		cfg.reps = 200
	}
	res := &Results{Started: time.Now(), Short: *short}
	groups := []group{{"relay", runRelay}, {"real", runReal}, {"legs", runLegs}, {"snapshot", runSnapshotGroup}, {"repeat", runRepeat}, {"fastpath", runFastPath}, {"load", runLoad}, {"mcp", runMCPGroup}, {"agent", runAgent}, {"critic", runCritic}, {"miniwob", runMiniwob}}
	failed := false
	for _, g := range groups {
		if !strings.Contains(","+*only+",", ","+g.name+",") {
			continue
		}
		fmt.Fprintf(os.Stderr, "== %s\n", g.name)
		start := time.Now()
		if err := g.run(cfg, res); err != nil {
			failed = true
			res.Errors = append(res.Errors, fmt.Sprintf("%s: %v", g.name, err))
			fmt.Fprintf(os.Stderr, "  FAILED: %v\n", err)
		}
		fmt.Fprintf(os.Stderr, "  (%s took %s)\n", g.name, time.Since(start).Round(time.Millisecond))
	}
	printTable(res)
	b, _ := json.MarshalIndent(res, "", "  ")
	if err := os.WriteFile(*out, b, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
	fmt.Printf("\nwrote %s\n", *out)
	if failed {
		os.Exit(1)
	}
}

// printTable prints every figure with its reference, ratio and target.
func printTable(r *Results) {
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "group\tfigure\tvalue\treference\tratio\ttarget\tmet")
	for _, f := range r.Figures {
		ref, ratio, m := "", "", ""
		if f.RefName != "" {
			ref = fmt.Sprintf("%s %s", fmtNum(f.Reference), f.RefName)
			ratio = fmt.Sprintf("%.2f", f.Ratio)
		}
		if f.Met != nil {
			m = map[bool]string{true: "yes", false: "NO"}[*f.Met]
		}
		fmt.Fprintf(w, "%s\t%s\t%s %s\t%s\t%s\t%s\t%s\n", f.Group, f.Name, fmtNum(f.Value), f.Unit, ref, ratio, f.Target, m)
	}
	w.Flush()
}

// fmtNum formats a figure with three significant digits, whole numbers as they are.
func fmtNum(v float64) string {
	switch {
	case v == math.Trunc(v) && math.Abs(v) < 1e9:
		return fmt.Sprintf("%.0f", v)
	case math.Abs(v) >= 100:
		return fmt.Sprintf("%.0f", v)
	default:
		return fmt.Sprintf("%.3g", v)
	}
}

// stats returns the median and 99th percentile of durations, in microseconds.
func stats(d []time.Duration) (median, p99 float64) {
	if len(d) == 0 {
		return 0, 0
	}
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	us := func(x time.Duration) float64 { return float64(x) / float64(time.Microsecond) }
	return us(s[len(s)/2]), us(s[min(len(s)-1, len(s)*99/100)])
}
