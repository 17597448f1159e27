package task_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tabrelay/tabrelay/agent/llmtest"
	"github.com/tabrelay/tabrelay/agent/task"
	"github.com/tabrelay/tabrelay/agent/task/taskstore"
)

// smallDisk is a directory on a 4 MB tmpfs (needs root and mount): fill takes its free space,
// free gives it back.
type smallDisk struct {
	dir    string
	filler string
}

func mountSmallDisk(t *testing.T) *smallDisk {
	t.Helper()
	dir := t.TempDir()
	if err := exec.Command("mount", "-t", "tmpfs", "-o", "size=4m,mode=0700", "tmpfs", dir).Run(); err != nil {
		return nil // not permitted here: the caller injects the write error instead
	}
	t.Cleanup(func() { _ = exec.Command("umount", "-l", dir).Run() })
	return &smallDisk{dir: dir, filler: filepath.Join(dir, "filler")}
}

// fill writes the filler file until the filesystem has no space left.
func (d *smallDisk) fill(t *testing.T) {
	t.Helper()
	f, err := os.OpenFile(d.filler, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 4096)
	for {
		if _, err := f.Write(buf); err != nil {
			return // ENOSPC
		}
	}
}

func (d *smallDisk) free(t *testing.T) {
	t.Helper()
	if err := os.Remove(d.filler); err != nil {
		t.Fatal(err)
	}
}

// failingStore is the real store with writes failing while full is set, as a full disk makes
// them fail (used where the test cannot mount a filesystem).
type failingStore struct {
	*taskstore.Store
	mu   sync.Mutex
	full bool
}

var errDiskFull = errors.New("database or disk is full (13)")

func (s *failingStore) SaveTask(ctx context.Context, t *task.Task) error {
	s.mu.Lock()
	full := s.full
	s.mu.Unlock()
	if full {
		return errDiskFull
	}
	return s.Store.SaveTask(ctx, t)
}

func (s *failingStore) set(full bool) {
	s.mu.Lock()
	s.full = full
	s.mu.Unlock()
}

// TestFullDiskLosesNoTask runs tasks with the home on a filesystem that is full (a small tmpfs
// and the real SQLite file; an injected write error where mounting is not permitted): each
// task says it is not saved to history and why, the history's state says so, the history
// lists the tasks still; once space is freed they are saved without anything else happening,
// and they are in the database after it is reopened.
func TestFullDiskLosesNoTask(t *testing.T) {
	ctx := context.Background()
	disk := mountSmallDisk(t)
	home := t.TempDir()
	if disk != nil {
		home = disk.dir
	} else {
		t.Log("mount not permitted: injecting the disk-full error into the store's writes")
	}
	st, err := taskstore.OpenHome(ctx, home)
	if err != nil {
		t.Fatal(err)
	}
	var store task.Store = st
	fs := &failingStore{Store: st}
	fill, free := func() { fs.set(true) }, func() { fs.set(false) }
	if disk != nil {
		fill, free = func() { disk.fill(t) }, func() { disk.free(t) }
	} else {
		store = fs
	}
	const n = 3
	var replies []llmtest.Reply
	for range n {
		replies = append(replies, llmtest.ToolCall("finish", `{"answer":"The blue kettle costs 39 EUR."}`))
	}
	srv := llmtest.NewOpenAI(t, replies...)
	r := newRunner(t, srv, newShop(), func(o *task.Options) { o.Store = store; o.Memory = -1 })

	fill()
	var ids []string
	for i := range n {
		tk, err := r.Run(ctx, "what does the blue kettle cost?", "tab1")
		if err != nil || tk.Status != task.StatusSucceeded {
			t.Fatalf("task %d: %+v (%v)", i, tk, err)
		}
		if !strings.HasPrefix(tk.NotSaved, task.NotSavedPrefix) || !strings.Contains(tk.NotSaved, "full") {
			t.Errorf("task %d run on a full disk says NotSaved=%q, want %q and the reason", i, tk.NotSaved, task.NotSavedPrefix)
		}
		ids = append(ids, tk.ID)
	}
	h := r.History()
	if h.OK() || len(h.Unsaved) != n || !strings.Contains(h.Problem(), "3 tasks not saved to history: ") {
		t.Errorf("history state on a full disk: %+v (%q)", h, h.Problem())
	}
	listed, err := r.List(ctx, 10, 0)
	if err != nil || len(listed) != n {
		t.Fatalf("the history lists %d tasks (%v), want the %d not saved yet", len(listed), err, n)
	}
	for _, tk := range listed {
		if tk.NotSaved == "" {
			t.Errorf("listed task %s does not say it is not saved", tk.ID)
		}
	}

	free()
	deadline := time.Now().Add(15 * time.Second)
	for !r.History().OK() {
		if time.Now().After(deadline) {
			t.Fatalf("the tasks were not saved after space was freed: %+v", r.History())
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, id := range ids {
		tk, err := r.Get(ctx, id)
		if err != nil || tk.NotSaved != "" {
			t.Errorf("task %s after space was freed: NotSaved=%q (%v)", id, tk.NotSaved, err)
		}
	}
	if err := r.Shutdown(ctx); err != nil {
		t.Errorf("Shutdown: %v", err)
	}
	_, got := storedAfterReopen(t, ctx, st, home, ids[0])
	if got.Status != task.StatusSucceeded || got.Answer == "" {
		t.Errorf("after reopening: %+v", got)
	}
	st2, err := taskstore.OpenHome(ctx, home)
	if err != nil {
		t.Fatal(err)
	}
	defer st2.Close()
	all, err := st2.ListTasks(ctx, 10, 0)
	if err != nil || len(all) != n {
		t.Fatalf("%d tasks in the history after reopening (%v), want %d", len(all), err, n)
	}
}

// TestShutdownNamesUnsavedTasks: a shutdown while the store cannot write tries once more and
// returns the tasks it could not save; one that can write saves them.
func TestShutdownNamesUnsavedTasks(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name        string
		fullAtClose bool
	}{{"still full", true}, {"space back", false}} {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			st, err := taskstore.OpenHome(ctx, home)
			if err != nil {
				t.Fatal(err)
			}
			fs := &failingStore{Store: st}
			srv := llmtest.NewOpenAI(t, llmtest.ToolCall("finish", `{"answer":"ok"}`))
			r := newRunner(t, srv, newShop(), func(o *task.Options) { o.Store = fs; o.Memory = -1 })
			fs.set(true)
			tk, err := r.Run(ctx, "look", "tab1")
			if err != nil || tk.NotSaved == "" {
				t.Fatalf("task %+v (%v)", tk, err)
			}
			fs.set(tc.fullAtClose)
			err = r.Shutdown(ctx)
			var ue *task.UnsavedError
			switch {
			case tc.fullAtClose && (!errors.As(err, &ue) || len(ue.Tasks) != 1 || ue.Tasks[0].ID != tk.ID || !errors.Is(err, errDiskFull)):
				t.Fatalf("Shutdown on a full disk: %v, want an UnsavedError naming %s", err, tk.ID)
			case !tc.fullAtClose && err != nil:
				t.Fatalf("Shutdown with space back: %v", err)
			}
			_, err = st.GetTask(ctx, tk.ID)
			if saved := err == nil; saved == tc.fullAtClose {
				t.Errorf("task in the database after Shutdown: %v, want %v (%v)", saved, !tc.fullAtClose, err)
			}
			st.Close()
		})
	}
}
