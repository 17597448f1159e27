package relay_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/remote"
	"github.com/coder/websocket"
	"github.com/mafredri/cdp"
	"github.com/mafredri/cdp/devtool"
	mruntime "github.com/mafredri/cdp/protocol/runtime"
	"github.com/mafredri/cdp/rpcc"

	"github.com/tabrelay/tabrelay/relay"
)

// bearerTransport adds the secret to every request, the way a user configures an http.Client.
type bearerTransport struct{ token string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// TestChromedpRemoteAllocator drives a shared tab with chromedp's remote allocator, unmodified,
// through HTTP discovery and the browser-level endpoint.
func TestChromedpRemoteAllocator(t *testing.T) {
	e := newEnv(t, relay.HubOptions{})
	e.share(tabA, "https://a.example/")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	actx, acancel := remote.NewAllocator(ctx, "http://"+e.srv.Addr()+"/?token="+e.srv.Token())
	defer acancel()
	bctx, bcancel := chromedp.NewContext(actx)
	defer bcancel()
	// connect the browser and list the shared tabs
	infos, err := chromedp.Targets(bctx)
	if err != nil {
		t.Fatalf("chromedp Targets: %v", err)
	}
	if len(infos) != 1 || string(infos[0].TargetID) != tabA || infos[0].Type != "page" {
		t.Fatalf("chromedp sees %+v", infos)
	}
	tctx, tcancel := chromedp.NewContext(bctx, chromedp.WithTargetID(infos[0].TargetID))
	title, err := chromedp.Run(tctx, chromedp.Evaluate[string]("document.title"))
	if err != nil {
		t.Fatalf("chromedp evaluate on the shared tab: %v", err)
	}
	if title != "evaluated:document.title" {
		t.Fatalf("chromedp got %q", title)
	}
	// cancelling the tab's context asks to close the user's tab: refused, the tab stays shared
	tcancel()
	time.Sleep(100 * time.Millisecond)
	if !e.hasTab(tabA) {
		t.Fatal("chromedp closed the user's tab")
	}
	if !e.ext.Received(tabA, "Runtime.evaluate") {
		t.Fatal("the command never reached the extension")
	}
}

// TestMafrediCDPPageEndpoint drives a shared tab with mafredri/cdp through /json/list and the
// per-tab endpoint, unmodified (rpcc with a coder/websocket dialer, as its notes advise).
func TestMafrediCDPPageEndpoint(t *testing.T) {
	e := newEnv(t, relay.HubOptions{})
	e.share(tabA, "https://a.example/")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	devt := devtool.New("http://"+e.srv.Addr(), devtool.WithClient(&http.Client{Transport: bearerTransport{e.srv.Token()}}))
	pt, err := devt.Get(ctx, devtool.Page)
	if err != nil {
		t.Fatalf("devtool.Get: %v", err)
	}
	if pt.ID != tabA {
		t.Fatalf("devtool found %s", pt.ID)
	}
	dial := func(ctx context.Context, addr string) (io.ReadWriteCloser, error) {
		c, _, err := websocket.Dial(ctx, addr, nil)
		if err != nil {
			return nil, err
		}
		c.SetReadLimit(-1)
		return websocket.NetConn(context.Background(), c, websocket.MessageText), nil
	}
	conn, err := rpcc.DialContext(ctx, pt.WebSocketDebuggerURL, rpcc.WithDialer(dial))
	if err != nil {
		t.Fatalf("rpcc dial: %v", err)
	}
	defer conn.Close()
	c := cdp.NewClient(conn)
	reply, err := c.Runtime.Evaluate(ctx, mruntime.NewEvaluateArgs("40+2"))
	if err != nil {
		t.Fatalf("mafredri/cdp evaluate: %v", err)
	}
	if !strings.Contains(string(reply.Result.Value), "evaluated:40+2") {
		t.Fatalf("mafredri/cdp got %s", reply.Result.Value)
	}
	if err := c.Page.Enable(ctx); err != nil {
		t.Fatal(err)
	}
	le, err := c.Page.LoadEventFired(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer le.Close()
	_ = e.ext.Event(tabA, "", "Page.loadEventFired", map[string]any{"timestamp": 42})
	ev, err := le.Recv()
	if err != nil || ev.Timestamp != 42 {
		t.Fatalf("load event through the page endpoint: %v %+v", err, ev)
	}
}
