package main

import (
	"context"
	"fmt"
	goio "io"
	"net/http"
	"net/url"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tabrelay/tabrelay/internal/config"
	"github.com/tabrelay/tabrelay/relay"
)

// mcpCmd is `tabrelay mcp`; it takes the server's flags for the server it may start.
type mcpCmd struct {
	config.Server `embed:""`
	Tools         string `help:"tools to offer: empty for the core set, \"all\", or names added to the core set (e.g. \"hover,drag,network\")"`
}

// Run serves MCP on stdio. With a tabrelay server running at --addr it relays every MCP call
// to that server's /mcp (after the server proved it knows the secret; each request carries a
// short-lived credential, never the secret), so the agent sees the user's shared tabs and
// paired extension; with none answering it starts one in this process and says so on stderr.
func (m *mcpCmd) Run(ctx context.Context, io stdio) error {
	f, tools := &m.Server, &m.Tools
	c := newClient(&config.Client{Common: f.Common})
	if c.answers(ctx) {
		if f.MCPAllowEvaluate {
			fmt.Fprintln(io.err, "tabrelay mcp: --mcp-allow-evaluate is the server's option: start it with `tabrelay serve --mcp-allow-evaluate`; ignored here")
		}
		return proxyMCP(ctx, c, *tools, &mcp.IOTransport{Reader: readCloser{io.in}, Writer: writeCloser{io.out}})
	}
	log := logger(&f.Common)
	srv, err := startServer(ctx, f, &log)
	if err != nil {
		return fmt.Errorf("no tabrelay server answered at %s and none could be started here: %w", f.Addr, err)
	}
	defer srv.Close()
	fmt.Fprintf(io.err, "tabrelay mcp: no tabrelay server answered at %s, so this process started one there (until it exits). "+
		"Pair the extension with it (`tabrelay pair`) and share a tab to use it.\n", srv.Addr())
	ms, err := srv.MCP.MCP(*tools)
	if err != nil {
		return err
	}
	return ms.Run(ctx, &mcp.IOTransport{Reader: readCloser{io.in}, Writer: writeCloser{io.out}})
}

// proxyMCP serves on t the tools of the running server's /mcp, relaying each call (and its
// progress notifications) through an MCP client of the official SDK.
func proxyMCP(ctx context.Context, c *apiClient, tools string, t mcp.Transport) error {
	tok, err := c.token()
	if err != nil {
		return err
	}
	sess, err := c.session(ctx, tok) // the server proves it knows the secret first
	if err != nil {
		return err
	}
	var local atomic.Pointer[mcp.ServerSession]
	client := mcp.NewClient(&mcp.Implementation{Name: "tabrelay-mcp-stdio", Version: relay.Version}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(ctx context.Context, req *mcp.ProgressNotificationClientRequest) {
			if ss := local.Load(); ss != nil {
				_ = ss.NotifyProgress(ctx, req.Params)
			}
		},
	})
	endpoint := "http://" + sess.Addr + "/mcp"
	if tools != "" {
		endpoint += "?tools=" + url.QueryEscape(tools)
	}
	hc := &http.Client{Transport: &credentialTransport{c: c, tok: tok}}
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: hc}, nil)
	if err != nil {
		return fmt.Errorf("connect to the MCP server of tabrelay at %s: %w", c.addr, err)
	}
	defer cs.Close()
	server := mcp.NewServer(&mcp.Implementation{Name: "tabrelay", Version: relay.Version},
		&mcp.ServerOptions{Instructions: cs.InitializeResult().Instructions, Capabilities: &mcp.ServerCapabilities{}})
	for tl, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return fmt.Errorf("list the tools of tabrelay at %s: %w", c.addr, err)
		}
		server.AddTool(tl, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			local.Store(req.Session)
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Meta: req.Params.Meta, Name: req.Params.Name, Arguments: req.Params.Arguments})
			if err != nil {
				return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{
					Text: fmt.Sprintf("the tabrelay server at %s did not answer the call: %v (is it still running? `tabrelay serve`)", c.addr, err)}}}, nil
			}
			return res, nil
		})
	}
	return server.Run(ctx, t)
}

// credentialTransport sends each request to the address the server proved itself at, with
// the current short-lived credential (renewed by the mutual proof when it nears expiry).
type credentialTransport struct {
	c   *apiClient
	tok string
}

// RoundTrip implements http.RoundTripper.
func (t *credentialTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	sess, err := t.c.session(req.Context(), t.tok)
	if err != nil {
		return nil, err
	}
	r := req.Clone(req.Context())
	r.URL.Host, r.Host = sess.Addr, sess.Addr
	r.Header.Set("Authorization", "Bearer "+sess.Credential)
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err == nil && resp.StatusCode == http.StatusUnauthorized {
		t.c.mu.Lock()
		t.c.sess.Credential = "" // the secret rotated: prove it again on the next request
		t.c.mu.Unlock()
	}
	return resp, err
}

// readCloser and writeCloser give stdio's streams the Close the MCP transport wants (closing
// the process's own streams is the process's business).
type readCloser struct{ r goio.Reader }

func (r readCloser) Read(p []byte) (int, error) { return r.r.Read(p) }
func (readCloser) Close() error                 { return nil }

type writeCloser struct{ w goio.Writer }

func (w writeCloser) Write(p []byte) (int, error) { return w.w.Write(p) }
func (writeCloser) Close() error                  { return nil }
