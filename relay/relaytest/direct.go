package relaytest

import (
	"encoding/json"
	"net"
	"net/http"
	"sync"

	"github.com/coder/websocket"

	"github.com/tabrelay/tabrelay/relay/wire"
)

// Direct serves the simulated browser's behaviour as a plain CDP endpoint: a client talks to it
// without the relay in between. Benchmarks compare it with the same behaviour behind the relay.
type Direct struct {
	srv *http.Server
	ln  net.Listener
}

// DirectTarget is the target id of Direct's one page.
const DirectTarget = "DIRECT0000000000000000000000000000"

// StartDirect serves a CDP endpoint at ws://<Addr>/ whose default session is one page.
func StartDirect() (*Direct, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	d := &Direct{ln: ln}
	d.srv = &http.Server{Handler: http.HandlerFunc(d.serve)}
	go func() { _ = d.srv.Serve(ln) }()
	return d, nil
}

// URL is the endpoint's WebSocket URL.
func (d *Direct) URL() string { return "ws://" + d.ln.Addr().String() + "/" }

// Close stops the endpoint.
func (d *Direct) Close() error { return d.srv.Close() }

func (d *Direct) serve(w http.ResponseWriter, r *http.Request) {
	conn, err := websocket.Accept(w, r, nil)
	if err != nil {
		return
	}
	conn.SetReadLimit(256 << 20)
	ctx := r.Context()
	var wmu sync.Mutex
	write := func(v any) {
		b, _ := json.Marshal(v)
		wmu.Lock()
		defer wmu.Unlock()
		_ = conn.Write(ctx, websocket.MessageText, b)
	}
	e := &Extension{tabs: map[string]*tab{}}
	e.emit = func(_, sessionID, method string, params any) error {
		m := map[string]any{"method": method, "params": params}
		if sessionID != "" {
			m["sessionId"] = sessionID
		}
		write(m)
		return nil
	}
	t := newTab(wire.Tab{TargetID: DirectTarget, URL: "https://direct.example/"})
	for {
		_, b, err := conn.Read(ctx)
		if err != nil {
			return
		}
		var m struct {
			ID        int64           `json:"id"`
			SessionID string          `json:"sessionId"`
			Method    string          `json:"method"`
			Params    json.RawMessage `json:"params"`
		}
		if json.Unmarshal(b, &m) != nil {
			continue
		}
		go func() {
			res, cerr := e.chrome(t, Command{TargetID: DirectTarget, SessionID: m.SessionID, Method: m.Method, Params: m.Params})
			out := map[string]any{"id": m.ID}
			if cerr != nil {
				out["error"] = cerr
			} else {
				out["result"] = res
			}
			if m.SessionID != "" {
				out["sessionId"] = m.SessionID
			}
			write(out)
		}()
	}
}
