package actions

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/tabrelay/tabrelay/internal/browser"
	"github.com/tabrelay/tabrelay/internal/cdpclient"
	"github.com/tabrelay/tabrelay/internal/secret"
	"github.com/tabrelay/tabrelay/relay"
	"github.com/tabrelay/tabrelay/snapshot"
)

// extensionOpener opens tabs in a browser with the real extension and shares each with a click
// on the extension's toolbar button, as a user would.
type extensionOpener struct {
	b    *browser.Browser
	mu   sync.Mutex
	tabs map[string]browser.Tab
}

func (o *extensionOpener) NewTab(ctx context.Context, url string) (string, error) {
	tab, err := o.b.ShareURL(ctx, url)
	if err != nil {
		return "", err
	}
	o.mu.Lock()
	o.tabs[tab.TargetID] = tab
	o.mu.Unlock()
	return tab.TargetID, nil
}

func (o *extensionOpener) CloseTab(ctx context.Context, id string) error {
	o.mu.Lock()
	tab, ok := o.tabs[id]
	delete(o.tabs, id)
	o.mu.Unlock()
	if !ok {
		return nil
	}
	return o.b.CloseTab(ctx, tab)
}

// TestAccuracyThroughExtension runs the accuracy check again with every tab shared through the
// real extension and every action going through the relay, over the hub's in-process
// connection: the path the agent takes.
func TestAccuracyThroughExtension(t *testing.T) {
	throughExtension(t, func() { accuracy(t) })
}

// TestAccuracyAXTreeThroughExtension runs the accuracy check through the real extension with
// snapshots built from the accessibility tree (the reference builder).
func TestAccuracyAXTreeThroughExtension(t *testing.T) {
	throughExtension(t, func() { withAXTree(t, func() { accuracy(t) }) })
}

// throughExtension runs fn with the package's shared environment switched to tabs shared
// through the real extension and a service over the relay's hub.
func throughExtension(t *testing.T, fn func()) {
	t.Helper()
	if testing.Short() {
		t.Skip("needs Chromium (skipped with -short)")
	}
	if shared.err != nil {
		t.Fatalf("browser: %v", shared.err)
	}
	ctx, cancel := context.WithTimeout(callerCtx(), 60*time.Second)
	defer cancel()
	store, err := secret.NewStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	srv, err := relay.NewServer(relay.Options{Addr: "127.0.0.1:0", Secret: store})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	b, err := browser.Launch(ctx, browser.Options{Headless: true, ExtensionDebugging: true})
	if err != nil {
		t.Fatalf("launch Chromium with the extension: %v", err)
	}
	defer b.Close()
	if err := b.Pair(ctx, srv.Addr(), srv.Token()); err != nil {
		t.Fatal(err)
	}
	if err := b.WaitConnected(ctx); err != nil {
		t.Fatal(err)
	}
	pipe, err := srv.Hub().Pipe("actions-test")
	if err != nil {
		t.Fatal(err)
	}
	svc := New(cdpclient.New(pipe), Options{Timeout: 20 * time.Second})
	defer svc.Close(context.Background())

	direct := shared
	shared = env{b: &extensionOpener{b: b, tabs: map[string]browser.Tab{}}, srv: direct.srv, svc: svc}
	defer func() { shared = direct }()
	fn()
}

// TestInPageMatchesAXTreeThroughExtension compares, through the real extension, the outline
// built in the page (the default) with the one built from the accessibility tree (the
// reference) on every hard fixture page: the same text, so the same refs, roles, names, states
// and values.
func TestInPageMatchesAXTreeThroughExtension(t *testing.T) {
	throughExtension(t, func() {
		svc, _, _ := need(t)
		ref := New(svc.c, Options{Timeout: 20 * time.Second, AccessibilityTree: true})
		defer ref.Close(context.Background())
		for _, pg := range hardPages {
			t.Run(pg.name, func(t *testing.T) {
				ctx, cancel := context.WithTimeout(callerCtx(), 60*time.Second)
				defer cancel()
				id := open(t, ctx, "/hard/"+pg.name+".html")
				defer ref.forget(id)
				got := snap(t, ctx, id, snapshot.Options{})
				want, err := ref.Snapshot(ctx, id, snapshot.Options{})
				if err != nil {
					t.Fatal(err)
				}
				if got.Text != want.Text {
					t.Errorf("outlines differ:\n--- accessibility tree:\n%s\n--- in page:\n%s", want.Text, got.Text)
				}
			})
		}
	})
}
