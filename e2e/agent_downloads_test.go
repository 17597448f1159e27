package e2e

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tabrelay/tabrelay/agent/actions"
	"github.com/tabrelay/tabrelay/agent/actions/gate"
	"github.com/tabrelay/tabrelay/e2e/fixtures"
	"github.com/tabrelay/tabrelay/internal/cdpclient"
	"github.com/tabrelay/tabrelay/snapshot"
)

// agentActions is the agent's action service over a connection to e's relay, as the agent
// uses it.
func agentActions(t *testing.T, ctx context.Context, e *env) *actions.Service {
	t.Helper()
	c, err := cdpclient.Dial(ctx, e.cdpURL(), http.Header{"Authorization": {"Bearer " + e.token()}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return actions.New(c, actions.Options{Timeout: 20 * time.Second})
}

// snapRef finds the ref of the first element with this role and name in a snapshot.
func snapRef(t *testing.T, snap *snapshot.Snapshot, role, name string) string {
	t.Helper()
	ref := ""
	snap.Root.Walk(func(n *snapshot.Node) bool {
		if ref == "" && n.Role == role && n.Name == name {
			ref = n.Ref
		}
		return ref == ""
	})
	if ref == "" {
		t.Fatalf("no %s %q in the snapshot:\n%s", role, name, snap.Text)
	}
	return ref
}

// TestAgentDownload: an agent step clicks a download link in a shared tab; the click's result
// says a download started, and the downloads action waits for it and gives its name, size,
// state and where the browser saved it (the served bytes are there).
func TestAgentDownload(t *testing.T) {
	e := shared(t)
	_, tab := openDownloadsPage(t, e, "agent")
	ctx, cancel := context.WithTimeout(gate.With(context.Background(), gate.Request{Who: gate.Caller}), time.Minute)
	defer cancel()
	svc := agentActions(t, ctx, e)
	res, err := svc.Act(ctx, tab.TargetID, actions.Do(actions.Snapshot{}))
	if err != nil {
		t.Fatal(err)
	}
	ref := snapRef(t, res.Snapshot, "link", "Download last month's invoice")
	click, err := svc.Act(ctx, tab.TargetID, actions.Do(actions.Click{Ref: ref}))
	if err != nil {
		t.Fatal(err)
	}
	got, err := svc.Act(ctx, "", actions.Do(actions.Downloads{Wait: true}))
	if err != nil {
		t.Fatalf("downloads wait: %v (the click said %q)", err, click.Message)
	}
	if len(got.Downloads) == 0 {
		t.Fatalf("downloads: none listed (%s)", got.Message)
	}
	d := got.Downloads[0]
	if d.Name != invoiceName || d.State != "completed" || d.Size != invoiceSize || d.Path == "" {
		t.Fatalf("latest download %+v, want %s completed with %d bytes and a path", d, invoiceName, invoiceSize)
	}
	if data, err := os.ReadFile(d.Path); err != nil || !bytes.Equal(data, fixtures.DownloadBytes(invoiceName, invoiceSize)) {
		t.Errorf("the file at %s (%v) is not the served one", d.Path, err)
	}
	// the click's own result tells the model (unless the download began only after it returned)
	if !strings.Contains(click.Message, "download started: "+invoiceName) {
		t.Logf("the click's message did not mention the download (it began after the click returned): %q", click.Message)
	}
	if !strings.Contains(got.Message, invoiceName) || !strings.Contains(got.Message, filepath.Base(d.Path)+" in the downloads folder") ||
		strings.Contains(got.Text(), filepath.Dir(d.Path)) {
		t.Errorf("downloads text %q should name the file in the downloads folder, not the folder's path", got.Text())
	}
}
