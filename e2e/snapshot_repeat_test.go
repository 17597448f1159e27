package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tabrelay/tabrelay/agent/api"
	"github.com/tabrelay/tabrelay/internal/browser"
)

// repeatPage is the fixture of the repeat-snapshot tests, with a cross-origin (out-of-process)
// iframe.
func repeatPage(ae *agentEnv) string {
	return ae.site.URL("/hard/repeat.html?cross=" + url.QueryEscape(ae.site.CrossURL("/hard/repeat-frame.html")))
}

// snapshotText is GET /api/snapshot of tab, which must answer 200.
func (ae *agentEnv) snapshotText(t *testing.T, tab browser.Tab) string {
	t.Helper()
	r := ae.call(t, http.MethodGet, "/api/snapshot?tab="+url.QueryEscape(tab.TargetID), nil)
	if r.Status != http.StatusOK {
		t.Fatalf("GET /api/snapshot: HTTP %d %s", r.Status, r.Body)
	}
	return string(r.Body)
}

// snapshotJSON is GET /api/snapshot?format=json of tab, decoded.
func (ae *agentEnv) snapshotJSON(t *testing.T, tab browser.Tab) (s struct {
	Text      string        `json:"text"`
	BelowFold int           `json:"belowFold"`
	Took      time.Duration `json:"took"`
}) {
	t.Helper()
	r := ae.call(t, http.MethodGet, "/api/snapshot?format=json&tab="+url.QueryEscape(tab.TargetID), nil)
	if r.Status != http.StatusOK {
		t.Fatalf("GET /api/snapshot?format=json: HTTP %d %s", r.Status, r.Body)
	}
	if err := json.Unmarshal(r.Body, &s); err != nil {
		t.Fatalf("GET /api/snapshot?format=json: %v: %.300s", err, r.Body)
	}
	return s
}

// waitPage polls expression (JavaScript, over the harness's own channel) until it is true: the
// ground truth that a change the page makes on its own (a navigation, a reload) is done.
func (ae *agentEnv) waitPage(t *testing.T, tab browser.Tab, what, expression string) {
	t.Helper()
	eventually(t, 30*time.Second, what, func() (bool, string) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		var ok bool
		err := ae.b.PageEval(ctx, tab, expression, &ok)
		if err != nil {
			return false, err.Error()
		}
		return ok, expression + " is false"
	})
}

