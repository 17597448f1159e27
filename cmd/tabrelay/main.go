// Command tabrelay runs the tabrelay server (relay and agent), prints its secret, and launches
// an isolated browser with the extension. `tabrelay help` lists the subcommands.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"reflect"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/alecthomas/kong"
	"github.com/rs/zerolog"

	"github.com/tabrelay/tabrelay/agent/api"
	"github.com/tabrelay/tabrelay/agent/llm"
	"github.com/tabrelay/tabrelay/agent/mcpserver"
	"github.com/tabrelay/tabrelay/agent/voice"
	"github.com/tabrelay/tabrelay/internal/app"
	"github.com/tabrelay/tabrelay/internal/browser"
	"github.com/tabrelay/tabrelay/internal/config"
	"github.com/tabrelay/tabrelay/internal/proof"
	"github.com/tabrelay/tabrelay/internal/secret"
	"github.com/tabrelay/tabrelay/relay"
)

// cli is tabrelay's command line: one field per subcommand, each with its flags as struct
// fields (github.com/alecthomas/kong reads the tags: names, environment fallbacks, defaults,
// help). Each command's Run does the work.
type cli struct {
	Serve      serveCmd      `cmd:"" default:"withargs" help:"run the relay and agent server (the default)"`
	Token      tokenCmd      `cmd:"" help:"print the pairing secret (--rotate makes a new one)"`
	Pair       pairCmd       `cmd:"" help:"print a one-time link that pairs the extension with the running server (valid 10 minutes)"`
	Browser    browserCmd    `cmd:"" help:"launch an isolated Chromium with the extension, share URLs, print endpoints as JSON"`
	Tabs       tabsCmd       `cmd:"" help:"list the shared tabs (most recently shared or focused first)"`
	Snapshot   snapshotCmd   `cmd:"" help:"print a tab's role outline with refs (--interactive, --max-tokens N)"`
	Act        actCmd        `cmd:"" help:"act on a tab: act click e3 | type e4 hello | press Enter | navigate URL | --json '{…}'"`
	Screenshot screenshotCmd `cmd:"" help:"save a PNG of a tab (-o file.png)"`
	Run        goalCmd       `cmd:"" help:"run a task with the agent, showing the live plan and steps, and print the answer"`
	Tasks      tasksCmd      `cmd:"" help:"list recent tasks and download a task's report: tasks list | tasks report ID [--format csv] [--records]"`
	Eval       evalCmd       `cmd:"" help:"run a suite of tasks (YAML) against the agent and report success, steps, model calls, tokens, time (--json, --compare)"`
	MCP        mcpCmd        `cmd:"" name:"mcp" help:"an MCP server on stdio for Claude Code, Cursor, VS Code…: the shared tabs, the agent and skills as tools (--tools all)"`
	Skills     skillsCmd     `cmd:"" help:"list, show, run and record skills (replayable procedures): skills list | show | run | record"`
	Extension  extensionCmd  `cmd:"" help:"write the embedded extension for Load unpacked (--out DIR) or a store zip (--zip FILE)"`
	Version    versionCmd    `cmd:"" help:"print the version, the commit it was built from and the build date"`
	Help       helpCmd       `cmd:"" help:"list the commands"`
}

// description heads `tabrelay help`.
const description = `tabrelay shares your own Chrome tabs with local tools through a DevTools-compatible endpoint, and runs an agent on them.

Every command takes --addr (TABRELAY_ADDR, default 127.0.0.1:18792) and --home (TABRELAY_HOME); tabs, snapshot, act, screenshot and run talk to the running server and take --tab <targetId> before their arguments. ` + "`tabrelay <command> -h`" + ` shows a command's flags.`

// Exit codes: 0 success (and help), 1 the command failed, 2 the command line is wrong.
const (
	exitFailed = 1
	exitUsage  = 2
)

// usageError is a command line the parser refused (an unknown command or flag, a bad value, a
// missing argument): exit code 2.
type usageError struct {
	err     error
	command string
}

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

// errHelp is returned when help was asked for and printed: exit code 0.
var errHelp = errors.New("help printed")

