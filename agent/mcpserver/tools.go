package mcpserver

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tabrelay/tabrelay/agent/actions"
	"github.com/tabrelay/tabrelay/agent/actions/gate"
	"github.com/tabrelay/tabrelay/snapshot"
)

// wantSnapshot is the argument every page-changing tool takes to return the whole new outline
// instead of what changed.
const wantSnapshot = "snapshot"

// catalogue derives every tool from the action registry (browser tools) and adds the agent's
// and the skills' tools.
func (s *Server) catalogue() ([]*tool, error) {
	reg := s.opts.Actions.Registry()
	var out []*tool
	for _, k := range reg.All() {
		name := k.ToolName()
		if k.Name == "evaluate" && s.opts.AllowEvaluate {
			name = k.Name
		}
		if name == "" {
			continue // not offered (pdf, resize; evaluate without the option)
		}
		var extra []string
		switch k.Params() {
		case reflect.TypeFor[actions.Screenshot]():
			extra = []string{"labels", "format", "fullPage", "ref"}
		case reflect.TypeFor[actions.Click]():
			extra = []string{"double"}
		}
		schema, err := k.Schema(extra...)
		if err != nil {
			return nil, err
		}
		t := &tool{def: &mcp.Tool{Name: name, Description: k.Doc, InputSchema: schema}}
		switch k.Params() {
		case reflect.TypeFor[actions.Snapshot]():
			if t.def.InputSchema, err = snapshotSchema(); err != nil {
				return nil, err
			}
			t.run = (*Server).snapshot
		case reflect.TypeFor[actions.Screenshot]():
			props := schema["properties"].(map[string]any)
			props["maxWidth"] = map[string]any{"type": "integer", "description": "scale down to at most this many pixels wide"}
			t.run = (*Server).screenshot
		case reflect.TypeFor[actions.Tabs](), reflect.TypeFor[actions.Console](), reflect.TypeFor[actions.Errors](),
			reflect.TypeFor[actions.Network](), reflect.TypeFor[actions.Focus](), reflect.TypeFor[actions.Open](),
			reflect.TypeFor[actions.Close]():
			t.run = reads(k)
		default:
			if k.Risk != actions.Reads {
				props := schema["properties"].(map[string]any)
				props[wantSnapshot] = map[string]any{"type": "boolean", "description": "return the whole new outline, not the changes"}
			}
			t.run = acts(k)
		}
		out = append(out, t)
	}
	if s.opts.Runner != nil {
		out = append(out, s.taskTool())
	}
	if s.opts.Skills != nil {
		out = append(out, s.skillTools()...)
	}
	return out, nil
}

// snapshotSchema is the snapshot tool's arguments: the snapshot options (snapshot.Options).
func snapshotSchema() (map[string]any, error) {
	sc, err := jsonschema.For[snapshot.Options](&jsonschema.ForOptions{})
	if err != nil {
		return nil, fmt.Errorf("mcpserver: the snapshot options' schema: %w", err)
	}
	sc.AdditionalProperties = nil
	desc := map[string]string{
		"interactive": "only elements with refs, one per line",
		"full":        "keep unnamed containers",
		"maxDepth":    "limit nesting",
		"maxChars":    "truncate to this many characters",
		"maxTokens":   "at most this many tokens, what matters first (search finds the rest)",
		"scope":       "only the subtree of this ref",
		"frame":       "only this frame (iframe ref or URL part)",
	}
	for n, p := range sc.Properties {
		p.Description = desc[n]
	}
	b, err := json.Marshal(sc)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	return m, json.Unmarshal(b, &m)
}

// action reads the call's arguments into an action of kind k's tool, leaving out the MCP-only
// ones (snapshot, maxWidth).
func (c *call) action(k *actions.Kind, drop ...string) (actions.Action, error) {
	reg := c.srv.opts.Actions.Registry()
	var m map[string]json.RawMessage
	if len(c.args) > 0 && string(c.args) != "null" {
		if err := json.Unmarshal(c.args, &m); err != nil {
			return actions.Action{}, fmt.Errorf("%s: the arguments must be a JSON object: %w", k.Name, err)
		}
	}
	for _, d := range drop {
		delete(m, d)
	}
	b, _ := json.Marshal(m)
	if k.ToolName() == "" {
		return decodeHidden(k, b)
	}
	return reg.FromTool(k.ToolName(), b)
}

