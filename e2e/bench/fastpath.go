package main

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"time"

	"github.com/tabrelay/tabrelay/agent/api"
	"github.com/tabrelay/tabrelay/agent/task"
	"github.com/tabrelay/tabrelay/internal/cdpclient"
	"github.com/tabrelay/tabrelay/snapshot"
)

// fastPathPage is the fixture the fast path acts on: its controls record what happened to them
// in window.log, so the page itself says whether an action was done.
const fastPathPage = "/agent/controls.html"

// Ground truth read on the browser's own endpoint, not through tabrelay.
const (
	signinClicksJS = `window.log.filter(e => e === 'click:signin').length`
	fullNameJS     = `document.getElementById('fullname').value`
	signinCentreJS = `(() => { const r = document.getElementById('signin').getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; })()`
)

// fastPathBench is the state of the fastpath group: the real setup, the refs of the two
// controls from one snapshot, and a CDP session on the tab through tabrelay for the raw click.
type fastPathBench struct {
	ctx      context.Context
	s        *realSetup
	signin   string // ref of button "Sign in"
	fullName string // ref of textbox "Full name"
	cdp      *cdpclient.Client
	sid      string
	x, y     float64 // centre of the Sign in button
}

// runFastPath times text commands (POST /api/command, fast path, no model) from the request to
// the answer saying the action is done, next to the same action sent structured (POST /api/act
// with a ref from a snapshot taken once) and, for the click, the raw CDP mouse events through
// tabrelay. The difference between command and action is the cost of understanding the text,
// its snapshot included. Every path is checked on the page before timing, and the loop's clicks
// and last typed text are checked after it. Then the phrasing corpus (runCorpus) gives the share
// of commands done with no model.
func runFastPath(cfg config, r *Results) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	s, err := startReal(ctx, fastPathPage)
	if err != nil {
		return err
	}
	defer s.close()
	fb := &fastPathBench{ctx: ctx, s: s}
	if err := fb.prepare(); err != nil {
		return err
	}
	defer fb.cdp.Close()
	if err := fb.checkEachPath(); err != nil {
		return err
	}

	// Each repetition runs every variant once, interleaved so machine noise hits them alike;
	// an action costs tens of milliseconds, so the repetitions are far fewer than the other
	// groups'.
	n, warm := cfg.reps/10, max(2, cfg.reps/100)
	if cfg.short {
		n, warm = 5, 1
	}
	names := []string{"cmd click", "act click", "raw click", "cmd type", "act type", "snapshot"}
	d := map[string][]time.Duration{}
	var lifetime, step []time.Duration // of the click command's task, by its own clock
	clicks := 0
	lastText := ""
	for i := 0; i < warm+n; i++ {
		text := fmt.Sprintf("bench%d", i)
		steps := map[string]func() error{
			"cmd click": func() error {
				t, err := fb.command("click Sign in")
				if err == nil && i >= warm {
					lifetime = append(lifetime, t.FinishedAt.Sub(t.CreatedAt))
					step = append(step, t.Steps[0].EndedAt.Sub(t.Steps[0].StartedAt))
				}
				return err
			},
			"act click": func() error { return fb.act(map[string]any{"kind": "click", "ref": fb.signin}) },
			"raw click": fb.rawClick,
			"cmd type":  func() error { _, err := fb.command("type " + text + " into Full name"); return err },
			"act type":  func() error { return fb.act(map[string]any{"kind": "type", "ref": fb.fullName, "text": text + "x"}) },
			"snapshot":  func() error { _, err := fb.snapshot(); return err },
		}
		for _, name := range names {
			// each variant starts from a page that drew the frame the one before caused, so
			// that an action returning before that frame does not hand its cost to the next
			if err := fb.settle(); err != nil {
				return fmt.Errorf("repetition %d, before %s: %w", i, name, err)
			}
			t0 := time.Now()
			if err := steps[name](); err != nil {
				return fmt.Errorf("repetition %d, %s: %w", i, name, err)
			}
			if i >= warm {
				d[name] = append(d[name], time.Since(t0))
			}
		}
		clicks += 3
		lastText = text + "x"
	}
	var got int
	if err := s.b.PageEval(ctx, s.tab, signinClicksJS, &got); err != nil {
		return fmt.Errorf("count the clicks on the page: %w", err)
	}
	// checkEachPath clicked three times before the loop
	if got != clicks+3 {
		return fmt.Errorf("the page counted %d clicks on Sign in, %d were sent", got, clicks+3)
	}
	var value string
	if err := s.b.PageEval(ctx, s.tab, fullNameJS, &value); err != nil {
		return fmt.Errorf("read the Full name field: %w", err)
	}
	if value != lastText {
		return fmt.Errorf("the Full name field holds %q after the loop, want %q", value, lastText)
	}

	ms := func(us float64) float64 { return us / 1000 }
	for _, kind := range []string{"click", "type"} {
		cMed, cP99 := stats(d["cmd "+kind])
		aMed, aP99 := stats(d["act "+kind])
		what := map[string]string{"click": `"click Sign in"`, "type": `"type … into Full name"`}[kind]
		r.add(Figure{Group: "fastpath", Name: what + " command to done, median", Unit: "ms", Value: ms(cMed), Reference: ms(aMed), RefName: "POST /api/act " + kind + " by ref"})
		r.add(Figure{Group: "fastpath", Name: what + " command to done, p99", Unit: "ms", Value: ms(cP99), Reference: ms(aP99), RefName: "POST /api/act " + kind + " by ref"})
		r.add(Figure{Group: "fastpath", Name: "understanding " + what + " (command − act), median", Unit: "ms", Value: ms(cMed - aMed)})
	}
	// where the click command's time goes: the page read and match before its task starts,
	// the task around its step, the step (the action) itself
	cMed, _ := stats(d["cmd click"])
	aMed, aP99 := stats(d["act click"])
	sMed, _ := stats(d["snapshot"])
	lMed, _ := stats(lifetime)
	stMed, _ := stats(step)
	const of = `"click Sign in" command`
	r.add(Figure{Group: "fastpath", Name: "of which outside its task (page read, match, HTTP), median", Unit: "ms", Value: ms(cMed - lMed), Reference: ms(cMed), RefName: of})
	r.add(Figure{Group: "fastpath", Name: "of which its task around the step, median", Unit: "ms", Value: ms(lMed - stMed), Reference: ms(cMed), RefName: of})
	r.add(Figure{Group: "fastpath", Name: "of which its step (the click), median", Unit: "ms", Value: ms(stMed), Reference: ms(aMed), RefName: "POST /api/act click by ref"})
	r.add(Figure{Group: "fastpath", Name: "for comparison: GET /api/snapshot of the page, median", Unit: "ms", Value: ms(sMed), Reference: ms(cMed), RefName: of})
	rMed, rP99 := stats(d["raw click"])
	r.add(Figure{Group: "fastpath", Name: "POST /api/act click by ref, median", Unit: "ms", Value: ms(aMed), Reference: ms(rMed), RefName: "raw CDP mouse press+release via tabrelay", Target: "≤ 3×", Met: met(aMed <= 3*rMed)})
	r.add(Figure{Group: "fastpath", Name: "POST /api/act click by ref, p99", Unit: "ms", Value: ms(aP99), Reference: ms(rP99), RefName: "raw CDP mouse press+release via tabrelay"})
	if os.Getenv("BENCH_FASTPATH_CORPUS") == "off" {
		return nil // timing only (see the package doc)
	}
	return fb.runCorpus(cfg.short, r)
}

