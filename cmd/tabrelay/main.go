// Command tabrelay runs the tabrelay server (relay and agent), prints its secret, and launches
// an isolated browser with the extension. `tabrelay help` lists the subcommands.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/rs/zerolog"

	"github.com/tabrelay/tabrelay/agent/api"
	"github.com/tabrelay/tabrelay/agent/llm"
	"github.com/tabrelay/tabrelay/agent/mcpserver"
	"github.com/tabrelay/tabrelay/agent/voice"
	"github.com/tabrelay/tabrelay/internal/app"
	"github.com/tabrelay/tabrelay/internal/config"
	"github.com/tabrelay/tabrelay/internal/proof"
	"github.com/tabrelay/tabrelay/internal/secret"
	"github.com/tabrelay/tabrelay/relay"
)

type command struct {
	run     func(ctx context.Context, args []string) error
	summary string
}

func commands() map[string]command {
	return map[string]command{
		"serve":      {cmdServe, "run the relay and agent server (the default)"},
		"token":      {cmdToken, "print the pairing secret (--rotate makes a new one)"},
		"pair":       {cmdPair, "print a one-time link that pairs the extension with the running server (valid 10 minutes)"},
		"browser":    {cmdBrowser, "launch an isolated Chromium with the extension, share URLs, print endpoints as JSON"},
		"tabs":       {cmdTabs, "list the shared tabs (most recently shared or focused first)"},
		"snapshot":   {cmdSnapshot, "print a tab's role outline with refs (--interactive, --max-tokens N)"},
		"act":        {cmdAct, "act on a tab: act click e3 | type e4 hello | press Enter | navigate URL | --json '{…}'"},
		"screenshot": {cmdScreenshot, "save a PNG of a tab (-o file.png)"},
		"run":        {cmdRun, "run a task with the agent, showing the live plan and steps, and print the answer"},
		"eval":       {cmdEval, "run a suite of tasks (YAML) against the agent and report success, steps, model calls, tokens, time (--json, --compare)"},
		"mcp":        {cmdMCP, "an MCP server on stdio for Claude Code, Cursor, VS Code…: the shared tabs, the agent and skills as tools (--tools all)"},
		"skills":     {cmdSkills, "list, show, run and record skills (replayable procedures): skills list | show | run | record"},
		"extension":  {cmdExtension, "write the embedded extension for Load unpacked (--out DIR) or a store zip (--zip FILE)"},
	}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	args := os.Args[1:]
	name := "serve"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		name, args = args[0], args[1:]
	}
	if name == "help" || name == "-h" || name == "--help" {
		usage(os.Stdout)
		return
	}
	cmd, ok := commands()[name]
	if !ok {
		fmt.Fprintf(os.Stderr, "tabrelay: unknown command %q\n\n", name)
		usage(os.Stderr)
		os.Exit(2)
	}
	if err := cmd.run(ctx, args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		fmt.Fprintf(os.Stderr, "tabrelay %s: %v\n", name, err)
		os.Exit(1)
	}
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: tabrelay [command] [flags]")
	fmt.Fprintln(w, "\ncommands:")
	cmds := commands()
	names := make([]string, 0, len(cmds))
	for n := range cmds {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, cmds[n].summary)
	}
	fmt.Fprintln(w, "\nEvery command takes --addr (TABRELAY_ADDR, default 127.0.0.1:18792) and --home (TABRELAY_HOME);")
	fmt.Fprintln(w, "tabs, snapshot, act, screenshot and run talk to the running server and take --tab <targetId> before their arguments.")
	fmt.Fprintln(w, "`tabrelay <command> -h` shows a command's flags.")
}

// common holds the flags every command shares.
type common struct {
	addr     string
	home     string
	logLevel string
}

func (c *common) register(fs *flag.FlagSet) {
	fs.StringVar(&c.addr, "addr", config.Env("TABRELAY_ADDR", config.DefaultAddr), "server address host:port (port 0 picks a free port)")
	fs.StringVar(&c.home, "home", config.DefaultHome(), "directory for the secret, database and user skills")
	fs.StringVar(&c.logLevel, "log-level", config.Env("TABRELAY_LOG_LEVEL", "info"), "log level: debug, info, warn, error")
}

func (c *common) logger() zerolog.Logger {
	lvl, err := zerolog.ParseLevel(c.logLevel)
	if err != nil || c.logLevel == "" {
		lvl = zerolog.InfoLevel
	}
	return zerolog.New(zerolog.ConsoleWriter{Out: os.Stderr, TimeFormat: time.TimeOnly}).Level(lvl).With().Timestamp().Logger()
}

