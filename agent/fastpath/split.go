package fastpath

import (
	"regexp"
	"strings"

	"github.com/tabrelay/tabrelay/snapshot"
)

// sepRe finds the joints of a compound command: commas, "and", "then", outside quotes.
var sepRe = regexp.MustCompile(`(?i)\s*,\s*(?:and\s+)?(?:then\s+)?|\s+and\s+then\s+|\s+then\s+|\s+and\s+`)

// stepVerbRe matches the verbs a step of a compound command starts with.
var stepVerbRe = regexp.MustCompile(`^(?:please\s+)?(?:click|tap|press|push|hit|select|choose|pick|check|uncheck|tick|untick|type|enter|write|input|put|insert|fill|set|focus|open|close|dismiss|go|navigate|scroll|search|submit|toggle|flip|turn|enable|disable|switch|follow|hover|delete|remove|edit|reload|refresh|back|page|activate|double|apply|accept|reject|cancel|save|continue|confirm|load|expand|collapse|unfold|fold|hover|log|sign)\b`)

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
	command = rewritePairs(strings.TrimSpace(command))
	parts, joints := splitOutsideQuotes(command)
	if len(parts) < 2 {
		return expandSteps([]string{strings.TrimSpace(strings.TrimRight(command, ".!?"))}, nil, page, one)
	}
	names := pageNames(page)
	// A joint inside a name on the page is no joint ("click Save and close", "select Guyana,
	// Antigua and Barbuda from the list"): the parts either side of it stay one.
	joined := []string{parts[0]}
	for i, j := range joints {
		// the words either side of the joint, with it: "save and close"
		left := strings.Fields(normName(parts[i]))
		right := strings.Fields(normName(parts[i+1]))
		if len(left) == 0 || len(right) == 0 {
			return one
		}
		across := left[len(left)-1] + " " + strings.TrimSpace(normName(j)) + " " + right[0]
		across = strings.Join(strings.Fields(across), " ")
		inName := false
		for _, n := range names {
			inName = inName || strings.Contains(" "+n+" ", " "+across+" ")
		}
		if inName {
			joined[len(joined)-1] += j + parts[i+1]
		} else {
			joined = append(joined, parts[i+1])
		}
	}
	if parts = joined; len(parts) < 2 {
		return expandSteps([]string{strings.TrimSpace(strings.TrimRight(command, ".!?"))}, nil, page, one)
	}
	steps := make([]string, 0, len(parts))
	inherited := make([]bool, 0, len(parts))
	for i, p := range parts {
		p = strings.TrimSpace(strings.TrimRight(strings.TrimSpace(p), ".!?"))
		lp := strings.ToLower(p)
		borrowed := false
		if !stepVerbRe.MatchString(lp) {
			prev := ""
			if i > 0 {
				prev = strings.ToLower(steps[i-1])
			}
			v := inheritVerbRe.FindString(prev)
			if v == "" || i == 0 {
				return one
			}
			p, borrowed = v+p, true
		}
		steps = append(steps, p)
		inherited = append(inherited, borrowed)
	}
	return expandSteps(steps, inherited, page, one)
}

// expandSteps applies the rewrites that need the steps: a list of values for one list is one
// step ("select A, B from the list"), "select nothing" is no step, "into both fields" is a
// step per field. It returns whole when a rewrite finds the command does not fit the page.
func expandSteps(steps []string, inherited []bool, page *snapshot.Snapshot, whole []string) []string {
	steps = mergeListValues(steps, inherited)
	out := make([]string, 0, len(steps))
	nodes := page.Nodes()
	for _, st := range steps {
		if noneRe.MatchString(strings.ToLower(st)) && len(steps) > 1 {
			// "Select nothing and click Submit": nothing to select
			continue
		}
		if path := menuPath(st); path != nil {
			out = append(out, path...)
			continue
		}
		if m := bothRe.FindStringSubmatch(st); m != nil {
			two, ok := both(nodes, m)
			if !ok {
				return whole
			}
			out = append(out, two...)
			continue
		}
		out = append(out, st)
	}
	if len(out) == 0 {
		return whole
	}
	return out
}

// noneRe is a step that selects nothing.
var noneRe = regexp.MustCompile(`^(?:select|choose|pick|check|tick) (?:nothing|none|no options?|no items?)$`)

// listTailRe is a choosing step that names its list: "select Congo from the scroll list".
var listTailRe = regexp.MustCompile(`(?i)^(select|choose|pick) (.+?) ((?:from|in|on) (?:the |this )?[^"]*\b(?:list|listbox|list box|menu|dropdown|drop down|select))$`)