// decodeHidden reads arguments of a kind the model is not offered (evaluate) strictly.
func decodeHidden(k *actions.Kind, args []byte) (actions.Action, error) {
	var m map[string]any
	_ = json.Unmarshal(args, &m)
	if m == nil {
		m = map[string]any{}
	}
	m["kind"] = k.Name
	b, _ := json.Marshal(m)
	var a actions.Action
	if err := json.Unmarshal(b, &a); err != nil {
		return a, err
	}
	return a, a.Validate()
}

// acts runs an action kind and reports what it changed in the outline.
func acts(k *actions.Kind) func(*Server, *call) (*mcp.CallToolResult, error) {
	return func(s *Server, c *call) (*mcp.CallToolResult, error) {
		var opt struct {
			Snapshot bool `json:"snapshot"`
		}
		_ = json.Unmarshal(c.args, &opt)
		a, err := c.action(k, wantSnapshot)
		if err != nil {
			return nil, err
		}
		tab := c.st.currentTab()
		var before *snapshot.Snapshot
		if k.Risk != actions.Reads {
			if tab, err = s.resolve(c); err != nil {
				return nil, err
			}
			// a navigation's result is the new page's summary: no need for the page before
			if before = c.st.lastSeen(tab); before == nil && !opt.Snapshot && k.Risk != actions.Navigates {
				if snap, err := s.opts.Actions.Snapshot(c.ctx, tab, snapshot.Options{}); err == nil {
					before = snap
				}
			}
		}
		res, err := s.actGated(c, tab, a)
		if err != nil {
			return nil, err
		}
		if k.Risk == actions.Reads {
			return text("%s", res.Text()), nil
		}
		if res.TargetID != "" {
			tab = res.TargetID
		}
		after, err := s.opts.Actions.Snapshot(c.ctx, tab, snapshot.Options{})
		if err != nil {
			return text("%s\n(no snapshot after the action: %v)", res.Text(), err), nil
		}
		c.st.saw(tab, after)
		var b strings.Builder
		b.WriteString(res.TextBesidePage()) // what follows shows the page
		page := ""
		switch {
		case opt.Snapshot:
			page = after.Text
		case k.Risk == actions.Navigates || before == nil || before.URL != after.URL:
			// the message names the page it led to when it set the result's URL
			page = newPage(after, res.URL == after.URL)
			c.st.tell(tab, after.Header())
		default:
			page = changes(before, after, setFields(a)) // nothing when nothing changed
		}
		if page != "" {
			b.WriteString("\n\n" + page)
		}
		return text("%s", b.String()), nil
	}
}

// resolve returns the session's tab, or the first shared tab when it has none.
func (s *Server) resolve(c *call) (string, error) {
	if t := c.st.currentTab(); t != "" {
		return t, nil
	}
	tabs, err := s.opts.Actions.Tabs(c.ctx)
	if err != nil {
		return "", err
	}
	if len(tabs) == 0 {
		return "", fmt.Errorf("%w: no tab is shared", actions.ErrNoTab)
	}
	return tabs[0].TargetID, nil
}

// reads runs the kinds whose results are lists or tab changes, written out compactly.
func reads(k *actions.Kind) func(*Server, *call) (*mcp.CallToolResult, error) {
	return func(s *Server, c *call) (*mcp.CallToolResult, error) {
		a, err := c.action(k)
		if err != nil {
			return nil, err
		}
		tab := ""
		if !k.Browser && a.Tab() == "" {
			tab = c.st.currentTab()
		}
		res, err := s.opts.Actions.Act(c.ctx, tab, a)
		if err != nil {
			return nil, err
		}
		var b strings.Builder
		b.WriteString(res.Message)
		switch p := a.Params.(type) {
		case *actions.Tabs:
			cur := c.st.currentTab()
			if cur == "" && len(res.Tabs) > 0 {
				cur = res.Tabs[0].TargetID
			}
			for _, t := range res.Tabs {
				mark := " "
				if t.TargetID == cur {
					mark = "*"
				}
				fmt.Fprintf(&b, "\n%s %s %q %s", mark, t.TargetID, t.Title, t.URL)
			}
			if len(res.Tabs) == 0 {
				b.WriteString("\n" + adviceShare)
			} else {
				b.WriteString("\n(* is the tab the tools act on; switch_tab chooses another)")
			}
		case *actions.Focus:
			c.st.setTab(res.TargetID)
		case *actions.Open:
			c.st.setTab(res.TargetID)
			fmt.Fprintf(&b, ": %s (now the current tab)", res.TargetID)
		case *actions.Close:
			if c.st.currentTab() == res.TargetID || p.Tab == "" {
				c.st.setTab("")
			}
		default:
			// console, errors, network, downloads: the entries, a line each
			b.Reset()
			b.WriteString(res.Text())
		}
		return text("%s", b.String()), nil
	}
}

