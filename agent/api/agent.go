// Package api is tabrelay's HTTP API: every route under /api (tabs, snapshots, actions and
// screenshots of shared tabs; commands and tasks with live Server-Sent Events, confirmation and
// reports; skills; voice) is served here and only here, with one error shape
// ({"error": "…", …details}, [ErrorBody]), one JSON casing (camelCase) and one request decoder
// that refuses unknown fields (internal/reqbody). API.md beside this file lists every route
// with its request and answer shapes; a test fails when a registered route is missing from it
// or it lists one that does not exist.
//
// The package also holds the in-process agent ([Agent]): one more client of the relay hub,
// connected through the hub's in-process pipe (relay.Hub.Pipe), so it sees exactly what any
// CDP client sees, the tabs the user shared; GET /api/tabs lists them through that same
// connection. The skills and voice services stay in their packages and are served through
// their Go methods.
//
//	srv, _ := relay.NewServer(opts)
//	var sk *skills.Service
//	ag, _ := api.New(ctx, srv.Hub(), api.Options{Home: home, Model: model,
//		Skills: func(p api.SkillParts) api.Skills {
//			sk = skills.New(skills.Options{Runner: p.Runner, Actions: p.Actions, Store: p.Store, …})
//			return sk
//		}})
//	for route, n := range api.Register(srv.API(), api.Services{Agent: ag, Skills: sk, Voice: voice.New(vopts)}) {
//		srv.AllowBody(route, n)
//	}
//	_ = srv.Start(ctx)
//	defer ag.Close()
//
// Errors use 4xx statuses for bad input: 400 for malformed requests, unknown action kinds
// (listing the valid ones), missing text or unknown refs, 404 for unknown tabs, tasks and
// skills (naming the id), 409 for stale refs or tasks not in the right state, 422 for actions
// the page refused, and 503 when a language model is needed but none is configured (with the
// text saying how to configure one) or a voice engine is missing.
package api

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/rs/zerolog"
	"github.com/tmc/langchaingo/llms"

	"github.com/tabrelay/tabrelay/agent/actions"
	"github.com/tabrelay/tabrelay/agent/actions/gate"
	"github.com/tabrelay/tabrelay/agent/adapter"
	"github.com/tabrelay/tabrelay/agent/llm"
	"github.com/tabrelay/tabrelay/agent/task"
	"github.com/tabrelay/tabrelay/agent/task/taskstore"
	"github.com/tabrelay/tabrelay/internal/cdpclient"
	"github.com/tabrelay/tabrelay/relay"
	"github.com/tabrelay/tabrelay/skills"
)

// Options configure the agent.
type Options struct {
	// Home is the tabrelay home; tasks are stored in its SQLite database. Empty keeps tasks in
	// memory only.
	Home string
	// Model is the language model (nil, or a *llm.Switch holding none: the fast path and
	// everything without a model still work; the rest answers with how to configure one). A
	// *llm.Switch lets the model change while the server runs (Models).
	Model llms.Model
	// Models, when set, serves the model settings of the options page (/api/model): it sets
	// Model, which must then be its Switch.
	Models *llm.Source
	// ModelName is recorded on tasks (llm.Config.String()).
	ModelName string
	// ImageMode and Vision configure screenshots for vision models.
	ImageMode llm.ImageMode
	Vision    bool
	// Stream streams the model's prose to task events (type "text") while it is written.
	Stream bool
	// AllowedSites, when not empty, limits page-changing actions of tasks to these hosts (and
	// their subdomains).
	AllowedSites []string
	// AllowFileURLs lets navigate and open load file: URLs (actions.Options.AllowFileURLs).
	AllowFileURLs bool
	// UploadDirs are folders whose files the agent may upload without asking
	// (gate.Options.UploadDirs); Home is never uploaded.
	UploadDirs []string
	// Critic is the alignment check the safety gate asks about every step of a task that
	// changes something (gate.Options.Critic; nil: the rules alone).
	Critic gate.Critic
	// MaxSteps and TaskTimeout bound tasks (task.Options defaults when zero).
	MaxSteps    int
	TaskTimeout time.Duration
	// AskTimeout and HandoverTimeout bound a task's wait for the user's answer to its
	// question and for the person's Continue after a hand-over (task.Options defaults, 5
	// minutes, when zero).
	AskTimeout      time.Duration
	HandoverTimeout time.Duration
	// ActionTimeout bounds one browser action (actions.Options default when zero).
	ActionTimeout time.Duration
	// Skills, when not nil, builds the skills service from the agent's parts (New calls it
	// once, while it builds the task runner, which needs the service as its toolbox while the
	// service needs the runner): tasks offer its tools to the model, and POST /api/command and
	// POST /api/tasks run a skill the request plainly names ("run site-search for blue mugs")
	// at once, with no model call when the page is as the skill expects. It may return nil.
	Skills func(SkillParts) Skills
	// CommandWait is how long POST /api/command waits for the command to end before answering
	// 202 with the task id (default 10 s; ?wait=0 answers at once).
	CommandWait time.Duration
	// Log receives the agent's logs (never page contents or secrets at info).
	Log zerolog.Logger
}

