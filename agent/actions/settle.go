package actions

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
)

// Settling: after an action that may change the page (risk Navigates or Writes), Act waits
// until the page is quiet — no DOM mutation and no network request for Options.SettleQuiet —
// before it returns, so a result that arrives by fetch or XHR a few hundred milliseconds later
// is in the next snapshot. The wait is bounded by Options.SettleTimeout: a page that never
// stops changing (a clock, an animation, a stream) costs that much and no more.
//
// DOM mutations are watched by a MutationObserver that a probe installs, once per document,
// in an isolated world of the main frame (the page's own scripts cannot see or disturb it).
// The quiet window may begin before the action: on a page watched and quiet before it, an
// action whose input changed nothing by the time the page had handled it returns at once (a
// change it starts only later, from a timer, is not waited for; on a document the probe first
// sees, the window begins then). Counting the window from the input instead would cost every
// such action the whole window: an accuracy run's actions took four times as long.
//
// Network activity is the service's own record of the tab's requests (Network events): a
// request counts as in flight until it is answered, and then its body's data as it arrives is
// activity (Chrome never reports that a keepalive fetch, as analytics send, has finished: a
// request waited for until its end would hold every action on such a page to the bound).

const (
	defaultSettleQuiet   = 400 * time.Millisecond
	defaultSettleTimeout = 3 * time.Second
	settleWorld          = "tabrelay-settle"
)

// settleProbeJS installs the document's watcher if missing (see settleProbe), waits for the
// next frame and the task after it (afterFrameJS), and answers how many milliseconds ago the
// DOM last changed. settleProbeInputJS, run after an action's input (afterInput), answers at
// once when the input was a click or key whose target is in no form and no link and no form
// was submitted (the input scheduled no navigation), else after the next task.
var (
	settleProbeJS      = settleProbe(afterFrameJS)
	settleProbeInputJS = settleProbe("if (noNav) f(); else { " + nextTaskJS + " }")
)

// nextTaskJS calls f from the page's next task (a message to itself: Chrome does not hold it
// back in a background tab, as it does timers).
const nextTaskJS = "const c = new MessageChannel(); c.port1.onmessage = f; c.port2.postMessage(0);"

// afterFrameJS calls f once the page has drawn its next frame and run the task after it, 100 ms
// at most; in a hidden page (a background tab: it draws no frames, and Chrome runs its timers
// once a second at most, which held every probe there to the next whole second) from its next
// task (nextTaskJS). f may be called more than once.
const afterFrameJS = "if (document.hidden) { " + nextTaskJS + " } else { requestAnimationFrame(() => setTimeout(f, 0)); setTimeout(f, 100); }"

// settleProbe is the settle probe that answers once wait has called f. The watcher it installs
// once per document notes when the DOM last changed (a MutationObserver), and the page's
// inputs since the last probe: clicks and keys (inputs), and whether one of them may have
// scheduled a navigation (risky): its target lies in a link, an area, a form or a form's
// control, or a form was submitted (submit or formdata: form.submit() included). The events
// are seen in the capture phase at the window, before the page's handlers; a click whose
// target is inside a shadow root is seen with its whole path (click and keydown are composed).
// In wait, noNav says that the watcher was there before this probe, saw an input and nothing
// risky; each probe starts a new count.
func settleProbe(wait string) string {
	return `(() => {
	let s = globalThis.__tabrelaySettle;
	const fresh = !s || s.doc !== document;
	if (fresh) {
		s = globalThis.__tabrelaySettle = {doc: document, last: performance.now(), inputs: 0, risky: false};
		new MutationObserver(() => { s.last = performance.now(); })
			.observe(document, {subtree: true, childList: true, attributes: true, characterData: true});
		const input = e => {
			if (s.doc !== document) return;
			s.inputs++;
			if (s.risky) return;
			for (const n of e.composedPath()) {
				if (n.nodeType === 1 && (n.localName === 'a' || n.localName === 'area' || n.localName === 'form' || n.form)) { s.risky = true; return; }
			}
		};
		const submitted = () => { s.risky = true; };
		for (const t of ['click', 'keydown']) addEventListener(t, input, true);
		for (const t of ['submit', 'formdata']) addEventListener(t, submitted, true);
	}
	const noNav = !fresh && s.inputs > 0 && !s.risky;
	s.inputs = 0;
	s.risky = false;
	return new Promise(r => {
		let done = false;
		const f = () => { if (!done) { done = true; r(performance.now() - s.last); } };
		` + wait + `
	});
})()`
}

// settles reports whether Act waits for the page to be quiet after an action of kind k.
func settles(k *Kind) bool { return !k.Browser && k.Risk >= Navigates }

