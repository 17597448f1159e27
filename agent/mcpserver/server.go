// Package mcpserver is tabrelay's Model Context Protocol server: the user's shared tabs, the
// agent and the skills as MCP tools, for agents that speak MCP (Claude Code, Cursor, VS Code,
// …). It is one more door to the action registry (agent/actions): every browser tool is
// derived from a registered action kind — its name, description and JSON Schema — and runs
// through the same action service as /api, the CLI and the model's own tools.
//
// The server is transport-agnostic ([Server.MCP] returns an *mcp.Server of the official Go SDK,
// github.com/modelcontextprotocol/go-sdk); [Server.Handler] serves it over the streamable HTTP
// transport (mounted at /mcp behind the relay's Host, Origin and secret checks), and
// `tabrelay mcp` serves it over stdio.
//
// Small by default: the core tool set ([Core]) keeps tools/list under 2,000 tokens; the
// option Tools ("all", or names) offers more. After an action, the result carries what changed
// in the page (added, removed and changed elements of the page model since the session last saw
// it: [snapshot.Compare]), not a whole snapshot,
// unless the call asks for one ("snapshot": true). Page-level failures are tool errors (isError
// with text saying what to do), never protocol errors.
package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"

	"github.com/tabrelay/tabrelay/agent/actions"
	"github.com/tabrelay/tabrelay/agent/actions/gate"
	"github.com/tabrelay/tabrelay/agent/task"
	"github.com/tabrelay/tabrelay/relay"
	"github.com/tabrelay/tabrelay/skills"
	"github.com/tabrelay/tabrelay/snapshot"
)

// Options configure the MCP server.
type Options struct {
	// Actions runs the browser tools (required).
	Actions *actions.Service
	// Runner runs agent tasks (run_task); nil leaves the tool out.
	Runner *task.Runner
	// Skills lists and runs skills (skills, run_skill); nil leaves those tools out.
	Skills *skills.Service
	// NoModel says why no language model is available now (nil when one is; the model may
	// change while the server runs): run_task answers with it. Nil means a model is always
	// there.
	NoModel func() error
	// AllowEvaluate offers the evaluate tool (JavaScript in the page), which is otherwise not
	// offered: `tabrelay serve --mcp-allow-evaluate`.
	AllowEvaluate bool
	// Log receives the server's logs (never page contents at info).
	Log zerolog.Logger
	// MaxSessions caps the MCP sessions open at once (default DefaultMaxSessions): a new
	// session beyond it ends the one idle the longest.
	MaxSessions int
	// IdleTimeout ends a session over HTTP that made no request for this long (default
	// DefaultIdleTimeout).
	IdleTimeout time.Duration
	// Chooser, when set, lets a tool call that needs a tab while none is shared ask the person
	// to pick one (the extension's tab chooser) and wait for the pick, up to ChooseWait; nil
	// answers such a call at once with how to share a tab.
	Chooser TabChooser
	// ChooseWait bounds that wait (default DefaultChooseWait).
	ChooseWait time.Duration
}

// Defaults of Options.MaxSessions and Options.IdleTimeout.
const (
	DefaultMaxSessions = 64
	DefaultIdleTimeout = 30 * time.Minute
)

// Core names the tools offered by default: enough to read and drive a page, see it, run the
// agent and skills, in under 2,000 tokens of tools/list.
var Core = []string{"tabs", "switch_tab", "new_tab", "snapshot", "find", "click", "type", "fill", "select", "press",
	"navigate", "back", "wait", "dialog", "screenshot", "console", "run_task", "skills", "run_skill"}

// Server builds MCP servers (one per tool selection) over the agent's services, and keeps each
// MCP session's current tab and last outline.
type Server struct {
	opts  Options
	tools []*tool // every tool this server can offer, sorted by name

	mu       sync.Mutex
	servers  map[string]*mcp.Server // by canonical selection
	sessions map[*mcp.ServerSession]*session
	// live are the initialized sessions and when each last made a request (for the cap).
	live map[*mcp.ServerSession]time.Time
}

// New returns the MCP server over opts' services.
func New(opts Options) (*Server, error) {
	if opts.Actions == nil {
		return nil, fmt.Errorf("mcpserver: the action service is required")
	}
	if opts.MaxSessions <= 0 {
		opts.MaxSessions = DefaultMaxSessions
	}
	if opts.IdleTimeout <= 0 {
		opts.IdleTimeout = DefaultIdleTimeout
	}
	if opts.ChooseWait <= 0 {
		opts.ChooseWait = DefaultChooseWait
	}
	s := &Server{opts: opts, servers: map[string]*mcp.Server{}, sessions: map[*mcp.ServerSession]*session{},
		live: map[*mcp.ServerSession]time.Time{}}
	ts, err := s.catalogue()
	if err != nil {
		return nil, err
	}
	sort.Slice(ts, func(i, j int) bool { return ts[i].def.Name < ts[j].def.Name })
	s.tools = ts
	return s, nil
}

