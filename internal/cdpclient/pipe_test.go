package cdpclient

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

// pipePeer plays the browser end of --remote-debugging-pipe: it reads NUL-terminated commands
// and answers each with an event then a reply echoing the command's params, all NUL-terminated.
// It returns the client's end.
func pipePeer(t *testing.T) *Pipe {
	t.Helper()
	toPeerR, toPeerW := io.Pipe()
	fromPeerR, fromPeerW := io.Pipe()
	go func() {
		defer fromPeerW.Close()
		r := bufio.NewReader(toPeerR)
		for {
			msg, err := r.ReadBytes(0)
			if err != nil {
				return
			}
			var m struct {
				ID     int64           `json:"id"`
				Params json.RawMessage `json:"params"`
			}
			if err := json.Unmarshal(msg[:len(msg)-1], &m); err != nil {
				t.Errorf("peer got a message that is not JSON plus NUL: %q", msg)
				return
			}
			ev, _ := json.Marshal(map[string]any{"method": "Test.seen", "params": map[string]any{"id": m.ID}})
			out, _ := json.Marshal(map[string]any{"id": m.ID, "result": map[string]any{"echo": m.Params}})
			// one write holding both messages: the reader must split on NUL, not on writes
			if _, err := fromPeerW.Write(append(append(append(ev, 0), out...), 0)); err != nil {
				return
			}
		}
	}()
	return NewPipe(fromPeerR, toPeerW)
}

func TestPipe(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	tests := []struct {
		name string
		text string
	}{
		{"small", "hello"},
		{"larger than the read buffer", strings.Repeat("x", 200<<10)},
		{"escaped NUL inside a string", "a\x00b"},
	}
	c := New(pipePeer(t))
	defer c.Close()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := c.Expect("", "Test.seen", nil)
			var r struct {
				Echo struct{ Text string } `json:"echo"`
			}
			if err := c.Call(ctx, "", "Test.echo", map[string]string{"text": tt.text}, &r); err != nil {
				t.Fatal(err)
			}
			if r.Echo.Text != tt.text {
				t.Fatalf("echo is %d bytes, want %d", len(r.Echo.Text), len(tt.text))
			}
			if _, err := w.Wait(ctx); err != nil {
				t.Fatalf("event before the reply: %v", err)
			}
		})
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-c.Done():
	case <-ctx.Done():
		t.Fatal("Close did not end the read loop")
	}
	if err := c.Call(ctx, "", "Test.echo", nil, nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("call after Close: %v, want ErrClosed", err)
	}
}

func TestPipeRefusesRawNUL(t *testing.T) {
	var out bytes.Buffer
	p := NewPipe(strings.NewReader(""), &out)
	if err := p.Write(context.Background(), []byte("{\"a\":\"\x00\"}")); err == nil {
		t.Fatal("a message with a raw NUL byte was written")
	}
	if out.Len() != 0 {
		t.Fatalf("wrote %q", out.Bytes())
	}
	if err := p.Write(context.Background(), []byte(`{}`)); err != nil || out.String() != "{}\x00" {
		t.Fatalf("write {} = %v, %q; want {} plus NUL", err, out.Bytes())
	}
}
