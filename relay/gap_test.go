package relay_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/tabrelay/tabrelay/internal/cdpclient"
	"github.com/tabrelay/tabrelay/internal/secret"
	"github.com/tabrelay/tabrelay/relay"
)

// TestGapsBridged: while the tabs are away for a moment — the server just restarted and the
// extension has not reconnected yet, or the extension is reconnecting — new page-endpoint
// connections, Target.attachToTarget and the agent's lookups wait for a known tab to come back
// instead of failing; once the gap is over, an unknown target fails as before.
func TestGapsBridged(t *testing.T) {
	for _, tc := range []struct {
		name string
		// use runs what a client does during the gap and returns a function that checks it
		// once the tab is back
		use func(t *testing.T, e *env) func()
	}{
		{"page endpoint", func(t *testing.T, e *env) func() {
			done := make(chan error, 1)
			go func() {
				c, err := cdpclient.Dial(context.Background(), "ws://"+e.srv.Addr()+"/devtools/page/"+tabA+"?token="+e.srv.Token(), nil)
				if err == nil {
					err = evaluate(c, "", "p")
					c.Close()
				}
				done <- err
			}()
			return func() {
				if err := <-done; err != nil {
					t.Fatalf("page endpoint connected during the gap: %v", err)
				}
			}
		}},
		{"attachToTarget", func(t *testing.T, e *env) func() {
			c := e.client("/cdp")
			done := make(chan error, 1)
			go func() {
				var r struct {
					SessionID string `json:"sessionId"`
				}
				err := c.Call(context.Background(), "", "Target.attachToTarget", map[string]any{"targetId": tabA, "flatten": true}, &r)
				if err == nil {
					err = evaluate(c, r.SessionID, "a")
				}
				done <- err
			}()
			return func() {
				if err := <-done; err != nil {
					t.Fatalf("attach during the gap: %v", err)
				}
			}
		}},
		{"agent lookup", func(t *testing.T, e *env) func() {
			done := make(chan bool, 1)
			go func() { done <- e.srv.Hub().WaitTarget(context.Background(), tabA) }()
			return func() {
				if !<-done {
					t.Fatal("WaitTarget during the gap: the tab did not come back")
				}
			}
		}},
	} {
		t.Run("server restart/"+tc.name, func(t *testing.T) {
			e := newEnvNoExt(t, relay.HubOptions{Grace: 20 * time.Second})
			check := tc.use(t, e)
			e.waitFor("the request to wait", func() bool { return strings.Contains(e.logs.String(), "to come back") })
			e.ext = e.dialExt()
			e.share(tabA, "https://a.example/")
			check()
		})
		t.Run("extension reconnect/"+tc.name, func(t *testing.T) {
			e := newEnv(t, relay.HubOptions{Grace: 20 * time.Second})
			e.share(tabA, "https://a.example/")
			e.ext.Close()
			e.waitFor("the extension to be gone", func() bool { return !e.srv.Hub().ExtensionConnected() })
			check := tc.use(t, e)
			e.waitFor("the request to wait", func() bool { return strings.Contains(e.logs.String(), "to come back") })
			e.ext = e.dialExt()
			e.share(tabA, "https://a.example/")
			check()
		})
	}

	t.Run("unknown target after the gap", func(t *testing.T) {
		e := newEnv(t, relay.HubOptions{Grace: 300 * time.Millisecond})
		e.share(tabA, "https://a.example/")
		c := e.client("/cdp")
		err := c.Call(ctx(t), "", "Target.attachToTarget", map[string]any{"targetId": "NOSUCHTARGET", "flatten": true}, nil)
		if err == nil || !strings.Contains(err.Error(), "No target with given id found") {
			t.Fatalf("attach to an unknown target: %v", err)
		}
		if code, body := e.get("/devtools/page/NOSUCHTARGET", bearer(e.srv.Token())); code != http.StatusNotFound {
			t.Fatalf("page endpoint of an unknown target: %d %s", code, body)
		}
		if e.srv.Hub().WaitTarget(ctx(t), "NOSUCHTARGET") {
			t.Fatal("WaitTarget found an unknown target")
		}
	})
}

func evaluate(c *cdpclient.Client, sid, expr string) error {
	var r struct {
		Result struct{ Value string } `json:"result"`
	}
	cctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := c.Call(cctx, sid, "Runtime.evaluate", map[string]string{"expression": expr}, &r); err != nil {
		return err
	}
	if r.Result.Value != "evaluated:"+expr {
		return fmt.Errorf("evaluating %q gave %q", expr, r.Result.Value)
	}
	return nil
}

// newEnvNoExt is a freshly started server whose extension has not connected yet, as after a
// restart.
func newEnvNoExt(t *testing.T, hub relay.HubOptions) *env {
	t.Helper()
	home := t.TempDir()
	store, err := secret.NewStore(home)
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	log := zerolog.New(logs).Level(zerolog.DebugLevel)
	srv, err := relay.NewServer(relay.Options{Addr: "127.0.0.1:0", Secret: store, Logger: &log, Hub: hub})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return &env{t: t, srv: srv, logs: logs, home: home}
}
