package relay_test

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/tabrelay/tabrelay/internal/testlimit"
	"github.com/tabrelay/tabrelay/relay"
)

// tooSlow is the close reason of a client cut for not reading.
var tooSlow = regexp.MustCompile(`^tabrelay: client too slow: \d+ MB queued$`)

// stalledClient is a raw /cdp client attached to tab that will stop reading: it returns the
// socket and the session id.
func stalledClient(e *env, tab string) (*websocket.Conn, string) {
	e.t.Helper()
	conn := e.rawClient()
	conn.SetReadLimit(-1) // screenshots
	if err := conn.Write(ctx(e.t), websocket.MessageText, []byte(`{"id":1,"method":"Target.attachToTarget","params":{"targetId":"`+tab+`","flatten":true}}`)); err != nil {
		e.t.Fatal(err)
	}
	for {
		_, b, err := conn.Read(ctx(e.t))
		if err != nil {
			e.t.Fatal(err)
		}
		if i := strings.Index(string(b), `"result":{"sessionId":"`); i >= 0 {
			sid := string(b)[i+len(`"result":{"sessionId":"`):]
			return conn, sid[:strings.Index(sid, `"`)]
		}
	}
}

// requestScreenshots asks for n screenshots of kib KiB each on session sid without reading the
// answers; it returns how many requests went out (the relay stops reading a client it cut).
func requestScreenshots(conn *websocket.Conn, sid string, n, kib int) int {
	wctx, cancel := context.WithTimeout(context.Background(), testlimit.Scale(20*time.Second))
	defer cancel()
	for i := 0; i < n; i++ {
		msg := fmt.Sprintf(`{"id":%d,"method":"Page.captureScreenshot","sessionId":"%s","params":{"quality":%d}}`, i+2, sid, kib)
		if err := conn.Write(wctx, websocket.MessageText, []byte(msg)); err != nil {
			return i
		}
	}
	return n
}

// readUntilClosed reads everything the relay still sends and returns how the socket ended
// (reading 48 MiB through the race detector on a busy machine can take minutes: the limit is
// scaled for the machine).
func readUntilClosed(t *testing.T, conn *websocket.Conn) websocket.CloseError {
	t.Helper()
	rctx, cancel := context.WithTimeout(context.Background(), testlimit.Scale(30*time.Second))
	defer cancel()
	for {
		if _, _, err := conn.Read(rctx); err != nil {
			var ce websocket.CloseError
			if !errors.As(err, &ce) {
				t.Fatalf("the socket ended without a close frame: %v", err)
			}
			return ce
		}
	}
}

// waitExtensionIdle waits until the simulated extension (same process) answered every request
// that reached it and no more came for 300 ms: 80 MiB through the race detector on a loaded
// machine is slow, and not all sent requests need arrive (the relay stops reading a client it
// cut).
func waitExtensionIdle(e *env) {
	e.t.Helper()
	last, since := -1, time.Now()
	e.waitWithin(2*time.Minute, "the extension to answer every request that reached it", func() bool {
		got, answered := len(e.ext.Commands()), e.ext.Answered()
		if got != answered || answered != last {
			last, since = answered, time.Now()
			return false
		}
		return time.Since(since) > 300*time.Millisecond
	})
}

func heapAfterGC() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// TestSlowReaderClosedWith1008 covers both ways a client is found too slow: its queue passes
// the per-client limit, or a write to it makes no progress for the write timeout. Either way a
// warning is logged, its queue is discarded, and once it reads again it gets what was already
// on its way and then close code 1008 with the reason; the relay's memory returns near idle.
func TestSlowReaderClosedWith1008(t *testing.T) {
	for _, tc := range []struct {
		name     string
		opts     func(*relay.Options)
		n, kib   int
		why      string
		maxGrowM int64
	}{
		// 160 screenshots of 512 KiB = 80 MiB of answers, 20 times the queue bound, never read
		{"queue limit", func(o *relay.Options) { o.Hub.MaxQueueBytes = 4 << 20 }, 160, 512, "per-client limit", 32},
		// one 48 MiB answer: more than the socket's buffers take, so the write stalls
		{"write timeout", func(o *relay.Options) { o.WriteTimeout = 300 * time.Millisecond }, 1, 48 << 10, "made no progress", 32},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnvWith(t, func(o *relay.Options) {
				// reading 48 MiB through the race detector on a loaded machine can take longer
				// than the default grace to take the message being written
				o.CutGrace = testlimit.Scale(time.Minute)
				tc.opts(o)
			})
			e.share(tabA, "https://a.example/")
			conn, sid := stalledClient(e, tabA)
			before := heapAfterGC()
			sent := requestScreenshots(conn, sid, tc.n, tc.kib)
			e.waitFor("the slow client to be cut", func() bool { return strings.Contains(e.logs.String(), "not reading its messages fast enough") })
			if !strings.Contains(e.logs.String(), tc.why) || !strings.Contains(e.logs.String(), `"level":"warn"`) {
				t.Errorf("the warning does not say why (%q): %s", tc.why, e.logs.String())
			}
			t0 := time.Now()
			defer func() { t.Logf("read for %v", time.Since(t0)) }()
			ce := readUntilClosed(t, conn)
			if ce.Code != websocket.StatusPolicyViolation || !tooSlow.MatchString(ce.Reason) {
				t.Fatalf("closed with %d %q; want 1008 %q", ce.Code, ce.Reason, tooSlow)
			}
			waitExtensionIdle(e)
			e.waitFor("the client's queue to be released", func() bool { return e.srv.Hub().QueuedBytes() == 0 })
			grew := heapAfterGC() - before
			t.Logf("sent %d requests for %d MiB of answers; closed with %q; heap after GC grew by %.1f MiB", sent, sent*tc.kib>>10, ce.Reason, float64(grew)/(1<<20))
			if grew > tc.maxGrowM<<20 {
				t.Errorf("heap grew by %d MiB after the slow client was cut; want it back near idle", grew>>20)
			}
		})
	}
}