// snapshot reads the tab's outline with the options given.
func (s *Server) snapshot(c *call) (*mcp.CallToolResult, error) {
	var o snapshot.Options
	if len(c.args) > 0 {
		dec := json.NewDecoder(strings.NewReader(string(c.args)))
		if err := dec.Decode(&o); err != nil {
			return nil, fmt.Errorf("snapshot: bad options: %w", err)
		}
	}
	tab, err := s.resolve(c)
	if err != nil {
		return nil, err
	}
	res, err := s.opts.Actions.Act(c.ctx, tab, actions.Do(actions.Snapshot{Options: &o}))
	if err != nil {
		return nil, err
	}
	snap := res.Snapshot
	if o != (snapshot.Options{}) {
		return text("%s", snap.Text), nil
	}
	c.st.saw(tab, snap)
	if h := snap.Header(); c.st.heard(tab, h) {
		// the client holds this page's summary from the navigation: the outline alone
		return text("%s", snap.Outline()), nil
	}
	return text("%s", snap.Text), nil
}

// screenshot captures the tab as MCP image content.
func (s *Server) screenshot(c *call) (*mcp.CallToolResult, error) {
	var opt struct {
		MaxWidth int `json:"maxWidth"`
	}
	_ = json.Unmarshal(c.args, &opt)
	k := s.opts.Actions.Registry().Kind("screenshot")
	a, err := c.action(k, "maxWidth")
	if err != nil {
		return nil, err
	}
	tab, err := s.resolve(c)
	if err != nil {
		return nil, err
	}
	res, err := s.opts.Actions.Act(c.ctx, tab, a)
	if err != nil {
		return nil, err
	}
	data, mime := res.Data, res.MIME
	if opt.MaxWidth > 0 {
		if data, mime, err = shrink(data, mime, opt.MaxWidth); err != nil {
			return nil, err
		}
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.ImageContent{Data: data, MIMEType: mime}}}, nil
}

// actGated runs action a as the client's model asks it: the safety gate judges it. A step the
// gate holds is put to the person through the client (an elicitation) where the client
// supports it, and runs once if they accept; elsewhere the error names the risk and how the
// person can do that one step themselves. The model can never approve a step.
func (s *Server) actGated(c *call, tab string, a actions.Action) (*actions.Result, error) {
	grants := gate.NewGrants()
	ctx := gate.With(c.ctx, gate.Request{Who: gate.Agent, Grants: grants})
	res, err := s.opts.Actions.Act(ctx, tab, a)
	var held *gate.ConfirmError
	if !errors.As(err, &held) {
		return res, err
	}
	d := held.Decision
	if !canElicit(c) {
		return nil, fmt.Errorf("%w\nThis step needs the user's own approval, which a tool call cannot give. Tell the user what it will do and why it asks; they can do it themselves in the browser, or run it as their own command: tabrelay act --tab %s %s", err, tab, cliLine(a))
	}
	ans, eerr := c.req.Session.Elicit(c.ctx, &mcp.ElicitParams{Mode: "form",
		Message:         fmt.Sprintf("tabrelay: the assistant wants to %s.\nThis is %s and may not be undone. Accept to let it do this one step; decline to refuse it.", d.Prompt(), d.Reason),
		RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{}}})
	if eerr != nil {
		return nil, fmt.Errorf("%w (asking the user failed: %v)", err, eerr)
	}
	if ans.Action != "accept" {
		return nil, fmt.Errorf("the user declined %s (%s); nothing was done", d.Prompt(), d.Reason)
	}
	grants.Approve(d)
	return s.opts.Actions.Act(ctx, tab, a)
}

// cliLine is action a as `tabrelay act` arguments: --json and the action's JSON.
func cliLine(a actions.Action) string {
	b, err := json.Marshal(a)
	if err != nil {
		return a.Kind
	}
	return "--json '" + strings.ReplaceAll(string(b), "'", "'\\''") + "'"
}
