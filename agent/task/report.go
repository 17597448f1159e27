package task

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/tabrelay/tabrelay/internal/csvsafe"
)

// ReportJSON renders tasks as indented JSON (one object for one task, an array otherwise).
func ReportJSON(w io.Writer, tasks ...*Task) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	var err error
	if len(tasks) == 1 {
		err = enc.Encode(tasks[0])
	} else {
		if tasks == nil {
			tasks = []*Task{}
		}
		err = enc.Encode(tasks)
	}
	if err != nil {
		return fmt.Errorf("writing JSON report: %w", err)
	}
	return nil
}

// CSVHeader is the header row of [ReportCSV].
var CSVHeader = []string{"task_id", "goal", "task_status", "step", "tool", "args", "step_status", "error",
	"url_before", "url_after", "started_at", "duration_ms", "confirmation", "result", "model_calls", "tokens_in", "tokens_out"}

// ReportCSV renders one row per step (a task without steps gets one row).
func ReportCSV(w io.Writer, tasks ...*Task) error {
	cw := csvsafe.NewWriter(w)
	if err := cw.Write(CSVHeader); err != nil {
		return fmt.Errorf("writing CSV report: %w", err)
	}
	for _, t := range tasks {
		// the task's model usage is repeated on each of its rows, so a row filtered out of
		// the sheet still says what its task cost
		usage := []string{strconv.Itoa(t.Usage.LLMCalls), strconv.Itoa(t.Usage.PromptTokens), strconv.Itoa(t.Usage.CompletionTokens)}
		if len(t.Steps) == 0 {
			row := []string{t.ID, t.Goal, string(t.Status), "", "", "", "", t.Error, "", "", t.CreatedAt.Format(time.RFC3339), "", "", t.Answer}
			if err := cw.Write(append(row, usage...)); err != nil {
				return fmt.Errorf("writing CSV report: %w", err)
			}
			continue
		}
		for _, s := range t.Steps {
			conf := ""
			if c := s.Confirmation; c != nil {
				conf = c.Reason + ": "
				switch {
				case c.Approved == nil:
					conf += "pending"
				case *c.Approved:
					conf += "approved"
				default:
					conf += "declined"
				}
			}
			row := []string{t.ID, t.Goal, string(t.Status), strconv.Itoa(s.Index), s.Tool, string(s.Args), string(s.Status), s.Error,
				s.URLBefore, s.URLAfter, s.StartedAt.Format(time.RFC3339Nano), strconv.FormatInt(s.DurationMS, 10), conf, truncate(s.Result, 500)}
			if err := cw.Write(append(row, usage...)); err != nil {
				return fmt.Errorf("writing CSV report: %w", err)
			}
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("writing CSV report: %w", err)
	}
	return nil
}

// ReportMarkdown renders tasks as a readable Markdown report.
func ReportMarkdown(w io.Writer, tasks ...*Task) error {
	var b strings.Builder
	for i, t := range tasks {
		if i > 0 {
			b.WriteString("\n---\n\n")
		}
		fmt.Fprintf(&b, "# Task: %s\n\n", mdInline(t.Shown())) // what the user asked
		fmt.Fprintf(&b, "- **Status:** %s\n- **Id:** `%s`\n- **Started:** %s\n", t.Status, t.ID, t.CreatedAt.Format(time.RFC3339))
		if !t.FinishedAt.IsZero() {
			fmt.Fprintf(&b, "- **Took:** %s\n", t.FinishedAt.Sub(t.CreatedAt).Round(time.Millisecond))
		}
		switch {
		case t.Usage.LLMCalls > 0 && t.Model != "":
			fmt.Fprintf(&b, "- **Cost:** %s (%s)\n", t.Usage, t.Model)
		default:
			fmt.Fprintf(&b, "- **Cost:** %s\n", t.Usage)
		}
		if t.Answer != "" {
			fmt.Fprintf(&b, "\n## Answer\n\n%s\n", t.Answer)
		}
		if t.Error != "" {
			fmt.Fprintf(&b, "\n## Why it stopped\n\n%s\n", t.Error)
		}
		if len(t.Plan) > 0 {
			b.WriteString("\n## Plan\n\n")
			for _, p := range t.Plan {
				box := " "
				switch p.Status {
				case PlanDone:
					box = "x"
				case PlanActive:
					box = "~"
				case PlanFailed:
					box = "!"
				}
				fmt.Fprintf(&b, "- [%s] %s\n", box, mdInline(p.Text))
			}
		}
		if len(t.Steps) > 0 {
			b.WriteString("\n## Steps\n\n| # | tool | arguments | status | ms | page after |\n|---|---|---|---|---|---|\n")
			for _, s := range t.Steps {
				status := string(s.Status)
				if s.Error != "" {
					status += ": " + s.Error
				}
				fmt.Fprintf(&b, "| %d | %s | `%s` | %s | %d | %s |\n", s.Index, s.Tool, mdCell(truncate(string(s.Args), 120)),
					mdCell(truncate(status, 160)), s.DurationMS, mdCell(truncate(s.URLAfter, 100)))
			}
		}
		if rt, err := t.RecordTable(); err == nil {
			b.WriteString("\n## Records\n\n")
			mdRecords(&b, t.ID, rt, MarkdownRecordRows)
		}
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("writing Markdown report: %w", err)
	}
	return nil
}

func mdInline(s string) string { return oneLine(s) }

func mdCell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ", "`", "'").Replace(s)
}

// MarkdownRecordRows caps the records the Markdown report of a task shows; it says how many it
// left out and where to get them all.
const MarkdownRecordRows = 20

// mdRecords writes the record table of task id as a Markdown table of at most maxRows rows
// (0: all), with a line on what it comes from and on what it leaves out.
func mdRecords(b *strings.Builder, id string, rt *RecordTable, maxRows int) {
	steps := make([]string, len(rt.Steps))
	for i, n := range rt.Steps {
		steps[i] = strconv.Itoa(n)
	}
	by := "step " + steps[0]
	if len(steps) > 1 {
		by = "steps " + strings.Join(steps[:len(steps)-1], ", ") + " and " + steps[len(steps)-1]
	}
	noun := "records"
	if len(rt.Items) == 1 {
		noun = "record"
	}
	fmt.Fprintf(b, "%d %s extracted by %s.\n", len(rt.Items), noun, by)
	if len(rt.Items) > 0 {
		b.WriteString("\n|")
		for _, f := range rt.Fields {
			b.WriteString(" " + mdCell(truncate(f, 60)) + " |")
		}
		b.WriteString("\n|" + strings.Repeat("---|", len(rt.Fields)) + "\n")
		shown := rt.Items
		if maxRows > 0 && len(shown) > maxRows {
			shown = shown[:maxRows]
		}
		for _, it := range shown {
			b.WriteString("|")
			for _, f := range rt.Fields {
				b.WriteString(" " + mdCell(truncate(it[f], 100)) + " |")
			}
			b.WriteString("\n")
		}
		if left := len(rt.Items) - len(shown); left > 0 {
			fmt.Fprintf(b, "\n…and %d more, left out here: the CSV has them all (GET /api/tasks/%s/report?format=csv&data=records, or tabrelay tasks report %s --records --format csv).\n", left, id, id)
		}
	}
	if rt.Omitted > 0 {
		fmt.Fprintf(b, "\n%d more records were extracted but not kept: a task keeps at most %d MiB of records.\n", rt.Omitted, MaxRecordBytes>>20)
	}
}

// ReportRecordsCSV writes the records the task's extract steps read ([Task.RecordTable]) as
// CSV: a header row (the step column, then the fields), then one row per record. A task none
// of whose steps ran extract gives an error wrapping [ErrNoRecords].
func ReportRecordsCSV(w io.Writer, t *Task) error {
	rt, err := t.RecordTable()
	if err != nil {
		return err
	}
	return rt.WriteCSV(w)
}

// ReportRecordsJSON writes the task's [RecordTable] as indented JSON. A task none of whose
// steps ran extract gives an error wrapping [ErrNoRecords].
func ReportRecordsJSON(w io.Writer, t *Task) error {
	rt, err := t.RecordTable()
	if err != nil {
		return err
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(rt); err != nil {
		return fmt.Errorf("writing the records as JSON: %w", err)
	}
	return nil
}

// ReportRecordsMarkdown writes the task's [RecordTable] as a Markdown table, every record. A
// task none of whose steps ran extract gives an error wrapping [ErrNoRecords].
func ReportRecordsMarkdown(w io.Writer, t *Task) error {
	rt, err := t.RecordTable()
	if err != nil {
		return err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# Records: %s\n\n", mdInline(t.Shown()))
	mdRecords(&b, t.ID, rt, 0)
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("writing the records as Markdown: %w", err)
	}
	return nil
}
