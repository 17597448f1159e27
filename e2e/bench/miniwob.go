package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/tabrelay/tabrelay/agent/api"
	"github.com/tabrelay/tabrelay/agent/task"
)

// miniwobTask is a task page of the MiniWoB++ development set and whether a simple command can
// express it: a task that needs reasoning (arithmetic, reading a table, copying text, judging
// meaning, exploring hidden parts) has no command for the fast path, and its right outcome is
// a clean refusal.
type miniwobTask struct {
	name        string
	expressible bool
	why         string
}

// miniwobTasks are the development set's tasks, each with the reason it is or is not
// expressible as a simple command.
var miniwobTasks = []miniwobTask{
	{"choose-list", true, "names the option of a list, then a button"},
	{"click-checkboxes-large", true, "names the checkboxes to tick, then a button"},
	{"click-checkboxes-soft", false, "\"words similar to\" needs judging meaning"},
	{"click-checkboxes-transfer", true, "names the checkboxes to tick, then a button"},
	{"click-collapsible", true, "names the one section to expand, then a button"},
	{"click-collapsible-nodelay", true, "names the one section to expand, then a button"},
	{"click-menu", true, "names a menu item by its path of menus"},
	{"click-scroll-list", true, "names the options of a list, then a button"},
	{"click-tab-2-easy", false, "\"switch between the tabs to find\" needs exploring hidden tabs"},
	{"click-test-transfer", true, "names the button"},
	{"copy-paste", false, "copying text the page shows"},
	{"email-inbox", false, "an email client: reading and writing messages"},
	{"enter-date", true, "a date for the one date field, then a button"},
	{"enter-password", true, "a text for both fields, then a button"},
	{"enter-text-2", true, "a text in a named letter case for the one field, then a button"},
	{"enter-text-dynamic", true, "a text for the one field, then a button"},
	{"enter-time", true, "a time for the one time field, then a button"},
	{"form-sequence", false, "setting a slider to a number (no action sets a slider's value)"},
	{"login-user", true, "a username and a password for the fields so named, then a button"},
	{"login-user-popup", false, "the button it calls login is labelled OK, and a popup it does not mention may interrupt: both need judgement"},
	{"multi-layouts", false, "mapping a description onto form fields needs reading"},
	{"multi-orderings", false, "mapping a description onto form fields needs reading"},
	{"navigate-tree", false, "finding a file means exploring a folder tree"},
	{"read-table", false, "reading a table"},
	{"search-engine", false, "finding the nth result may mean paging through results"},
	{"simple-arithmetic", false, "arithmetic"},
	{"social-media", false, "the buttons it names are icons drawn by style sheets, with no name on the page"},
	{"use-autocomplete-nodelay", false, "choosing a suggestion by a rule (starts with, ends with)"},
}

// episode outcomes
const (
	epSolved  = "solved"  // reward > 0
	epWrong   = "wrong"   // reward < 0, or a command on a task that needs reasoning ran to its end
	epRefused = "refused" // refused with a reason, nothing on the page touched
	epConfirm = "confirm" // solved only once a person approved a confirmation the safety rules asked for
	epStopped = "stopped" // understood in part: ran some steps, then stopped with a reason
	epNoEnd   = "no end"  // done, but the page gave no reward (or the time ran out)
)

// Ground truth read on the browser's own endpoint.
const (
	// miniwobStartJS starts an episode and records, from then on, every trusted input event
	// the page receives, so a refusal can be checked to have touched nothing.
	miniwobStartJS = `(() => {
		core.startEpisodeReal();
		window.__touched = [];
		for (const t of ['pointerdown', 'click', 'input', 'change', 'keydown']) {
			document.addEventListener(t, e => { if (e.isTrusted) window.__touched.push(t); }, true);
		}
		return document.getElementById('query').innerText;
	})()`
	miniwobRewardJS = `[WOB_RAW_REWARD_GLOBAL, (window.__touched || []).length]`
)

// miniwobTally counts one task's episodes by outcome.
type miniwobTally map[string]int

