package app

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tabrelay/tabrelay/agent/api"
	"github.com/tabrelay/tabrelay/agent/task"
	"github.com/tabrelay/tabrelay/agent/voice"
	"github.com/tabrelay/tabrelay/internal/secret"
	"github.com/tabrelay/tabrelay/relay"
)

// startFull starts the whole server (relay, agent, skills, voice) on a free port with its
// home in a temporary folder.
func startFull(t *testing.T) (*App, string) {
	t.Helper()
	home := t.TempDir()
	store, err := secret.NewStore(home)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	srv, err := Start(ctx, Config{
		Relay: relay.Options{Addr: "127.0.0.1:0", Secret: store},
		Agent: api.Options{Home: home},
		Voice: voice.Options{Getenv: func(string) string { return "" }},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv, home
}

// hugeBody is what an attacker streams: 300 MB.
const hugeBody = 300 << 20

// sendHuge sends method path with a 300 MB body, declared in Content-Length or chunked, from
// its own goroutine, and reads the answer as it comes. It returns the answer's status and
// body, and how many body bytes the client had written when the answer arrived.
func sendHuge(t *testing.T, srv *App, method, path string, chunked bool) (int, string, int64) {
	t.Helper()
	conn, err := net.Dial("tcp", srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(time.Minute)) // a server that reads it all fails the test, not hangs it
	head := fmt.Sprintf("%s %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\n", method, path, srv.Addr(), srv.Token())
	if chunked {
		head += "Transfer-Encoding: chunked\r\n\r\n"
	} else {
		head += fmt.Sprintf("Content-Length: %d\r\n\r\n", hugeBody)
	}
	if _, err := io.WriteString(conn, head); err != nil {
		t.Fatal(err)
	}
	var sent atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		chunk := []byte(strings.Repeat(" ", 64<<10)) // JSON white space: only the size is wrong
		for sent.Load() < hugeBody {
			var err error
			if chunked {
				_, err = fmt.Fprintf(conn, "%x\r\n%s\r\n", len(chunk), chunk)
			} else {
				_, err = conn.Write(chunk)
			}
			if err != nil {
				return // the server closed the connection: what we want
			}
			sent.Add(int64(len(chunk)))
		}
		if chunked {
			_, _ = io.WriteString(conn, "0\r\n\r\n")
		}
	}()
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	atAnswer := sent.Load()
	if err != nil {
		t.Fatalf("%s %s: no answer: %v", method, path, err)
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	resp.Body.Close()
	conn.Close()
	<-done
	return resp.StatusCode, string(body), atAnswer
}

// concrete fills a route pattern's parameters.
func concrete(path string) string {
	parts := strings.Split(path, "/")
	for i, p := range parts {
		if strings.HasPrefix(p, ":") {
			parts[i] = "x"
		}
	}
	return strings.Join(parts, "/")
}

// TestHugeBodiesRefused sends 300 MB to every route that takes a body, as the server lists
// them, and checks each answers 413 before the client has written it all (so the server
// neither read nor kept it). With Content-Length the answer comes before a byte is read, on
// every route; chunked, each route that reads a body stops at its limit.
func TestHugeBodiesRefused(t *testing.T) {
	srv, _ := startFull(t)
	var withBody []*echoRoute
	for _, r := range srv.Routes() {
		switch r.Method {
		case http.MethodPost, http.MethodPut, http.MethodPatch:
			withBody = append(withBody, &echoRoute{r.Method, r.Path})
		}
	}
	if len(withBody) < 10 {
		t.Fatalf("only %d routes take a body: %v", len(withBody), withBody)
	}
	// the routes whose handlers read the body (the others never look at it)
	reads := map[string]bool{
		"POST /api/act": true, "POST /api/command": true, "POST /api/tasks": true,
		"PUT /api/skills/:name": true, "POST /api/skills/:name/run": true,
		"POST /api/skills/record/start": true, "POST /api/skills/record/stop": true,
		"POST /api/speak": true, "POST /api/transcribe": true,
	}
	for _, r := range withBody {
		for _, chunked := range []bool{false, true} {
			if chunked && !reads[r.method+" "+r.path] {
				continue
			}
			name := r.method + " " + r.path
			if chunked {
				name += " chunked"
			}
			t.Run(name, func(t *testing.T) {
				code, body, sent := sendHuge(t, srv, r.method, concrete(r.path), chunked)
				if code != http.StatusRequestEntityTooLarge || !strings.Contains(body, "larger than") {
					t.Errorf("HTTP %d %q, want 413 saying the body is too large", code, body)
				}
				if sent >= hugeBody {
					t.Errorf("the answer came after the whole body was sent: the server read it all")
				}
			})
		}
	}
	for r := range reads {
		found := false
		for _, w := range withBody {
			found = found || w.method+" "+w.path == r
		}
		if !found {
			t.Errorf("route %s is gone: update the list of routes that read bodies", r)
		}
	}
}

type echoRoute struct{ method, path string }

func (r *echoRoute) String() string { return r.method + " " + r.path }

// TestTranscribeTakesLargerAudio checks that the audio route keeps its own, larger limit: a
// 2 MiB recording (over the 1 MiB default) reaches the handler, which answers about the audio
// itself, while 17 MiB (over its 16 MiB) gets 413.
func TestTranscribeTakesLargerAudio(t *testing.T) {
	srv, _ := startFull(t)
	post := func(n int) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, srv.HTTPURL()+"/api/transcribe", strings.NewReader(strings.Repeat("\x00", n)))
		req.Header.Set("Authorization", "Bearer "+srv.Token())
		req.Header.Set("Content-Type", "audio/wav")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	if code, body := post(2 << 20); code == http.StatusRequestEntityTooLarge || strings.Contains(body, "larger than") || code == http.StatusOK {
		t.Errorf("2 MiB of audio: HTTP %d %s, want the handler's answer about the (invalid) audio", code, body)
	}
	if code, body := post(voice.MaxAudio + 1<<20); code != http.StatusRequestEntityTooLarge || !strings.Contains(body, "16 MiB") {
		t.Errorf("17 MiB of audio: HTTP %d %s, want 413 naming the 16 MiB limit", code, body)
	}
}

// TestRotationEndsEventStreams opens the event stream of a running task, rotates the secret
// as `tabrelay token --rotate` does, and checks the stream ends.
func TestRotationEndsEventStreams(t *testing.T) {
	srv, home := startFull(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	now := time.Now()
	if err := srv.Agent.Store().SaveTask(ctx, &task.Task{ID: "t-live", Goal: "watch the kettle", Status: task.StatusRunning, CreatedAt: now, UpdatedAt: now}); err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.HTTPURL()+"/api/tasks/t-live/events", nil)
	req.Header.Set("Authorization", "Bearer "+srv.Token())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("events: HTTP %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	rd := bufio.NewReader(resp.Body)
	first, err := rd.ReadString('\n')
	if err != nil || !strings.HasPrefix(first, "id: ") {
		t.Fatalf("the stream's first line %q: %v", first, err)
	}
	tok, err := secret.Generate()
	if err != nil {
		t.Fatal(err)
	}
	if err := secret.Write(home, tok); err != nil {
		t.Fatal(err)
	}
	later := now.Add(time.Minute) // a file time the watcher cannot mistake for the old one
	if err := os.Chtimes(filepath.Join(home, secret.FileName), later, later); err != nil {
		t.Fatal(err)
	}
	rest, err := io.ReadAll(rd)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			t.Fatal("the event stream stayed open after the secret was rotated")
		}
		t.Fatalf("the stream broke instead of ending: %v", err)
	}
	if strings.Contains(string(rest), "event: answer") {
		t.Errorf("the stream ended with an answer, not because of the rotation: %q", rest)
	}
	// the new secret opens a new stream
	req2, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.HTTPURL()+"/api/tasks/t-live", nil)
	req2.Header.Set("Authorization", "Bearer "+tok)
	resp2, err := http.DefaultClient.Do(req2)
	if err != nil {
		t.Fatal(err)
	}
	resp2.Body.Close()
	if resp2.StatusCode != http.StatusOK {
		t.Errorf("the new secret after rotation: HTTP %d", resp2.StatusCode)
	}
}
