package main

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/tabrelay/tabrelay/internal/cdpclient"
)

// runLoad measures tabrelay under load on real Chromium, each figure next to Chrome's own
// endpoint in the same run: many clients evaluating on one tab at once (throughput and latency),
// and the head-of-line delay a large response on one tab causes to another tab's small command
// (everything goes through the one extension socket).
func runLoad(cfg config, r *Results) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	s, err := startReal(ctx, "/index.html?tab=a")
	if err != nil {
		return err
	}
	defer s.close()
	relayURL := s.rp.cdpURL()
	ownURL := s.b.ControlURL

	// many clients on one tab
	clients, each := 50, 1000
	if cfg.short {
		clients, each = 10, 100
	}
	name := fmt.Sprintf("%d clients x %d Runtime.evaluate on one tab", clients, each)
	var rl, ol loadResult
	var rc, oc cpuSplit // CPU time each path took, by process kind
	relayPid := s.rp.cmd.Process.Pid
	for round := 0; round < 2; round++ { // alternate, so machine noise hits both alike
		c0 := cpuTimes()
		a, err := manyClients(ctx, relayURL, s.tab.TargetID, clients, each)
		if err != nil {
			return fmt.Errorf("%s through tabrelay: %w", name, err)
		}
		c1 := cpuTimes()
		b, err := manyClients(ctx, ownURL, s.tab.TargetID, clients, each)
		if err != nil {
			return fmt.Errorf("%s on Chrome's own endpoint: %w", name, err)
		}
		c2 := cpuTimes()
		for _, x := range []struct {
			to       *cpuSplit
			from, at map[int]int64
		}{{&rc, c0, c1}, {&oc, c1, c2}} {
			d := cpuSince(x.from, x.at, relayPid)
			x.to.clients += d.clients
			x.to.relay += d.relay
			x.to.browser += d.browser
		}
		rl.add(a)
		ol.add(b)
		if cfg.short {
			break
		}
	}
	rMed, rP99 := stats(rl.lat)
	oMed, oP99 := stats(ol.lat)
	rRate, oRate := rl.rate(), ol.rate()
	r.add(Figure{Group: "load", Name: name + ", commands/s", Unit: "cmd/s", Value: rRate, Reference: oRate, RefName: "Chrome's own endpoint", Target: "≥ 0.7×", Met: met(rRate >= 0.7*oRate)})
	r.add(Figure{Group: "load", Name: name + ", p50", Unit: "µs", Value: rMed, Reference: oMed, RefName: "Chrome's own endpoint"})
	r.add(Figure{Group: "load", Name: name + ", p99", Unit: "µs", Value: rP99, Reference: oP99, RefName: "Chrome's own endpoint", Target: "≤ 2×", Met: met(rP99 <= 2*oP99)})
	// CPU time per command, which other programs' load does not change: on a machine whose
	// cores the run fills, throughput is the cores' time divided by this
	if per := func(us int64, n int) float64 { return float64(us) / float64(max(n, 1)) }; oc.total() > 0 {
		r.add(Figure{Group: "load", Name: "CPU time per command, every process", Unit: "µs", Value: per(rc.total(), rl.n), Reference: per(oc.total(), ol.n), RefName: "Chrome's own endpoint"})
		r.add(Figure{Group: "load", Name: "  of which Chromium (browser, page, extension, network)", Unit: "µs", Value: per(rc.browser, rl.n), Reference: per(oc.browser, ol.n), RefName: "Chrome's own endpoint"})
		r.add(Figure{Group: "load", Name: "  of which the relay process", Unit: "µs", Value: per(rc.relay, rl.n)})
		r.add(Figure{Group: "load", Name: "  of which the clients (benchmark process)", Unit: "µs", Value: per(rc.clients, rl.n), Reference: per(oc.clients, ol.n), RefName: "Chrome's own endpoint"})
	}
	// the ceiling for any extension: as many chrome.debugger.sendCommand at once inside its
	// service worker, with no relay and no WebSocket in between. A client stays attached
	// meanwhile: with the debugger on demand the relay would detach the tab once no client had
	// used it for a while, in the middle of a slow machine's run.
	keep, err := cdpclient.Dial(ctx, relayURL, nil)
	if err != nil {
		return err
	}
	defer keep.Close()
	if _, err := attachFlat(ctx, keep, s.tab.TargetID); err != nil {
		return fmt.Errorf("keep the tab attached: %w", err)
	}
	var ms float64
	expr := fmt.Sprintf(`(async () => {
		const target = { tabId: %d };
		const one = () => chrome.debugger.sendCommand(target, 'Runtime.evaluate', { expression: '1' });
		const t0 = performance.now();
		await Promise.all(Array.from({length: %d}, async () => { for (let i = 0; i < %d; i++) await one(); }));
		return performance.now() - t0;
	})()`, s.tab.TabID, clients, each)
	c0 := cpuTimes()
	if err := s.b.ServiceWorkerEval(ctx, expr, &ms); err != nil {
		return fmt.Errorf("timing chrome.debugger in the service worker: %w", err)
	}
	if in := cpuSince(c0, cpuTimes(), relayPid); in.browser > 0 {
		r.add(Figure{Group: "load", Name: "CPU time per command, chrome.debugger inside the extension (Chromium)", Unit: "µs", Value: float64(in.browser) / float64(clients*each), Reference: float64(rc.browser) / float64(max(rl.n, 1)), RefName: "Chromium through tabrelay"})
	}
	floor := float64(clients*each) / ms * 1000
	r.add(Figure{Group: "load", Name: "same, chrome.debugger.sendCommand inside the extension, commands/s", Unit: "cmd/s", Value: floor, Reference: oRate, RefName: "Chrome's own endpoint"})
	r.add(Figure{Group: "load", Name: "tabrelay's throughput against that ceiling", Unit: "cmd/s", Value: rRate, Reference: floor, RefName: "chrome.debugger inside the extension", Target: "≥ 0.9×", Met: met(rRate >= 0.9*floor)})

	// head-of-line: a large response on tab A, small commands on tab B meanwhile
	tabB, err := s.b.ShareURL(ctx, s.site.URL("/index.html?tab=b"))
	if err != nil {
		return fmt.Errorf("share a second tab: %w", err)
	}
	mb, reps := 50, 3
	if cfg.short {
		mb, reps = 10, 1
	}
	hname := fmt.Sprintf("head-of-line: tab B's Runtime.evaluate during a %d MB response on tab A", mb)
	var rd, od, rt, ot []float64
	for i := 0; i < reps; i++ {
		d, took, err := headOfLine(ctx, relayURL, s.tab.TargetID, tabB.TargetID, mb)
		if err != nil {
			return fmt.Errorf("%s through tabrelay: %w", hname, err)
		}
		rd, rt = append(rd, d), append(rt, took)
		d, took, err = headOfLine(ctx, ownURL, s.tab.TargetID, tabB.TargetID, mb)
		if err != nil {
			return fmt.Errorf("%s on Chrome's own endpoint: %w", hname, err)
		}
		od, ot = append(od, d), append(ot, took)
	}
	r.add(Figure{Group: "load", Name: hname + ", slowest", Unit: "ms", Value: median(rd), Reference: median(od), RefName: "Chrome's own endpoint"})
	r.add(Figure{Group: "load", Name: fmt.Sprintf("the %d MB response itself", mb), Unit: "ms", Value: median(rt), Reference: median(ot), RefName: "Chrome's own endpoint"})
	return nil
}

