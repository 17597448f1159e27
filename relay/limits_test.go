package relay_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/tabrelay/tabrelay/relay"
)

// keepAlive is a raw keep-alive HTTP connection to the relay.
type keepAlive struct {
	t    *testing.T
	conn net.Conn
	rd   *bufio.Reader
}

func dialKeepAlive(t *testing.T, e *env) *keepAlive {
	t.Helper()
	conn, err := net.Dial("tcp", e.srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return &keepAlive{t: t, conn: conn, rd: bufio.NewReader(conn)}
}

// get sends GET path with extra header lines and reads the answer (while still sending, as
// an HTTP client does: the server may answer before it read everything); err is set when the
// server closed the connection instead of answering.
func (k *keepAlive) get(path, extra string) (*http.Response, string, error) {
	req := fmt.Sprintf("GET %s HTTP/1.1\r\nHost: %s\r\n%s\r\n", path, k.conn.RemoteAddr(), extra)
	wrote := make(chan error, 1)
	go func() {
		_, err := io.WriteString(k.conn, req)
		wrote <- err
	}()
	resp, err := http.ReadResponse(k.rd, nil)
	if err != nil {
		if werr := <-wrote; werr != nil {
			return nil, "", werr
		}
		return nil, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp, string(b), err
}

// TestIdleKeepAliveClosedWebSocketsStay checks that a keep-alive connection left idle is
// closed after the idle timeout, while WebSockets (a CDP client and the extension) idle for
// as long stay open and keep working.
func TestIdleKeepAliveClosedWebSocketsStay(t *testing.T) {
	e := newEnvWith(t, func(o *relay.Options) { o.Limits.IdleTimeout = 300 * time.Millisecond })
	e.share(tabA, "https://a.example/")
	c := e.client("/cdp") // idle from now on
	k := dialKeepAlive(t, e)
	if resp, _, err := k.get("/health", ""); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /health: %v %v", resp, err)
	}
	// now idle: the server closes it (a read deadline far past the timeout only guards the test)
	_ = k.conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	if n, err := k.rd.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
		t.Fatalf("the idle keep-alive connection: read %d bytes, %v; want it closed by the server (EOF)", n, err)
	}
	// the WebSockets, idle for longer than the timeout by now, still work
	var v struct {
		Product string `json:"product"`
	}
	if err := c.Call(ctx(t), "", "Browser.getVersion", nil, &v); err != nil {
		t.Fatalf("a CDP client idle past the idle timeout: %v", err)
	}
	if !e.srv.Hub().ExtensionConnected() {
		t.Fatal("the extension was dropped by the idle timeout")
	}
	if err := e.ext.Share(tabB, "https://b.example/", "b"); err != nil {
		t.Fatal(err)
	}
	e.waitFor("tab B shared over the extension's idle socket", func() bool { return e.hasTab(tabB) })
}

// TestHeaderLimit checks that request headers over the limit (64 KiB by default) get 431
// while ordinary large ones pass.
func TestHeaderLimit(t *testing.T) {
	e := newEnv(t, relay.HubOptions{})
	for _, tc := range []struct {
		name string
		size int
		want int
	}{
		{"32 KiB cookie", 32 << 10, http.StatusOK},
		{"100 KiB", 100 << 10, http.StatusRequestHeaderFieldsTooLarge},
		{"1 MiB", 1 << 20, http.StatusRequestHeaderFieldsTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := dialKeepAlive(t, e)
			resp, body, err := k.get("/health", "X-Filler: "+strings.Repeat("a", tc.size)+"\r\n")
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tc.want {
				t.Errorf("HTTP %d %q, want %d", resp.StatusCode, body, tc.want)
			}
		})
	}
}

// TestConnectionCap checks that connections beyond MaxConns are answered 503 and closed at
// once, that a flood of them holds nothing (no goroutine, no memory per refused connection),
// and that a freed place is usable again.
func TestConnectionCap(t *testing.T) {
	const max = 8
	e := newEnvWith(t, func(o *relay.Options) { o.Limits.MaxConns = max })
	// the extension holds one place; fill the others with keep-alive connections
	var held []*keepAlive
	for len(held) < max-1 {
		k := dialKeepAlive(t, e)
		resp, _, err := k.get("/health", "")
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("connection %d of %d: %v %v", len(held)+2, max, resp, err)
		}
		held = append(held, k)
	}
	refused := func() (bool, string) {
		k := dialKeepAlive(t, e)
		defer k.conn.Close()
		resp, body, err := k.get("/health", "")
		if err != nil { // closed before the request was read: also a refusal, but say why
			return false, err.Error()
		}
		return resp.StatusCode == http.StatusServiceUnavailable && resp.Close, body
	}
	if ok, body := refused(); !ok || !strings.Contains(body, "too many open connections") {
		t.Fatalf("connection %d: %q, want 503 saying there are too many connections", max+1, body)
	}
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	goroutines := runtime.NumGoroutine()
	for i := range 300 {
		if ok, body := refused(); !ok {
			t.Fatalf("flood connection %d was not refused with 503: %q", i, body)
		}
	}
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	if g := runtime.NumGoroutine(); g > goroutines+2 {
		t.Errorf("goroutines grew from %d to %d with 300 refused connections", goroutines, g)
	}
	if grown := int64(after.HeapInuse) - int64(before.HeapInuse); grown > 4<<20 {
		t.Errorf("the heap grew by %d bytes with 300 refused connections", grown)
	}
	if fds, err := os.ReadDir("/proc/self/fd"); err == nil && len(fds) > 200 {
		t.Errorf("%d open files after the flood: refused connections were not closed", len(fds))
	}
	// a freed place is taken again (the server notices the close on its own time)
	held[0].conn.Close()
	e.waitFor("a freed place under the cap", func() bool {
		k := dialKeepAlive(t, e)
		defer k.conn.Close()
		resp, _, err := k.get("/health", "")
		return err == nil && resp.StatusCode == http.StatusOK
	})
}