// exitRequest carries the parser's exit code out of its Exit hook (it is recovered in parse).
type exitRequest int

// newParser builds the command line parser writing help to io.
func newParser(c *cli, io stdio) (*kong.Kong, error) {
	return kong.New(c,
		kong.Name("tabrelay"),
		kong.Description(description),
		kong.Writers(io.out, io.err),
		kong.Exit(func(code int) { panic(exitRequest(code)) }),
		kong.Vars{"default_addr": config.DefaultAddr, "default_extension_dir": defaultExtensionDir, "chrome_env": "$" + browser.EnvChrome},
		kong.KindMapper(reflect.Bool, boolMapper{}),
		kong.ConfigureHelp(kong.HelpOptions{Compact: true, NoExpandSubcommands: true}),
	)
}

// parse parses args (without the program name) into c.
func parse(parser *kong.Kong, args []string) (kctx *kong.Context, err error) {
	defer func() {
		if r := recover(); r != nil {
			code, ok := r.(exitRequest)
			if !ok {
				panic(r)
			}
			if code == 0 {
				kctx, err = nil, errHelp
			} else {
				kctx, err = nil, &usageError{err: fmt.Errorf("exit %d", int(code))}
			}
		}
	}()
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") && !isCommand(parser, args[0]) {
		return nil, &usageError{err: fmt.Errorf("unknown command %q: `tabrelay help` lists the commands", args[0])}
	}
	kctx, err = parser.Parse(args)
	if err != nil {
		var command string
		var pe *kong.ParseError
		if errors.As(err, &pe) && pe.Context != nil {
			if cmd := pe.Context.Selected(); cmd != nil {
				command = cmd.Name
			}
		}
		return nil, &usageError{err: err, command: command}
	}
	return kctx, nil
}

// isCommand reports whether name is one of the parser's commands (or an alias of one).
func isCommand(parser *kong.Kong, name string) bool {
	for _, n := range parser.Model.Children {
		if n.Name == name || slices.Contains(n.Aliases, name) {
			return true
		}
	}
	return false
}

// execute runs the command line args (without the program name) with io as its streams.
func execute(ctx context.Context, args []string, io stdio) error {
	var c cli
	parser, err := newParser(&c, io)
	if err != nil {
		return fmt.Errorf("building the command line: %w", err) // a mistake in the struct tags above
	}
	kctx, err := parse(parser, args)
	if err != nil {
		return err
	}
	kctx.BindTo(ctx, (*context.Context)(nil))
	kctx.Bind(io)
	return kctx.Run()
}

// runCommand is execute for one command: name, then args.
func runCommand(ctx context.Context, name string, args []string, io stdio) error {
	return execute(ctx, append([]string{name}, args...), io)
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := exitCode(execute(ctx, os.Args[1:], osStdio()), os.Args[1:], os.Stderr)
	stop()
	os.Exit(code)
}

// exitCode reports err on w (naming the command) and returns the process's exit code.
func exitCode(err error, args []string, w io.Writer) int {
	var ue *usageError
	switch {
	case err == nil, errors.Is(err, errHelp):
		return 0
	case errors.As(err, &ue):
		if ue.command != "" {
			fmt.Fprintf(w, "tabrelay %s: %v (`tabrelay %s -h` lists its flags)\n", ue.command, err, ue.command)
		} else {
			fmt.Fprintf(w, "tabrelay: %v\n", err)
		}
		return exitUsage
	default:
		name := "serve"
		if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
			name = args[0]
		}
		fmt.Fprintf(w, "tabrelay %s: %v\n", name, err)
		return exitFailed
	}
}

// helpCmd is `tabrelay help`: the commands, on stdout.
type helpCmd struct{}

// Run prints the commands.
func (helpCmd) Run(io stdio) error {
	var c cli
	parser, err := newParser(&c, io)
	if err != nil {
		return err
	}
	_, err = parse(parser, []string{"--help"})
	return err
}

// boolMapper reads a boolean flag or variable: 1, true, yes, on or 0, false, no, off (any
// case); an empty variable is false. A bare flag (--yes) is true.
type boolMapper struct{}

