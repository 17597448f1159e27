package snapshot

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/tabrelay/tabrelay/e2e/fixtures"
	"github.com/tabrelay/tabrelay/snapshot/snapshottest"
)

// env is the browser and fixture site shared by this package's tests.
type env struct {
	b   *snapshottest.Browser
	srv *fixtures.Server
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
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		shared.srv, shared.err = fixtures.Start()
		if shared.err == nil {
			shared.b, shared.err = snapshottest.Launch(ctx)
		}
		cancel()
	}
	code := m.Run()
	if shared.b != nil {
		shared.b.Close()
	}
	if shared.srv != nil {
		shared.srv.Close()
	}
	os.Exit(code)
}

// browser returns the shared browser, skipping under -short and failing if it could not start.
func browser(t *testing.T) (*snapshottest.Browser, *fixtures.Server) {
	t.Helper()
	if testing.Short() {
		t.Skip("needs Chromium (skipped with -short)")
	}
	if shared.err != nil || shared.b == nil {
		t.Fatalf("browser: %v", shared.err)
	}
	return shared.b, shared.srv
}

// openTab opens path of the fixture site in a new tab, attaches and waits for load.
func openTab(t *testing.T, ctx context.Context, path string) *Tab {
	t.Helper()
	b, srv := browser(t)
	url := srv.URL(path)
	id, err := b.NewTab(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.CloseTab(context.Background(), id) })
	tab, err := Attach(ctx, b.Client, id)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tab.Close(context.Background()) })
	waitReady(t, ctx, tab, url)
	return tab
}

// waitReady waits until the tab shows url and has loaded. A new target starts on an empty
// document that is already "complete", so the URL has to be checked too.
func waitReady(t *testing.T, ctx context.Context, tab *Tab, url string) {
	t.Helper()
	for i := 0; i < 200; i++ {
		v, err := evalIn(ctx, tab, "location.href === "+strconv.Quote(url)+" && document.readyState === 'complete' && (!window.__ready || window.__ready())")
		if err == nil && v == "true" {
			time.Sleep(300 * time.Millisecond) // frames post their lists, re-renders settle
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("page did not load")
}

func evalIn(ctx context.Context, tab *Tab, expr string) (string, error) {
	var r struct {
		Result struct {
			Value any `json:"value"`
		} `json:"result"`
		Exc *struct {
			Text string `json:"text"`
		} `json:"exceptionDetails"`
	}
	if err := tab.Client().Call(ctx, tab.Session(), "Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true, "awaitPromise": true}, &r); err != nil {
		return "", err
	}
	if r.Exc != nil {
		return "", fmt.Errorf("%s", r.Exc.Text)
	}
	return fmt.Sprint(r.Result.Value), nil
}
