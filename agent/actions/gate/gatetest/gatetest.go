// Package gatetest lets fakes of the browser in unit tests judge actions with the real safety
// gate (package gate): it reads the elements an action touches from a hand-built page model
// (snapshot/pagetest) as the action service reads them from the live page. Tests of the
// service itself run in real Chromium (agent/actions, e2e).
package gatetest

import (
	"context"
	"strings"

	"github.com/tabrelay/tabrelay/agent/actions"
	"github.com/tabrelay/tabrelay/agent/actions/gate"
	"github.com/tabrelay/tabrelay/snapshot"
)

// Check judges action a on page for the request ctx carries, as the action service does:
// a *gate.ConfirmError or a *gate.BlockedError when it may not run; else the decision an
// approval allowed (nil if none was needed), for actions.Result.Approved.
func Check(ctx context.Context, g *gate.Gate, page *snapshot.Snapshot, a actions.Action) (*gate.Decision, error) {
	return g.CheckAll(ctx, Proposals(page, a), gate.From(ctx), nil)
}

// Proposals are what the gate judges of action a on page (see actions.Service).
func Proposals(page *snapshot.Snapshot, a actions.Action) []gate.Proposal {
	url := ""
	if page != nil {
		url = page.URL
	}
	one := func(act gate.Action, ref string) []gate.Proposal {
		return []gate.Proposal{{Action: act, Element: Element(page, ref), URL: url}}
	}
	switch p := a.Params.(type) {
	case *actions.Click:
		return one(gate.Action{Kind: "click"}, p.Ref)
	case *actions.Type:
		return one(gate.Action{Kind: "type", Text: p.Text, Submit: p.Submit}, p.Ref)
	case *actions.Press:
		key := p.Key
		if i := strings.LastIndexByte(key, '+'); i >= 0 && i < len(key)-1 {
			key = key[i+1:]
		}
		ref := p.Ref
		if ref == "" && page != nil {
			if f := page.Focused(); f != nil {
				ref = f.Ref
			}
		}
		return one(gate.Action{Kind: "press", Key: key}, ref)
	case *actions.Select:
		return one(gate.Action{Kind: "select", Values: p.Values}, p.Ref)
	case *actions.Check:
		return one(gate.Action{Kind: "check", Checked: p.Checked}, p.Ref)
	case *actions.Upload:
		return one(gate.Action{Kind: "upload", Files: p.Files}, p.Ref)
	case *actions.Drag:
		return []gate.Proposal{{Action: gate.Action{Kind: "drag"}, Element: Element(page, p.Ref), Target: Element(page, p.To), URL: url}}
	case *actions.Dialog:
		pr := gate.Proposal{Action: gate.Action{Kind: "dialog", Accept: p.Accept == nil || *p.Accept, Text: p.PromptText}, URL: url}
		if page != nil && page.Dialog != nil {
			pr.DialogType, pr.DialogMessage = page.Dialog.Type, page.Dialog.Message
		}
		return []gate.Proposal{pr}
	case *actions.Fill:
		var out []gate.Proposal
		for _, f := range p.Fields {
			el := Element(page, f.Ref)
			act := gate.Action{Kind: "type", Text: string(f.Value)}
			if el != nil {
				switch el.Role {
				case "checkbox", "radio", "switch":
					act = gate.Action{Kind: "check", Checked: string(f.Value) == "true"}
				case "combobox", "listbox":
					act = gate.Action{Kind: "select", Values: []string{string(f.Value)}}
				}
			}
			out = append(out, gate.Proposal{Action: act, Element: el, URL: url})
		}
		return out
	case *actions.Evaluate:
		return one(gate.Action{Kind: "evaluate"}, p.Ref)
	}
	return nil
}

// Element reads the element ref of page as the gate sees it (nil when absent): its name is
// what it shows, its scope its form or dialog (else the nearest container with buttons).
func Element(page *snapshot.Snapshot, ref string) *gate.Element {
	if page == nil || ref == "" {
		return nil
	}
	n := page.Find(ref)
	if n == nil {
		return nil
	}
	el := &gate.Element{Ref: ref, Role: n.Role, Name: n.Name, Text: n.Name, Password: n.Password || n.Has("password"), Options: n.Options}
	scope := n.Closest("form", "dialog", "alertdialog")
	var nodes []*snapshot.Node
	if scope != nil {
		el.Scope = "form"
		if scope.Role != "form" {
			el.Scope = "dialog"
		}
		nodes = scope.Descendants()
		for _, d := range nodes {
			if d.Role == "button" {
				el.Submits = scope.Role == "form"
			}
		}
	} else {
		for p := n.Parent(); p != nil && p != page.Root; p = p.Parent() {
			if hasButton(p) {
				nodes = p.Descendants()
				break
			}
		}
	}
	var words []string
	for _, d := range nodes {
		if d.Role == "button" && !d.Has("disabled") && d != n {
			el.Buttons = append(el.Buttons, gate.Control{Text: d.Name})
		}
		if !control(d.Role) && d != n {
			if w := strings.TrimSpace(d.Words()); w != "" {
				words = append(words, w)
			}
		}
	}
	if scope == nil {
		for _, d := range page.Around(n, 12, 3) {
			if !control(d.Role) && d != n {
				if w := strings.TrimSpace(d.Words()); w != "" {
					words = append(words, w)
				}
			}
		}
	}
	el.ScopeText = strings.Join(words, " ")
	return el
}

func hasButton(n *snapshot.Node) bool {
	for _, d := range n.Descendants() {
		if d.Role == "button" {
			return true
		}
	}
	return false
}

func control(role string) bool {
	switch role {
	case "button", "link", "menuitem", "menuitemcheckbox", "menuitemradio", "tab", "option", "treeitem", "checkbox", "radio", "switch":
		return true
	}
	return false
}
