package fastpath

import (
	"regexp"
	"strings"

	"github.com/tabrelay/tabrelay/snapshot"
)

// sepRe finds the joints of a compound command: commas, "and", "then", outside quotes.
var sepRe = regexp.MustCompile(`(?i)\s*,\s*(?:and\s+)?(?:then\s+)?|\s+and\s+then\s+|\s+then\s+|\s+and\s+`)

// stepVerbRe matches the verbs a step of a compound command starts with.
var stepVerbRe = regexp.MustCompile(`^(?:please\s+)?(?:click|tap|press|push|hit|select|choose|pick|check|uncheck|tick|untick|type|enter|write|input|put|insert|fill|set|focus|open|close|dismiss|go|navigate|scroll|search|submit|toggle|flip|turn|enable|disable|switch|follow|hover|delete|remove|edit|reload|refresh|back|page|activate|double|apply|accept|reject|cancel|save|continue|confirm|load)\b`)

// inheritVerbRe matches the verbs a verbless step borrows ("click file, then save").
var inheritVerbRe = regexp.MustCompile(`^(?:click(?: on)?|tap|press|hit|push|select|choose|pick|open)\s`)

// Split cuts a compound command ("Enter "Jerald" into the text field and press Submit.") into
// its steps, to be matched one by one on a fresh page model after the previous step ran. It
// splits only where every part reads as a command (a step with no verb borrows a clicking verb
// from the step before: "click file, then save"), never inside quotes, and never where the joint
// is part of a name on page ("click Save and close" for a button "Save and close"). Anything
// else is one step.
func Split(command string, page *snapshot.Snapshot) []string {
	one := []string{command}
	parts, joints := splitOutsideQuotes(strings.TrimSpace(command))
	if len(parts) < 2 {
		return one
	}
	names := pageNames(page)
	for i, j := range joints {
		// the words either side of the joint, with it: "save and close"
		left := strings.Fields(normName(parts[i]))
		right := strings.Fields(normName(parts[i+1]))
		if len(left) == 0 || len(right) == 0 {
			return one
		}
		across := left[len(left)-1] + " " + strings.TrimSpace(normName(j)) + " " + right[0]
		across = strings.Join(strings.Fields(across), " ")
		for _, n := range names {
			if strings.Contains(" "+n+" ", " "+across+" ") {
				return one
			}
		}
	}
	steps := make([]string, 0, len(parts))
	for i, p := range parts {
		p = strings.TrimSpace(strings.TrimRight(strings.TrimSpace(p), ".!?"))
		lp := strings.ToLower(p)
		if !stepVerbRe.MatchString(lp) {
			prev := ""
			if i > 0 {
				prev = strings.ToLower(steps[i-1])
			}
			v := inheritVerbRe.FindString(prev)
			if v == "" || i == 0 {
				return one
			}
			p = v + p
		}
		steps = append(steps, p)
	}
	return steps
}

// splitOutsideQuotes cuts s at sepRe matches that are not inside quotes, returning the parts and
// the joints between them.
func splitOutsideQuotes(s string) (parts, joints []string) {
	quoted := make([]bool, len(s)+1)
	in := false
	for i, r := range s {
		if strings.ContainsRune(`"“”`, r) {
			in = !in
		}
		quoted[i] = in
	}
	last := 0
	for _, m := range sepRe.FindAllStringIndex(s, -1) {
		if quoted[m[0]] || m[0] == 0 {
			continue
		}
		parts = append(parts, s[last:m[0]])
		joints = append(joints, s[m[0]:m[1]])
		last = m[1]
	}
	parts = append(parts, s[last:])
	return parts, joints
}

// pageNames lists the normalized names of the page's elements with refs.
func pageNames(page *snapshot.Snapshot) []string {
	var out []string
	for _, n := range page.Nodes() {
		if n.Ref != "" && n.Name != "" {
			out = append(out, normName(n.Name))
		}
	}
	return out
}

// findRef returns the node with ref, or nil.
func findRef(nodes []*snapshot.Node, ref string) *snapshot.Node {
	for _, n := range nodes {
		if n.Ref == ref {
			return n
		}
	}
	return nil
}
