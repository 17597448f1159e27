package main

import (
	"context"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tabrelay/tabrelay/agent/mcpserver"
)

// startedLine is the start of what `tabrelay mcp` says on stderr when it starts a server itself.
const startedLine = "tabrelay mcp: no tabrelay server answered at "

// TestMCPStdioFallback runs the built binary as an MCP client launches it: `tabrelay mcp` with
// an --addr where nothing listens and a fresh --home, over stdio with the Go SDK's client. It
// must start a server there itself and say so on stderr, offer the core tool set, and answer
// at --addr while it runs (GET /json/version with the secret it wrote to --home). A second
// `tabrelay mcp` at the same --addr then finds that server, relays to it (saying nothing about
// starting one) and offers the same tools. No browser: listing tools needs no shared tab.
func TestMCPStdioFallback(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "tabrelay")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/tabrelay: %v\n%s", err, out)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // unused from here on: nothing answers at addr
	home := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	// connect launches `tabrelay mcp` and lists its tools.
	connect := func(t *testing.T) (*mcp.ClientSession, []string, *lockedBuffer) {
		t.Helper()
		cmd := exec.Command(bin, "mcp", "--addr", addr, "--home", home, "--log-level", "warn")
		cmd.Env = append(os.Environ(), "TABRELAY_ADDR=", "TABRELAY_HOME=")
		stderr := &lockedBuffer{}
		cmd.Stderr = stderr
		client := mcp.NewClient(&mcp.Implementation{Name: "fallback-test", Version: "1"}, nil)
		cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
		if err != nil {
			t.Fatalf("connect to `tabrelay mcp`: %v\nstderr: %s", err, stderr)
		}
		var names []string
		for tl, err := range cs.Tools(ctx, nil) {
			if err != nil {
				t.Fatalf("tools/list: %v\nstderr: %s", err, stderr)
			}
			names = append(names, tl.Name)
		}
		return cs, names, stderr
	}

	first, tools, stderr := connect(t)
	defer first.Close()
	// the line is written before the server answers on stdout, but stderr is copied apart:
	// wait for it (until the test's deadline)
	want := startedLine + addr + ", so this process started one there"
	for !strings.Contains(stderr.String(), want) && ctx.Err() == nil {
		time.Sleep(10 * time.Millisecond)
	}
	if !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr does not say it started a server:\n got %q\nwant it to contain %q", stderr, want)
	}
	t.Logf("tools: %v\nstderr: %s", tools, stderr)
	for _, n := range tools {
		if !slices.Contains(mcpserver.Core, n) {
			t.Errorf("tool %q is not in the core set %v", n, mcpserver.Core)
		}
	}
	for _, n := range []string{"tabs", "switch_tab", "snapshot", "click", "type", "fill", "navigate", "screenshot"} {
		if !slices.Contains(tools, n) {
			t.Errorf("tools/list lacks %q: %v", n, tools)
		}
	}

	secret, err := os.ReadFile(filepath.Join(home, "token"))
	if err != nil {
		t.Fatalf("the started server wrote no secret to --home: %v", err)
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/json/version", nil)
	req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(secret)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("nothing answers at --addr %s while `tabrelay mcp` runs: %v", addr, err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET /json/version at %s = %s, want 200 OK", addr, resp.Status)
	}

	second, relayed, stderr2 := connect(t)
	if !slices.Equal(relayed, tools) {
		t.Errorf("relayed tools = %v, want the server's %v", relayed, tools)
	}
	if err := second.Close(); err != nil { // the process has exited: its stderr is all there
		t.Errorf("close the relaying `tabrelay mcp`: %v", err)
	}
	if strings.Contains(stderr2.String(), startedLine) {
		t.Errorf("the second `tabrelay mcp` started a server although one answered at %s:\n%s", addr, stderr2)
	}
}