// TestRepeatSnapshotSeesChanges changes a page in every way that may escape a cheap change check
// and asks GET /api/snapshot once right after each change is done: the answer must show the
// change. Before each change, two snapshots of the page left alone must be the same (the second
// is the repeat the agent takes after most steps). Changes are made behind the agent's back,
// over the test harness's own connection to the browser, except typing, which goes through the
// agent's type action as an agent types.
func TestRepeatSnapshotSeesChanges(t *testing.T) {
	ae := startAgentEnv(t, api.Options{})
	eval := func(t *testing.T, tab browser.Tab, js string) {
		t.Helper()
		var v any
		ae.pageEval(t, tab, js, &v)
	}
	cases := []struct {
		name   string
		change func(t *testing.T, tab browser.Tab, before string)
		want   []string // must be in the snapshot after the change
		gone   []string // must be in the snapshot before and not after
	}{
		{name: "text changed by script",
			change: func(t *testing.T, tab browser.Tab, _ string) {
				eval(t, tab, `document.getElementById('msg').textContent = 'Changed by script'`)
			},
			want: []string{"Changed by script"}, gone: []string{"Original text"}},
		{name: "value set by script without an event",
			change: func(t *testing.T, tab browser.Tab, _ string) {
				eval(t, tab, `document.getElementById('name').value = 'Set quietly'`)
			},
			want: []string{"Set quietly"}},
		{name: "checkbox checked by script without an event",
			change: func(t *testing.T, tab browser.Tab, _ string) {
				eval(t, tab, `document.getElementById('agree').checked = true`)
			},
			want: []string{`checkbox "Agree" [checked]`}},
		{name: "value typed",
			change: func(t *testing.T, tab browser.Tab, before string) {
				ref := refOf2(before, "textbox", "Name")
				if ref == "" {
					t.Fatalf("no textbox \"Name\" in\n%s", before)
				}
				r := ae.call(t, http.MethodPost, "/api/act", map[string]any{"tab": tab.TargetID, "action": map[string]any{"kind": "type", "ref": ref, "text": "Typed in"}})
				if r.Status != http.StatusOK {
					t.Fatalf("type: HTTP %d %s", r.Status, r.Body)
				}
			},
			want: []string{"Typed in"}},
		{name: "class toggle hides an element",
			change: func(t *testing.T, tab browser.Tab, _ string) {
				eval(t, tab, `document.getElementById('promo').classList.add('gone')`)
			},
			gone: []string{`"Promo button"`}},
		{name: "class on an ancestor hides a descendant by a style rule",
			change: func(t *testing.T, tab browser.Tab, _ string) {
				eval(t, tab, `document.body.classList.add('quiet')`)
			},
			gone: []string{`"Extra button"`}},
		{name: "popover shown",
			change: func(t *testing.T, tab browser.Tab, before string) {
				if strings.Contains(before, "Popover button") {
					t.Fatalf("the closed popover's button is in the outline before it opened:\n%s", before)
				}
				eval(t, tab, `document.getElementById('pop').showPopover()`)
			},
			want: []string{`"Popover button"`}},
		{name: "custom element defined, with a closed shadow root",
			change: func(t *testing.T, tab browser.Tab, _ string) {
				eval(t, tab, `customElements.define('late-card', class extends HTMLElement {
					constructor() { super(); this.attachShadow({ mode: 'closed' }).innerHTML = '<button>Late button</button>'; }
				})`)
			},
			want: []string{`"Late button"`}},
		{name: "shown by a script animation when it ends (no event, no mutation)",
			change: func(t *testing.T, tab browser.Tab, before string) {
				if strings.Contains(before, "Shown by an animation") {
					t.Fatalf("the hidden paragraph is in the outline before the animation:\n%s", before)
				}
				eval(t, tab, `window.later = document.getElementById('later').animate([{ display: 'block' }], { delay: 1500, duration: 1, fill: 'forwards' }), true`)
				// a snapshot while the animation waits to start, then one after it ended
				if during := ae.snapshotText(t, tab); strings.Contains(during, "Shown by an animation") {
					t.Log("the animation had ended before the snapshot taken during it (a slow machine)")
				}
				eval(t, tab, `window.later.finished.then(() => true)`)
			},
			want: []string{"Shown by an animation"}},
		{name: "same-origin iframe's text changed",
			change: func(t *testing.T, tab browser.Tab, _ string) {
				eval(t, tab, `document.getElementById('same').contentDocument.getElementById('inner').textContent = 'Inner changed'`)
			},
			want: []string{"Inner changed"}, gone: []string{"Inner original"}},
		{name: "cross-origin iframe's text changed",
			change: func(t *testing.T, tab browser.Tab, _ string) {
				eval(t, tab, `changeCross('Cross changed')`)
			},
			want: []string{"Cross changed"}, gone: []string{"Cross original"}},
		{name: "scrolled into a lazy list",
			change: func(t *testing.T, tab browser.Tab, _ string) {
				eval(t, tab, `(async () => {
					const l = document.getElementById('lazy');
					l.scrollTop = l.scrollHeight;
					while (l.children.length <= 10) await new Promise((r) => requestAnimationFrame(r));
				})()`)
			},
			want: []string{"Item 20"}},
		{name: "navigation",
			change: func(t *testing.T, tab browser.Tab, _ string) {
				eval(t, tab, `setTimeout(() => { location.href = '/other.html' }, 0)`)
				ae.waitPage(t, tab, "the other page loaded", `location.pathname === '/other.html' && document.readyState === 'complete'`)
			},
			want: []string{"Other page"}, gone: []string{"Repeat snapshots"}},
		{name: "same-URL reload",
			change: func(t *testing.T, tab browser.Tab, _ string) {
				eval(t, tab, `setTimeout(() => location.reload(), 0)`)
				ae.waitPage(t, tab, "the page reloaded", `document.readyState === 'complete' && document.getElementById('loadno')?.textContent === '2'`)
			},
			want: []string{"Load number 2"}, gone: []string{"Load number 1"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tab := ae.share(t, repeatPage(ae))
			defer ae.b.CloseTab(context.Background(), tab)
			// the page is ready when both frames show (the cross-origin one loads on its own)
			var before string
			eventually(t, 30*time.Second, "the page and its frames in the snapshot", func() (bool, string) {
				before = ae.snapshotText(t, tab)
				return strings.Contains(before, "Cross original") && strings.Contains(before, "Inner original") && strings.Contains(before, "Load number 1"), before
			})
			if again := ae.snapshotText(t, tab); again != before {
				t.Fatalf("two snapshots of a page left alone differ:\n%s\n---\n%s", before, again)
			}
			for _, g := range c.gone {
				if !strings.Contains(before, g) {
					t.Fatalf("%q is not in the snapshot before the change:\n%s", g, before)
				}
			}
			c.change(t, tab, before)
			after := ae.snapshotText(t, tab)
			for _, w := range c.want {
				if !strings.Contains(after, w) {
					t.Errorf("%q is not in the snapshot right after the change:\n%s", w, after)
				}
			}
			for _, g := range c.gone {
				if strings.Contains(after, g) {
					t.Errorf("%q is still in the snapshot right after the change:\n%s", g, after)
				}
			}
		})
	}
}