func cmdToken(_ context.Context, args []string) error {
	fs := flag.NewFlagSet("token", flag.ContinueOnError)
	var c common
	c.register(fs)
	rotate := fs.Bool("rotate", false, "replace the secret with a new one (a running server closes every connection made with the old one)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *rotate {
		tok, err := secret.Generate()
		if err != nil {
			return err
		}
		if err := secret.Write(c.home, tok); err != nil {
			return err
		}
		fmt.Println(tok)
		return nil
	}
	tok, err := secret.LoadOrCreate(c.home)
	if err != nil {
		return err
	}
	fmt.Println(tok)
	return nil
}

// serveFlags are the server's own flags, shared by serve and browser (which may start one).
type serveFlags struct {
	common
	allowNonLoopback   bool
	allowCloseUserTabs bool
	extensionIDs       string
	allowedSites       string
	allowFileURLs      bool
	vision             bool
	clientQueueMB      int
	mcpAllowEvaluate   bool
	detachAfter        time.Duration
}

func (f *serveFlags) register(fs *flag.FlagSet) {
	f.common.register(fs)
	fs.BoolVar(&f.allowNonLoopback, "dangerously-listen-non-loopback", config.EnvBool("TABRELAY_DANGEROUSLY_LISTEN_NON_LOOPBACK"), "allow a non-loopback --addr: anyone who reaches it with the secret controls your browser")
	fs.BoolVar(&f.allowCloseUserTabs, "allow-close-user-tabs", config.EnvBool("TABRELAY_ALLOW_CLOSE_USER_TABS"), "let clients close tabs you shared yourself")
	fs.StringVar(&f.extensionIDs, "extension-ids", "", "extra allowed extension ids, comma separated (also TABRELAY_EXTENSION_IDS)")
	fs.BoolVar(&f.vision, "agent-vision", llm.VisionFromEnv(), "the model reads images: offer the agent the screenshot tool (also "+llm.EnvVision+"=1)")
	fs.IntVar(&f.clientQueueMB, "client-queue-budget-mb", 512, "memory, in MiB, for the messages waiting to be written to all CDP clients together; past it the slowest reader (largest queue) is disconnected with 1008")
	fs.DurationVar(&f.detachAfter, "detach-after", 30*time.Second, "with the extension's \"debugger only while something drives\" setting on: how long a shared tab keeps the debugger attached after its last client left")
	fs.StringVar(&f.allowedSites, "agent-allowed-sites", config.Env("TABRELAY_AGENT_ALLOWED_SITES", ""), "comma-separated hosts where the agent's tasks may open pages and change them (default: every site); reading stays free")
	fs.BoolVar(&f.mcpAllowEvaluate, "mcp-allow-evaluate", config.EnvBool("TABRELAY_MCP_ALLOW_EVALUATE"), "offer MCP clients the evaluate tool (JavaScript in the shared tabs); off by default")
	fs.BoolVar(&f.allowFileURLs, "agent-allow-file-urls", config.EnvBool("TABRELAY_AGENT_ALLOW_FILE_URLS"), "let the agent and /api/act open file: URLs (local files of this machine); refused by default, as a page's instructions could send them out")
}

// server is a running tabrelay with the model's description for the banner.
type server struct {
	*app.App
	// model describes the language model ("" when none is configured).
	model string
}

// startServer builds and starts the server described by f (internal/app: the relay, the
// task database under --home, the agent with the model configured in the environment — none:
// the fast path still works —, skills and voice on /api). serve and browser (when it starts a
// server in-process) both use it. The server also closes when ctx ends.
func (f *serveFlags) startServer(ctx context.Context, log *zerolog.Logger) (*server, error) {
	store, err := secret.NewStore(f.home)
	if err != nil {
		return nil, err
	}
	opts := app.Config{
		Relay: relay.Options{
			Addr:             f.addr,
			Secret:           store,
			ExtensionIDs:     config.ExtensionIDs(strings.Split(f.extensionIDs, ",")...),
			AllowNonLoopback: f.allowNonLoopback,
			Hub:              relay.HubOptions{AllowCloseUserTabs: f.allowCloseUserTabs, MaxQueueTotalBytes: f.clientQueueMB << 20, DetachAfter: f.detachAfter},
		},
		Agent: api.Options{Home: f.home, Stream: true, AllowFileURLs: f.allowFileURLs},
		Voice: voice.Options{Getenv: os.Getenv}, // speech engines are configured in the environment
		MCP:   mcpserver.Options{AllowEvaluate: f.mcpAllowEvaluate},
		Log:   *log,
	}
	for _, h := range strings.Split(f.allowedSites, ",") {
		if h = strings.TrimSpace(h); h != "" {
			opts.Agent.AllowedSites = append(opts.Agent.AllowedSites, h)
		}
	}
	model, cfg, merr := llm.FromEnvModel(ctx)
	switch {
	case merr == nil:
		cfg.Vision = f.vision // the flag, defaulting to TABRELAY_LLM_VISION, has the last word
		opts.Agent.Model, opts.Agent.ModelName, opts.Agent.ImageMode = model, cfg.String(), cfg.ImageMode()
		opts.Agent.Vision = cfg.Vision
	case errors.Is(merr, llm.ErrNotConfigured):
		opts.Agent.ModelError = merr
	default:
		opts.Agent.ModelError = merr
		log.Warn().Err(merr).Msg("the language model could not be set up; running without one (simple commands still work)")
	}
	srv, err := app.Start(ctx, opts)
	if err != nil {
		return nil, err
	}
	return &server{App: srv, model: opts.Agent.ModelName}, nil
}

