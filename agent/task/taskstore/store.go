// Package taskstore keeps tabrelay's tasks, their plans and steps in an embedded SQLite database
// (modernc.org/sqlite, pure Go) under the tabrelay home, so history survives restarts and can be
// exported. The schema is versioned: migrations run in order on Open and are recorded in
// schema_migrations.
package taskstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tabrelay/tabrelay/agent/task"
	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// FileName is the database's file name inside the tabrelay home.
const FileName = "tabrelay.db"

// Store is an open database. It is safe for concurrent use.
type Store struct {
	db   *sql.DB
	path string
}

// migrations are applied in order; never edit one that shipped, append a new one.
var migrations = []string{
	// 1: tasks, plan items, steps.
	`CREATE TABLE tasks (
		id TEXT PRIMARY KEY,
		goal TEXT NOT NULL,
		tab_id TEXT NOT NULL DEFAULT '',
		status TEXT NOT NULL,
		answer TEXT NOT NULL DEFAULT '',
		error TEXT NOT NULL DEFAULT '',
		model TEXT NOT NULL DEFAULT '',
		llm_calls INTEGER NOT NULL DEFAULT 0,
		prompt_tokens INTEGER NOT NULL DEFAULT 0,
		completion_tokens INTEGER NOT NULL DEFAULT 0,
		created_at TEXT NOT NULL,
		updated_at TEXT NOT NULL,
		finished_at TEXT NOT NULL DEFAULT ''
	);
	CREATE INDEX tasks_created_at ON tasks(created_at DESC);
	CREATE TABLE plan_items (
		task_id TEXT NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
		position INTEGER NOT NULL,
		text TEXT NOT NULL,
		status TEXT NOT NULL,
		PRIMARY KEY (task_id, position)
	);
	CREATE TABLE steps (
		task_id TEXT NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
		step_index INTEGER NOT NULL,
		id TEXT NOT NULL,
		tool TEXT NOT NULL,
		args TEXT NOT NULL DEFAULT '',
		status TEXT NOT NULL,
		result TEXT NOT NULL DEFAULT '',
		error TEXT NOT NULL DEFAULT '',
		thought TEXT NOT NULL DEFAULT '',
		tab_id TEXT NOT NULL DEFAULT '',
		url_before TEXT NOT NULL DEFAULT '',
		url_after TEXT NOT NULL DEFAULT '',
		title_after TEXT NOT NULL DEFAULT '',
		started_at TEXT NOT NULL,
		ended_at TEXT NOT NULL DEFAULT '',
		duration_ms INTEGER NOT NULL DEFAULT 0,
		confirmation TEXT NOT NULL DEFAULT '',
		PRIMARY KEY (task_id, step_index)
	);`,
	// 2: the user's request apart from the model's goal, the tab conversation, the element
	// each step acted on (saving a task as a skill names it).
	`ALTER TABLE tasks ADD COLUMN request TEXT NOT NULL DEFAULT '';
	ALTER TABLE tasks ADD COLUMN conversation TEXT NOT NULL DEFAULT '';
	ALTER TABLE steps ADD COLUMN target TEXT NOT NULL DEFAULT '';`,
	// 3: the records an extract step read (task.StepRecords as JSON; '' for other steps),
	// within task.MaxRecordBytes a task.
	`ALTER TABLE steps ADD COLUMN records TEXT NOT NULL DEFAULT '';`,
}

// SchemaVersion is the version Open migrates to.
func SchemaVersion() int { return len(migrations) }

// OpenHome opens (creating if needed) home/tabrelay.db.
func OpenHome(ctx context.Context, home string) (*Store, error) {
	return Open(ctx, filepath.Join(home, FileName))
}