// Names returns the names of every tool the server can offer.
func (s *Server) Names() []string {
	out := make([]string, len(s.tools))
	for i, t := range s.tools {
		out[i] = t.def.Name
	}
	return out
}

// Select resolves a tool selection: empty or "core" for [Core], "all" for every tool, or a
// comma-separated list of names added to the core set ("core" may be left out: "hover,drag"
// is the core set plus hover and drag; "only:" before the list offers just those). An unknown
// name is an error listing the known ones.
func (s *Server) Select(spec string) ([]string, error) {
	spec = strings.TrimSpace(spec)
	known := s.Names()
	if spec == "all" {
		return known, nil
	}
	var out []string
	list, only := strings.CutPrefix(spec, "only:")
	if !only {
		for _, n := range Core {
			if slices.Contains(known, n) {
				out = append(out, n)
			}
		}
	}
	for _, n := range strings.Split(list, ",") {
		n = strings.TrimSpace(n)
		if n == "" || n == "core" {
			continue
		}
		if !slices.Contains(known, n) {
			return nil, fmt.Errorf("unknown MCP tool %q: use \"all\" or names among %s", n, strings.Join(known, ", "))
		}
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out, nil
}

// MCP returns the MCP server offering the tools named by spec (see [Server.Select]); servers
// are built once per selection.
func (s *Server) MCP(spec string) (*mcp.Server, error) {
	names, err := s.Select(spec)
	if err != nil {
		return nil, err
	}
	key := strings.Join(names, ",")
	s.mu.Lock()
	defer s.mu.Unlock()
	if srv := s.servers[key]; srv != nil {
		return srv, nil
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "tabrelay", Title: "tabrelay: your own browser tabs", Version: relay.Version},
		&mcp.ServerOptions{Instructions: instructions, Capabilities: &mcp.ServerCapabilities{}})
	for _, t := range s.tools {
		if slices.Contains(names, t.def.Name) {
			srv.AddTool(t.def, s.handler(t))
		}
	}
	s.servers[key] = srv
	return srv, nil
}

// instructions tell the client's model how the tools fit together.
const instructions = `tabrelay drives the browser tabs the user shared (their own logged-in browser). ` +
	`Call snapshot to read the page as an outline with element refs (e12), then act with those refs. ` +
	`After an action the result lists what changed in the outline (+ added, - removed, ~ changed; nothing when nothing did), or after a navigation a summary of the new page ("# " lines; snapshot reads its outline); pass "snapshot": true for the whole new outline. ` +
	`A ref from an older page fails: take a new snapshot. Tabs are listed by tabs and chosen with switch_tab.`

// Handler serves the MCP server over the streamable HTTP transport. The query parameter
// tools selects the tool set as [Server.Select] does (default: the core set). Mount it behind
// the relay's Host, Origin and secret checks (relay.Server.Mount).
func (s *Server) Handler() http.Handler {
	h := mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
		srv, err := s.MCP(r.URL.Query().Get("tools"))
		if err != nil {
			return nil
		}
		return srv
	}, &mcp.StreamableHTTPOptions{SessionTimeout: s.opts.IdleTimeout})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := s.Select(r.URL.Query().Get("tools")); err != nil {
			http.Error(w, "tabrelay: "+err.Error(), http.StatusBadRequest)
			return
		}
		h.ServeHTTP(w, r)
		if r.Header.Get("Mcp-Session-Id") == "" {
			s.Admit() // a new session may have begun
		}
	})
}

// session is one MCP session's state: the tab it works on and the page model it last saw of
// each tab (the "before" of the next action's diff).
type session struct {
	mu   sync.Mutex
	tab  string
	seen map[string]*snapshot.Snapshot
	// told is the page summary (snapshot.Snapshot.Header) last given of each tab, which a
	// snapshot of the same page need not repeat.
	told map[string]string
	// bound is the session's boundary for the safety gate: the client's model's words name
	// no site, so its sites are the tab's it started on and those the person approved.
	bound *gate.Task
}