// TestRepeatSnapshotSeesScroll scrolls the page by script (no event has fired yet when the
// snapshot is asked): the header's count of refs below the fold must change at once.
func TestRepeatSnapshotSeesScroll(t *testing.T) {
	ae := startAgentEnv(t, api.Options{})
	tab := ae.share(t, repeatPage(ae))
	first := ae.snapshotJSON(t, tab)
	if again := ae.snapshotJSON(t, tab); again.Text != first.Text || first.BelowFold == 0 {
		t.Fatalf("want two equal snapshots with refs below the fold; got %d and %d refs below:\n%s\n---\n%s", first.BelowFold, again.BelowFold, first.Text, again.Text)
	}
	var v any
	ae.pageEval(t, tab, `scrollTo(0, document.body.scrollHeight)`, &v)
	if after := ae.snapshotJSON(t, tab); after.BelowFold == first.BelowFold {
		t.Errorf("scrolled to the bottom, the snapshot still counts %d refs below the fold:\n%s", after.BelowFold, after.Text)
	}
}

// TestRepeatSnapshotReuses checks that a repeat snapshot of a page left alone costs a fraction of
// one that must walk the page again: on a page of 5,000 elements, the median server-side time
// (the answer's took) of repeats is at most a quarter of the median after a one-attribute change.
// Without reuse both walk the whole page and take about as long.
func TestRepeatSnapshotReuses(t *testing.T) {
	ae := startAgentEnv(t, api.Options{})
	tab := ae.share(t, ae.site.URL("/gen.html?n=5000"))
	// the page builds its elements as it loads: wait until it is done
	first := ae.snapshotJSON(t, tab)
	eventually(t, 60*time.Second, "two equal snapshots of the page", func() (bool, string) {
		prev := first
		first = ae.snapshotJSON(t, tab)
		return first.Text == prev.Text, "the page is still changing"
	})
	const runs = 5
	var same, changed []time.Duration
	for i := range runs {
		s := ae.snapshotJSON(t, tab)
		if s.Text != first.Text {
			t.Fatalf("repeat %d of a page left alone differs from the first", i)
		}
		same = append(same, s.Took)
		var v any
		ae.pageEval(t, tab, `document.body.dataset.n = String(Math.random())`, &v)
		changed = append(changed, ae.snapshotJSON(t, tab).Took)
	}
	slices.Sort(same)
	slices.Sort(changed)
	if ms, mc := same[runs/2], changed[runs/2]; 4*ms > mc {
		t.Errorf("repeat snapshots take a median %v, snapshots after a change %v: want at most a quarter", ms, mc)
	} else {
		t.Logf("repeat snapshots: median %v; after a change: %v", ms, mc)
	}
}