// Open opens (creating if needed) the database file at path and migrates it.
func Open(ctx context.Context, path string) (*Store, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("store: creating the directory for %s: %w", path, err)
	}
	// SQLite creates the -wal and -shm files with the database file's mode: make that 0600
	// before it opens (whatever the umask; a database from an older version may be 0644).
	if err := makePrivate(path, true); err != nil {
		return nil, err
	}
	q := url.Values{}
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "busy_timeout(5000)")
	q.Add("_pragma", "synchronous(NORMAL)")
	db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("store: opening %s: %w", path, err)
	}
	// One connection: SQLite serialises writers anyway, and this avoids SQLITE_BUSY between
	// our own connections.
	db.SetMaxOpenConns(1)
	s := &Store{db: db, path: path}
	if err := s.migrate(ctx); err != nil {
		_ = db.Close()
		return nil, err
	}
	if _, err := s.MarkInterrupted(ctx); err != nil {
		_ = db.Close()
		return nil, err
	}
	for _, companion := range []string{path + "-wal", path + "-shm"} { // left 0644 by an older version
		if err := makePrivate(companion, false); err != nil {
			_ = db.Close()
			return nil, err
		}
	}
	return s, nil
}

// makePrivate gives the file at path mode 0600, creating it empty first when create is set
// (an empty file is a new SQLite database); a missing file is left missing otherwise.
func makePrivate(path string, create bool) error {
	if create {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			return fmt.Errorf("store: creating %s: %w", path, err)
		}
		_ = f.Close()
	}
	if err := os.Chmod(path, 0o600); err != nil && !(errors.Is(err, fs.ErrNotExist) && !create) {
		return fmt.Errorf("store: making %s readable by its owner only (0600): %w", path, err)
	}
	return nil
}

// InterruptedError is the error recorded on tasks that were still in progress when the
// database was last closed without finishing them (the server crashed or was killed).
const InterruptedError = "interrupted: the tabrelay server stopped while this task ran"

