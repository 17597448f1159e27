package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tabrelay/tabrelay/agent/actions"
	"github.com/tabrelay/tabrelay/agent/task"
)

// TestTasksCommand: `tabrelay tasks list` and `tasks report` against the real server (the
// simulated extension; e2e TestTaskRecords drives them on Chromium): the records of a task's
// extract steps as CSV to stdout or a file, its steps report, and errors that say what to do.
func TestTasksCommand(t *testing.T) {
	f, _, srv := startTestServer(t)
	at := time.Now().UTC().Add(-time.Minute)
	for _, tk := range []*task.Task{
		{ID: "tk1", Goal: "list the mugs", Request: "list the mugs", Status: task.StatusSucceeded, CreatedAt: at, UpdatedAt: at, Plan: []task.PlanItem{},
			Steps: []task.Step{{ID: "s1", Index: 1, Tool: "extract", Status: task.StepOK, StartedAt: at, Records: &task.StepRecords{Records: actions.Records{
				Fields: []string{"title", "price"}, Pages: 1, Items: []map[string]string{{"title": "Blue mug", "price": "$12.00"}, {"title": "Red mug", "price": "$9.50"}}}}}}},
		{ID: "tk2", Goal: "click sign in", Status: task.StatusSucceeded, CreatedAt: at.Add(time.Second), UpdatedAt: at, Plan: []task.PlanItem{},
			Steps: []task.Step{{ID: "s1", Index: 1, Tool: "click", Status: task.StepOK, StartedAt: at}}},
	} {
		if err := srv.Agent.Store().SaveTask(context.Background(), tk); err != nil {
			t.Fatal(err)
		}
	}
	const csv = "step,title,price\n1,Blue mug,$12.00\n1,Red mug,$9.50\n"
	file := filepath.Join(t.TempDir(), "mugs.csv")
	cases := []struct {
		name    string
		args    []string
		out     string   // the whole output
		has     []string // or parts of it
		errHas  string
		errOut  string
		written string // the file -o wrote
	}{
		{name: "records as CSV", args: []string{"report", "tk1", "--format", "csv", "--records"}, out: csv},
		{name: "flags first", args: []string{"--records", "--format=csv", "report", "tk1"}, out: csv},
		{name: "records to a file", args: []string{"report", "tk1", "--records", "--format", "csv", "-o", file}, out: "", written: csv,
			errOut: fmt.Sprintf("wrote the csv report of task tk1 (records, %d bytes) to %s", len(csv), file)},
		{name: "records as Markdown, the default format", args: []string{"report", "tk1", "--records"}, has: []string{"2 records extracted by step 1.", "| 1 | Red mug | $9.50 |"}},
		{name: "steps as CSV", args: []string{"report", "tk1", "--format", "csv"}, has: []string{"task_id,goal,task_status,step,tool", "tk1,list the mugs,succeeded,1,extract"}},
		{name: "list", args: []string{"list"}, has: []string{"tk2  succeeded", "-           click sign in", "tk1  succeeded", "2 records   list the mugs"}},
		{name: "a task without extract", args: []string{"report", "tk2", "--records", "--format", "csv"},
			errHas: "task tk2: the task extracted nothing: none of its 1 steps ran extract, so it has no records to export; to get records, run a task that extracts them"},
		{name: "an unknown task", args: []string{"report", "nope", "--records"}, errHas: `task "nope" not found`},
		{name: "no task id", args: []string{"report"}, errHas: "usage: tabrelay tasks report <taskId>"},
		{name: "no command", args: nil, errHas: "name a command: list or report"},
		{name: "unknown command", args: []string{"export"}, errHas: `unknown tasks command "export"`},
		{name: "unknown format", args: []string{"report", "tk1", "--format", "xls"}, errHas: "--format must be one of"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, errOut, err := runCmd(t, runTasks, f, c.args...)
			if c.errHas != "" {
				if err == nil || !strings.Contains(err.Error(), c.errHas) {
					t.Fatalf("error %v, want one with %q", err, c.errHas)
				}
				return
			}
			if err != nil {
				t.Fatalf("%v\n%s", err, errOut)
			}
			if c.has == nil && out != c.out {
				t.Errorf("output\n%s\nwant\n%s", out, c.out)
			}
			for _, h := range c.has {
				if !strings.Contains(out, h) {
					t.Errorf("no %q in\n%s", h, out)
				}
			}
			if !strings.Contains(errOut, c.errOut) {
				t.Errorf("stderr %q, want %q", errOut, c.errOut)
			}
			if c.written != "" {
				if b, err := os.ReadFile(file); err != nil || string(b) != c.written {
					t.Errorf("the file holds %q (%v), want %q", b, err, c.written)
				}
			}
		})
	}
}

func TestRecordsHint(t *testing.T) {
	with := &task.Task{ID: "tk1", Steps: []task.Step{{Index: 1, Tool: "extract", Records: &task.StepRecords{Records: actions.Records{
		Fields: []string{"title"}, Items: []map[string]string{{"title": "a"}, {"title": "b"}}}}}}}
	cases := []struct {
		name string
		task *task.Task
		want string
	}{
		{"records", with, "2 records extracted: tabrelay tasks report tk1 --records --format csv -o records.csv"},
		{"none", &task.Task{ID: "tk2", Steps: []task.Step{{Index: 1, Tool: "click"}}}, ""},
	}
	for _, c := range cases {
		if got := recordsHint(c.task); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