func cmdServe(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	var f serveFlags
	f.register(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	log := f.logger()
	srv, err := f.startServer(ctx, &log)
	if err != nil {
		return err
	}
	defer srv.Close()
	printBanner(os.Stdout, srv, isTerminal(os.Stdout))
	<-ctx.Done()
	log.Info().Msg("shutting down")
	return nil
}

// isTerminal reports whether f is an interactive terminal.
func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// pairingLink is the options-page link that pairs the extension with the server at addr using
// a one-time code (the options page asks before pairing, and exchanges the code for the secret
// only with a server that proves it knows the code).
func pairingLink(addr, code string) string {
	return fmt.Sprintf("chrome-extension://%s/options.html#addr=%s&code=%s", config.DefaultExtensionID, addr, code)
}

// printBanner prints where the server runs and how to pair. The secret, the client lines that
// contain it and the one-time pairing link are printed only when terminal is true (stdout is a
// terminal): a log file or a pipe may be read by others.
func printBanner(w io.Writer, srv *server, terminal bool) {
	addr, tok := srv.Addr(), srv.Token()
	fmt.Fprintf(w, "tabrelay %s is running at %s\n\n", relay.Version, srv.HTTPURL())
	fmt.Fprintf(w, "  CDP endpoint (browser-level): ws://%s/cdp\n", addr)
	fmt.Fprintf(w, "  Discovery:                    %s/json/version\n", srv.HTTPURL())
	fmt.Fprintf(w, "  Every endpoint but /json/version needs the secret: 'Authorization: Bearer <token>' or '?token=<token>'.\n")
	if terminal {
		fmt.Fprintf(w, "  Playwright: chromium.connectOverCDP('%s/?token=%s')\n\n", srv.HTTPURL(), tok)
		code, _ := srv.NewPairingCode()
		fmt.Fprintf(w, "Pair the extension (once): open this link in the browser where tabrelay is installed\n")
		fmt.Fprintf(w, "(it works once, within %d minutes; `tabrelay pair` prints a new one):\n", int(proof.PairCodeTTL.Minutes()))
		fmt.Fprintf(w, "  %s\n", pairingLink(addr, code))
	} else {
		fmt.Fprintf(w, "  The secret is not shown because stdout is not a terminal: `tabrelay token` prints it.\n\n")
		fmt.Fprintf(w, "Pair the extension (once): `tabrelay pair` prints a one-time pairing link to open in the browser.\n")
	}
	fmt.Fprintf(w, "Then click the tabrelay icon on a tab to share it (the badge shows ON).\n\n")
	if srv.model != "" {
		fmt.Fprintf(w, "Agent: %s. Try `tabrelay run \"…\"` or `tabrelay snapshot`.\n", srv.model)
	} else {
		fmt.Fprintf(w, "Agent: no language model configured: simple commands work (POST /api/command, `tabrelay act`);\n")
		fmt.Fprintf(w, "  for tasks set %s and %s (and the provider's key), e.g. %s=openai OPENAI_API_KEY=….\n", llm.EnvProvider, llm.EnvModel, llm.EnvProvider)
	}
}

func cmdPair(ctx context.Context, args []string) error { return runPair(ctx, args, osStdio()) }

// runPair implements `tabrelay pair`: it asks the running server (after it proved it knows the
// secret) for a one-time pairing code and prints the link on stdout.
func runPair(ctx context.Context, args []string, io stdio) error {
	fs := flag.NewFlagSet("pair", flag.ContinueOnError)
	fs.SetOutput(io.err)
	var f clientFlags
	f.common.register(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	c := f.client()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var ans proof.PairCodeAnswer
	if err := c.post(ctx, proof.PairCodePath, struct{}{}, &ans); err != nil {
		return err
	}
	fmt.Fprintf(io.out, "%s\n", pairingLink(c.sess.Addr, ans.Code))
	fmt.Fprintf(io.err, "Open this link in the browser where tabrelay is installed; it works once, until %s.\n", ans.Expires.Local().Format(time.TimeOnly))
	return nil
}
