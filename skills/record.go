package skills

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/chromedp/cdproto/accessibility"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/tmc/langchaingo/llms"

	"github.com/tabrelay/tabrelay/agent/llm"
	"github.com/tabrelay/tabrelay/internal/cdpclient"
	"github.com/tabrelay/tabrelay/snapshot"
)

//go:embed capture.js
var captureJS string

const bindingName = "__tabrelayRecord"

// ErrRecording is wrapped when a tab is already being recorded, or is not.
var ErrRecording = errors.New("recording state")

// ErrNothingRecorded is wrapped when a recording stops with no step captured.
var ErrNothingRecorded = errors.New("nothing was recorded")

// Recording describes a recording in progress.
type Recording struct {
	Tab       string    `json:"tab"`
	URL       string    `json:"url"`
	StartedAt time.Time `json:"startedAt"`
	// Steps is how many steps have been captured so far.
	Steps int `json:"steps"`
}

// Draft is the outcome of a recording: a SKILL.md to review and save.
type Draft struct {
	Skill    *Skill `json:"skill"`
	Markdown string `json:"markdown"`
	// Named is true when the model wrote the name and descriptions from the narration.
	Named bool `json:"named"`
	// ModelCalls counts the model calls made for the draft (naming it from the narration).
	ModelCalls int `json:"modelCalls"`
}

// captured is one user action seen by the recorder.
type captured struct {
	Kind     string // click, type, press, select, check, navigate
	Target   Target
	Value    string
	Values   []string
	Checked  bool
	Submit   bool
	Password bool
	Key      string
	URL      string
	ExpectTo string // path the action navigated to
	// ExpectText is short text a status, alert or live region showed just after a click.
	ExpectText string
	At         time.Time
	page       int // the event's index in its document's recorder (for matching its effect)
}

// effectWindow is how long after a click the recorder watches for its effect.
const effectWindow = time.Second

type pageEvent struct {
	T        string   `json:"t"`
	I        int      `json:"i"`
	Role     string   `json:"role"`
	Name     string   `json:"name"`
	Value    string   `json:"value"`
	Values   []string `json:"values"`
	Checked  bool     `json:"checked"`
	Password bool     `json:"password"`
	Submit   bool     `json:"submit"`
	Key      string   `json:"key"`
	URL      string   `json:"url"`
	Of       int      `json:"of"`   // effect: the click's index
	Text     string   `json:"text"` // effect: the text that appeared
}

type queued struct {
	ev       cdpclient.Event
	at       time.Time
	drained  chan struct{}
	stopping bool
}

// recording is a recording in progress on one tab.
type recording struct {
	s        *Service
	tab      *snapshot.Tab
	info     Recording
	scriptID string
	unsub    func()
	q        chan queued
	done     chan struct{}

	mu    sync.Mutex
	steps []captured
}

