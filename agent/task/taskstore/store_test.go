package taskstore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tabrelay/tabrelay/agent/task"
)

func sampleTask(i int) *task.Task {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).Add(time.Duration(i) * time.Minute)
	yes := false
	return &task.Task{
		ID: fmt.Sprintf("t%02d", i), Goal: fmt.Sprintf("goal %d", i), Request: fmt.Sprintf("request %d", i), Conversation: "c1",
		TabID: "tab1", Status: task.StatusCancelled,
		Plan: []task.PlanItem{{Text: "open", Status: task.PlanDone}, {Text: "buy", Status: task.PlanFailed}},
		Steps: []task.Step{
			{ID: "s1", Index: 1, Tool: "click", Args: json.RawMessage(`{"ref":"e3"}`), Status: task.StepOK, Result: "result: ok",
				Target: &task.Target{Role: "button", Name: "Buy", Nth: 2}, URLBefore: "https://a.test/", URLAfter: "https://a.test/b", StartedAt: at, EndedAt: at.Add(time.Second), DurationMS: 1000},
			{ID: "s2", Index: 2, Tool: "click", Args: json.RawMessage(`{"ref":"e6"}`), Status: task.StepDeclined, Error: "declined",
				StartedAt: at, Confirmation: &task.Confirmation{Reason: "purchase or payment", Prompt: `click button "Buy"`, Approved: &yes, DecidedAt: at}},
		},
		Answer: "", Error: "stopped: declined", Model: "openai/x", Usage: task.Usage{LLMCalls: 3, PromptTokens: 1200},
		CreatedAt: at, UpdatedAt: at, FinishedAt: at.Add(2 * time.Second),
	}
}

func TestPersistAcrossReopen(t *testing.T) {
	ctx := context.Background()
	home := t.TempDir()
	s, err := OpenHome(ctx, home)
	if err != nil {
		t.Fatal(err)
	}
	want := sampleTask(1)
	if err := s.SaveTask(ctx, want); err != nil {
		t.Fatal(err)
	}
	// Saving again with fewer steps trims them.
	want2 := sampleTask(2)
	if err := s.SaveTask(ctx, want2); err != nil {
		t.Fatal(err)
	}
	want2.Steps = want2.Steps[:1]
	want2.Status = task.StatusSucceeded
	if err := s.SaveTask(ctx, want2); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(home, FileName)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("db file: %v %v", fi, err)
	}

	s, err = OpenHome(ctx, home)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if v, _ := s.Version(ctx); v != SchemaVersion() {
		t.Fatalf("version %d", v)
	}
	got, err := s.GetTask(ctx, "t01")
	if err != nil {
		t.Fatal(err)
	}
	gj, _ := json.Marshal(got)
	wj, _ := json.Marshal(want)
	if string(gj) != string(wj) {
		t.Fatalf("round trip differs:\n got %s\nwant %s", gj, wj)
	}
	got2, _ := s.GetTask(ctx, "t02")
	if len(got2.Steps) != 1 || got2.Status != task.StatusSucceeded {
		t.Fatalf("t02 %+v", got2)
	}
	if _, err := s.GetTask(ctx, "nope"); !errors.Is(err, task.ErrNotFound) {
		t.Fatalf("missing task: %v", err)
	}
}