// loadResult is what a many-clients run measured.
type loadResult struct {
	lat  []time.Duration
	n    int
	wall time.Duration
}

func (l *loadResult) add(o loadResult) {
	l.lat = append(l.lat, o.lat...)
	l.n += o.n
	l.wall += o.wall
}

func (l *loadResult) rate() float64 { return float64(l.n) / l.wall.Seconds() }

// manyClients connects clients to endpoint, attaches each to the tab, then has all of them run
// each Runtime.evaluate one after the other at the same time; it checks every answer.
func manyClients(ctx context.Context, endpoint, targetID string, clients, each int) (loadResult, error) {
	cs := make([]*cdpclient.Client, clients)
	sids := make([]string, clients)
	defer func() {
		for _, c := range cs {
			if c != nil {
				c.Close()
			}
		}
	}()
	for i := range cs {
		c, err := cdpclient.Dial(ctx, endpoint, nil)
		if err != nil {
			return loadResult{}, err
		}
		cs[i] = c
		if sids[i], err = attachFlat(ctx, c, targetID); err != nil {
			return loadResult{}, err
		}
	}
	lat := make([][]time.Duration, clients)
	errs := make(chan error, clients)
	var wg sync.WaitGroup
	start := time.Now()
	for i := range cs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d := make([]time.Duration, 0, each)
			for k := 0; k < each; k++ {
				var res struct {
					Result struct {
						Value float64 `json:"value"`
					} `json:"result"`
				}
				t0 := time.Now()
				if err := cs[i].Call(ctx, sids[i], "Runtime.evaluate", map[string]any{"expression": fmt.Sprintf("%d+%d", i, k), "returnByValue": true}, &res); err != nil {
					errs <- err
					return
				}
				d = append(d, time.Since(t0))
				if int(res.Result.Value) != i+k {
					errs <- fmt.Errorf("client %d command %d: got %v, want %d", i, k, res.Result.Value, i+k)
					return
				}
			}
			lat[i] = d
		}()
	}
	wg.Wait()
	wall := time.Since(start)
	close(errs)
	if err := <-errs; err != nil {
		return loadResult{}, err
	}
	out := loadResult{n: clients * each, wall: wall}
	for _, d := range lat {
		out.lat = append(out.lat, d...)
	}
	return out, nil
}