// prepare reads the two controls' refs from one snapshot, attaches a CDP client to the tab
// through tabrelay and measures where the Sign in button is.
func (fb *fastPathBench) prepare() error {
	snap, err := fb.snapshot()
	if err != nil {
		return err
	}
	for _, n := range snap.Nodes() {
		switch {
		case n.Role == "button" && n.Name == "Sign in":
			fb.signin = n.Ref
		case n.Role == "textbox" && n.Name == "Full name":
			fb.fullName = n.Ref
		}
	}
	if fb.signin == "" || fb.fullName == "" {
		return fmt.Errorf("the snapshot of %s lacks a ref for button \"Sign in\" or textbox \"Full name\":\n%s", fastPathPage, snap.Text)
	}
	if fb.cdp, err = cdpclient.Dial(fb.ctx, fb.s.rp.cdpURL(), nil); err != nil {
		return fmt.Errorf("connect to tabrelay's CDP endpoint: %w", err)
	}
	if fb.sid, err = attachFlat(fb.ctx, fb.cdp, fb.s.tab.TargetID); err != nil {
		fb.cdp.Close()
		return fmt.Errorf("attach to the tab through tabrelay: %w", err)
	}
	var xy []float64
	if err := fb.s.b.PageEval(fb.ctx, fb.s.tab, signinCentreJS, &xy); err != nil || len(xy) != 2 {
		fb.cdp.Close()
		return fmt.Errorf("locate the Sign in button: %v %v", xy, err)
	}
	fb.x, fb.y = xy[0], xy[1]
	return nil
}

