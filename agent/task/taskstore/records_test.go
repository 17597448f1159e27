package taskstore

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/tabrelay/tabrelay/agent/actions"
	"github.com/tabrelay/tabrelay/agent/task"
)

// recordsTask is a task with two extract steps (different fields, awkward values, records
// left out) between other steps.
func recordsTask() *task.Task {
	t := sampleTask(7)
	t.Status = task.StatusSucceeded
	at := t.CreatedAt
	t.Steps = append(t.Steps,
		task.Step{ID: "s3", Index: 3, Tool: "extract", Args: json.RawMessage(`{"fields":["title","price"]}`), Status: task.StepOK, StartedAt: at,
			Records: &task.StepRecords{Records: actions.Records{Fields: []string{"title", "price"}, Pages: 2, Items: []map[string]string{
				{"title": `Mug, "blue"`, "price": "$12.00"},
				{"title": "Théière 茶壶\nline two", "price": ""},
			}}, Omitted: 3}},
		task.Step{ID: "s4", Index: 4, Tool: "extract", Status: task.StepOK, StartedAt: at,
			Records: &task.StepRecords{Records: actions.Records{Fields: []string{"SKU"}, Pages: 1, Items: []map[string]string{}}}},
	)
	return t
}

// TestRecordsSurviveReopen: an extract step's records are saved with the step and read back
// the same, typed, after the database is closed and opened again (a server restart): by
// GetTask, ListTasks and the JSON export; steps without records stay without.
func TestRecordsSurviveReopen(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), FileName)
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	want := recordsTask()
	if err := s.SaveTask(ctx, want); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := s.GetTask(ctx, want.ID)
	if err != nil {
		t.Fatal(err)
	}
	listed, err := s.ListTasks(ctx, 10, 0)
	if err != nil || len(listed) != 1 {
		t.Fatalf("list: %v %d", err, len(listed))
	}
	var exported bytes.Buffer
	if err := s.Export(ctx, &exported, "json"); err != nil {
		t.Fatal(err)
	}
	var fromExport []*task.Task
	if err := json.Unmarshal(exported.Bytes(), &fromExport); err != nil || len(fromExport) != 1 {
		t.Fatalf("export: %v %s", err, exported.Bytes())
	}
	for name, tk := range map[string]*task.Task{"GetTask": got, "ListTasks": listed[0], "Export": fromExport[0]} {
		for i, st := range tk.Steps {
			if !reflect.DeepEqual(st.Records, want.Steps[i].Records) {
				t.Errorf("%s: step %s records %+v, want %+v", name, st.ID, st.Records, want.Steps[i].Records)
			}
		}
	}
	if gt, wt := mustTable(t, got), mustTable(t, want); !reflect.DeepEqual(gt, wt) {
		t.Errorf("record table after reopening %+v, want %+v", gt, wt)
	}
}

func mustTable(t *testing.T, tk *task.Task) *task.RecordTable {
	t.Helper()
	rt, err := tk.RecordTable()
	if err != nil {
		t.Fatal(err)
	}
	return rt
}

// TestRecordsMigration: a database of schema version 2 (before records were kept) is migrated
// on Open; its tasks read as before, without records, and take records from then on.
func TestRecordsMigration(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), FileName)
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	for v, m := range migrations[:2] {
		if _, err := db.ExecContext(ctx, m); err != nil {
			t.Fatal(err)
		}
		if _, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL);
			INSERT INTO schema_migrations VALUES (?, 'then')`, v+1); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO tasks (id, goal, status, created_at, updated_at) VALUES ('old', 'read the table', 'succeeded', '2026-01-02T03:04:05Z', '2026-01-02T03:04:05Z');
		INSERT INTO steps (task_id, step_index, id, tool, status, result, started_at) VALUES ('old', 1, 's1', 'extract', 'ok', '{"kind":"extract"}', '2026-01-02T03:04:05Z')`); err != nil {
		t.Fatal(err)
	}
	db.Close()

	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if v, _ := s.Version(ctx); v != SchemaVersion() || v < 3 {
		t.Fatalf("version %d after migrating, want %d", v, SchemaVersion())
	}
	old, err := s.GetTask(ctx, "old")
	if err != nil || len(old.Steps) != 1 || old.Steps[0].Records != nil {
		t.Fatalf("the old task reads as %+v (%v)", old, err)
	}
	if _, err := old.RecordTable(); err == nil {
		t.Error("a task saved before records were kept has a record table")
	}
	old.Steps[0].Records = recordsTask().Steps[2].Records
	if err := s.SaveTask(ctx, old); err != nil {
		t.Fatal(err)
	}
	again, err := s.GetTask(ctx, "old")
	if err != nil || !reflect.DeepEqual(again.Steps[0].Records, old.Steps[0].Records) {
		t.Fatalf("records after the migration: %+v (%v)", again.Steps[0].Records, err)
	}
}

// TestBrokenRecordsAreAnError: records that do not read back are an error naming the step,
// never records quietly lost.
func TestBrokenRecordsAreAnError(t *testing.T) {
	ctx := context.Background()
	s, err := OpenHome(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	tk := recordsTask()
	if err := s.SaveTask(ctx, tk); err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.ExecContext(ctx, `UPDATE steps SET records = '{"fields":' WHERE task_id = ? AND id = 's3'`, tk.ID); err != nil {
		t.Fatal(err)
	}
	_, err = s.GetTask(ctx, tk.ID)
	if want := fmt.Sprintf("reading the records of step s3 of task %s", tk.ID); err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("broken records: %v, want an error %q", err, want)
	}
}
