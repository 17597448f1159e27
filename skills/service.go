package skills

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"
	"github.com/tmc/langchaingo/llms"

	"github.com/tabrelay/tabrelay/agent/actions"
	"github.com/tabrelay/tabrelay/agent/llm"
	"github.com/tabrelay/tabrelay/agent/task"
)

// Options configure a Service.
type Options struct {
	// Dir is the folder of the user's skills (<home>/skills); "" for bundled skills only.
	Dir string
	// Browser reads and acts on tabs (agent/adapter over the action service).
	Browser task.Browser
	// Actions is the action service, needed to record demonstrations (nil: recording is
	// unavailable).
	Actions *actions.Service
	// Runner is the agent's task runner: steps that no longer fit are handed to it (nil: no
	// handover; a step that does not fit fails the run with what to do).
	Runner *task.Runner
	// Store records runs as tasks (the agent's task store; nil: not recorded).
	Store task.Store
	// Model takes parameters from requests and names recorded skills from the narration (nil:
	// model-free fallbacks).
	Model llms.Model
	// Log receives the service's logs (never page contents or parameter values at info).
	Log zerolog.Logger
	// ResolveTimeout is how long a step waits for its target to appear (default 3 s).
	ResolveTimeout time.Duration
	// ExpectTimeout is how long a step's expected effect may take (default 5 s).
	ExpectTimeout time.Duration
	// Debounce is how long typing must pause before the recorder takes the field's value
	// (default 600 ms; the value is also taken when focus or the page moves on).
	Debounce time.Duration
}

// Service finds, runs and records skills. It is safe for concurrent use.
type Service struct {
	opts Options
	lib  *Library
	log  zerolog.Logger

	mu         sync.Mutex
	recordings map[string]*recording  // by tab id
	tabLocks   map[string]*sync.Mutex // runs on one tab take turns
	drafts     []RunDraft             // the latest healed drafts, newest last (see RunDraft)
}

// RunDraft is the updated SKILL.md a run offered because the model did a step differently
// than written (RunResult.Draft), kept for the run's task so that background runs (a command
// naming a skill) can offer it too: GET /api/skills/drafts/{taskId}.
type RunDraft struct {
	TaskID   string `json:"taskId"`
	Skill    string `json:"skill"`
	Markdown string `json:"markdown"`
}

// maxDrafts bounds the healed drafts kept in memory.
const maxDrafts = 20

func (s *Service) keepDraft(d RunDraft) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.drafts = append(s.drafts, d)
	if len(s.drafts) > maxDrafts {
		s.drafts = slices.Delete(s.drafts, 0, len(s.drafts)-maxDrafts)
	}
}

// Draft returns the healed draft of the run recorded as task taskID, if it offered one (only
// the latest runs' drafts are kept, in memory).
func (s *Service) Draft(taskID string) (RunDraft, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, d := range s.drafts {
		if d.TaskID == taskID {
			return d, true
		}
	}
	return RunDraft{}, false
}

// tabLock returns the lock that serializes skill runs on tab.
func (s *Service) tabLock(tab string) *sync.Mutex {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.tabLocks[tab]
	if m == nil {
		m = &sync.Mutex{}
		s.tabLocks[tab] = m
	}
	return m
}

// Close stops the recordings in progress (their drafts are dropped) so that no capture script
// or binding is left in the user's tabs.
func (s *Service) Close(ctx context.Context) error {
	var errs []error
	for _, r := range s.Recordings() {
		if _, err := s.StopRecording(ctx, r.Tab, ""); err != nil && !errors.Is(err, ErrNothingRecorded) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// New returns a Service over the bundled skills and those in opts.Dir.
func New(opts Options) *Service {
	if v := reflect.ValueOf(opts.Store); opts.Store != nil && v.Kind() == reflect.Pointer && v.IsNil() {
		opts.Store = nil // a nil *store.Store (no home) means no store
	}
	if opts.ResolveTimeout <= 0 {
		opts.ResolveTimeout = 3 * time.Second
	}
	if opts.ExpectTimeout <= 0 {
		opts.ExpectTimeout = 5 * time.Second
	}
	if opts.Debounce <= 0 {
		opts.Debounce = 600 * time.Millisecond
	}
	return &Service{opts: opts, lib: NewLibrary(opts.Dir, opts.Log), log: opts.Log,
		recordings: map[string]*recording{}, tabLocks: map[string]*sync.Mutex{}}
}

// Library returns the service's skill library.
func (s *Service) Library() *Library { return s.lib }

// Find ranks the skills for a request on the page at pageURL (see Library.Rank).
func (s *Service) Find(request, pageURL string) []Match { return s.lib.Rank(request, pageURL) }

// ErrNotNamed is returned by Do when the request names no skill.
var ErrNotNamed = errors.New("the request names no skill")

// Do runs the skill a request names outright ("run site-search for blue mugs"), taking its
// parameters from the request. A request that names no skill gives an error wrapping
// ErrNotNamed (the caller then ranks skills with Find or hands the request to the agent).
func (s *Service) Do(ctx context.Context, request, tab string) (*RunResult, error) {
	sk, ok := s.lib.Named(request)
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrNotNamed, request)
	}
	return s.RunSkill(ctx, sk, RunRequest{Tab: tab, Request: request})
}

