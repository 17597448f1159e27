package main

import (
	"bytes"
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/tabrelay/tabrelay/internal/config"
)

// parseOnly parses args as main does and returns the parsed command line, without running it.
func parseOnly(t *testing.T, args ...string) (*cli, error) {
	t.Helper()
	var c cli
	var out, errOut bytes.Buffer
	parser, err := newParser(&c, stdio{out: &out, err: &errOut})
	if err != nil {
		t.Fatal(err)
	}
	_, err = parse(parser, args)
	return &c, err
}

// TestEnvFallback: every setting with a variable takes it when its flag is absent, the flag
// wins when both are given, and a variable that is set but empty counts as unset.
func TestEnvFallback(t *testing.T) {
	tests := []struct {
		name  string
		env   map[string]string
		args  []string
		check func(c *cli) bool
	}{
		{"addr from the environment", map[string]string{"TABRELAY_ADDR": "127.0.0.1:9999"}, []string{"tabs"},
			func(c *cli) bool { return c.Tabs.Addr == "127.0.0.1:9999" }},
		{"the flag beats the environment", map[string]string{"TABRELAY_ADDR": "127.0.0.1:9999"}, []string{"tabs", "--addr", "127.0.0.1:7777"},
			func(c *cli) bool { return c.Tabs.Addr == "127.0.0.1:7777" }},
		{"an empty variable is unset", map[string]string{"TABRELAY_ADDR": "", "TABRELAY_HOME": ""}, []string{"tabs"},
			func(c *cli) bool {
				c.Tabs.Normalize()
				return c.Tabs.Addr == config.DefaultAddr && c.Tabs.Home == config.DefaultHome() && c.Tabs.Home != ""
			}},
		{"home from the environment", map[string]string{"TABRELAY_HOME": "/tmp/somewhere"}, []string{"run", "hello"},
			func(c *cli) bool {
				return c.Run.Home == "/tmp/somewhere" && slices.Equal(c.Run.Goal, []string{"hello"})
			}},
		{"serve is the default command", map[string]string{"TABRELAY_LOG_LEVEL": "debug"}, nil,
			func(c *cli) bool {
				return c.Serve.LogLevel == "debug" && c.Serve.ClientQueueMB == 512 && c.Serve.MaxUploadMB == 50
			}},
		{"upload limit from the environment", map[string]string{"TABRELAY_MAX_UPLOAD_MB": "8"}, []string{"serve"},
			func(c *cli) bool { return c.Serve.MaxUploadMB == 8 }},
		{"server switches: yes, 1, on", map[string]string{"TABRELAY_MCP_ALLOW_EVALUATE": "yes", "TABRELAY_ALLOW_CLOSE_USER_TABS": "1", "TABRELAY_LLM_VISION": "on"}, []string{"serve"},
			func(c *cli) bool {
				return c.Serve.MCPAllowEvaluate && c.Serve.AllowCloseUserTabs && c.Serve.Vision && !c.Serve.AllowFileURLs
			}},
		{"same-user peers from the environment", map[string]string{"TABRELAY_TRUST_SAME_USER": "1"}, []string{"serve"},
			func(c *cli) bool { return c.Serve.TrustSameUser }},
		{"same-user peers off by default", nil, []string{"serve"},
			func(c *cli) bool { return !c.Serve.TrustSameUser }},
		{"--trust-same-user", nil, []string{"serve", "--trust-same-user"},
			func(c *cli) bool { return c.Serve.TrustSameUser }},
		{"a switch's flag beats its variable", map[string]string{"TABRELAY_AGENT_ALLOW_FILE_URLS": "true"}, []string{"serve", "--agent-allow-file-urls=false"},
			func(c *cli) bool { return !c.Serve.AllowFileURLs }},
		{"allowed sites, comma separated", map[string]string{"TABRELAY_AGENT_ALLOWED_SITES": "shop.example, mail.example"}, []string{"browser"},
			func(c *cli) bool { return slices.Equal(c.Browser.Sites(), []string{"shop.example", "mail.example"}) }},
		{"the alignment check follows the agent's model by default", nil, []string{"serve"},
			func(c *cli) bool { return c.Serve.Critic == "agent" }},
		{"the alignment check from the environment", map[string]string{"TABRELAY_CRITIC": "off"}, []string{"serve"},
			func(c *cli) bool { return c.Serve.Critic == "off" }},
		{"mcp takes the server's settings", map[string]string{"TABRELAY_ADDR": "127.0.0.1:4444"}, []string{"mcp", "--tools", "all"},
			func(c *cli) bool { return c.MCP.Addr == "127.0.0.1:4444" && c.MCP.Tools == "all" }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, k := range []string{"TABRELAY_ADDR", "TABRELAY_HOME", "TABRELAY_LOG_LEVEL", "TABRELAY_MCP_ALLOW_EVALUATE", "TABRELAY_ALLOW_CLOSE_USER_TABS",
				"TABRELAY_LLM_VISION", "TABRELAY_AGENT_ALLOW_FILE_URLS", "TABRELAY_AGENT_ALLOWED_SITES", "TABRELAY_DANGEROUSLY_LISTEN_NON_LOOPBACK", "TABRELAY_TRUST_SAME_USER"} {
				t.Setenv(k, "")
			}
			t.Setenv("TABRELAY_CRITIC", "") // restored after the test
			os.Unsetenv("TABRELAY_CRITIC")  // unset: the default applies
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			c, err := parseOnly(t, tc.args...)
			if err != nil {
				t.Fatalf("%v: %v", tc.args, err)
			}
			if !tc.check(c) {
				t.Errorf("%v with %v: parsed %+v", tc.args, tc.env, c)
			}
		})
	}
}

