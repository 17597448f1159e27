// Package app is tabrelay's composition root: from one [Config] it builds a running tabrelay,
// the relay with the agent, skills and voice served on its /api routes by the API package
// (agent/api), and the MCP server at /mcp. The tabrelay command and the end-to-end tests start
// it the same way, so what the tests drive is what users run.
package app

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/tabrelay/tabrelay/agent/adapter"
	"github.com/tabrelay/tabrelay/agent/api"
	"github.com/tabrelay/tabrelay/agent/llm"
	"github.com/tabrelay/tabrelay/agent/mcpserver"
	"github.com/tabrelay/tabrelay/agent/voice"
	"github.com/tabrelay/tabrelay/relay"
	"github.com/tabrelay/tabrelay/skills"
	"github.com/tabrelay/tabrelay/snapshot"
)

// Config is the one typed configuration of a running tabrelay (cmd/tabrelay fills it from its
// flags and environment).
type Config struct {
	// Relay configures the relay (address, secret, extension ids, hub policy). Its Logger is
	// set from Log.
	Relay relay.Options
	// Agent configures the agent; Agent.Home also holds the user's skills (<home>/skills). Its
	// Log is set from Log.
	Agent api.Options
	// Voice configures speech; Snapshot defaults to the tab's interactive snapshot through the
	// agent, and Log is set from Log.
	Voice voice.Options
	// MCP configures the MCP server at /mcp (its services are the agent's and the skills').
	MCP mcpserver.Options
	// Log is the base logger; each part logs with a "part" field (relay, agent, skills, voice).
	Log zerolog.Logger
}

// App is a running tabrelay: the relay, with the agent, the skills service and voice on its
// /api routes, and the MCP server.
type App struct {
	*relay.Server
	// Agent is the in-process agent (actions, task runner, task store).
	Agent *api.Agent
	// Skills finds, runs and records skills.
	Skills *skills.Service
	// MCP is the MCP server (served at /mcp; `tabrelay mcp` serves it on stdio).
	MCP *mcpserver.Server

	closeOnce sync.Once
	closeErr  error
}

// Start builds and starts the server: the relay, the agent over an in-process hub
// connection, the skills service over the agent's actions and runner, and voice. The server
// also closes itself when ctx ends or the agent's hub connection ends.
func Start(ctx context.Context, opts Config) (*App, error) {
	rlog := opts.Log.With().Str("part", "relay").Logger()
	opts.Relay.Logger = &rlog
	srv, err := relay.NewServer(opts.Relay)
	if err != nil {
		return nil, err
	}
	dir := ""
	if opts.Agent.Home != "" {
		dir = filepath.Join(opts.Agent.Home, "skills")
	}
	// The skills service and the agent's task runner need each other (skills run as tasks;
	// tasks offer the skill tools), so the agent builds the service with its runner.
	var sk *skills.Service
	opts.Agent.Log = opts.Log.With().Str("part", "agent").Logger()
	opts.Agent.Skills = func(p api.SkillParts) api.Skills {
		sk = skills.New(skills.Options{
			Dir:     dir,
			Browser: adapter.New(p.Actions), Actions: p.Actions,
			Runner: p.Runner, Store: p.Store, Model: opts.Agent.Model,
			Log: opts.Log.With().Str("part", "skills").Logger(),
		})
		return sk
	}
	ag, err := api.New(ctx, srv.Hub(), opts.Agent)
	if err != nil {
		_ = srv.Close()
		return nil, fmt.Errorf("start the agent: %w", err)
	}

	if opts.Voice.Snapshot == nil {
		opts.Voice.Snapshot = InteractiveSnapshot(ag)
	}
	opts.Voice.Log = opts.Log.With().Str("part", "voice").Logger()
	vs := voice.New(opts.Voice)

	large := api.Register(srv.API(), api.Services{Agent: ag, Skills: sk, Voice: vs, Log: opts.Log.With().Str("part", "api").Logger()})
	for route, n := range large { // audio uploads: every other route keeps the default
		srv.AllowBody(route, n)
	}

	mo := opts.MCP
	mo.Actions, mo.Runner, mo.Skills, mo.Log = ag.Actions(), ag.Runner(), sk, opts.Log.With().Str("part", "mcp").Logger()
	model := opts.Agent.Model
	mo.NoModel = func() error { return llm.Why(model) }
	mo.Chooser = srv.Hub()
	ms, err := mcpserver.New(mo)
	if err != nil {
		_ = ag.Close()
		_ = srv.Close()
		return nil, fmt.Errorf("start the MCP server: %w", err)
	}
	srv.Mount("/mcp", ms.Handler())
	srv.AddHealthCheck("history", func() string { return ag.Runner().History().Problem() })

	s := &App{Server: srv, Agent: ag, Skills: sk, MCP: ms}
	if err := srv.Start(ctx); err != nil {
		_ = s.Close()
		return nil, err
	}
	go func() {
		select {
		case <-ctx.Done():
		case <-ag.Done():
		}
		_ = s.closeParts()
	}()
	return s, nil
}

// closeParts stops skill recordings (their capture scripts leave the tabs) and the agent
// (running tasks end as cancelled and are saved), once.
func (s *App) closeParts() error {
	s.closeOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		s.closeErr = errors.Join(s.Skills.Close(ctx), s.Agent.Close())
	})
	return s.closeErr
}

// Close stops skill recordings, the agent, then the relay.
func (s *App) Close() error {
	perr := s.closeParts()
	return errors.Join(perr, s.Server.Close())
}

// InteractiveSnapshot reads a tab's interactive role snapshot (the voice grammar's control
// names come from its page model).
func InteractiveSnapshot(ag *api.Agent) voice.SnapshotFunc {
	return func(ctx context.Context, tab string) (*snapshot.Snapshot, error) {
		s, err := ag.Actions().Snapshot(ctx, tab, snapshot.Options{Interactive: true})
		if err != nil {
			return nil, fmt.Errorf("snapshot tab %s for the voice grammar: %w", tab, err)
		}
		return s, nil
	}
}