// settlePage waits until the tab's page has been quiet (no DOM mutation, no request in flight,
// answered or receiving data) for the quiet window, at most the settle timeout. It reports false when the page
// was still busy at the bound. A dialog the page opens ends the wait (the page is blocked).
func (s *Service) settlePage(ctx context.Context, ts *tabState) bool {
	quiet := s.opts.SettleQuiet
	ctx, cancel := context.WithTimeout(ctx, s.opts.SettleTimeout)
	defer cancel()
	fails := 0
	first := ts.takeProbe() // observe's reading after the input: no second wait for a frame
	for {
		if ts.tab.Dialog() != nil {
			return true
		}
		var since time.Duration
		var err error
		if !first.at.IsZero() {
			since, first = first.since+time.Since(first.at), probeReading{}
		} else {
			since, err = s.sinceMutation(ctx, ts, settleProbeJS)
		}
		if err != nil {
			if ctx.Err() != nil {
				return false
			}
			// The document is being replaced (its world went with it): try again shortly. A
			// tab that keeps refusing the probe (closed, or the DOM cannot be watched) is
			// settled on its network alone.
			if fails++; fails <= 5 {
				select {
				case <-time.After(50 * time.Millisecond):
					continue
				case <-ctx.Done():
					return false
				}
			}
			since = quiet
		}
		wait := max(quiet-since, ts.networkBusy(quiet))
		if wait <= 0 {
			return true
		}
		select {
		case <-time.After(min(wait, 200*time.Millisecond)):
		case <-ctx.Done():
			return false
		}
	}
}

// probeReading is one answer of the settle probe: how long the DOM had been quiet, and when.
type probeReading struct {
	since time.Duration
	at    time.Time
}

// afterInput waits, after an action's input, until the page has handled it (the probe's
// answer follows every event the page sent while handling it: a navigation begun by a link,
// or by location.href in a handler, is announced by then, as Playwright relies on after a
// click) and, when the input may have scheduled a navigation (settleProbeInputJS: its target
// is in a link or a form, or a form was submitted: a submission navigates from a task of its
// own), until the page has run the task after it, at most afterInputBound. Waiting for that
// task after every input would cost the frame the input makes the page draw first (the page
// gives rendering priority after input): about a third of a click's time. It does not wait
// for a frame, as Playwright does not after a click: the page draws one for a change it made,
// which settling (settlePage) then sees. It does so with the settle probe, whose reading it
// keeps for settlePage, so an action that settles probes once, not twice. A page whose probe
// fails (its document is being replaced) gets the plain wait for a frame.
func (s *Service) afterInput(ctx context.Context, ts *tabState) {
	pctx, cancel := context.WithTimeout(ctx, afterInputBound)
	defer cancel()
	since, err := s.sinceMutation(pctx, ts, settleProbeInputJS)
	if err != nil {
		if pctx.Err() == nil {
			s.settle(ctx, ts.tab.Session())
		}
		return
	}
	ts.mu.Lock()
	ts.probed = probeReading{since: since, at: time.Now()}
	ts.mu.Unlock()
}

// afterInputBound bounds afterInput's wait: the probe answers within 100 ms (a background tab
// draws no frame); an alert the input opened blocks it, and a probe cut by the bound leaves
// settlePage to look for itself.
const afterInputBound = 120 * time.Millisecond

// takeProbe returns and forgets the reading afterInput kept (zero if none).
func (ts *tabState) takeProbe() probeReading {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	r := ts.probed
	ts.probed = probeReading{}
	return r
}

// sinceMutation runs probe (settleProbeJS or settleProbeInputJS) in the main frame's isolated
// world (created on first use and again after each new document) and answers how long ago the
// DOM last changed.
func (s *Service) sinceMutation(ctx context.Context, ts *tabState, probe string) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	session := ts.tab.Session()
	for attempt := 0; ; attempt++ {
		ts.mu.Lock()
		world := ts.settleWorld
		ts.mu.Unlock()
		if world == 0 {
			var w struct {
				ID int `json:"executionContextId"`
			}
			if err := s.c.Call(ctx, session, page.CommandCreateIsolatedWorld, &page.CreateIsolatedWorldParams{
				FrameID: cdp.FrameID(ts.id), WorldName: settleWorld,
			}, &w); err != nil {
				return 0, fmt.Errorf("settle: create the probe's world: %w", err)
			}
			world = w.ID
			ts.mu.Lock()
			ts.settleWorld = world
			ts.mu.Unlock()
		}
		var r struct {
			Result struct {
				Value json.RawMessage `json:"value"`
			} `json:"result"`
			Exc *struct {
				Text string `json:"text"`
			} `json:"exceptionDetails"`
		}
		err := s.c.Call(ctx, session, runtime.CommandEvaluate, &runtime.EvaluateParams{
			Expression: probe, ContextID: runtime.ExecutionContextID(world), ReturnByValue: new(true), AwaitPromise: new(true),
		}, &r)
		var ms float64
		if err == nil && r.Exc == nil && json.Unmarshal(r.Result.Value, &ms) == nil {
			return time.Duration(ms * float64(time.Millisecond)), nil
		}
		// the world belonged to a document that is gone: make a new one, once
		ts.mu.Lock()
		if ts.settleWorld == world {
			ts.settleWorld = 0
		}
		ts.mu.Unlock()
		if attempt > 0 || ctx.Err() != nil {
			if err == nil {
				err = fmt.Errorf("probe answered %s", r.Result.Value)
			}
			return 0, fmt.Errorf("settle: probe the page: %w", err)
		}
	}
}

// streamAge is how long a request may stay in flight before settling stops waiting for it: a
// long poll, an event stream or a hung request would otherwise hold every action to the bound.
const streamAge = 10 * time.Second

// networkBusy answers how much longer the tab's network must stay idle to have been idle for
// quiet: quiet while a request (younger than streamAge) waits for its answer, 0 or less when
// it already has been.
func (ts *tabState) networkBusy(quiet time.Duration) time.Duration {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	for _, started := range ts.inflight {
		if time.Since(started) < streamAge {
			return quiet
		}
	}
	return quiet - time.Since(ts.lastNet)
}
