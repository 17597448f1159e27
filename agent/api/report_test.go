package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/tabrelay/tabrelay/agent/actions"
	"github.com/tabrelay/tabrelay/agent/task"
)

// TestTaskReportRecords: GET /api/tasks/{id}/report serves a task's records (data=records) as
// a CSV, JSON or Markdown file named after the task, its steps as before (data=steps, the
// default), and says what to do when the task extracted nothing or a parameter is wrong.
func TestTaskReportRecords(t *testing.T) {
	srv, tok, _ := start(t, nil)
	base := srv.HTTPURL()
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	extracted := &task.Task{ID: "tk1", Goal: "list the products", Status: task.StatusSucceeded, CreatedAt: at, UpdatedAt: at, Plan: []task.PlanItem{},
		Steps: []task.Step{
			{ID: "s1", Index: 1, Tool: "extract", Status: task.StepOK, StartedAt: at, Records: &task.StepRecords{Records: actions.Records{
				Fields: []string{"title", "price"}, Pages: 1, Items: []map[string]string{{"title": "Mug", "price": "$12.00"}, {"title": "Pot, big", "price": ""}}}}},
			{ID: "s2", Index: 2, Tool: "extract", Status: task.StepOK, StartedAt: at, Records: &task.StepRecords{Records: actions.Records{
				Fields: []string{"title", "stock"}, Pages: 2, Items: []map[string]string{{"title": "Jar", "stock": "3"}}}}},
			{ID: "s3", Index: 3, Tool: "finish", Status: task.StepOK, StartedAt: at},
		}}
	clicked := &task.Task{ID: "tk2", Goal: "click sign in", Status: task.StatusSucceeded, CreatedAt: at, UpdatedAt: at, Plan: []task.PlanItem{},
		Steps: []task.Step{{ID: "s1", Index: 1, Tool: "click", Status: task.StepOK, StartedAt: at}}}
	for _, tk := range []*task.Task{extracted, clicked} {
		if err := srv.Agent.Store().SaveTask(context.Background(), tk); err != nil {
			t.Fatal(err)
		}
	}
	const csv = "step,title,price,stock\n1,Mug,$12.00,\n1,\"Pot, big\",,\n2,Jar,,3\n"
	cases := []struct {
		name, query string
		status      int
		mime, file  string
		body        string   // the whole body
		has         []string // or parts of it
		errTask     string   // an error about this task
	}{
		{name: "records as CSV", query: "tk1/report?format=csv&data=records", status: 200, mime: "text/csv; charset=utf-8", file: "tabrelay-task-tk1-records.csv", body: csv},
		{name: "data is not case-sensitive", query: "tk1/report?format=CSV&data=Records", status: 200, mime: "text/csv; charset=utf-8", file: "tabrelay-task-tk1-records.csv", body: csv},
		{name: "records as JSON", query: "tk1/report?data=records", status: 200, mime: "application/json", file: "tabrelay-task-tk1-records.json",
			has: []string{`"fields": [`, `"steps": [`, `"omitted": 0`}},
		{name: "records as Markdown", query: "tk1/report?format=markdown&data=records", status: 200, mime: "text/markdown; charset=utf-8", file: "tabrelay-task-tk1-records.md",
			has: []string{"3 records extracted by steps 1 and 2.", "| step | title | price | stock |", "| 1 | Pot, big |  |  |"}},
		{name: "steps as CSV, the default data", query: "tk1/report?format=csv", status: 200, mime: "text/csv; charset=utf-8", file: "tabrelay-task-tk1.csv",
			has: []string{"task_id,goal,task_status,step,tool", "tk1,list the products,succeeded,1,extract"}},
		{name: "steps as Markdown with the records", query: "tk1/report?format=markdown&data=steps", status: 200, mime: "text/markdown; charset=utf-8", file: "tabrelay-task-tk1.md",
			has: []string{"## Steps", "## Records", "| 2 | Jar |  | 3 |"}},
		{name: "a task without extract", query: "tk2/report?format=csv&data=records", status: 404, errTask: "tk2",
			has: []string{"task tk2: the task extracted nothing: none of its 1 steps ran extract", "tabrelay act extract --format csv"}},
		{name: "an unknown task", query: "nope/report?data=records", status: 404, errTask: "nope", has: []string{`task "nope" not found`}},
		{name: "an unknown data", query: "tk1/report?format=csv&data=rows", status: 400, has: []string{`data="rows": use steps (the task and its steps, the default) or records`}},
		{name: "an unknown format", query: "tk1/report?format=xls&data=records", status: 400, has: []string{"use json, csv or markdown"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := call(t, base, tok, "GET", "/api/tasks/"+c.query, "", nil)
			if a.status != c.status {
				t.Fatalf("HTTP %d %s, want %d", a.status, a.body, c.status)
			}
			got := string(a.body)
			if c.status != http.StatusOK {
				e := a.errorBody(t)
				got = e.Error
				if e.Task != c.errTask {
					t.Errorf("error about task %q, want %q", e.Task, c.errTask)
				}
			} else {
				if ct := a.header.Get("Content-Type"); ct != c.mime {
					t.Errorf("Content-Type %q, want %q", ct, c.mime)
				}
				if cd, want := a.header.Get("Content-Disposition"), `attachment; filename="`+c.file+`"`; cd != want {
					t.Errorf("Content-Disposition %q, want %q", cd, want)
				}
			}
			if c.body != "" && got != c.body {
				t.Errorf("body\n%s\nwant\n%s", got, c.body)
			}
			for _, h := range c.has {
				if !strings.Contains(got, h) {
					t.Errorf("no %q in\n%s", h, got)
				}
			}
		})
	}

	// the JSON is the task's record table, typed
	var rt task.RecordTable
	want, _ := extracted.RecordTable()
	if a := call(t, base, tok, "GET", "/api/tasks/tk1/report?format=json&data=records", "", nil); json.Unmarshal(a.body, &rt) != nil || !reflect.DeepEqual(&rt, want) {
		t.Errorf("records JSON %s, want %+v", a.body, want)
	}
	// and the task's own JSON carries each step's records
	var got task.Task
	if a := call(t, base, tok, "GET", "/api/tasks/tk1/report", "", nil); json.Unmarshal(a.body, &got) != nil || len(got.Steps) != 3 ||
		!reflect.DeepEqual(got.Steps[1].Records, extracted.Steps[1].Records) || got.Steps[2].Records != nil {
		t.Errorf("task JSON %s", a.body)
	}
}