// TestEnvFallbackReachesTheServer: a client command with no --addr and --home finds the
// running server through TABRELAY_ADDR and TABRELAY_HOME.
func TestEnvFallbackReachesTheServer(t *testing.T) {
	f, tab := testServer(t)
	t.Setenv("TABRELAY_ADDR", f.Addr)
	t.Setenv("TABRELAY_HOME", f.Home)
	var out, errOut bytes.Buffer
	if err := execute(context.Background(), []string{"tabs"}, stdio{in: strings.NewReader(""), out: &out, err: &errOut}); err != nil {
		t.Fatalf("tabs: %v\n%s", err, errOut.String())
	}
	if !strings.Contains(out.String(), tab) {
		t.Errorf("tabs through the environment lists %q, want the tab %s", out.String(), tab)
	}
}

// TestBadCommandLine: a wrong command line is refused before anything runs, with exit code 2
// and a message naming what was wrong and where to look; help exits 0.
func TestBadCommandLine(t *testing.T) {
	t.Setenv("TABRELAY_MCP_ALLOW_EVALUATE", "")
	tests := []struct {
		name string
		args []string
		env  map[string]string
		code int
		want []string
	}{
		{"unknown flag", []string{"tabs", "--nope"}, nil, 2, []string{"tabrelay tabs:", "--nope", "`tabrelay tabs -h`"}},
		{"unknown command", []string{"explode"}, nil, 2, []string{`unknown command "explode"`, "tabrelay help"}},
		{"flag value of the wrong type", []string{"snapshot", "--max-tokens", "many"}, nil, 2, []string{"tabrelay snapshot:", "--max-tokens", "many"}},
		{"flag without its value", []string{"screenshot", "--ref"}, nil, 2, []string{"tabrelay screenshot:", "--ref"}},
		{"a dash value needs =", []string{"snapshot", "--max-tokens", "-5"}, nil, 2, []string{"tabrelay snapshot:", `--max-tokens="-5"`}},
		{"bad duration", []string{"eval", "--timeout", "soon", "suite"}, nil, 2, []string{"tabrelay eval:", "--timeout"}},
		{"bad switch in the environment", []string{"serve"}, map[string]string{"TABRELAY_MCP_ALLOW_EVALUATE": "maybe"}, 2, []string{"TABRELAY_MCP_ALLOW_EVALUATE", `"maybe"`, "true or false"}},
		{"bad param", []string{"skills", "run", "greet", "--param", "who"}, nil, 2, []string{"--param takes name=value"}},
		{"help", []string{"act", "-h"}, nil, 0, nil},
		{"help command", []string{"help"}, nil, 0, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			var out, errOut bytes.Buffer
			args := append([]string{tc.args[0], "--home", t.TempDir(), "--addr", "127.0.0.1:1"}, tc.args[1:]...)
			if tc.name == "unknown command" || tc.name == "help command" {
				args = tc.args
			}
			err := execute(context.Background(), args, stdio{in: strings.NewReader(""), out: &out, err: &errOut})
			code := exitCode(err, args, &errOut)
			if code != tc.code {
				t.Fatalf("%v: exit code %d (%v), want %d\nstderr: %s", args, code, err, tc.code, errOut.String())
			}
			for _, w := range tc.want {
				if !strings.Contains(errOut.String(), w) {
					t.Errorf("%v: stderr %q lacks %q", args, errOut.String(), w)
				}
			}
			if tc.code == 0 && !strings.Contains(out.String(), "Usage: tabrelay") {
				t.Errorf("%v: help on stdout is %q", args, out.String())
			}
		})
	}
}

