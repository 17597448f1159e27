package config

import (
	"strings"
	"time"
)

// The settings below are read once, in cmd/tabrelay, from the command line and the
// environment; packages take what they need as options. The struct tags are the command line
// parser's (github.com/alecthomas/kong): the flag's name, its environment fallback (env:), its
// default and its help. A variable that is set but empty counts as unset (see Normalize).

// Common are the settings every command takes.
type Common struct {
	Addr     string `name:"addr" env:"TABRELAY_ADDR" default:"${default_addr}" help:"server address host:port (port 0 picks a free port)"`
	Home     string `name:"home" env:"TABRELAY_HOME" help:"directory for the secret, database and user skills (default: <user config dir>/tabrelay)"`
	LogLevel string `name:"log-level" env:"TABRELAY_LOG_LEVEL" default:"info" help:"log level: debug, info, warn, error"`
}

// Normalize fills what was left empty (an empty variable, an empty flag) with its default.
func (c *Common) Normalize() {
	if strings.TrimSpace(c.Addr) == "" {
		c.Addr = DefaultAddr
	}
	if strings.TrimSpace(c.Home) == "" {
		c.Home = DefaultHome()
	}
	if strings.TrimSpace(c.LogLevel) == "" {
		c.LogLevel = "info"
	}
}

// Client are the settings of the commands that talk to a running server.
type Client struct {
	Common `embed:""`
	// Tab is the shared tab to act on ("": the most recently shared or focused).
	Tab string `name:"tab" placeholder:"targetId" help:"the shared tab's targetId (default: the tab most recently shared or focused; tabrelay tabs lists them)"`
}

// Server are the server's own settings, for serve and for browser (which may start one).
type Server struct {
	Common             `embed:""`
	AllowNonLoopback   bool          `name:"dangerously-listen-non-loopback" env:"TABRELAY_DANGEROUSLY_LISTEN_NON_LOOPBACK" help:"allow a non-loopback --addr: anyone who reaches it with the secret controls your browser"`
	AllowCloseUserTabs bool          `name:"allow-close-user-tabs" env:"TABRELAY_ALLOW_CLOSE_USER_TABS" help:"let clients close tabs you shared yourself"`
	TrustSameUser      bool          `name:"trust-same-user" env:"TABRELAY_TRUST_SAME_USER" help:"Linux: let programs running as your own OS user connect over loopback without the secret (requests from a browser still need it); see SECURITY.md"`
	ExtensionIDs       string        `name:"extension-ids" help:"extra allowed extension ids, comma separated (also TABRELAY_EXTENSION_IDS)"`
	Vision             bool          `name:"agent-vision" env:"TABRELAY_LLM_VISION" help:"the model reads images: offer the agent the screenshot tool"`
	ClientQueueMB      int           `name:"client-queue-budget-mb" default:"512" help:"memory, in MiB, for the messages waiting to be written to all CDP clients together; past it the slowest reader (largest queue) is disconnected with 1008"`
	MaxUploadMB        int64         `name:"max-upload-mb" env:"TABRELAY_MAX_UPLOAD_MB" default:"50" help:"when the extension may not read local files, the relay hands uploaded files to the page itself: at most this many MiB per upload"`
	DetachAfter        time.Duration `name:"detach-after" env:"TABRELAY_DETACH_AFTER" default:"30s" help:"with the extension's \"debugger only while something drives\" setting on: how long a shared tab keeps the debugger attached after its last client left"`
	AllowedSites       []string      `name:"agent-allowed-sites" env:"TABRELAY_AGENT_ALLOWED_SITES" help:"comma-separated hosts where the agent's tasks may open pages and change them (default: every site, asking before a task goes beyond the site it started on and the sites its request names); reading stays free"`
	MCPAllowEvaluate   bool          `name:"mcp-allow-evaluate" env:"TABRELAY_MCP_ALLOW_EVALUATE" help:"offer MCP clients the evaluate tool (JavaScript in the shared tabs); off by default"`
	AgentUploadDirs    []string      `name:"agent-upload-dir" env:"TABRELAY_AGENT_UPLOAD_DIRS" help:"folders whose files the agent (model, skills, MCP) may upload without asking (repeat or comma-separate); other files need the full path in your request, and tabrelay's home and your home's dot-files never go"`
	MCPMaxSessions     int           `name:"mcp-max-sessions" env:"TABRELAY_MCP_MAX_SESSIONS" default:"64" help:"at most this many MCP sessions at once; a new one ends the longest idle"`
	MCPIdleTimeout     time.Duration `name:"mcp-idle-timeout" env:"TABRELAY_MCP_IDLE_TIMEOUT" default:"30m" help:"an MCP session with no request for this long ends"`
	TraceLegs          bool          `name:"trace-legs" env:"TABRELAY_TRACE_LEGS" hidden:"" help:"record each CDP command's times through the relay and the extension and serve them at /debug/legs (the benchmark's per-leg mode)"`
	Critic             string        `name:"agent-critic" env:"TABRELAY_CRITIC" default:"agent" placeholder:"off|agent|provider:model" help:"the alignment check: a second model call that reviews each step of a task that changes something, seeing your request and the step's description, never the page's text, and asks you when the step is not plainly what you asked (agent: the agent's own model; provider:model, e.g. openai:gpt-4o-mini, with TABRELAY_CRITIC_BASE_URL and TABRELAY_CRITIC_API_KEY or the provider's key variable; off: the safety rules alone)"`
	AllowFileURLs      bool          `name:"agent-allow-file-urls" env:"TABRELAY_AGENT_ALLOW_FILE_URLS" help:"let the agent and /api/act open file: URLs (local files of this machine); refused by default, as a page's instructions could send them out"`
}

// Sites are the non-empty, trimmed hosts of AllowedSites.
func (s *Server) Sites() []string {
	var out []string
	for _, h := range s.AllowedSites {
		if h = strings.TrimSpace(h); h != "" {
			out = append(out, h)
		}
	}
	return out
}