// Decode implements kong.Mapper.
func (boolMapper) Decode(ctx *kong.DecodeContext, target reflect.Value) error {
	if ctx.Scan.Peek().Type != kong.FlagValueToken {
		target.SetBool(true)
		return nil
	}
	t := ctx.Scan.Pop()
	s, ok := t.Value.(string)
	if !ok {
		b, ok := t.Value.(bool)
		if !ok {
			return fmt.Errorf("expected true or false, got %v", t.Value)
		}
		target.SetBool(b)
		return nil
	}
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "1", "true", "yes", "on":
		target.SetBool(true)
	case "0", "false", "no", "off", "":
		target.SetBool(false)
	default:
		return fmt.Errorf("%q is not a yes or no: use true or false (or 1/0, yes/no, on/off)", s)
	}
	return nil
}

// IsBool makes the flag take no value (--yes).
func (boolMapper) IsBool() bool { return true }

// logger is the console logger at the configured level.
func logger(c *config.Common) zerolog.Logger {
	lvl, err := zerolog.ParseLevel(c.LogLevel)
	if err != nil || c.LogLevel == "" {
		lvl = zerolog.InfoLevel
	}
	return zerolog.New(zerolog.ConsoleWriter{Out: os.Stderr, TimeFormat: time.TimeOnly}).Level(lvl).With().Timestamp().Logger()
}

// tokenCmd is `tabrelay token`.
type tokenCmd struct {
	config.Common `embed:""`
	Rotate        bool `help:"replace the secret with a new one (a running server closes every connection made with the old one)"`
}

// Run prints the secret (a new one with --rotate).
func (c *tokenCmd) Run(io stdio) error {
	c.Normalize()
	if c.Rotate {
		tok, err := secret.Generate()
		if err != nil {
			return err
		}
		if err := secret.Write(c.Home, tok); err != nil {
			return err
		}
		fmt.Fprintln(io.out, tok)
		return nil
	}
	tok, err := secret.LoadOrCreate(c.Home)
	if err != nil {
		return err
	}
	fmt.Fprintln(io.out, tok)
	return nil
}

// server is a running tabrelay with the model's description for the banner.
type server struct {
	*app.App
	// models is the model chosen in the options page or the environment.
	models *llm.Source
	// home is tabrelay's home (where the paired marker is kept).
	home string
}

// startServer builds and starts the server described by f (internal/app: the relay, the
// task database under --home, the agent with the model configured in the environment — none:
// the fast path still works —, skills and voice on /api). serve and browser (when it starts a
// server in-process) both use it. The server also closes when ctx ends.
func startServer(ctx context.Context, f *config.Server, log *zerolog.Logger) (*server, error) {
	f.Normalize()
	store, err := secret.NewStore(f.Home)
	if err != nil {
		return nil, err
	}
	opts := app.Config{
		Relay: relay.Options{
			Addr:             f.Addr,
			Secret:           store,
			ExtensionIDs:     config.ExtensionIDs(strings.Split(f.ExtensionIDs, ",")...),
			AllowNonLoopback: f.AllowNonLoopback,
			TrustSameUser:    f.TrustSameUser,
			OnExtension:      func() { markPaired(f.Home, log) },
			Hub:              relay.HubOptions{AllowCloseUserTabs: f.AllowCloseUserTabs, MaxQueueTotalBytes: f.ClientQueueMB << 20, DetachAfter: f.DetachAfter, MaxUploadBytes: f.MaxUploadMB << 20, TraceLegs: f.TraceLegs},
		},
		Agent: api.Options{Home: f.Home, Stream: true, AllowFileURLs: f.AllowFileURLs, AllowedSites: f.Sites(), UploadDirs: f.AgentUploadDirs},
		Voice: voice.Options{Getenv: os.Getenv}, // speech engines are configured in the environment
		MCP:   mcpserver.Options{AllowEvaluate: f.MCPAllowEvaluate, MaxSessions: f.MCPMaxSessions, IdleTimeout: f.MCPIdleTimeout},
		Log:   *log,
	}
	// The model: chosen in the extension's options page (saved in the home), the environment
	// overriding it; the options page can change it while the server runs.
	models := &llm.Source{Home: f.Home, Lookup: os.LookupEnv, Vision: f.Vision, Switch: &llm.Switch{}}
	opts.Agent.Model, opts.Agent.Models = models.Switch, models
	if cfg, merr := models.Load(ctx); merr == nil {
		opts.Agent.ModelName, opts.Agent.ImageMode, opts.Agent.Vision = cfg.String(), cfg.ImageMode(), cfg.Vision
	} else if !errors.Is(merr, llm.ErrNotConfigured) {
		log.Warn().Err(merr).Msg("the language model could not be set up; running without one (simple commands still work)")
	}
	opts.Agent.Vision = f.Vision
	if opts.Agent.Critic, err = criticFrom(ctx, f.Critic, models.Switch, os.LookupEnv); err != nil {
		return nil, err
	}
	srv, err := app.Start(ctx, opts)
	if err != nil {
		return nil, err
	}
	return &server{App: srv, models: models, home: f.Home}, nil
}