func TestListPagingExportDelete(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "sub", "x.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := 0; i < 7; i++ {
		if err := s.SaveTask(ctx, sampleTask(i)); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		limit, offset int
		first         string
		n             int
	}{
		{3, 0, "t06", 3}, {3, 3, "t03", 3}, {3, 6, "t00", 1}, {3, 9, "", 0}, {0, 0, "t06", 7},
	}
	for _, tt := range tests {
		page, err := s.ListTasks(ctx, tt.limit, tt.offset)
		if err != nil {
			t.Fatal(err)
		}
		if len(page) != tt.n || (tt.n > 0 && page[0].ID != tt.first) {
			t.Errorf("limit %d offset %d: got %d tasks", tt.limit, tt.offset, len(page))
		}
		if tt.n > 0 && len(page[0].Steps) != 2 {
			t.Errorf("listed task lacks steps")
		}
	}
	for _, f := range []string{"json", "csv", "markdown"} {
		var b bytes.Buffer
		if err := s.Export(ctx, &b, f); err != nil {
			t.Fatal(err)
		}
		title := "goal" // the Markdown report is titled with the user's request
		if f == "markdown" {
			title = "request"
		}
		if !strings.Contains(b.String(), title+" 6") || !strings.Contains(b.String(), title+" 0") {
			t.Errorf("%s export lacks tasks:\n%s", f, b.String())
		}
		if f == "csv" && strings.Count(b.String(), "\n") != 1+7*2 {
			t.Errorf("csv rows: %d", strings.Count(b.String(), "\n"))
		}
	}
	if err := s.Export(ctx, &bytes.Buffer{}, "xml"); err == nil {
		t.Error("xml export accepted")
	}
	if err := s.DeleteTask(ctx, "t03"); err != nil {
		t.Fatal(err)
	}
	if n, _ := s.CountTasks(ctx); n != 6 {
		t.Errorf("count %d", n)
	}
	var steps int
	_ = s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM steps WHERE task_id='t03'`).Scan(&steps)
	if steps != 0 {
		t.Errorf("steps of a deleted task remain: %d", steps)
	}
}

func TestNewerSchemaRefused(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), FileName)
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = s.db.ExecContext(ctx, `INSERT INTO schema_migrations VALUES (99, 'x')`)
	s.Close()
	if _, err := Open(ctx, path); err == nil || !strings.Contains(err.Error(), "newer") {
		t.Fatalf("want refusal, got %v", err)
	}
}

// A task cut off by a crash or kill is left "running" in the database; reopening the database
// (a server start) must end it as failed with an error that says what happened.
func TestInterruptedTasksFailOnReopen(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), FileName)
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	running := sampleTask(1)
	running.ID, running.Status, running.Error, running.FinishedAt = "run", task.StatusRunning, "", time.Time{}
	running.Plan[1].Status = task.PlanActive
	running.Steps[1] = task.Step{ID: "s2", Index: 2, Tool: "click", Status: task.StepRunning, StartedAt: running.CreatedAt}
	waiting := sampleTask(2)
	waiting.ID, waiting.Status, waiting.Error, waiting.FinishedAt = "wait", task.StatusWaitingConfirmation, "", time.Time{}
	done := sampleTask(3)
	done.ID, done.Status = "done", task.StatusSucceeded
	for _, tk := range []*task.Task{running, waiting, done} {
		if err := s.SaveTask(ctx, tk); err != nil {
			t.Fatal(err)
		}
	}
	s.Close() // as if the process died: nothing ended the tasks

	s, err = Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, id := range []string{"run", "wait"} {
		got, err := s.GetTask(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != task.StatusFailed || got.Error != InterruptedError || got.FinishedAt.IsZero() {
			t.Errorf("%s: status %s error %q finished %v; want failed, %q", id, got.Status, got.Error, got.FinishedAt, InterruptedError)
		}
	}
	got, _ := s.GetTask(ctx, "run")
	if st := got.Steps[1]; st.Status != task.StepError || st.Error != InterruptedError || st.EndedAt.IsZero() {
		t.Errorf("running step left as %+v", st)
	}
	if got.Plan[1].Status != task.PlanFailed {
		t.Errorf("active plan item left as %s", got.Plan[1].Status)
	}
	if d, _ := s.GetTask(ctx, "done"); d.Status != task.StatusSucceeded || d.Error != done.Error {
		t.Errorf("a finished task changed: %s %q", d.Status, d.Error)
	}
	if n, err := s.MarkInterrupted(ctx); err != nil || n != 0 {
		t.Errorf("second pass changed %d tasks (%v)", n, err)
	}
}

// TestReadsConfirmationsSavedWithSnakeCase: confirmations saved before the API's keys became
// camelCase keep the time the user answered.
func TestReadsConfirmationsSavedWithSnakeCase(t *testing.T) {
	ctx := context.Background()
	s, err := OpenHome(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	want := sampleTask(1)
	if err := s.SaveTask(ctx, want); err != nil {
		t.Fatal(err)
	}
	legacy := `{"reason":"purchase or payment","prompt":"click button \"Buy\"","approved":false,"decided_at":"2026-01-02T03:05:05Z"}`
	if _, err := s.db.ExecContext(ctx, `UPDATE steps SET confirmation=? WHERE task_id='t01' AND id='s2'`, legacy); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetTask(ctx, "t01")
	if err != nil {
		t.Fatal(err)
	}
	c := got.Steps[1].Confirmation
	if c == nil || !c.DecidedAt.Equal(want.Steps[1].Confirmation.DecidedAt) || c.Approved == nil || *c.Approved {
		t.Fatalf("legacy confirmation read as %+v", c)
	}
}
