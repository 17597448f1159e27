package skills

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/tabrelay/tabrelay/snapshot"
)

// errUnresolved is wrapped when a target is not on the page.
var errUnresolved = errors.New("not on the page")

// Resolve finds the element of target t (templates filled from params) in a snapshot's page
// model and returns its node (with its ref). The error wraps errUnresolved and lists the
// closest candidates when the element is not there.
func Resolve(page *snapshot.Snapshot, t Target, params map[string]string) (*snapshot.Node, error) {
	return resolveNodes(page.Nodes(), t, params)
}

// resolveNodes is Resolve over a page model's nodes in document order.
func resolveNodes(nodes []*snapshot.Node, t Target, params map[string]string) (*snapshot.Node, error) {
	if len(t.Any) > 0 {
		for _, a := range t.Any {
			if n, err := resolveNodes(nodes, a, params); err == nil {
				return n, nil
			}
		}
		return nil, fmt.Errorf("%w: none of %s", errUnresolved, expandTarget(t, params))
	}
	matches := matchAll(nodes, t, params, true)
	nth := max(t.Nth, 1)
	if len(matches) >= nth {
		return matches[nth-1], nil
	}
	msg := "no " + expandTarget(t, params)
	if len(matches) > 0 {
		msg = fmt.Sprintf("only %d × %s", len(matches), expandTarget(Target{Role: t.Role, Name: t.Name}, params))
	}
	if c := candidates(nodes, t.Role); c != "" {
		msg += "; the page has " + c
	}
	return nil, fmt.Errorf("%w: %s", errUnresolved, msg)
}

// matchAll returns the nodes matching t (role, name, within), in document order.
func matchAll(nodes []*snapshot.Node, t Target, params map[string]string, needRef bool) []*snapshot.Node {
	var out []*snapshot.Node
	var within []*snapshot.Node
	if t.Within != nil {
		within = matchAll(nodes, *t.Within, params, false)
		if len(within) == 0 {
			return nil
		}
	}
	name := expand(t.Name, params)
	for _, n := range nodes {
		if needRef && n.Ref == "" {
			continue
		}
		if !roleMatches(t.Role, n.Role) || !nameMatches(name, n.Name) {
			continue
		}
		if t.Within != nil && !inside(n, within) {
			continue
		}
		out = append(out, n)
	}
	return out
}

// inside reports whether n is inside (below) one of ancestors.
func inside(n *snapshot.Node, ancestors []*snapshot.Node) bool {
	for _, a := range ancestors {
		if a != n && a.Contains(n) {
			return true
		}
	}
	return false
}

func roleMatches(want, got string) bool {
	if want == "" {
		return true
	}
	if strings.EqualFold(want, got) {
		return true
	}
	// A searchbox is a textbox for most purposes, and sites vary.
	return strings.EqualFold(want, "textbox") && strings.EqualFold(got, "searchbox")
}

func nameMatches(want, got string) bool {
	if want == "" {
		return true
	}
	if isPattern(want) {
		re, err := regexp.Compile("(?i)" + want[1:len(want)-1])
		return err == nil && re.MatchString(got)
	}
	return strings.EqualFold(strings.Join(strings.Fields(want), " "), strings.Join(strings.Fields(got), " "))
}

// candidates lists up to 6 elements of the role (or interactive elements) for error messages.
func candidates(nodes []*snapshot.Node, role string) string {
	var out []string
	for _, n := range nodes {
		if n.Ref == "" || (role != "" && !roleMatches(role, n.Role)) {
			continue
		}
		out = append(out, fmt.Sprintf("%s %q", n.Role, n.Name))
		if len(out) == 6 {
			out = append(out, "…")
			break
		}
	}
	return strings.Join(out, ", ")
}

func expandTarget(t Target, params map[string]string) string {
	c := t
	c.Name = expand(t.Name, params)
	return c.String()
}

// parseValues reads "Label: value" lines (also "Label = value") or a JSON object, in order.
func parseValues(s string) ([][2]string, error) {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "{") {
		dec := json.NewDecoder(strings.NewReader(s))
		dec.UseNumber()
		if _, err := dec.Token(); err != nil {
			return nil, fmt.Errorf("values look like JSON but are not: %w", err)
		}
		var out [][2]string
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return nil, fmt.Errorf("values look like JSON but are not: %w", err)
			}
			var v any
			if err := dec.Decode(&v); err != nil {
				return nil, fmt.Errorf("values look like JSON but are not: %w", err)
			}
			out = append(out, [2]string{fmt.Sprint(k), fmt.Sprint(v)})
		}
		return out, nil
	}
	var out [][2]string
	for _, line := range strings.Split(strings.ReplaceAll(s, `\n`, "\n"), "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		i := strings.IndexAny(line, ":=")
		if i <= 0 {
			return nil, fmt.Errorf("value line %q is not \"Label: value\"", line)
		}
		out = append(out, [2]string{strings.TrimSpace(line[:i]), strings.TrimSpace(line[i+1:])})
	}
	if len(out) == 0 {
		return nil, errors.New("no values given: write one \"Label: value\" per line")
	}
	return out, nil
}

var formRoles = map[string]bool{"textbox": true, "searchbox": true, "combobox": true, "checkbox": true,
	"radio": true, "switch": true, "spinbutton": true, "slider": true, "listbox": true, "date": true,
	"datetime": true, "time": true, "colorpicker": true}

// resolveField finds the form field labelled label: exact name first, then a unique partial match.
func resolveField(nodes []*snapshot.Node, label string) (*snapshot.Node, error) {
	var partial []*snapshot.Node
	for _, n := range nodes {
		if n.Ref == "" || !formRoles[n.Role] {
			continue
		}
		if nameMatches(label, n.Name) {
			return n, nil
		}
		if strings.Contains(strings.ToLower(n.Name), strings.ToLower(strings.TrimSpace(label))) {
			partial = append(partial, n)
		}
	}
	if len(partial) == 1 {
		return partial[0], nil
	}
	var names []string
	for _, n := range nodes {
		if n.Ref != "" && formRoles[n.Role] {
			names = append(names, fmt.Sprintf("%q", n.Name))
		}
	}
	if len(partial) > 1 {
		return nil, fmt.Errorf("%w: %q matches several fields (%d); use the full label", errUnresolved, label, len(partial))
	}
	return nil, fmt.Errorf("%w: no field labelled %q (fields: %s)", errUnresolved, label, strings.Join(names, ", "))
}