// Agent is the in-process agent of one relay server: its hub connection, the action service,
// the task runner and the task store.
type Agent struct {
	client *cdpclient.Client
	svc    *actions.Service
	runner *task.Runner
	store  *taskstore.Store
	opts   Options
	log    zerolog.Logger

	// waitTarget waits, during a gap in the tabs (relay.Hub.WaitTarget), for a target to come
	// back, and reports whether it did.
	waitTarget func(ctx context.Context, targetID string) bool
	// offerTab asks the extension to offer the person a choice of tab when none is shared
	// (relay.Hub.OfferTab).
	offerTab func(who string) bool

	skills Skills // nil when Options.Skills is nil

	closeOnce sync.Once
	closeErr  error
}

// New connects the agent to hub through an in-process pipe, opens the task store under
// opts.Home and builds the task runner. Register its routes before the server starts; Close it
// on shutdown.
func New(ctx context.Context, hub *relay.Hub, opts Options) (a *Agent, err error) {
	if opts.CommandWait <= 0 {
		opts.CommandWait = 10 * time.Second
	}
	a = &Agent{opts: opts, log: opts.Log, waitTarget: hub.WaitTarget, offerTab: hub.OfferTab}
	defer func() {
		if err != nil {
			_ = a.Close()
		}
	}()
	pipe, err := hub.Pipe("agent")
	if err != nil {
		return nil, fmt.Errorf("connect the agent to the relay hub: %w", err)
	}
	a.client = cdpclient.New(pipe)
	a.svc = actions.New(a.client, actions.Options{Timeout: opts.ActionTimeout, AllowFileURLs: opts.AllowFileURLs, Log: opts.Log,
		Gate: gate.New(gate.Options{Home: opts.Home, UploadDirs: opts.UploadDirs, Critic: opts.Critic})})
	var st task.Store
	if opts.Home != "" {
		if a.store, err = taskstore.OpenHome(ctx, opts.Home); err != nil {
			return nil, fmt.Errorf("open the task database in %s: %w", opts.Home, err)
		}
		st = a.store
	}
	a.runner = task.NewRunner(task.Options{
		Model:           opts.Model,
		ModelName:       opts.ModelName,
		ImageMode:       opts.ImageMode,
		Vision:          opts.Vision,
		Browser:         adapter.New(a.svc),
		Hold:            hub.HoldWhile,
		Store:           st,
		Log:             opts.Log,
		MaxSteps:        opts.MaxSteps,
		Timeout:         opts.TaskTimeout,
		AskTimeout:      opts.AskTimeout,
		HandoverTimeout: opts.HandoverTimeout,
		Stream:          opts.Stream,
		AllowedSites:    opts.AllowedSites,
		Toolbox: func(r *task.Runner) task.Toolbox {
			if opts.Skills == nil {
				return nil
			}
			a.skills = opts.Skills(SkillParts{Actions: a.svc, Runner: r, Store: st})
			return a.skills // a nil Skills is a nil Toolbox
		},
	})
	if why := llm.Why(opts.Model); why != nil {
		// the server's banner says where to choose a model; the log says only why there is none
		ev := a.log.Info()
		if nce := (*llm.NotConfiguredError)(nil); errors.As(why, &nce) {
			ev = ev.Str("reason", nce.Reason)
		} else {
			ev = ev.Str("reason", firstLine(why.Error()))
		}
		ev.Msg("agent started without a language model: simple commands work, tasks need one")
	} else {
		a.log.Info().Str("model", llm.Name(opts.Model, opts.ModelName)).Msg("agent started")
	}
	return a, nil
}