// serveCmd is `tabrelay serve` (and `tabrelay` alone).
type serveCmd struct {
	config.Server `embed:""`
}

// Run serves until ctx ends.
func (c *serveCmd) Run(ctx context.Context, io stdio) error {
	log := logger(&c.Common)
	srv, err := startServer(ctx, &c.Server, &log)
	if err != nil {
		return err
	}
	defer srv.Close()
	printBanner(io.out, srv, io.outTerminal)
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
	} else {
		fmt.Fprintf(w, "  The secret is not shown because stdout is not a terminal: `tabrelay token` prints it.\n\n")
	}
	switch {
	case paired(srv.home):
		fmt.Fprintf(w, "The extension is paired with this server and connects by itself (`tabrelay pair` prints a link to pair another browser).\n")
	case terminal:
		code, _ := srv.NewPairingCode()
		fmt.Fprintf(w, "Pair the extension (once): open this link in the browser where tabrelay is installed\n")
		fmt.Fprintf(w, "(it works once, within %d minutes; `tabrelay pair` prints a new one):\n", int(proof.PairCodeTTL.Minutes()))
		fmt.Fprintf(w, "  %s\n", pairingLink(addr, code))
	default:
		fmt.Fprintf(w, "Pair the extension (once): `tabrelay pair` prints a one-time pairing link to open in the browser.\n")
	}
	fmt.Fprintf(w, "Share a tab: press Alt+Shift+S on it, or click the tabrelay icon (in the extensions menu,\n")
	fmt.Fprintf(w, "the puzzle piece, until you pin it); when a client connects and no tab is shared, the\n")
	fmt.Fprintf(w, "browser asks which tab to share.\n\n")
	if m, cfg, err := srv.models.Switch.Current(); m != nil {
		fmt.Fprintf(w, "Agent: %s. Try `tabrelay run \"…\"` or `tabrelay snapshot`.\n", cfg)
	} else {
		var nc *llm.NotConfiguredError
		if !errors.As(err, &nc) {
			fmt.Fprintf(w, "Agent: the language model could not be set up (%v); simple commands work.\n", err)
		} else {
			fmt.Fprintf(w, "Agent: no language model yet: simple commands work (`tabrelay act`, the side panel); for\n")
			fmt.Fprintf(w, "  the rest choose a provider, model and key in the extension's options page (or set\n")
			fmt.Fprintf(w, "  %s and %s where the server runs).\n", llm.EnvProvider, llm.EnvModel)
		}
	}
}

// pairCmd is `tabrelay pair`.
type pairCmd struct {
	config.Common `embed:""`
}

func runPair(ctx context.Context, args []string, io stdio) error {
	return runCommand(ctx, "pair", args, io)
}

// Run asks the running server (after it proved it knows the secret) for a one-time pairing
// code and prints the link on stdout.
func (p *pairCmd) Run(ctx context.Context, io stdio) error {
	c := newClient(&config.Client{Common: p.Common})
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