// runMiniwob plays the MiniWoB++ development set (cfg.miniwobDir, served over HTTP) through
// the real extension with no model: for each task, several episodes with fresh instructions,
// each instruction sent unchanged as a command (POST /api/command, as the side panel sends
// it). It reports per task and overall the share solved over the expressible tasks, the wrong
// actions (negative reward, or a command on a task that needs reasoning run to its end: a
// guess) and the share refused cleanly (nothing on the page touched).
func runMiniwob(cfg config, r *Results) error {
	dir := cfg.miniwobDir
	if _, err := os.Stat(filepath.Join(dir, "miniwob")); err != nil {
		return fmt.Errorf("the MiniWoB++ development set is not at %s (-miniwob DIR points elsewhere): %w", dir, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("serve the MiniWoB++ pages: %w", err)
	}
	srv := &http.Server{Handler: http.FileServer(http.Dir(dir))}
	go srv.Serve(ln) //nolint:errcheck // ends with Close
	defer srv.Close()
	base := "http://" + ln.Addr().String() + "/miniwob/"

	s, err := startReal(ctx, "/index.html")
	if err != nil {
		return err
	}
	defer s.close()
	fb := &fastPathBench{ctx: ctx, s: s}

	episodes := 5
	if cfg.short {
		episodes = 2
	}
	tallies := map[string]miniwobTally{}
	var notes []string
	for _, t := range miniwobTasks {
		tl := miniwobTally{}
		tallies[t.name] = tl
		for i := 0; i < episodes; i++ {
			out, note, err := fb.miniwobEpisode(base+t.name+".html", t)
			if err != nil {
				return fmt.Errorf("%s, episode %d: %w", t.name, i+1, err)
			}
			tl[out]++
			if out != epSolved && !(out == epRefused && !t.expressible) {
				notes = append(notes, fmt.Sprintf("%s: %s: %s", t.name, out, note))
			}
		}
	}
	for _, n := range notes {
		fmt.Fprintln(os.Stderr, "  miniwob:", n)
	}
	printMiniwob(tallies, episodes)

	var solved, approved, expressibleEps, wrong, refused, all int
	for _, t := range miniwobTasks {
		tl := tallies[t.name]
		suffix := " (" + t.name + ")"
		if t.expressible {
			solved += tl[epSolved]
			approved += tl[epSolved] + tl[epConfirm]
			expressibleEps += episodes
			r.Figures = append(r.Figures, Figure{Group: "miniwob", Name: "miniwob: solved" + suffix, Unit: "%", Value: pct(tl[epSolved], episodes)})
		}
		wrong += tl[epWrong]
		refused += tl[epRefused]
		all += episodes
		r.Figures = append(r.Figures,
			Figure{Group: "miniwob", Name: "miniwob: wrong actions" + suffix, Unit: "count", Value: float64(tl[epWrong])},
			Figure{Group: "miniwob", Name: "miniwob: refused" + suffix, Unit: "%", Value: pct(tl[epRefused], episodes)})
	}
	r.add(Figure{Group: "miniwob", Name: "miniwob: solved", Unit: "%", Value: pct(solved, expressibleEps), Target: "≥ 90%", Met: met(pct(solved, expressibleEps) >= 90)})
	r.add(Figure{Group: "miniwob", Name: "miniwob: solved once a person approves the confirmations asked", Unit: "%", Value: pct(approved, expressibleEps)})
	r.add(Figure{Group: "miniwob", Name: "miniwob: wrong actions", Unit: "count", Value: float64(wrong), Target: "0", Met: met(wrong == 0)})
	r.add(Figure{Group: "miniwob", Name: "miniwob: refused", Unit: "%", Value: pct(refused, all)})
	return nil
}

func pct(n, of int) float64 {
	if of == 0 {
		return 0
	}
	return 100 * float64(n) / float64(of)
}

// printMiniwob prints the per-task table.
func printMiniwob(tallies map[string]miniwobTally, episodes int) {
	w := tabwriter.NewWriter(os.Stderr, 0, 0, 2, ' ', 0)
	fmt.Fprintf(w, "  task\texpressible\tsolved\trefused\twrong\tconfirm\tstopped\tno end\t(of %d)\n", episodes)
	for _, t := range miniwobTasks {
		tl := tallies[t.name]
		fmt.Fprintf(w, "  %s\t%v\t%d\t%d\t%d\t%d\t%d\t%d\t\n", t.name, t.expressible, tl[epSolved], tl[epRefused], tl[epWrong], tl[epConfirm], tl[epStopped], tl[epNoEnd])
	}
	w.Flush()
}

// miniwobEpisode opens the task page fresh, starts an episode, sends its instruction as a
// command and classifies the outcome by the page's reward and what the page was touched by.
func (fb *fastPathBench) miniwobEpisode(pageURL string, t miniwobTask) (outcome, note string, err error) {
	if err := fb.act(map[string]any{"kind": "navigate", "url": pageURL}); err != nil {
		return "", "", fmt.Errorf("open %s: %w", pageURL, err)
	}
	var query string
	if err := fb.s.b.PageEval(fb.ctx, fb.s.tab, miniwobStartJS, &query); err != nil {
		return "", "", fmt.Errorf("start the episode: %w", err)
	}
	status, body, err := fb.s.rp.apiStatus(fb.ctx, "POST", "/api/command", map[string]any{"text": query, "tab": fb.s.tab.TargetID, "wait": false})
	if err != nil {
		return "", "", err
	}
	var ended *task.Task
	confirms := 0
	refusedWhy := ""
	switch status {
	case http.StatusServiceUnavailable:
		var e api.ErrorBody
		if json.Unmarshal(body, &e) != nil || !e.NeedsModel {
			return "", "", fmt.Errorf("command %q: HTTP %d: %.300s", query, status, body)
		}
		refusedWhy = e.Error
	case http.StatusOK, http.StatusAccepted:
		var res api.CommandResponse
		if err := json.Unmarshal(body, &res); err != nil || res.Task == nil {
			return "", "", fmt.Errorf("command %q: HTTP %d: %.300s", query, status, body)
		}
		if ended, confirms, err = fb.awaitTask(res.ID); err != nil {
			return "", "", fmt.Errorf("command %q: %w", query, err)
		}
	default:
		return "", "", fmt.Errorf("command %q: HTTP %d: %.300s", query, status, body)
	}
	var got []float64
	if err := fb.s.b.PageEval(fb.ctx, fb.s.tab, miniwobRewardJS, &got); err != nil || len(got) != 2 {
		return "", "", fmt.Errorf("read the reward: %v %w", got, err)
	}
	reward, touched := got[0], got[1] > 0
	q := fmt.Sprintf("%q", query)
	switch {
	case reward > 0 && confirms > 0:
		return epConfirm, fmt.Sprintf("%s: solved once %d confirmation(s) were approved (%s)", q, confirms, confirmPrompts(ended)), nil
	case reward > 0:
		return epSolved, q, nil
	case reward < 0:
		return epWrong, q + ": negative reward", nil
	case !t.expressible && touched && ended != nil && ended.Status == task.StatusSucceeded:
		return epWrong, q + ": ran to its end on a task that needs reasoning (a guess)", nil
	case refusedWhy != "" && !touched:
		return epRefused, q + ": " + refusedWhy, nil
	case refusedWhy != "":
		return epWrong, q + ": refused, yet the page was touched", nil
	case ended.Status == task.StatusFailed && !touched:
		return epRefused, q + ": " + ended.Error, nil
	case ended.Status == task.StatusFailed:
		return epStopped, q + ": " + ended.Error, nil
	}
	return epNoEnd, fmt.Sprintf("%s: task %s, no reward (%s)", q, ended.Status, ended.Answer), nil
}

// awaitTask polls the task until it ends, within the episode's time limit. A step waiting for
// confirmation is approved, as the person would (confirms counts them): the episode then
// counts as solved only with that approval. A task waiting for anything else is cancelled.
func (fb *fastPathBench) awaitTask(id string) (t *task.Task, confirms int, err error) {
	deadline := time.Now().Add(15 * time.Second)
	for {
		t = &task.Task{}
		if err := fb.s.rp.api(fb.ctx, "GET", "/api/tasks/"+url.PathEscape(id), nil, t); err != nil {
			return nil, confirms, err
		}
		if t.Status == task.StatusWaitingConfirmation && len(t.Steps) > 0 && time.Now().Before(deadline) {
			confirms++
			body := map[string]any{"stepId": t.Steps[len(t.Steps)-1].ID, "approve": true}
			if err := fb.s.rp.api(fb.ctx, "POST", "/api/tasks/"+url.PathEscape(id)+"/confirm", body, nil); err != nil {
				return nil, confirms, fmt.Errorf("approve the confirmation: %w", err)
			}
			continue
		}
		waiting := t.Status == task.StatusWaitingInput || t.Status == task.StatusWaitingUser || t.Status == task.StatusWaitingConfirmation
		if t.Status.Done() || waiting || time.Now().After(deadline) {
			if !t.Status.Done() {
				if err := fb.s.rp.api(fb.ctx, "POST", "/api/tasks/"+url.PathEscape(id)+"/cancel", nil, nil); err != nil && !errors.Is(err, context.Canceled) {
					return nil, confirms, fmt.Errorf("cancel task %s: %w", id, err)
				}
			}
			if !t.Status.Done() && !waiting {
				return nil, confirms, fmt.Errorf("task %s still %s after 15 s", id, t.Status)
			}
			return t, confirms, nil
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// miniwobPath is where the repository carries the development set, relative to the module root
// (its LICENSE and README beside the pages).
const miniwobPath = "e2e/bench/miniwob"

// miniwobDefault is the development set the repository carries.
func miniwobDefault() string {
	root, err := moduleRoot()
	if err != nil {
		return filepath.FromSlash(miniwobPath)
	}
	return filepath.Join(root, filepath.FromSlash(miniwobPath))
}

// confirmPrompts lists what the task's steps asked a person to confirm.
func confirmPrompts(t *task.Task) string {
	var out []string
	for _, st := range t.Steps {
		if c := st.Confirmation; c != nil {
			out = append(out, c.Prompt+" ("+c.Reason+")")
		}
	}
	return strings.Join(out, "; ")
}