// StartRecording starts watching tab ("" for the active tab): the user's clicks, typing,
// selections, checkbox toggles and navigations become steps, each target named by the role
// and accessible name the role snapshot gives it. Stop with StopRecording.
func (s *Service) StartRecording(ctx context.Context, tabID string) (*Recording, error) {
	if s.opts.Actions == nil {
		return nil, errors.New("recording needs the browser's action service; it is not connected")
	}
	tab, err := s.opts.Actions.Tab(ctx, tabID)
	if err != nil {
		return nil, fmt.Errorf("start recording: %w", err)
	}
	id := tab.TargetID()
	s.mu.Lock()
	if _, busy := s.recordings[id]; busy {
		s.mu.Unlock()
		return nil, fmt.Errorf("%w: tab %s is already being recorded; stop that recording first", ErrRecording, id)
	}
	rec := &recording{s: s, tab: tab, q: make(chan queued, 4096), done: make(chan struct{})}
	s.recordings[id] = rec
	s.mu.Unlock()
	ok := false
	defer func() {
		if !ok {
			s.mu.Lock()
			delete(s.recordings, id)
			s.mu.Unlock()
		}
	}()
	sess := tab.Session()
	c := tab.Client()
	var cur struct {
		Result struct {
			Value string `json:"value"`
		} `json:"result"`
	}
	if err := c.Call(ctx, sess, runtime.CommandEvaluate, &runtime.EvaluateParams{Expression: "location.href", ReturnByValue: new(true)}, &cur); err != nil {
		return nil, fmt.Errorf("start recording: read the tab: %w", err)
	}
	rec.info = Recording{Tab: id, URL: cur.Result.Value, StartedAt: time.Now()}
	rec.unsub = c.Subscribe(func(e cdpclient.Event) {
		if e.SessionID != sess || (e.Method != "Runtime.bindingCalled" && e.Method != "Page.frameNavigated") {
			return
		}
		select {
		case rec.q <- queued{ev: e, at: time.Now()}:
		default:
			s.log.Warn().Str("tab", id).Msg("recorder queue full: an action was not captured")
		}
	})
	go rec.loop()
	script := strings.NewReplacer("BINDING", bindingName, "DEBOUNCE_MS", strconv.Itoa(int(s.opts.Debounce.Milliseconds())),
		"EFFECT_MS", strconv.Itoa(int(effectWindow.Milliseconds()))).Replace(captureJS)
	var added struct {
		Identifier string `json:"identifier"`
	}
	steps := []struct {
		method string
		params any
		out    any
	}{
		{"Runtime.enable", nil, nil},
		{"Page.enable", nil, nil},
		{runtime.CommandAddBinding, &runtime.AddBindingParams{Name: bindingName}, nil},
		{page.CommandAddScriptToEvaluateOnNewDocument, &page.AddScriptToEvaluateOnNewDocumentParams{Source: script}, &added},
		{runtime.CommandEvaluate, &runtime.EvaluateParams{Expression: script}, nil},
	}
	for _, st := range steps {
		if err := c.Call(ctx, sess, st.method, st.params, st.out); err != nil {
			rec.unsub()
			// end the loop with the marker, not by closing q: the client may still be running
			// the subscription for an event it read before unsub, and a send on a closed
			// channel panics
			rec.q <- queued{stopping: true, drained: make(chan struct{})}
			return nil, fmt.Errorf("start recording: %s: %w", st.method, err)
		}
	}
	rec.scriptID = added.Identifier
	ok = true
	s.log.Info().Str("tab", id).Msg("recording started")
	info := rec.info
	return &info, nil
}

// Recordings lists the recordings in progress.
func (s *Service) Recordings() []Recording {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Recording
	for _, r := range s.recordings {
		r.mu.Lock()
		i := r.info
		i.Steps = len(r.steps)
		r.mu.Unlock()
		out = append(out, i)
	}
	return out
}

// StopRecording stops the recording on tab ("" for the only recording in progress) and returns
// the draft skill. narration (what the user said or typed while showing) names and describes it:
// with a model, the model writes the name, description and parameter descriptions from it;
// otherwise the name comes from its first words.
func (s *Service) StopRecording(ctx context.Context, tabID, narration string) (*Draft, error) {
	s.mu.Lock()
	var rec *recording
	if tabID == "" && len(s.recordings) == 1 {
		for _, r := range s.recordings {
			rec = r
		}
	} else {
		rec = s.recordings[tabID]
		if rec == nil && tabID == "" {
			s.mu.Unlock()
			return nil, fmt.Errorf("%w: %d recordings are in progress; name the tab to stop", ErrRecording, len(s.recordings))
		}
	}
	if rec == nil {
		s.mu.Unlock()
		return nil, fmt.Errorf("%w: no recording in progress on tab %q; start one first", ErrRecording, tabID)
	}
	delete(s.recordings, rec.info.Tab)
	s.mu.Unlock()

	sess, c := rec.tab.Session(), rec.tab.Client()
	// Take the value of a field still being typed into, then let the queue drain.
	_ = c.Call(ctx, sess, runtime.CommandEvaluate, &runtime.EvaluateParams{Expression: "window.__tabrelayRec && window.__tabrelayRec.flush()"}, nil)
	drained := make(chan struct{})
	select {
	case rec.q <- queued{drained: drained, stopping: true}:
		select {
		case <-drained:
		case <-ctx.Done():
		}
	case <-ctx.Done():
	}
	rec.unsub()
	_ = c.Call(ctx, sess, runtime.CommandEvaluate, &runtime.EvaluateParams{Expression: "window.__tabrelayRec && window.__tabrelayRec.stop()"}, nil)
	// removeBinding only stops the notifications: take the function off the page too.
	_ = c.Call(ctx, sess, runtime.CommandRemoveBinding, &runtime.RemoveBindingParams{Name: bindingName}, nil)
	_ = c.Call(ctx, sess, runtime.CommandEvaluate, &runtime.EvaluateParams{Expression: "delete window." + bindingName}, nil)
	if rec.scriptID != "" {
		_ = c.Call(ctx, sess, page.CommandRemoveScriptToEvaluateOnNewDocument, &page.RemoveScriptToEvaluateOnNewDocumentParams{Identifier: page.ScriptIdentifier(rec.scriptID)}, nil)
	}
	rec.mu.Lock()
	caps := append([]captured(nil), rec.steps...)
	rec.mu.Unlock()
	s.log.Info().Str("tab", rec.info.Tab).Int("steps", len(caps)).Msg("recording stopped")
	return s.draft(ctx, rec.info, caps, narration)
}

