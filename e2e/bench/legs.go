package main

import (
	"context"
	"fmt"
	"os"
	"sort"
	"time"

	"github.com/tabrelay/tabrelay/internal/cdpclient"
	"github.com/tabrelay/tabrelay/relay"
)

// leg is one stretch of a command's way, between two of the points LegTrace and the client
// mark.
type leg struct {
	name string
	of   func(p legPoints) int64 // its length in ns
}

// legPoints are one command's times (Unix ns): the client's send and receipt around the
// relay's trace.
type legPoints struct {
	sent, got int64
	relay.LegTrace
}

// legs are the stretches the legs group reports, in order; the two socket legs to and from
// the extension compare the relay's clock with the browser's (same machine, both wall clocks),
// so the clock-free figure of both together follows them.
var legs = []leg{
	{"1 client sent → relay read", func(p legPoints) int64 { return p.RelayIn - p.sent }},
	{"2 relay read → written to the extension", func(p legPoints) int64 { return p.ToExtension - p.RelayIn }},
	{"3 written → extension received (socket)", func(p legPoints) int64 { return p.ExtReceived - p.ToExtension }},
	{"4 extension received → sendCommand called", func(p legPoints) int64 { return p.ExtSendCommand - p.ExtReceived }},
	{"5 sendCommand → its answer (the browser's work)", func(p legPoints) int64 { return p.ExtCallback - p.ExtSendCommand }},
	{"6 answer → extension sent", func(p legPoints) int64 { return p.ExtSent - p.ExtCallback }},
	{"7 extension sent → relay read (socket)", func(p legPoints) int64 { return p.RelayReceived - p.ExtSent }},
	{"8 relay read → written to the client", func(p legPoints) int64 { return p.ClientSent - p.RelayReceived }},
	{"9 written → client got it", func(p legPoints) int64 { return p.got - p.ClientSent }},
	{"3+7 both extension socket legs (no clock skew)", func(p legPoints) int64 {
		return (p.RelayReceived - p.ToExtension) - (p.ExtSent - p.ExtReceived)
	}},
	{"2+8 the relay's own work", func(p legPoints) int64 {
		return (p.ToExtension - p.RelayIn) + (p.ClientSent - p.RelayReceived)
	}},
	{"2 to 7 relay read → answer read back (the extension's round trip)", func(p legPoints) int64 {
		return p.RelayReceived - p.RelayIn
	}},
	{"4+6 the extension's own JavaScript", func(p legPoints) int64 {
		return (p.ExtSendCommand - p.ExtReceived) + (p.ExtSent - p.ExtCallback)
	}},
	{"total round trip", func(p legPoints) int64 { return p.got - p.sent }},
}

// runLegs is the per-leg mode: a relay with TABRELAY_TRACE_LEGS on, one client evaluating
// "1" on a real tab one command at a time; each command's times (client, relay, extension)
// give the median of each leg. The extension's times come from performance.now() in its
// service worker, which Chrome may coarsen (to 100 µs): legs 3 to 7 are rough one by one,
// their sums are not.
func runLegs(cfg config, r *Results) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	s, err := startReal(ctx, "/index.html", "TABRELAY_TRACE_LEGS=1")
	if err != nil {
		return err
	}
	defer s.close()
	c, err := cdpclient.Dial(ctx, s.rp.cdpURL(), nil)
	if err != nil {
		return err
	}
	defer c.Close()
	sid, err := attachFlat(ctx, c, s.tab.TargetID)
	if err != nil {
		return fmt.Errorf("attach through tabrelay: %w", err)
	}
	n := cfg.reps
	params := map[string]string{"expression": "1"}
	for i := 0; i < n/10; i++ {
		if err := c.Call(ctx, sid, "Runtime.evaluate", params, nil); err != nil {
			return err
		}
	}
	if _, err := takeLegs(ctx, s.rp); err != nil { // the warm-up's
		return err
	}
	sent, got := make([]int64, n), make([]int64, n)
	for i := 0; i < n; i++ {
		sent[i] = time.Now().UnixNano()
		if err := c.Call(ctx, sid, "Runtime.evaluate", params, nil); err != nil {
			return err
		}
		got[i] = time.Now().UnixNano()
	}
	traces, err := takeLegs(ctx, s.rp)
	if err != nil {
		return err
	}
	var evals []relay.LegTrace
	for _, t := range traces {
		if t.Method == "Runtime.evaluate" {
			evals = append(evals, t)
		}
	}
	if len(evals) != n {
		return fmt.Errorf("the relay traced %d of the %d commands", len(evals), n)
	}
	sort.Slice(evals, func(i, j int) bool { return evals[i].RelayIn < evals[j].RelayIn })
	pts := make([]legPoints, n)
	for i := range pts {
		pts[i] = legPoints{sent: sent[i], got: got[i], LegTrace: evals[i]}
		if evals[i].ExtReceived == 0 {
			return fmt.Errorf("the extension did not report its times (an extension without tracing?)")
		}
	}
	for _, l := range legs {
		d := make([]time.Duration, n)
		for i, p := range pts {
			d[i] = time.Duration(l.of(p))
		}
		med, _ := stats(d)
		r.add(Figure{Group: "legs", Name: l.name + ", median", Unit: "µs", Value: med})
	}
	// the floor under legs 2 to 7: the same socket round trip with no browser work in it
	var echo []float64
	if err := s.rp.api(ctx, "GET", fmt.Sprintf("/debug/echo?target=%s&n=%d", s.tab.TargetID, n), nil, &echo); err != nil {
		return fmt.Errorf("echo through the extension's socket: %w", err)
	}
	ed := make([]time.Duration, len(echo))
	for i, us := range echo {
		ed[i] = time.Duration(us * 1e3)
	}
	eMed, eP99 := stats(ed)
	r.add(Figure{Group: "legs", Name: "echo through the extension's socket, no browser work (floor of 2 to 7), median", Unit: "µs", Value: eMed})
	r.add(Figure{Group: "legs", Name: "echo through the extension's socket, no browser work, p99", Unit: "µs", Value: eP99})
	if dir := os.Getenv("BENCH_DUMP"); dir != "" {
		f, err := os.Create(dir + "/legs.tsv")
		if err == nil {
			for _, p := range pts {
				fmt.Fprintf(f, "%d", p.got-p.sent)
				for _, l := range legs {
					fmt.Fprintf(f, "\t%d", l.of(p))
				}
				fmt.Fprintln(f)
			}
			f.Close()
		}
	}
	return nil
}

// takeLegs reads (and makes the relay forget) the commands it traced.
func takeLegs(ctx context.Context, rp *relayProc) ([]relay.LegTrace, error) {
	var out []relay.LegTrace
	if err := rp.api(ctx, "GET", "/debug/legs", nil, &out); err != nil {
		return nil, fmt.Errorf("read the relay's traces: %w", err)
	}
	return out, nil
}
