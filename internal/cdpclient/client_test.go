package cdpclient

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// echoPeer answers every command with an empty result after delay.
func echoPeer(t *testing.T, delay time.Duration) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer conn.CloseNow()
		conn.SetReadLimit(1 << 20)
		var wmu sync.Mutex
		for {
			_, b, err := conn.Read(r.Context())
			if err != nil {
				return
			}
			var m struct{ ID int64 }
			if json.Unmarshal(b, &m) != nil {
				continue
			}
			go func() {
				time.Sleep(delay)
				out, _ := json.Marshal(map[string]any{"id": m.ID, "result": map[string]any{}})
				wmu.Lock()
				defer wmu.Unlock()
				_ = conn.Write(context.Background(), websocket.MessageText, out)
			}()
		}
	}))
	t.Cleanup(srv.Close)
	return "ws" + strings.TrimPrefix(srv.URL, "http")
}

// A call whose context ends (before it starts, or while it is being written or answered) fails
// alone: the connection and every other caller carry on.
func TestCancelledCallsLeaveTheConnectionUp(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := Dial(ctx, echoPeer(t, time.Millisecond), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	done, stop := context.WithCancel(ctx)
	stop()
	var wg sync.WaitGroup
	for i := range 200 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cctx := done // already cancelled
			if i%2 == 1 {
				var cancel context.CancelFunc
				cctx, cancel = context.WithTimeout(ctx, time.Duration(i%20)*20*time.Microsecond)
				defer cancel()
			}
			// a long command takes a while to write, so some contexts end mid-write
			err := c.Call(cctx, "", "Runtime.evaluate", map[string]string{"expression": strings.Repeat("x", 64<<10)}, nil)
			if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("call %d: %v, want a context error", i, err)
			}
		}()
	}
	wg.Wait()
	select {
	case <-c.Done():
		t.Fatal("abandoned calls closed the connection")
	default:
	}
	if err := c.Call(ctx, "", "Browser.getVersion", nil, nil); err != nil {
		t.Fatalf("a call after the abandoned ones: %v", err)
	}
}

// Call errors name the method and keep the peer's CDP error.
func TestCallErrors(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer conn.CloseNow()
		_, b, err := conn.Read(r.Context())
		if err != nil {
			return
		}
		var m struct{ ID int64 }
		_ = json.Unmarshal(b, &m)
		out, _ := json.Marshal(map[string]any{"id": m.ID, "error": map[string]any{"code": -32601, "message": "'Nope.x' wasn't found"}})
		_ = conn.Write(r.Context(), websocket.MessageText, out)
		conn.Close(websocket.StatusGoingAway, "") // then the peer goes away
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http")+"?token=secret", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	err = c.Call(ctx, "", "Nope.x", nil, nil)
	var cdpErr *Error
	if !errors.As(err, &cdpErr) || cdpErr.Code != -32601 || !strings.HasPrefix(err.Error(), "Nope.x: ") {
		t.Fatalf("got %v, want the peer's -32601 error prefixed with the method", err)
	}
	select {
	case <-c.Done():
	case <-ctx.Done():
		t.Fatal("the client did not notice the peer leaving")
	}
	if err := c.Call(ctx, "", "Browser.getVersion", nil, nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("after the peer left: %v, want ErrClosed", err)
	}
	if _, err := Dial(ctx, "ws://127.0.0.1:1/x?token=secret", nil); err == nil || strings.Contains(err.Error(), "secret") {
		t.Fatalf("dial error %v: want an error without the token", err)
	}
}

// A call waiting on a flat session fails with ErrSessionDetached as soon as the peer announces
// the session's detach (Chrome never answers it), while calls on other sessions still get their
// answers.
func TestDetachedSessionFailsItsCalls(t *testing.T) {
	toPeerR, toPeerW := io.Pipe()
	fromPeerR, fromPeerW := io.Pipe()
	c := New(NewPipe(fromPeerR, toPeerW))
	defer c.Close()
	// the peer answers nothing on session "gone"; once a command for it has arrived it
	// announces the detach, then answers the command on session "stays"
	go func() {
		defer fromPeerW.Close()
		r := bufio.NewReader(toPeerR)
		var stays int64
		seen := 0
		for seen < 2 {
			msg, err := r.ReadBytes(0)
			if err != nil {
				return
			}
			var m struct {
				ID        int64  `json:"id"`
				SessionID string `json:"sessionId"`
			}
			_ = json.Unmarshal(msg[:len(msg)-1], &m)
			seen++
			if m.SessionID == "stays" {
				stays = m.ID
			}
		}
		ev, _ := json.Marshal(map[string]any{"method": "Target.detachedFromTarget", "params": map[string]any{"sessionId": "gone", "targetId": "T"}})
		out, _ := json.Marshal(map[string]any{"id": stays, "sessionId": "stays", "result": map[string]any{}})
		_, _ = fromPeerW.Write(append(append(ev, 0), append(out, 0)...))
		_, _ = io.Copy(io.Discard, r)
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	errs := make(chan error, 2)
	for _, s := range []string{"gone", "stays"} {
		go func() { errs <- c.Call(ctx, s, "Runtime.evaluate", map[string]any{"expression": "1"}, nil) }()
	}
	var detached, answered int
	for range 2 {
		switch err := <-errs; {
		case errors.Is(err, ErrSessionDetached):
			detached++
		case err == nil:
			answered++
		default:
			t.Fatalf("got %v, want ErrSessionDetached for the detached session and an answer for the other", err)
		}
	}
	if detached != 1 || answered != 1 {
		t.Fatalf("%d calls failed as detached and %d were answered, want 1 and 1", detached, answered)
	}
}