// loop turns queued CDP events into captured steps, in order.
func (r *recording) loop() {
	ctx := context.Background()
	for q := range r.q {
		if q.stopping {
			close(q.drained)
			return
		}
		switch q.ev.Method {
		case "Page.frameNavigated":
			var p struct {
				Frame struct {
					ParentID string `json:"parentId"`
					URL      string `json:"url"`
				} `json:"frame"`
			}
			if json.Unmarshal(q.ev.Params, &p) != nil || p.Frame.ParentID != "" {
				continue
			}
			r.navigated(p.Frame.URL, q.at)
		case "Runtime.bindingCalled":
			var p struct {
				Name      string `json:"name"`
				Payload   string `json:"payload"`
				ContextID int    `json:"executionContextId"`
			}
			if json.Unmarshal(q.ev.Params, &p) != nil || p.Name != bindingName {
				continue
			}
			var ev pageEvent
			if json.Unmarshal([]byte(p.Payload), &ev) != nil {
				continue
			}
			cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			r.captured(cctx, ev, p.ContextID, q.at)
			cancel()
		}
	}
}

func (r *recording) add(c captured) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if n := len(r.steps); n > 0 && c.Kind == "type" && r.steps[n-1].Kind == "type" && r.steps[n-1].Target.String() == c.Target.String() {
		r.steps[n-1] = c // the final value of the same field
		return
	}
	r.steps = append(r.steps, c)
}

// navigated records a main-frame navigation: the effect of the action just before it (as an
// expected URL path), or a navigation of its own.
func (r *recording) navigated(u string, at time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	prevURL := r.info.URL
	if n := len(r.steps); n > 0 {
		prevURL = r.steps[n-1].URL
		for i := n - 1; i >= 0; i-- {
			if r.steps[i].Kind == "navigate" {
				prevURL = r.steps[i].URL
				break
			}
		}
	}
	if n := len(r.steps); n > 0 && at.Sub(r.steps[n-1].At) < 3*time.Second && r.steps[n-1].Kind != "navigate" {
		last := &r.steps[n-1]
		nu, err1 := url.Parse(u)
		pu, err2 := url.Parse(last.URL)
		if err1 == nil && err2 == nil && nu.Path != pu.Path {
			last.ExpectTo = nu.Path
		}
		return
	}
	if u == prevURL || u == "about:blank" {
		return
	}
	r.steps = append(r.steps, captured{Kind: "navigate", URL: u, At: at})
}

// captured resolves the event's element to the role and name the snapshot shows (the browser's
// accessibility tree), with nth among equals, falling back on the page's own guess.
func (r *recording) captured(ctx context.Context, ev pageEvent, contextID int, at time.Time) {
	if ev.T == "effect" {
		r.effect(ev, at)
		return
	}
	t := r.identify(ctx, ev, contextID)
	c := captured{Target: t, URL: ev.URL, At: at, page: ev.I}
	switch ev.T {
	case "click":
		c.Kind = "click"
	case "type":
		c.Kind, c.Value, c.Submit, c.Password = "type", ev.Value, ev.Submit, ev.Password
	case "press":
		c.Kind, c.Key = "press", ev.Key
	case "select":
		c.Kind, c.Values = "select", ev.Values
	case "check":
		c.Kind, c.Checked = "check", ev.Checked
	default:
		return
	}
	r.add(c)
}

// maxEffect caps the length of a click's recorded effect text.
const maxEffect = 80

