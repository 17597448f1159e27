package relay

import (
	"testing"
	"time"
)

// TestThrottleBackoff drives the throttle with a fake clock: a few wrong credentials are
// refused at once, then each waits twice as long as the one before up to the cap; failures a
// quiet window old are forgotten; at most maxWaiting refusals wait at a time.
func TestThrottleBackoff(t *testing.T) {
	now := time.Unix(0, 0)
	thr := newThrottle()
	thr.now = func() time.Time { return now }
	ms := time.Millisecond
	want := []time.Duration{0, 0, 0, 0, 0, 100 * ms, 200 * ms, 400 * ms, 800 * ms, 1600 * ms, 3200 * ms, 6400 * ms, 10 * time.Second, 10 * time.Second}
	for i, w := range want {
		d, ok := thr.fail()
		if !ok || d != w {
			t.Fatalf("wrong credential %d: wait %v (ok %v), want %v", i+1, d, ok, w)
		}
		if d > 0 {
			thr.done()
		}
		now = now.Add(500 * time.Millisecond) // one every 0.5 s, as in issue 12
	}
	now = now.Add(thr.window + time.Second)
	if d, ok := thr.fail(); !ok || d != 0 {
		t.Fatalf("after a quiet window: wait %v (ok %v), want none: old failures are forgotten", d, ok)
	}

	// the cap on waiting refusals
	thr = newThrottle()
	thr.now = func() time.Time { return now }
	for i := 0; i < thr.free; i++ {
		thr.fail()
	}
	for i := 0; i < thr.maxWaiting; i++ {
		if d, ok := thr.fail(); !ok || d == 0 {
			t.Fatalf("waiting refusal %d: %v %v", i, d, ok)
		}
	}
	if _, ok := thr.fail(); ok {
		t.Fatal("a refusal beyond maxWaiting was made to wait too")
	}
	thr.done()
	if d, ok := thr.fail(); !ok || d == 0 {
		t.Fatalf("after one wait ended: %v %v, want a wait again", d, ok)
	}
}