// StartNamed starts the skill that request plainly names when it applies to the page at
// pageURL ("run site-search for blue mugs", "site-search query=mugs", "use fill form with
// Name: Ada"), on tab, for the agent's commands. The skill's parameters are taken from the
// request (see RunRequest.Request), then the run goes on in the background (see StartSkill)
// and its task is returned at once. ok is false, and nothing is done, when the request names
// no skill for the page (see plainlyNamed: naming one in passing does not count). An error
// refuses the run before anything happens: a *MissingParamsError saying how to name the
// parameters in the request, or another reason. Risky steps ask the person when they come
// (approve: see RunRequest.Approve).
func (s *Service) StartNamed(ctx context.Context, request, tab, pageURL string, approve bool) (t *task.Task, ok bool, err error) {
	var sk *Skill
	for _, m := range s.lib.Rank(request, pageURL) {
		if m.Named && plainlyNamed(m.Skill, request) && (sk == nil || len(m.Skill.Name) > len(sk.Name)) {
			sk = m.Skill
		}
	}
	if sk == nil {
		return nil, false, nil
	}
	t, err = s.StartSkill(ctx, sk, RunRequest{Tab: tab, Request: request, Approve: approve})
	var mp *MissingParamsError
	if errors.As(err, &mp) {
		var pairs []string
		for _, p := range mp.Missing {
			v := "…"
			if p.Example != "" && !p.Secret {
				v = p.Example
			}
			if strings.ContainsAny(v, " \t") {
				v = "'" + v + "'"
			}
			pairs = append(pairs, p.Name+"="+v)
		}
		it := "it"
		if len(pairs) > 1 {
			it = "them"
		}
		mp.How = fmt.Sprintf(`Name %s in the request, e.g. "run %s %s".`, it, sk.Name, strings.Join(pairs, " "))
	}
	if err != nil {
		s.log.Debug().Str("skill", sk.Name).Err(err).Msg("a request named a skill that cannot run as asked")
	}
	return t, true, err
}

// paramsFromRequest fills missing parameters from the user's words: by the model when one is
// configured (one call), else from name=value pairs and the text after the skill's name.
// calls is the number of model calls made (0 or 1).
func (s *Service) paramsFromRequest(ctx context.Context, sk *Skill, request string, missing []Param) (out map[string]string, calls int) {
	out = paramsInText(sk, request, missing)
	if !llm.Ready(s.opts.Model) || !saysMore(sk, request) {
		return out, 0
	}
	var need []string
	for _, p := range missing {
		if _, ok := out[p.Name]; !ok {
			need = append(need, fmt.Sprintf("- %s: %s (e.g. %q)", p.Name, p.Description, p.Example))
		}
	}
	if len(need) == 0 {
		return out, 0
	}
	prompt := fmt.Sprintf("The user asked: %q\nThis runs the browser skill %q (%s), which needs these parameters:\n%s\n"+
		"Reply with only a JSON object mapping each parameter name to the value the user gave. Leave out parameters the user did not give; never invent values.",
		request, sk.Name, sk.Description, strings.Join(need, "\n"))
	reply, err := llms.GenerateFromSinglePrompt(ctx, s.opts.Model, prompt, llms.WithMaxTokens(300))
	if err != nil {
		s.log.Warn().Err(err).Str("skill", sk.Name).Msg("the model could not take parameters from the request")
		return out, 1
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(jsonObject(reply)), &got); err != nil {
		s.log.Debug().Err(err).Msg("the model's parameters are not a JSON object")
		return out, 1
	}
	for _, p := range missing {
		if v, ok := got[p.Name]; ok && v != nil && fmt.Sprint(v) != "" {
			if _, have := out[p.Name]; !have {
				out[p.Name] = fmt.Sprint(v)
			}
		}
	}
	return out, 1
}

// saysMore reports whether the request has words besides the skill's name and filler ("run
// site-search" has none): only then can a model find parameter values in it.
func saysMore(sk *Skill, request string) bool {
	name := map[string]bool{"do": true, "start": true}
	for _, w := range words(strings.ReplaceAll(sk.Name, "-", " ")) {
		name[w] = true
	}
	for _, w := range words(strings.ReplaceAll(request, "-", " ")) {
		if !name[w] {
			return true
		}
	}
	return false
}

// jsonObject cuts the first {...} out of a model reply (which may wrap it in prose or fences).
func jsonObject(s string) string {
	i, j := strings.Index(s, "{"), strings.LastIndex(s, "}")
	if i < 0 || j < i {
		return "{}"
	}
	return s[i : j+1]
}