// mergeListValues joins "select A", then "select B from the list" (its verb borrowed) into one
// step, "select A, B from the list": the values are for the one list the last names.
func mergeListValues(steps []string, inherited []bool) []string {
	if inherited == nil {
		return steps
	}
	out := make([]string, 0, len(steps))
	for i := 0; i < len(steps); i++ {
		j := i
		for j+1 < len(steps) && inherited[j+1] && strings.EqualFold(firstWord(steps[j+1]), firstWord(steps[i])) {
			j++
		}
		m := listTailRe.FindStringSubmatch(steps[j])
		if j == i || m == nil {
			out = append(out, steps[i])
			continue
		}
		values := make([]string, 0, j-i+1)
		for k := i; k < j; k++ {
			values = append(values, strings.TrimSpace(steps[k][len(firstWord(steps[k])):]))
		}
		values = append(values, m[2])
		out = append(out, firstWord(steps[i])+" "+strings.Join(values, ", ")+" "+m[3])
		i = j
	}
	return out
}

func firstWord(s string) string {
	w, _, _ := strings.Cut(s, " ")
	return w
}

// bothRe is a step into both fields of a kind: "Enter the password "x" into both text fields".
var bothRe = regexp.MustCompile(`(?i)^(.+?) (in|into|to|on) both (?:the )?(.+)$`)

// both turns a step into both fields of a kind into a step for the first and one for the
// second; ok false unless the page has exactly two of that kind.
func both(nodes []*snapshot.Node, m []string) ([]string, bool) {
	_, k, ok := kindOf(strings.ToLower(strings.TrimSpace(m[3])))
	if !ok {
		return nil, false
	}
	tg := parseTarget(k.words)
	if len(enabled(nodes, tg.roles, tg.filter)) != 2 {
		return nil, false
	}
	return []string{m[1] + " " + m[2] + " the first " + k.words, m[1] + " " + m[2] + " the second " + k.words}, true
}

// pairRe reads one "the <field> <value>" of a log-in style command.
var pairRe = regexp.MustCompile(`(?i)^the ([a-z][a-z -]{0,30}?) ("[^"]*"|“[^”]*”|[^\s",]+)$`)

// pairsRe is a command that names fields and their values in one list: "Enter the username
// "ada" and the password "x1" into the text fields and press login".
var pairsRe = regexp.MustCompile(`(?i)^(enter|type|input|fill in|put|write) (the [^,]+?(?:(?:,| and) the [^,]+?)+)(?: (?:in|into) (?:the |both )?(?:(?:text|input) )?(?:fields|boxes|inputs|textboxes|form))?((?:,? and |,? then |, ).+)?$`)

// rewritePairs turns "Enter the username "ada" and the password "x1" into the text fields"
// into "type "ada" into the username, type "x1" into the password", each value to the field its
// word names; anything else is returned as it is.
func rewritePairs(command string) string {
	c := strings.TrimRight(command, ".!?")
	m := pairsRe.FindStringSubmatch(c)
	if m == nil {
		return command
	}
	parts, _ := splitOutsideQuotes(m[2])
	if len(parts) < 2 {
		return command
	}
	steps := make([]string, 0, len(parts))
	for _, p := range parts {
		pm := pairRe.FindStringSubmatch(strings.TrimSpace(p))
		if pm == nil {
			return command
		}
		v := pm[2]
		if !strings.ContainsAny(v[:1], `"“`) {
			v = `"` + v + `"`
		}
		steps = append(steps, "type "+v+" into the "+pm[1])
	}
	return strings.Join(steps, ", then ") + m[3]
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

// groupRoles are the roles whose name may be their items' names run together (a list box named
// by all its options): a joint between two item names is no joint inside one name.
var groupRoles = roleSet("listbox", "list", "menu", "menubar", "tablist", "radiogroup", "tree", "toolbar", "group", "table", "grid", "row", "dialog")

// pageNames lists the normalized names of the page's elements with refs.
func pageNames(page *snapshot.Snapshot) []string {
	var out []string
	for _, n := range page.Nodes() {
		if n.Ref != "" && n.Name != "" && !groupRoles[n.Role] {
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

// menuPathRe is a menu item named by its path of menus: "Select File > Export > PDF".
var menuPathRe = regexp.MustCompile(`(?i)^(select|choose|pick|click|click on|open|go to) ([^>"]+?(?:\s*>\s*[^>"]+?)+)$`)

// menuPath turns "Select File > Export > PDF" into steps that hover over each menu of the
// path, to open its submenu, and click the last item (nil for any other step): clicking a menu
// item that holds a submenu may choose that item.
func menuPath(step string) []string {
	m := menuPathRe.FindStringSubmatch(strings.TrimSpace(step))
	if m == nil {
		return nil
	}
	items := strings.Split(m[2], ">")
	out := make([]string, 0, len(items))
	for i, it := range items {
		it = strings.TrimSpace(it)
		if it == "" {
			return nil
		}
		if i < len(items)-1 {
			out = append(out, "hover over the menu item "+it)
		} else {
			out = append(out, "click the menu item "+it)
		}
	}
	return out
}