// Skills is the skills service as the agent uses it; *skills.Service satisfies it.
type Skills interface {
	// Toolbox offers list_skills, read_skill and run_skill to the model in every task.
	task.Toolbox
	// StartNamed starts the skill that request plainly names, when one applies to the page at
	// pageURL, on tab, and returns its task at once (one of the runner's tasks: Wait, Cancel
	// and the task's events work as for any task). ok is false, with nothing done, when the
	// request names no skill for the page. An error refuses the run before anything happens:
	// a *skills.MissingParamsError answers 400 listing the missing parameters. approve
	// approves the steps the skill names in its own words (skills.RunRequest.Approve).
	StartNamed(ctx context.Context, request, tab, pageURL string, approve bool) (t *task.Task, ok bool, err error)
	// DraftFromTask drafts a skill from a task that succeeded, to review and save like a
	// recording's draft; it fails wrapping skills.ErrNotSavable when the task cannot be kept.
	DraftFromTask(ctx context.Context, t *task.Task) (*skills.Draft, error)
}

// SkillParts are the agent's parts the skills service is built from ([Options.Skills]).
type SkillParts struct {
	// Actions is the agent's action service (skills read pages and record demonstrations
	// through it).
	Actions *actions.Service
	// Runner is the agent's task runner: skills run as its tasks and hand steps to it.
	Runner *task.Runner
	// Store is the task database (nil without a home).
	Store task.Store
}

// skillsService returns the skills service (nil when none).
func (a *Agent) skillsService() Skills { return a.skills }

// Runner is the agent's task runner.
func (a *Agent) Runner() *task.Runner { return a.runner }

// Actions is the agent's action service.
func (a *Agent) Actions() *actions.Service { return a.svc }

// Store is the task database (nil without a home).
func (a *Agent) Store() *taskstore.Store { return a.store }

// Done is closed when the agent's connection to the hub has ended (the relay closed).
func (a *Agent) Done() <-chan struct{} { return a.client.Done() }

// Close cancels running tasks (they are recorded as cancelled), detaches from the tabs and
// closes the hub connection and the database. It is safe to call more than once.
func (a *Agent) Close() error {
	a.closeOnce.Do(func() { a.closeErr = a.close() })
	return a.closeErr
}

func (a *Agent) close() error {
	var errs []error
	if a.runner != nil {
		if err := a.runner.Shutdown(context.Background()); err != nil {
			errs = append(errs, fmt.Errorf("close the task runner: %w", err))
		}
	}
	if a.svc != nil {
		select {
		case <-a.client.Done():
		default:
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			if err := a.svc.Close(ctx); err != nil && !errors.Is(err, cdpclient.ErrClosed) && ctx.Err() == nil {
				errs = append(errs, fmt.Errorf("detach the agent from the tabs: %w", err))
			}
			cancel()
		}
	}
	if a.client != nil {
		_ = a.client.Close()
	}
	if a.store != nil {
		if err := a.store.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close the task database: %w", err))
		}
	}
	return errors.Join(errs...)
}

func firstLine(s string) string {
	for i, r := range s {
		if r == '\n' {
			return s[:i]
		}
	}
	return s
}