// MarkInterrupted marks every task that is not in a final state (planning, running, waiting
// for confirmation) as failed with [InterruptedError], its running steps as errors and its
// active plan items as failed, and returns how many tasks it changed. Open calls it: no task
// survives a restart of the server, so a task left in progress in the database was cut off.
func (s *Store) MarkInterrupted(ctx context.Context) (int, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("store: %s: marking interrupted tasks: %w", s.path, err)
	}
	defer func() { _ = tx.Rollback() }()
	final := []any{string(task.StatusSucceeded), string(task.StatusFailed), string(task.StatusCancelled)}
	const open = `SELECT id FROM tasks WHERE status NOT IN (?,?,?)`
	at := now()
	if _, err := tx.ExecContext(ctx, `UPDATE steps SET status = ?, error = ?, ended_at = CASE WHEN ended_at = '' THEN ? ELSE ended_at END
		WHERE status = ? AND task_id IN (`+open+`)`,
		append([]any{string(task.StepError), InterruptedError, at, string(task.StepRunning)}, final...)...); err != nil {
		return 0, fmt.Errorf("store: %s: marking the steps of interrupted tasks: %w", s.path, err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE plan_items SET status = ? WHERE status = ? AND task_id IN (`+open+`)`,
		append([]any{string(task.PlanFailed), string(task.PlanActive)}, final...)...); err != nil {
		return 0, fmt.Errorf("store: %s: marking the plans of interrupted tasks: %w", s.path, err)
	}
	res, err := tx.ExecContext(ctx, `UPDATE tasks SET status = ?, error = ?, updated_at = ?,
		finished_at = CASE WHEN finished_at = '' THEN ? ELSE finished_at END WHERE status NOT IN (?,?,?)`,
		append([]any{string(task.StatusFailed), InterruptedError, at, at}, final...)...)
	if err != nil {
		return 0, fmt.Errorf("store: %s: marking interrupted tasks as failed: %w", s.path, err)
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("store: %s: committing the interrupted tasks: %w", s.path, err)
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}

// Path is the database file.
func (s *Store) Path() string { return s.path }

// Close closes the database.
func (s *Store) Close() error {
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("store: closing %s: %w", s.path, err)
	}
	return nil
}

func (s *Store) migrate(ctx context.Context) error {
	if _, err := s.db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)`); err != nil {
		return fmt.Errorf("store: %s: creating schema_migrations: %w", s.path, err)
	}
	cur, err := s.Version(ctx)
	if err != nil {
		return err
	}
	if cur > len(migrations) {
		return fmt.Errorf("store: %s has schema version %d, newer than this tabrelay knows (%d): upgrade tabrelay or use another --home", s.path, cur, len(migrations))
	}
	for v := cur + 1; v <= len(migrations); v++ {
		tx, err := s.db.BeginTx(ctx, nil)
		if err != nil {
			return fmt.Errorf("store: migration %d: %w", v, err)
		}
		if _, err := tx.ExecContext(ctx, migrations[v-1]); err != nil {
			_ = tx.Rollback()
			return fmt.Errorf("store: %s: migration %d: %w", s.path, v, err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations(version, applied_at) VALUES (?, ?)`, v, now()); err != nil {
			_ = tx.Rollback()
			return fmt.Errorf("store: recording migration %d: %w", v, err)
		}
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("store: committing migration %d: %w", v, err)
		}
	}
	return nil
}

// Version returns the applied schema version.
func (s *Store) Version(ctx context.Context) (int, error) {
	var v sql.NullInt64
	if err := s.db.QueryRowContext(ctx, `SELECT MAX(version) FROM schema_migrations`).Scan(&v); err != nil {
		return 0, fmt.Errorf("store: reading the schema version: %w", err)
	}
	return int(v.Int64), nil
}

func now() string { return time.Now().UTC().Format(time.RFC3339Nano) }

func ts(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

func parseTS(s string) time.Time {
	t, _ := time.Parse(time.RFC3339Nano, s)
	return t
}

// SaveTask inserts or replaces the task, its plan and its steps.
func (s *Store) SaveTask(ctx context.Context, t *task.Task) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: saving task %s: %w", t.ID, err)
	}
	defer func() { _ = tx.Rollback() }()
	_, err = tx.ExecContext(ctx, `INSERT INTO tasks (id, goal, tab_id, status, answer, error, model, llm_calls, prompt_tokens, completion_tokens, created_at, updated_at, finished_at, request, conversation)
		VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)
		ON CONFLICT(id) DO UPDATE SET goal=excluded.goal, tab_id=excluded.tab_id, status=excluded.status, answer=excluded.answer,
		error=excluded.error, model=excluded.model, llm_calls=excluded.llm_calls, prompt_tokens=excluded.prompt_tokens,
		completion_tokens=excluded.completion_tokens, updated_at=excluded.updated_at, finished_at=excluded.finished_at,
		request=excluded.request, conversation=excluded.conversation`,
		t.ID, t.Goal, t.TabID, string(t.Status), t.Answer, t.Error, t.Model, t.Usage.LLMCalls, t.Usage.PromptTokens, t.Usage.CompletionTokens,
		ts(t.CreatedAt), ts(t.UpdatedAt), ts(t.FinishedAt), t.Request, t.Conversation)
	if err != nil {
		return fmt.Errorf("store: saving task %s: %w", t.ID, err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM plan_items WHERE task_id = ?`, t.ID); err != nil {
		return fmt.Errorf("store: saving the plan of task %s: %w", t.ID, err)
	}
	for i, p := range t.Plan {
		if _, err := tx.ExecContext(ctx, `INSERT INTO plan_items (task_id, position, text, status) VALUES (?,?,?,?)`, t.ID, i, p.Text, string(p.Status)); err != nil {
			return fmt.Errorf("store: saving the plan of task %s: %w", t.ID, err)
		}
	}
	for _, st := range t.Steps {
		conf := ""
		if st.Confirmation != nil {
			b, err := json.Marshal(st.Confirmation)
			if err != nil {
				return fmt.Errorf("store: encoding confirmation of step %s: %w", st.ID, err)
			}
			conf = string(b)
		}
		target := ""
		if st.Target != nil {
			b, err := json.Marshal(st.Target)
			if err != nil {
				return fmt.Errorf("store: encoding the target of step %s: %w", st.ID, err)
			}
			target = string(b)
		}
		records := ""
		if st.Records != nil {
			b, err := json.Marshal(st.Records)
			if err != nil {
				return fmt.Errorf("store: encoding the records of step %s: %w", st.ID, err)
			}
			records = string(b)
		}
		_, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO steps (task_id, step_index, id, tool, args, status, result, error, thought, tab_id,
			url_before, url_after, title_after, started_at, ended_at, duration_ms, confirmation, target, records) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
			t.ID, st.Index, st.ID, st.Tool, string(st.Args), string(st.Status), st.Result, st.Error, st.Thought, st.TabID,
			st.URLBefore, st.URLAfter, st.TitleAfter, ts(st.StartedAt), ts(st.EndedAt), st.DurationMS, conf, target, records)
		if err != nil {
			return fmt.Errorf("store: saving step %s of task %s: %w", st.ID, t.ID, err)
		}
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM steps WHERE task_id = ? AND step_index > ?`, t.ID, len(t.Steps)); err != nil {
		return fmt.Errorf("store: trimming steps of task %s: %w", t.ID, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: committing task %s: %w", t.ID, err)
	}
	return nil
}

const taskCols = `id, goal, tab_id, status, answer, error, model, llm_calls, prompt_tokens, completion_tokens, created_at, updated_at, finished_at, request, conversation`

type scanner interface{ Scan(dest ...any) error }

func scanTask(r scanner) (*task.Task, error) {
	var t task.Task
	var status, created, updated, finished string
	if err := r.Scan(&t.ID, &t.Goal, &t.TabID, &status, &t.Answer, &t.Error, &t.Model, &t.Usage.LLMCalls, &t.Usage.PromptTokens,
		&t.Usage.CompletionTokens, &created, &updated, &finished, &t.Request, &t.Conversation); err != nil {
		return nil, err
	}
	t.Status = task.Status(status)
	t.CreatedAt, t.UpdatedAt, t.FinishedAt = parseTS(created), parseTS(updated), parseTS(finished)
	t.Plan, t.Steps = []task.PlanItem{}, []task.Step{}
	return &t, nil
}

// GetTask returns the task with its plan and steps; unknown ids give an error wrapping
// task.ErrNotFound.
func (s *Store) GetTask(ctx context.Context, id string) (*task.Task, error) {
	t, err := scanTask(s.db.QueryRowContext(ctx, `SELECT `+taskCols+` FROM tasks WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("store: task %s: %w", id, task.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("store: reading task %s: %w", id, err)
	}
	if err := s.fill(ctx, t); err != nil {
		return nil, err
	}
	return t, nil
}

func (s *Store) fill(ctx context.Context, t *task.Task) error {
	rows, err := s.db.QueryContext(ctx, `SELECT text, status FROM plan_items WHERE task_id = ? ORDER BY position`, t.ID)
	if err != nil {
		return fmt.Errorf("store: reading the plan of task %s: %w", t.ID, err)
	}
	for rows.Next() {
		var p task.PlanItem
		var st string
		if err := rows.Scan(&p.Text, &st); err != nil {
			rows.Close()
			return fmt.Errorf("store: reading the plan of task %s: %w", t.ID, err)
		}
		p.Status = task.PlanStatus(st)
		t.Plan = append(t.Plan, p)
	}
	rows.Close()
	rows, err = s.db.QueryContext(ctx, `SELECT step_index, id, tool, args, status, result, error, thought, tab_id, url_before, url_after,
		title_after, started_at, ended_at, duration_ms, confirmation, target, records FROM steps WHERE task_id = ? ORDER BY step_index`, t.ID)
	if err != nil {
		return fmt.Errorf("store: reading the steps of task %s: %w", t.ID, err)
	}
	defer rows.Close()
	for rows.Next() {
		var st task.Step
		var args, status, started, ended, conf, target, records string
		if err := rows.Scan(&st.Index, &st.ID, &st.Tool, &args, &status, &st.Result, &st.Error, &st.Thought, &st.TabID, &st.URLBefore,
			&st.URLAfter, &st.TitleAfter, &started, &ended, &st.DurationMS, &conf, &target, &records); err != nil {
			return fmt.Errorf("store: reading the steps of task %s: %w", t.ID, err)
		}
		if args != "" {
			st.Args = json.RawMessage(args)
		}
		st.Status = task.StepStatus(status)
		st.StartedAt, st.EndedAt = parseTS(started), parseTS(ended)
		if conf != "" {
			var c struct {
				task.Confirmation
				// LegacyDecidedAt reads confirmations saved before the API's keys became
				// camelCase ("decided_at").
				LegacyDecidedAt time.Time `json:"decided_at"`
			}
			if err := json.Unmarshal([]byte(conf), &c); err == nil {
				if c.DecidedAt.IsZero() {
					c.DecidedAt = c.LegacyDecidedAt
				}
				st.Confirmation = &c.Confirmation
			}
		}
		if target != "" {
			var tg task.Target
			if err := json.Unmarshal([]byte(target), &tg); err == nil {
				st.Target = &tg
			}
		}
		if records != "" {
			// unlike a confirmation or a target, records are the task's data: never dropped quietly
			st.Records = &task.StepRecords{}
			if err := json.Unmarshal([]byte(records), st.Records); err != nil {
				return fmt.Errorf("store: reading the records of step %s of task %s: %w", st.ID, t.ID, err)
			}
		}
		t.Steps = append(t.Steps, st)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("store: reading the steps of task %s: %w", t.ID, err)
	}
	return nil
}

// ListTasks returns up to limit tasks (default 50, at most 1000) after skipping offset, most
// recent first, each with its plan and steps.
func (s *Store) ListTasks(ctx context.Context, limit, offset int) ([]*task.Task, error) {
	if limit <= 0 {
		limit = 50
	}
	limit = min(limit, 1000)
	offset = max(offset, 0)
	rows, err := s.db.QueryContext(ctx, `SELECT `+taskCols+` FROM tasks ORDER BY created_at DESC, id LIMIT ? OFFSET ?`, limit, offset)
	if err != nil {
		return nil, fmt.Errorf("store: listing tasks: %w", err)
	}
	var out []*task.Task
	for rows.Next() {
		t, err := scanTask(rows)
		if err != nil {
			rows.Close()
			return nil, fmt.Errorf("store: listing tasks: %w", err)
		}
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		rows.Close()
		return nil, fmt.Errorf("store: listing tasks: %w", err)
	}
	rows.Close()
	for _, t := range out {
		if err := s.fill(ctx, t); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// CountTasks returns the number of stored tasks.
func (s *Store) CountTasks(ctx context.Context) (int, error) {
	var n int
	if err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM tasks`).Scan(&n); err != nil {
		return 0, fmt.Errorf("store: counting tasks: %w", err)
	}
	return n, nil
}

// DeleteTask removes a task with its plan and steps.
func (s *Store) DeleteTask(ctx context.Context, id string) error {
	res, err := s.db.ExecContext(ctx, `DELETE FROM tasks WHERE id = ?`, id)
	if err != nil {
		return fmt.Errorf("store: deleting task %s: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("store: deleting task %s: %w", id, task.ErrNotFound)
	}
	return nil
}

// Export writes every task, oldest first, in format "json", "csv" or "markdown" (also "md").
func (s *Store) Export(ctx context.Context, w io.Writer, format string) error {
	var all []*task.Task
	for offset := 0; ; offset += 1000 {
		page, err := s.ListTasks(ctx, 1000, offset)
		if err != nil {
			return err
		}
		all = append(all, page...)
		if len(page) < 1000 {
			break
		}
	}
	for i, j := 0, len(all)-1; i < j; i, j = i+1, j-1 {
		all[i], all[j] = all[j], all[i]
	}
	switch strings.ToLower(format) {
	case "json", "":
		if all == nil {
			all = []*task.Task{}
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		if err := enc.Encode(all); err != nil {
			return fmt.Errorf("store: exporting JSON: %w", err)
		}
		return nil
	case "csv":
		return task.ReportCSV(w, all...)
	case "markdown", "md":
		return task.ReportMarkdown(w, all...)
	}
	return fmt.Errorf("store: unknown export format %q: use json, csv or markdown", format)
}