// TestActHelpFromRegistry: `tabrelay act -h` lists every action kind of the registry.
func TestActHelpFromRegistry(t *testing.T) {
	var out bytes.Buffer
	err := execute(context.Background(), []string{"act", "-h"}, stdio{out: &out, err: &out})
	if code := exitCode(err, nil, &out); code != 0 {
		t.Fatalf("act -h: exit %d: %v", code, err)
	}
	for _, kind := range []string{"click ref", "type ref text", "press [ref] key", "navigate url", "back"} {
		if !strings.Contains(out.String(), kind) {
			t.Errorf("act -h lacks %q:\n%s", kind, out.String())
		}
	}
}

// TestArgumentsStayAsTyped: positional words reach the command as typed — commas are not
// split, a dash starts no flag once the words began, "-" is a file name.
func TestArgumentsStayAsTyped(t *testing.T) {
	tests := []struct {
		args  []string
		check func(c *cli) bool
	}{
		{[]string{"run", "--yes", "click cancel, then submit"}, func(c *cli) bool { return c.Run.Yes && slices.Equal(c.Run.Goal, []string{"click cancel, then submit"}) }},
		{[]string{"run", "type", "--tab", "into", "search"}, func(c *cli) bool { return c.Run.Tab == "" && len(c.Run.Goal) == 4 }},
		{[]string{"act", "--submit", "type", "e4", "-5", "a,b"}, func(c *cli) bool {
			return c.Act.Submit && slices.Equal(c.Act.Args, []string{"type", "e4", "-5", "a,b"})
		}},
		{[]string{"screenshot", "-o", "-"}, func(c *cli) bool { return c.Screenshot.Out == "-" }},
		{[]string{"skills", "--param", "a=1", "run", "greet", "--param", "b=x=y"}, func(c *cli) bool {
			return c.Skills.Params["a"] == "1" && c.Skills.Params["b"] == "x=y" && slices.Equal(c.Skills.Args, []string{"run", "greet"})
		}},
		{[]string{"browser", "--url", "http://a.test/?q=1,2", "http://b.test/"}, func(c *cli) bool {
			return slices.Equal(c.Browser.URL, []string{"http://a.test/?q=1,2"}) && slices.Equal(c.Browser.URLs, []string{"http://b.test/"})
		}},
	}
	for _, tc := range tests {
		c, err := parseOnly(t, tc.args...)
		if err != nil || !tc.check(c) {
			t.Errorf("%q: %v, parsed %+v", tc.args, err, c)
		}
	}
}