// TestQueueBudgetAcrossClients stalls three clients whose queues each stay under the per-client
// limit but together pass the relay's budget: the largest queues are cut (1008, the reason) until
// the rest fits, and what stays queued never passes the budget.
func TestQueueBudgetAcrossClients(t *testing.T) {
	const budget = 12 << 20
	e := newEnvWith(t, func(o *relay.Options) {
		o.Hub.MaxQueueBytes, o.Hub.MaxQueueTotalBytes = 64<<20, budget
		o.CutGrace = testlimit.Scale(time.Minute) // a loaded machine may take seconds to get to reading the cut client
	})
	e.share(tabA, "https://a.example/")
	type stalled struct {
		conn *websocket.Conn
		sid  string
	}
	var cs []stalled
	for i := 0; i < 3; i++ {
		conn, sid := stalledClient(e, tabA)
		cs = append(cs, stalled{conn, sid})
	}
	before := heapAfterGC()
	// 3 x 40 screenshots of 512 KiB: 20 MiB per client (under its 64 MiB), 60 MiB together
	var wg sync.WaitGroup
	peak := 0
	stop, sampled := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			select {
			case <-stop:
				return
			default:
			}
			if q := e.srv.Hub().QueuedBytes(); q > peak {
				peak = q
			}
			time.Sleep(time.Millisecond)
		}
	}()
	for _, c := range cs {
		wg.Add(1)
		go func() { defer wg.Done(); requestScreenshots(c.conn, c.sid, 40, 512) }()
	}
	wg.Wait()
	e.waitFor("a client to be cut for the budget", func() bool { return strings.Contains(e.logs.String(), "passed the relay's budget") })
	waitExtensionIdle(e)
	close(stop)
	<-sampled
	if q := e.srv.Hub().QueuedBytes(); q > budget {
		t.Errorf("%d MiB still queued; the budget is %d MiB", q>>20, budget>>20)
	}
	// a message may be counted just before the cut that makes room for it
	if peak > budget+(1<<20) {
		t.Errorf("the queues together held up to %d MiB; the budget is %d MiB", peak>>20, budget>>20)
	}
	cut := 0
	for i, c := range cs {
		rctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		// a client that was not cut keeps its socket open: read what it can, then look at how it ended
		var err error
		for err == nil {
			_, _, err = c.conn.Read(rctx)
		}
		cancel()
		var ce websocket.CloseError
		if errors.As(err, &ce) {
			if ce.Code != websocket.StatusPolicyViolation || !tooSlow.MatchString(ce.Reason) {
				t.Errorf("client %d closed with %d %q; want 1008 %q", i, ce.Code, ce.Reason, tooSlow)
			}
			cut++
		}
	}
	if cut == 0 {
		t.Fatal("no client got the close frame with 1008")
	}
	for _, c := range cs {
		c.conn.CloseNow()
	}
	e.waitFor("every queue to be released", func() bool { return e.srv.Hub().QueuedBytes() == 0 })
	grew := heapAfterGC() - before
	t.Logf("%d of 3 clients cut; queues peaked at %.1f MiB; heap after GC grew by %.1f MiB", cut, float64(peak)/(1<<20), float64(grew)/(1<<20))
	if grew > 32<<20 {
		t.Errorf("heap grew by %d MiB after the stalled clients were cut", grew>>20)
	}
}
