package eval

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"
)

// Report is the outcome of a suite run, as written by --json.
type Report struct {
	Suite     string    `json:"suite"`
	StartedAt time.Time `json:"startedAt"`
	// Approve is whether confirmations were approved.
	Approve bool     `json:"approve"`
	Summary Summary  `json:"summary"`
	Results []Result `json:"results"`
}

// Summary totals a report.
type Summary struct {
	Tasks     int `json:"tasks"`
	Succeeded int `json:"succeeded"`
	// SuccessRate is Succeeded / Tasks.
	SuccessRate float64 `json:"successRate"`
	// NoModel counts the tasks that succeeded with no model call.
	NoModel    int   `json:"noModel"`
	Steps      int   `json:"steps"`
	ModelCalls int   `json:"modelCalls"`
	TokensIn   int   `json:"tokensIn"`
	TokensOut  int   `json:"tokensOut"`
	WallMS     int64 `json:"wallMs"`
	// MedianWallMS is the median of the tasks' wall times.
	MedianWallMS int64 `json:"medianWallMs"`
}

func (r *Report) summarize() {
	s := Summary{Tasks: len(r.Results)}
	walls := make([]int64, 0, len(r.Results))
	for _, x := range r.Results {
		if x.Success {
			s.Succeeded++
			if x.ModelCalls == 0 {
				s.NoModel++
			}
		}
		s.Steps += x.Steps
		s.ModelCalls += x.ModelCalls
		s.TokensIn += x.TokensIn
		s.TokensOut += x.TokensOut
		s.WallMS += x.WallMS
		walls = append(walls, x.WallMS)
	}
	if s.Tasks > 0 {
		s.SuccessRate = float64(s.Succeeded) / float64(s.Tasks)
		sort.Slice(walls, func(i, j int) bool { return walls[i] < walls[j] })
		s.MedianWallMS = walls[len(walls)/2]
	}
	r.Summary = s
}

// WriteJSON writes the report to file.
func (r *Report) WriteJSON(file string) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("encode the report: %w", err)
	}
	if err := os.WriteFile(file, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write the report: %w", err)
	}
	return nil
}

// ReadReport reads a report written by WriteJSON.
func ReadReport(file string) (*Report, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("read the report: %w", err)
	}
	var r Report
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s is not an eval report (write one with tabrelay eval --json FILE): %w", file, err)
	}
	return &r, nil
}

// cell makes s safe in a Markdown table cell.
func cell(s string) string {
	return strings.ReplaceAll(oneLine(s, 160), "|", `\|`)
}

// Markdown writes the report as a Markdown table and a totals line.
func (r *Report) Markdown(w io.Writer) {
	fmt.Fprintln(w, "| task | ok | steps | calls | tokens in | tokens out | time (ms) | reason |")
	fmt.Fprintln(w, "|---|---|---:|---:|---:|---:|---:|---|")
	for _, x := range r.Results {
		ok := "✗"
		if x.Success {
			ok = "✓"
		}
		fmt.Fprintf(w, "| %s | %s | %d | %d | %d | %d | %d | %s |\n", cell(x.Name), ok, x.Steps, x.ModelCalls, x.TokensIn, x.TokensOut, x.WallMS, cell(x.Reason))
	}
	s := r.Summary
	fmt.Fprintf(w, "\n**%d/%d succeeded** (%.0f%%; %d with no model call) · %d steps · %d model calls · %d tokens in · %d tokens out · %d ms in all, median %d ms\n",
		s.Succeeded, s.Tasks, 100*s.SuccessRate, s.NoModel, s.Steps, s.ModelCalls, s.TokensIn, s.TokensOut, s.WallMS, s.MedianWallMS)
}

// Compare writes the difference between two reports (a before, b after) as Markdown: the
// tasks whose outcome changed, then per-task and overall deltas of steps, calls, tokens and time.
func Compare(w io.Writer, a, b *Report) {
	byName := map[string]Result{}
	for _, x := range a.Results {
		byName[x.Name] = x
	}
	fmt.Fprintln(w, "| task | before | after | Δ steps | Δ calls | Δ tokens in | Δ tokens out | Δ time (ms) |")
	fmt.Fprintln(w, "|---|---|---|---:|---:|---:|---:|---:|")
	seen := map[string]bool{}
	mark := func(x Result) string {
		if x.Success {
			return "✓"
		}
		return "✗ " + cell(x.Reason)
	}
	for _, y := range b.Results {
		seen[y.Name] = true
		x, ok := byName[y.Name]
		if !ok {
			fmt.Fprintf(w, "| %s | (absent) | %s | | | | | |\n", cell(y.Name), mark(y))
			continue
		}
		fmt.Fprintf(w, "| %s | %s | %s | %+d | %+d | %+d | %+d | %+d |\n", cell(y.Name), mark(x), mark(y),
			y.Steps-x.Steps, y.ModelCalls-x.ModelCalls, y.TokensIn-x.TokensIn, y.TokensOut-x.TokensOut, y.WallMS-x.WallMS)
	}
	for _, x := range a.Results {
		if !seen[x.Name] {
			fmt.Fprintf(w, "| %s | %s | (absent) | | | | | |\n", cell(x.Name), mark(x))
		}
	}
	sa, sb := a.Summary, b.Summary
	fmt.Fprintf(w, "\n**succeeded %d/%d → %d/%d** · Δ steps %+d · Δ model calls %+d · Δ tokens in %+d · Δ tokens out %+d · Δ time %+d ms (median %d → %d ms)\n",
		sa.Succeeded, sa.Tasks, sb.Succeeded, sb.Tasks, sb.Steps-sa.Steps, sb.ModelCalls-sa.ModelCalls,
		sb.TokensIn-sa.TokensIn, sb.TokensOut-sa.TokensOut, sb.WallMS-sa.WallMS, sa.MedianWallMS, sb.MedianWallMS)
}