// checkEachPath does each action once by each path and checks its effect on the page, so a
// broken path fails loudly instead of being timed.
func (fb *fastPathBench) checkEachPath() error {
	clicks := 0
	for _, p := range []struct {
		name  string
		click func() error
	}{
		{"command", func() error { _, err := fb.command("click Sign in"); return err }},
		{"act", func() error { return fb.act(map[string]any{"kind": "click", "ref": fb.signin}) }},
		{"raw CDP", fb.rawClick},
	} {
		if err := p.click(); err != nil {
			return fmt.Errorf("click Sign in (%s): %w", p.name, err)
		}
		clicks++
		var got int
		if err := fb.s.b.PageEval(fb.ctx, fb.s.tab, signinClicksJS, &got); err != nil {
			return fmt.Errorf("count the clicks on the page: %w", err)
		}
		if got != clicks {
			return fmt.Errorf("click Sign in (%s): the page counted %d clicks, want %d", p.name, got, clicks)
		}
	}
	for _, p := range []struct {
		name, text string
		typ        func(text string) error
	}{
		{"command", "hello", func(text string) error { _, err := fb.command("type " + text + " into Full name"); return err }},
		{"act", "world", func(text string) error {
			return fb.act(map[string]any{"kind": "type", "ref": fb.fullName, "text": text})
		}},
	} {
		if err := p.typ(p.text); err != nil {
			return fmt.Errorf("type into Full name (%s): %w", p.name, err)
		}
		var value string
		if err := fb.s.b.PageEval(fb.ctx, fb.s.tab, fullNameJS, &value); err != nil {
			return fmt.Errorf("read the Full name field: %w", err)
		}
		if value != p.text {
			return fmt.Errorf("type into Full name (%s): the field holds %q, want %q", p.name, value, p.text)
		}
	}
	return nil
}

// command sends a text command and checks that the fast path did it: HTTP 200 (202 would mean
// it had not ended within the wait), the task succeeded with its one step ok, no model call.
// It returns the task the command became.
func (fb *fastPathBench) command(text string) (*task.Task, error) {
	var res api.CommandResponse
	if err := fb.s.rp.api(fb.ctx, "POST", "/api/command", map[string]any{"text": text, "tab": fb.s.tab.TargetID}, &res); err != nil {
		return nil, err
	}
	if res.Task == nil || res.Status != task.StatusSucceeded || !res.FastPath || len(res.Steps) != 1 || res.Steps[0].Status != task.StepOK {
		return nil, fmt.Errorf("command %q was not done by the fast path: %+v", text, res.Task)
	}
	return res.Task, nil
}

// act sends a structured action to the tab.
func (fb *fastPathBench) act(action map[string]any) error {
	var res struct {
		Message string `json:"message"`
	}
	if err := fb.s.rp.api(fb.ctx, "POST", "/api/act", map[string]any{"tab": fb.s.tab.TargetID, "action": action}, &res); err != nil {
		return err
	}
	if res.Message == "" {
		return fmt.Errorf("action %v: the answer says nothing was done", action)
	}
	return nil
}

// snapshot reads the tab's snapshot (its page model under "root") through the API.
func (fb *fastPathBench) snapshot() (*snapshot.Snapshot, error) {
	var snap snapshot.Snapshot
	if err := fb.s.rp.api(fb.ctx, "GET", "/api/snapshot?format=json&tab="+url.QueryEscape(fb.s.tab.TargetID), nil, &snap); err != nil {
		return nil, err
	}
	return &snap, nil
}

// settle waits, untimed, until the page has drawn a frame and run the task after it.
func (fb *fastPathBench) settle() error {
	p := map[string]any{"expression": "new Promise(r => requestAnimationFrame(() => setTimeout(r)))", "awaitPromise": true}
	if err := fb.cdp.Call(fb.ctx, fb.sid, "Runtime.evaluate", p, nil); err != nil {
		return fmt.Errorf("wait for the page's next frame: %w", err)
	}
	return nil
}

// rawClick clicks the Sign in button with bare CDP mouse events through tabrelay: the floor
// under any click tabrelay's agent does.
func (fb *fastPathBench) rawClick() error {
	for _, typ := range []string{"mousePressed", "mouseReleased"} {
		p := map[string]any{"type": typ, "x": fb.x, "y": fb.y, "button": "left", "clickCount": 1}
		if err := fb.cdp.Call(fb.ctx, fb.sid, "Input.dispatchMouseEvent", p, nil); err != nil {
			return fmt.Errorf("Input.dispatchMouseEvent %s: %w", typ, err)
		}
	}
	return nil
}