// Admit counts the sessions the MCP servers hold and, beyond MaxSessions, ends those idle the
// longest, so that sessions (and their memory) stay bounded however many clients connect.
// The HTTP handler calls it after each request; a stdio server has one session.
func (s *Server) Admit() {
	s.mu.Lock()
	servers := make([]*mcp.Server, 0, len(s.servers))
	for _, srv := range s.servers {
		servers = append(servers, srv)
	}
	s.mu.Unlock()
	for _, srv := range servers {
		for ss := range srv.Sessions() {
			s.admit(ss)
		}
	}
}

// admit counts session ss (once) and ends the sessions idle the longest beyond MaxSessions.
func (s *Server) admit(ss *mcp.ServerSession) {
	s.mu.Lock()
	if _, ok := s.live[ss]; ok {
		s.mu.Unlock()
		return
	}
	s.live[ss] = time.Now()
	var evict []*mcp.ServerSession
	for len(s.live) > s.opts.MaxSessions {
		var oldest *mcp.ServerSession
		for o, t := range s.live {
			if o != ss && (oldest == nil || t.Before(s.live[oldest])) {
				oldest = o
			}
		}
		if oldest == nil {
			break
		}
		delete(s.live, oldest)
		delete(s.sessions, oldest)
		evict = append(evict, oldest)
	}
	s.mu.Unlock()
	go func() {
		_ = ss.Wait()
		s.mu.Lock()
		delete(s.live, ss)
		delete(s.sessions, ss)
		s.mu.Unlock()
	}()
	for _, o := range evict {
		s.opts.Log.Info().Int("max", s.opts.MaxSessions).Msg("mcp: too many sessions; ending the one idle the longest")
		_ = o.Close()
	}
}

// touch records a request of session ss (for the cap's "idle the longest").
func (s *Server) touch(ss *mcp.ServerSession) {
	if ss == nil {
		return
	}
	s.mu.Lock()
	if _, ok := s.live[ss]; ok {
		s.live[ss] = time.Now()
	}
	s.mu.Unlock()
}

// LiveSessions is how many MCP sessions are open.
func (s *Server) LiveSessions() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.live)
}

// session returns ss's state, made on first use and dropped when the session ends.
func (s *Server) session(ss *mcp.ServerSession) *session {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st := s.sessions[ss]; st != nil {
		return st
	}
	st := &session{seen: map[string]*snapshot.Snapshot{}, told: map[string]string{}, bound: gate.NewTask("", nil)}
	s.sessions[ss] = st
	if ss != nil {
		go func() {
			_ = ss.Wait()
			s.mu.Lock()
			delete(s.sessions, ss)
			s.mu.Unlock()
		}()
	}
	return st
}

func (st *session) currentTab() string {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.tab
}

func (st *session) setTab(id string) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.tab = id
}

// lastSeen is the page model of tab the session last saw (nil if none).
func (st *session) lastSeen(tab string) *snapshot.Snapshot {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.seen[tab]
}

// saw records snap as what the session last saw of tab.
func (st *session) saw(tab string, snap *snapshot.Snapshot) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.seen[tab] = snap
}

// tell records header as the page summary the session was given of tab; heard reports whether
// it was given header last.
func (st *session) tell(tab, header string) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.told[tab] = header
}

func (st *session) heard(tab, header string) bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.told[tab] == header
}

// call is one tool call: its context, session state and arguments.
type call struct {
	srv  *Server
	ctx  context.Context
	req  *mcp.CallToolRequest
	st   *session
	args []byte
}

// tool is one offered tool: its definition and how it runs.
type tool struct {
	def *mcp.Tool
	run func(s *Server, c *call) (*mcp.CallToolResult, error)
}

// handler wraps a tool's run: its errors become tool errors a model can act on.
func (s *Server) handler(t *tool) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		s.touch(req.Session)
		st := s.session(req.Session)
		c := &call{srv: s, ctx: gate.WithTask(ctx, st.bound), req: req, st: st, args: req.Params.Arguments}
		res, err := t.run(s, c)
		if errors.Is(err, actions.ErrNoTab) {
			// no tab shared: the person may pick one now, and the call goes on with it
			if ok, werr := s.waitForChoice(c, t.def.Name); ok {
				res, err = t.run(s, c)
			} else if werr != nil {
				err = werr
			}
		}
		if err != nil {
			s.opts.Log.Debug().Str("tool", t.def.Name).Err(err).Msg("mcp tool error")
			return toolError(err), nil
		}
		return res, nil
	}
}

// text is a result of one text block.
func text(format string, args ...any) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf(format, args...)}}}
}