// headOfLine has one client evaluate a string of mb MB on tab A while another evaluates "1" on
// tab B in a loop; it returns the slowest of B's commands that overlapped A's, and how long A's
// took, in ms.
func headOfLine(ctx context.Context, endpoint, tabA, tabB string, mb int) (slowest, took float64, err error) {
	ca, err := cdpclient.Dial(ctx, endpoint, nil)
	if err != nil {
		return 0, 0, err
	}
	defer ca.Close()
	cb, err := cdpclient.Dial(ctx, endpoint, nil)
	if err != nil {
		return 0, 0, err
	}
	defer cb.Close()
	sa, err := attachFlat(ctx, ca, tabA)
	if err != nil {
		return 0, 0, err
	}
	sb, err := attachFlat(ctx, cb, tabB)
	if err != nil {
		return 0, 0, err
	}
	type span struct{ from, to time.Time }
	var (
		mu    sync.Mutex
		spans []span
		stop  = make(chan struct{})
		done  = make(chan error, 1)
	)
	go func() {
		for {
			select {
			case <-stop:
				done <- nil
				return
			default:
			}
			t0 := time.Now()
			if err := cb.Call(ctx, sb, "Runtime.evaluate", map[string]string{"expression": "1"}, nil); err != nil {
				done <- err
				return
			}
			mu.Lock()
			spans = append(spans, span{t0, time.Now()})
			mu.Unlock()
		}
	}()
	time.Sleep(50 * time.Millisecond) // B's loop is running
	a0 := time.Now()
	var big struct {
		Result struct {
			Value string `json:"value"`
		} `json:"result"`
	}
	err = ca.Call(ctx, sa, "Runtime.evaluate", map[string]any{"expression": fmt.Sprintf("'x'.repeat(%d)", mb<<20), "returnByValue": true}, &big)
	a1 := time.Now()
	close(stop)
	if berr := <-done; err == nil {
		err = berr
	}
	if err != nil {
		return 0, 0, err
	}
	if len(big.Result.Value) != mb<<20 {
		return 0, 0, fmt.Errorf("the large response has %d bytes, want %d", len(big.Result.Value), mb<<20)
	}
	var ds []float64
	for _, s := range spans {
		if s.to.After(a0) && s.from.Before(a1) {
			ds = append(ds, float64(s.to.Sub(s.from))/float64(time.Millisecond))
		}
	}
	if len(ds) == 0 {
		return 0, 0, fmt.Errorf("no command on tab B overlapped the large response")
	}
	sort.Float64s(ds)
	return ds[len(ds)-1], float64(a1.Sub(a0)) / float64(time.Millisecond), nil
}
