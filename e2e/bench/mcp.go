package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// mcpFlow is what e2e/clients/bench-mcp.mjs measured of one MCP server.
type mcpFlow struct {
	Tools      int    `json:"tools"`
	ListTokens int    `json:"listTokens"`
	Error      string `json:"error"`
	Runs       []struct {
		MS     float64 `json:"ms"`
		Tokens int     `json:"tokens"`
		Steps  []struct {
			Step   string `json:"step"`
			Tool   string `json:"tool"`
			Tokens int    `json:"tokens"`
			Text   string `json:"text"` // with BENCH_DUMP set
		} `json:"steps"`
	} `json:"runs"`
}

// mcpServer is one MCP server the group drives: its dialect in bench-mcp.mjs and its command.
type mcpServer struct {
	name    string // as the table shows it
	dialect string // SERVER for bench-mcp.mjs
	command []string
}

// runMCPGroup drives tabrelay's MCP server (`tabrelay mcp`, stdio, relaying to the running
// server), Playwright MCP (--cdp-endpoint at tabrelay) and chrome-devtools-mcp (--wsEndpoint at
// tabrelay) with the same client through the same 10-step flow on the same shared tab, and
// compares the size of tools/list, the tokens of the flow's tool results and its wall time.
// A reference that does not run is reported as an error of the run, not of the group.
func runMCPGroup(cfg config, r *Results) error {
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	s, err := startReal(ctx, "/flow.html")
	if err != nil {
		return err
	}
	defer s.close()
	bin, err := buildOnce()
	if err != nil {
		return err
	}
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	mods := filepath.Join(root, "e2e", "clients", "node_modules")
	out, err := os.MkdirTemp("", "tabrelay-bench-mcp-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(out)
	authz, _ := json.Marshal(map[string]string{"Authorization": "Bearer " + s.rp.token})
	servers := []mcpServer{
		{"tabrelay mcp", "tabrelay", []string{bin, "mcp", "--addr", s.rp.addr, "--home", s.rp.home}},
		{"Playwright MCP", "playwright", []string{"node", filepath.Join(mods, "@playwright", "mcp", "cli.js"),
			"--cdp-endpoint", "http://" + s.rp.addr + "/?token=" + s.rp.token, "--output-dir", out}},
		{"chrome-devtools-mcp", "devtools", []string{"node", filepath.Join(mods, "chrome-devtools-mcp", "build", "src", "bin", "chrome-devtools-mcp.js"),
			"--wsEndpoint", "ws://" + s.rp.addr + "/cdp", "--wsHeaders", string(authz), "--no-usage-statistics", "--no-performance-crux"}},
	}
	runs := 3
	if cfg.short {
		runs = 1
	}
	got := map[string]*mcpFlow{}
	for _, m := range servers {
		f, err := mcpBenchFlow(ctx, root, m, s.tab.URL, s.tab.TargetID, runs)
		if err != nil {
			if m.dialect == "tabrelay" {
				return fmt.Errorf("the flow through %s: %w", m.name, err)
			}
			msg := fmt.Sprintf("mcp: %s did not run the flow (left out of the comparison): %v", m.name, err)
			r.Errors = append(r.Errors, msg)
			fmt.Fprintln(os.Stderr, "  "+msg)
			continue
		}
		got[m.dialect] = f
		if os.Getenv("BENCH_DUMP") != "" {
			for _, st := range f.Runs[0].Steps {
				fmt.Fprintf(os.Stderr, "    %s: %-28s %-20s %6d tokens\n%s\n", m.name, st.Step, st.Tool, st.Tokens, st.Text)
			}
		}
	}
	ours := got["tabrelay"]
	oursMS := flowMedianMS(ours)
	r.add(Figure{Group: "mcp", Name: "tabrelay mcp: tools/list (core set)", Unit: "tokens", Value: float64(ours.ListTokens), Target: "≤ 2000", Met: met(ours.ListTokens <= 2000)})
	r.add(Figure{Group: "mcp", Name: "tabrelay mcp: tools offered", Unit: "tools", Value: float64(ours.Tools)})
	for _, m := range servers[1:] {
		ref := got[m.dialect]
		if ref == nil {
			continue
		}
		r.add(Figure{Group: "mcp", Name: "tools/list", Unit: "tokens", Value: float64(ours.ListTokens), Reference: float64(ref.ListTokens), RefName: m.name + fmt.Sprintf(" (%d tools)", ref.Tools), Target: "≤ 2000", Met: met(ours.ListTokens <= 2000)})
		r.add(Figure{Group: "mcp", Name: "10-step flow: tokens of the tool results", Unit: "tokens", Value: float64(ours.Runs[0].Tokens), Reference: float64(ref.Runs[0].Tokens), RefName: m.name, Target: "≤ 0.5×", Met: met(ours.Runs[0].Tokens*2 <= ref.Runs[0].Tokens)})
		refMS := flowMedianMS(ref)
		r.add(Figure{Group: "mcp", Name: "10-step flow: wall time, median", Unit: "ms", Value: oursMS, Reference: refMS, RefName: m.name, Target: "≤ 1×", Met: met(oursMS <= refMS)})
	}
	if len(got) == 1 {
		r.add(Figure{Group: "mcp", Name: "10-step flow: tokens of the tool results", Unit: "tokens", Value: float64(ours.Runs[0].Tokens)})
		r.add(Figure{Group: "mcp", Name: "10-step flow: wall time, median", Unit: "ms", Value: oursMS})
	}
	return nil
}

// flowMedianMS is the median wall time of a server's runs of the flow.
func flowMedianMS(f *mcpFlow) float64 {
	ms := make([]float64, 0, len(f.Runs))
	for _, r := range f.Runs {
		ms = append(ms, r.MS)
	}
	return median(ms)
}

// mcpBenchFlow runs e2e/clients/bench-mcp.mjs for one server.
func mcpBenchFlow(ctx context.Context, root string, m mcpServer, flowURL, tab string, runs int) (*mcpFlow, error) {
	command, _ := json.Marshal(m.command)
	cmd := exec.CommandContext(ctx, "node", filepath.Join(root, "e2e", "clients", "bench-mcp.mjs"))
	cmd.Env = append(os.Environ(), "SERVER="+m.dialect, "MCP_COMMAND="+string(command), "FLOW_URL="+flowURL,
		"FLOW_TAB="+tab, fmt.Sprintf("RUNS=%d", runs))
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	runErr := cmd.Run()
	var res mcpFlow
	if err := json.Unmarshal(bytes.TrimSpace(out.Bytes()), &res); err != nil {
		return nil, fmt.Errorf("node: %v: %.300s %s", runErr, out.String(), strings.TrimSpace(errb.String()))
	}
	if res.Error != "" {
		return nil, fmt.Errorf("%s", res.Error)
	}
	if len(res.Runs) == 0 {
		return nil, fmt.Errorf("no run of the flow in %.300s", out.String())
	}
	return &res, nil
}