// effect records the text a click made appear (in a status, alert or live region) as what the
// step must show on replay, when the click is still the last step of the same document.
func (r *recording) effect(ev pageEvent, at time.Time) {
	text := strings.Join(strings.Fields(ev.Text), " ")
	if text == "" || len([]rune(text)) > maxEffect || strings.Contains(text, "{{") || strings.Contains(text, "}}") {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	n := len(r.steps)
	if n == 0 {
		return
	}
	last := &r.steps[n-1]
	if last.Kind != "click" || last.page != ev.Of || last.URL != ev.URL || last.ExpectText != "" || at.Sub(last.At) > effectWindow+2*time.Second {
		return
	}
	last.ExpectText = text
}

// roleNames maps Chromium's internal role names to the names snapshots show (as snapshot does).
var roleNames = map[string]string{
	"image": "img", "ToggleButton": "button", "PopUpButton": "combobox", "ColorWell": "colorpicker",
	"Date": "date", "DateTime": "datetime", "InputTime": "time", "DisclosureTriangle": "summary",
	"textField": "textbox",
}

func (r *recording) identify(ctx context.Context, ev pageEvent, contextID int) Target {
	guess := Target{Role: ev.Role, Name: ev.Name}
	c, sess := r.tab.Client(), r.tab.Session()
	var obj struct {
		Result struct {
			ObjectID string `json:"objectId"`
		} `json:"result"`
	}
	params := &runtime.EvaluateParams{Expression: fmt.Sprintf("window.__tabrelayRec && window.__tabrelayRec.els[%d]", ev.I), ContextID: runtime.ExecutionContextID(contextID)}
	if err := c.Call(ctx, sess, runtime.CommandEvaluate, params, &obj); err != nil || obj.Result.ObjectID == "" {
		return r.confirm(ctx, guess, guess, 0)
	}
	defer func() {
		_ = c.Call(ctx, sess, runtime.CommandReleaseObject, &runtime.ReleaseObjectParams{ObjectID: runtime.RemoteObjectID(obj.Result.ObjectID)}, nil)
	}()
	ax := guess
	var tree struct {
		Nodes []struct {
			Ignored bool `json:"ignored"`
			Role    *struct {
				Value string `json:"value"`
			} `json:"role"`
			Name *struct {
				Value string `json:"value"`
			} `json:"name"`
		} `json:"nodes"`
	}
	if err := c.Call(ctx, sess, accessibility.CommandGetPartialAXTree, &accessibility.GetPartialAXTreeParams{ObjectID: runtime.RemoteObjectID(obj.Result.ObjectID), FetchRelatives: new(false)}, &tree); err == nil {
		for _, n := range tree.Nodes {
			if n.Ignored || n.Role == nil {
				continue
			}
			role := n.Role.Value
			if m, ok := roleNames[role]; ok {
				role = m
			}
			ax = Target{Role: role}
			if n.Name != nil {
				ax.Name = strings.Join(strings.Fields(n.Name.Value), " ")
			}
			break
		}
	}
	var backend int
	var desc struct {
		Node struct {
			BackendNodeID int `json:"backendNodeId"`
		} `json:"node"`
	}
	if c.Call(ctx, sess, dom.CommandDescribeNode, &dom.DescribeNodeParams{ObjectID: runtime.RemoteObjectID(obj.Result.ObjectID)}, &desc) == nil {
		backend = desc.Node.BackendNodeID
	}
	return r.confirm(ctx, ax, guess, backend)
}

// confirm checks the target against the page's refs (as a replay will resolve it) and adds nth
// when several elements share the role and name.
func (r *recording) confirm(ctx context.Context, ax, guess Target, backend int) Target {
	for _, t := range []Target{ax, guess} {
		if t.Role == "" {
			continue
		}
		found, err := r.tab.Find(ctx, t.Role, t.Name)
		if err != nil || len(found) == 0 {
			continue
		}
		if len(found) > 1 && backend != 0 {
			for k, f := range found {
				el, err := r.tab.Resolve(ctx, f.Ref)
				if err != nil {
					continue
				}
				same := el.BackendID == backend
				r.tab.Release(ctx, el)
				if same {
					t.Nth = k + 1
					break
				}
			}
		}
		return t
	}
	return ax
}

var slugRE = regexp.MustCompile(`[^a-z0-9]+`)

func slug(s string, maxWords int) string {
	var w []string
	for _, x := range strings.Fields(slugRE.ReplaceAllString(strings.ToLower(s), " ")) {
		if !stopWords[x] || maxWords < 4 {
			w = append(w, x)
		}
	}
	if len(w) > maxWords {
		w = w[:maxWords]
	}
	return strings.Join(w, "-")
}

// draft turns captured steps into a skill, named from the narration by the model when there
// is one.
func (s *Service) draft(ctx context.Context, info Recording, caps []captured, narration string) (*Draft, error) {
	return s.draftWith(ctx, info, caps, narration, true)
}

// draftWith is draft; useModel false names the skill from the narration without the model.
func (s *Service) draftWith(ctx context.Context, info Recording, caps []captured, narration string, useModel bool) (*Draft, error) {
	sk := &Skill{Kind: KindWorkflow}
	host := ""
	if u, err := url.Parse(info.URL); err == nil && u.Host != "" {
		host = u.Hostname()
		if u.Port() != "" {
			host = u.Host
		}
		sk.Sites = []string{u.Scheme + "://" + u.Host + "/*"}
	}
	used := map[string]bool{}
	paramFor := func(field, value string, secret bool) string {
		base := slug(field, 3)
		base = strings.ReplaceAll(base, "-", "_")
		if base == "" {
			base = "value"
		}
		if secret {
			base = "password"
		}
		name := base
		for i := 2; used[name]; i++ {
			name = fmt.Sprintf("%s_%d", base, i)
		}
		used[name] = true
		p := Param{Name: name, Required: true, Secret: secret}
		if secret {
			p.Description = fmt.Sprintf("The password for %q (never recorded nor stored)", field)
		} else {
			p.Description = fmt.Sprintf("What to type into %q", field)
			p.Example = value
		}
		sk.Parameters = append(sk.Parameters, p)
		return name
	}
	values := map[string]string{} // typed value → param name
	for _, c := range caps {
		t := c.Target
		st := Step{Do: c.Kind}
		switch c.Kind {
		case "navigate", "hand_over", "back", "forward", "reload": // no element
		default:
			st.Target = &t
		}
		switch c.Kind {
		case "click":
			st.Hint = "Click " + t.String()
		case "type":
			switch {
			case c.Password:
				st.Text = "{{" + paramFor(t.Name, "", true) + "}}"
			case strings.TrimSpace(c.Value) == "":
				st.Text = ""
			default:
				name, ok := values[c.Value]
				if !ok {
					name = paramFor(t.Name, c.Value, false)
					values[c.Value] = name
				}
				st.Text = "{{" + name + "}}"
			}
			st.Submit = c.Submit
			st.Hint = "Type the value into " + t.String()
		case "press":
			st.Key = c.Key
		case "select":
			st.Values = c.Values
			st.Hint = "Choose " + strings.Join(c.Values, ", ") + " in " + t.String()
		case "check":
			if !c.Checked {
				st.Do = "uncheck"
			}
			st.Hint = strings.ToUpper(st.Do[:1]) + st.Do[1:] + " " + t.String()
		case "hand_over": // from a task's hand-over (DraftFromTask): the person's turn again
			st.Text = c.Value
		case "navigate":
			st.URL = c.URL
			for v, name := range values {
				for _, enc := range []string{url.QueryEscape(v), url.PathEscape(v)} {
					st.URL = strings.ReplaceAll(st.URL, enc, "{{"+name+"}}")
				}
			}
		}
		if c.ExpectTo != "" || c.ExpectText != "" {
			st.Expect = &Expect{URL: c.ExpectTo, Text: withParams(c.ExpectText, values)}
		}
		sk.Steps = append(sk.Steps, st)
	}
	if len(sk.Steps) == 0 {
		return nil, fmt.Errorf("%w: click, type or choose on the shared tab between start and stop (actions in other tabs or in cross-origin frames are not captured yet)", ErrNothingRecorded)
	}
	named, calls := false, 0
	if useModel && llm.Ready(s.opts.Model) && strings.TrimSpace(narration) != "" {
		named, calls = s.nameFromNarration(ctx, sk, narration, host), 1
	}
	if !named {
		if n := slug(narration, 4); n != "" {
			sk.Name = n
		} else {
			sk.Name = "recorded-" + slug(host, 3) + "-" + time.Now().Format("150405")
		}
		if strings.TrimSpace(narration) != "" {
			sk.Description = strings.TrimSpace(narration)
		} else {
			sk.Description = fmt.Sprintf("Recorded on %s: %s.", host, describeAll(sk.Steps))
		}
	}
	if !ValidName(sk.Name) {
		sk.Name = "recorded-skill"
	}
	title := sk.Description
	if i := strings.IndexAny(title, ".\n"); i > 0 {
		title = title[:i]
	}
	sk.Body = fmt.Sprintf("# %s\n\n%s\n\nPreconditions: start on %s (or a page like it), signed in as when it was recorded on %s.\n\n```steps\n```\n\n## Verification\n\nEach step's target is found and the page reacts as when it was recorded.\n\n## Notes\n\nRecorded by demonstration; review the steps and the parameters before saving.\n",
		title, sk.Description, info.URL, info.StartedAt.Format("2006-01-02"))
	md, err := sk.Markdown()
	if err != nil {
		return nil, err
	}
	// The draft must load as written.
	parsed, err := Parse(sk.Name+"/"+FileName, md)
	if err != nil {
		return nil, fmt.Errorf("the recorded draft does not parse (a bug; please report it): %w", err)
	}
	return &Draft{Skill: parsed, Markdown: string(md), Named: named, ModelCalls: calls}, nil
}

// withParams writes the typed values found (as whole words) in a recorded text as their
// parameters, so that "Added Ada" after typing Ada into Name expects "Added {{name}}".
func withParams(text string, values map[string]string) string {
	if text == "" {
		return ""
	}
	vs := make([]string, 0, len(values))
	for v := range values {
		if len([]rune(strings.TrimSpace(v))) >= 2 {
			vs = append(vs, v)
		}
	}
	sort.Slice(vs, func(i, j int) bool { return len(vs[i]) > len(vs[j]) || (len(vs[i]) == len(vs[j]) && vs[i] < vs[j]) })
	word := func(s string, i int, before bool) bool {
		if before {
			if i <= 0 {
				return false
			}
			r, _ := utf8.DecodeLastRuneInString(s[:i])
			return unicode.IsLetter(r) || unicode.IsDigit(r)
		}
		if i >= len(s) {
			return false
		}
		r, _ := utf8.DecodeRuneInString(s[i:])
		return unicode.IsLetter(r) || unicode.IsDigit(r)
	}
	// placeholders (\x00k\x00) keep a shorter value from matching inside a replaced one
	for k, v := range vs {
		tv := strings.Join(strings.Fields(v), " ")
		var b strings.Builder
		rest := text
		for {
			i := strings.Index(rest, tv)
			if i < 0 {
				b.WriteString(rest)
				break
			}
			end := i + len(tv)
			if word(rest, i, true) || word(rest, end, false) {
				b.WriteString(rest[:end])
			} else {
				b.WriteString(rest[:i] + "\x00" + strconv.Itoa(k) + "\x00")
			}
			rest = rest[end:]
		}
		text = b.String()
	}
	for k, v := range vs {
		text = strings.ReplaceAll(text, "\x00"+strconv.Itoa(k)+"\x00", "{{"+values[v]+"}}")
	}
	return text
}

func describeAll(steps []Step) string {
	var parts []string
	for _, st := range steps {
		parts = append(parts, describe(st, nil))
	}
	return strings.Join(parts, ", ")
}

// nameFromNarration asks the model for a name, description and parameter descriptions.
func (s *Service) nameFromNarration(ctx context.Context, sk *Skill, narration, host string) bool {
	var params []string
	for _, p := range sk.Parameters {
		params = append(params, fmt.Sprintf("- %s (typed into a field: %s)", p.Name, strings.TrimPrefix(p.Description, "What to type into ")))
	}
	prompt := fmt.Sprintf("A user showed a browser how to do a task on %s and said: %q\nThe recorded steps: %s.\nParameters:\n%s\n"+
		"Reply with only a JSON object: {\"name\": a short lowercase-hyphenated skill name, \"description\": one sentence saying what the skill does and when to use it, \"parameters\": {parameter name: one-line description}}.",
		host, narration, describeAll(sk.Steps), strings.Join(params, "\n"))
	reply, err := llms.GenerateFromSinglePrompt(ctx, s.opts.Model, prompt, llms.WithMaxTokens(400))
	if err != nil {
		s.log.Warn().Err(err).Msg("the model could not name the recorded skill; using defaults")
		return false
	}
	var got struct {
		Name        string            `json:"name"`
		Description string            `json:"description"`
		Parameters  map[string]string `json:"parameters"`
	}
	if json.Unmarshal([]byte(jsonObject(reply)), &got) != nil || !ValidName(got.Name) || strings.TrimSpace(got.Description) == "" {
		return false
	}
	sk.Name, sk.Description = got.Name, strings.TrimSpace(got.Description)
	for i, p := range sk.Parameters {
		if d := strings.TrimSpace(got.Parameters[p.Name]); d != "" {
			sk.Parameters[i].Description = d
		}
	}
	return true
}
