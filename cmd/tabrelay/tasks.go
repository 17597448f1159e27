package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"

	"github.com/tabrelay/tabrelay/agent/api"
	"github.com/tabrelay/tabrelay/agent/task"
	"github.com/tabrelay/tabrelay/internal/config"
)

const tasksUsage = `commands:

  list [--limit N]                   recent tasks, most recent first: id, status, when, records, request
  report <taskId> [--format F] [--records] [-o FILE]
                                     a task's report: markdown (default), json or csv; --records: the
                                     records its extract steps read, as one table (csv: a file of them)

Flags may come before or after the command.`

// tasksCmd is `tabrelay tasks list|report`, a client of the running server's /api/tasks.
type tasksCmd struct {
	config.Client `embed:""`
	Format        string `default:"markdown" enum:"markdown,md,json,csv" help:"report: markdown, json or csv"`
	Records       bool   `help:"report: the records the task's extract steps read (one table: a step column, then every field), not its steps"`
	Out           string `name:"o" short:"o" placeholder:"FILE" help:"report: write the report to this file"`
	Limit         int    `default:"20" help:"list: how many tasks"`
	JSON          bool   `name:"json" help:"list: print the JSON answer"`
	// Args are the tasks command and its arguments.
	Args []string `arg:"" sep:"none" optional:"" placeholder:"command"`
}

// Help lists the tasks commands.
func (c *tasksCmd) Help() string { return tasksUsage }

func runTasks(ctx context.Context, args []string, io stdio) error {
	return runCommand(ctx, "tasks", args, io)
}

// Run runs the tasks command.
func (tc *tasksCmd) Run(ctx context.Context, io stdio) error {
	pos := tc.Args
	if len(pos) == 0 {
		fmt.Fprintln(io.err, tasksUsage)
		return errors.New("name a command: list or report")
	}
	c := newClient(&tc.Client)
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	switch pos[0] {
	case "list", "ls":
		if len(pos) != 1 {
			return errors.New("usage: tabrelay tasks list [--limit N]")
		}
		var list api.TaskList
		if err := c.getJSON(ctx, "/tasks", url.Values{"limit": {strconv.Itoa(tc.Limit)}}, &list); err != nil {
			return err
		}
		if tc.JSON {
			return writeJSON(io.out, list)
		}
		if len(list.Tasks) == 0 {
			fmt.Fprintln(io.out, "no tasks yet")
		}
		for _, t := range list.Tasks {
			recs := "-"
			if rt, err := t.RecordTable(); err == nil {
				recs = plural(len(rt.Items), "record")
			}
			fmt.Fprintf(io.out, "%s  %-20s %s  %-11s %s\n", t.ID, t.Status, t.CreatedAt.Local().Format("2006-01-02 15:04"), recs, oneLine(t.Shown(), 70))
		}
		return nil
	case "report":
		if len(pos) != 2 {
			return errors.New("usage: tabrelay tasks report <taskId> [--format markdown|json|csv] [--records] [-o FILE] (tabrelay tasks list shows the ids)")
		}
		data := api.ReportSteps
		if tc.Records {
			data = api.ReportRecords
		}
		format := strings.ToLower(tc.Format)
		b, _, err := c.do(ctx, http.MethodGet, "/tasks/"+url.PathEscape(pos[1])+"/report", url.Values{"format": {format}, "data": {data}}, nil)
		if err != nil {
			return err
		}
		if tc.Out == "" {
			_, err := io.out.Write(b)
			return err
		}
		if err := os.WriteFile(tc.Out, b, 0o600); err != nil {
			return fmt.Errorf("write the report to %s: %w", tc.Out, err)
		}
		fmt.Fprintf(io.err, "wrote the %s report of task %s (%s, %d bytes) to %s\n", format, pos[1], data, len(b), tc.Out)
		return nil
	}
	fmt.Fprintln(io.err, tasksUsage)
	return fmt.Errorf("unknown tasks command %q: use list or report", pos[0])
}

// recordsHint says how to export the records of a task that has some ("" when it has none).
func recordsHint(t *task.Task) string {
	rt, err := t.RecordTable()
	if err != nil {
		return ""
	}
	return fmt.Sprintf("%s extracted: tabrelay tasks report %s --records --format csv -o records.csv", plural(len(rt.Items), "record"), t.ID)
}

// plural is "1 record", "2 records".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}
