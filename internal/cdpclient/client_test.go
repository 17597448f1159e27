package cdpclient

import (
	"context"
	"encoding/json"
	"errors"
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
