package actions

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/tabrelay/tabrelay/agent/actions/gate"
	"github.com/tabrelay/tabrelay/e2e/fixtures"
	"github.com/tabrelay/tabrelay/snapshot"
	"github.com/tabrelay/tabrelay/snapshot/snapshottest"
)

// tabOpener opens and closes tabs the way the environment's user would.
type tabOpener interface {
	NewTab(ctx context.Context, url string) (string, error)
	CloseTab(ctx context.Context, targetID string) error
}

// env is the browser and fixture site shared by this package's tests: Chromium's own endpoint
// by default, or the relay and the real extension (see accuracy_relay_test.go).
type env struct {
	b   tabOpener
	srv *fixtures.Server
	svc *Service
	err error
}

var shared env // set once by TestMain, read-only afterwards

func TestMain(m *testing.M) {
	short := false
	for _, a := range os.Args {
		if a == "-test.short=true" || a == "-test.short" {
			short = true
		}
	}
	if !short {
		ctx, cancel := context.WithTimeout(callerCtx(), 60*time.Second)
		shared.srv, shared.err = fixtures.Start()
		var b *snapshottest.Browser
		if shared.err == nil {
			b, shared.err = snapshottest.Launch(ctx)
		}
		if shared.err == nil {
			shared.b = b
			shared.svc = New(b.Client, Options{Timeout: 20 * time.Second})
		}
		cancel()
	}
	code := m.Run()
	if shared.svc != nil {
		shared.svc.Close(context.Background())
	}
	if b, ok := shared.b.(*snapshottest.Browser); ok {
		b.Close()
	}
	if shared.srv != nil {
		shared.srv.Close()
	}
	os.Exit(code)
}

func need(t *testing.T) (*Service, tabOpener, *fixtures.Server) {
	t.Helper()
	if testing.Short() {
		t.Skip("needs Chromium (skipped with -short)")
	}
	if shared.err != nil || shared.svc == nil {
		t.Fatalf("browser: %v", shared.err)
	}
	return shared.svc, shared.b, shared.srv
}

// open opens path of the fixture site in a new tab and waits until it has loaded and settled.
func open(t *testing.T, ctx context.Context, path string) string {
	t.Helper()
	svc, b, srv := need(t)
	id, err := b.NewTab(ctx, srv.URL(path))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		svc.forget(id)
		b.CloseTab(context.Background(), id)
	})
	// a new target starts on an empty about:blank document that is already complete
	loaded := "location.protocol !== 'about:' && document.readyState === 'complete'"
	if _, err := svc.Act(ctx, id, Do(Wait{Expression: loaded})); err != nil {
		t.Fatal(err)
	}
	// frames post their lists, re-renders settle: the page quiet for the settle window
	ts, err := svc.tabFor(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if !svc.settlePage(ctx, ts) {
		t.Fatalf("%s did not settle", path)
	}
	return id
}

// act runs a on the tab and fails the test if it fails.
func act(t *testing.T, ctx context.Context, id string, a Action) *Result {
	t.Helper()
	r, err := shared.svc.Act(ctx, id, a)
	if err != nil {
		t.Fatalf("%s: %v", a.Kind, err)
	}
	return r
}

// eval evaluates expr in the tab's main frame and decodes the value into out.
func eval(t *testing.T, ctx context.Context, id, expr string, out any) {
	t.Helper()
	r, err := shared.svc.Act(ctx, id, Do(Evaluate{Expression: expr}))
	if err != nil {
		t.Fatalf("evaluate %s: %v", expr, err)
	}
	if out != nil {
		if err := json.Unmarshal(r.Value, out); err != nil {
			t.Fatalf("evaluate %s: %v (%s)", expr, err, r.Value)
		}
	}
}

func snap(t *testing.T, ctx context.Context, id string, o snapshot.Options) *snapshot.Snapshot {
	t.Helper()
	s, err := shared.svc.Snapshot(ctx, id, o)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func must[T any](v T, err error) func(t *testing.T) T {
	return func(t *testing.T) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

var _ = fmt.Sprint

// forget drops the state kept for tab id, as the service does when its session ends.
func (s *Service) forget(id string) {
	s.mu.Lock()
	ts := s.tabs[id]
	s.mu.Unlock()
	if ts != nil {
		s.reset(ts)
	}
}

// callerCtx is the context of these tests' own actions: a Go program acting by ref as the
// caller, recorded and not judged, as /api/act is (an unmarked context would be judged).
func callerCtx() context.Context {
	return gate.With(context.Background(), gate.Request{Who: gate.Caller})
}
