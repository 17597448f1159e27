package skills

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/tabrelay/tabrelay/agent/actions"
	"github.com/tabrelay/tabrelay/agent/task"
)

// ErrNotSavable is wrapped when a task cannot be kept as a skill: it did not succeed, or it did
// nothing a skill can replay.
var ErrNotSavable = errors.New("task cannot be saved as a skill")

// DraftFromTask turns a task that succeeded into a skill draft to review and save, as a
// recording's (PUT /api/skills/{name}): its page steps become skill steps naming each element
// by the role and name it had (Step.Target), what was typed becomes parameters (with the typed
// value as the example), and what appeared after a step (the page it led to, a status line)
// becomes the step's expectation. The draft is named and described from the user's request;
// no model is called. A saved draft replays with no model while the page is as it was.
func (s *Service) DraftFromTask(ctx context.Context, t *task.Task) (*Draft, error) {
	if t.Status != task.StatusSucceeded {
		return nil, fmt.Errorf("%w: task %s %s; only a task that succeeded can be kept", ErrNotSavable, t.ID, t.Status)
	}
	var caps []captured
	acts := 0 // steps that act on the page (a hand-over alone is no skill)
	startURL := ""
	for _, st := range t.Steps {
		if st.Status != task.StepOK {
			continue
		}
		c, ok, err := capturedFromStep(st)
		if err != nil {
			return nil, fmt.Errorf("%w: step %d (%s) of task %s: %v", ErrNotSavable, st.Index, st.Tool, t.ID, err)
		}
		if !ok {
			continue
		}
		if startURL == "" {
			startURL = st.URLBefore
		}
		caps = append(caps, c)
		if c.Kind != "hand_over" {
			acts++
		}
	}
	if acts == 0 {
		return nil, fmt.Errorf("%w: task %s did nothing on a page that a skill can replay (it only read pages or answered)", ErrNotSavable, t.ID)
	}
	d, err := s.draftWith(ctx, Recording{Tab: t.TabID, URL: startURL, StartedAt: t.CreatedAt}, caps, t.Shown(), false)
	if err != nil {
		return nil, fmt.Errorf("drafting a skill from task %s: %w", t.ID, err)
	}
	return d, nil
}

// capturedFromStep is what a recorder would have captured of a task's step; ok is false for
// steps a skill leaves out (reading the page, the plan, the answer).
func capturedFromStep(st task.Step) (captured, bool, error) {
	var a struct {
		Text    string   `json:"text"`
		Submit  bool     `json:"submit"`
		Key     string   `json:"key"`
		Values  []string `json:"values"`
		Checked *bool    `json:"checked"`
		URL     string   `json:"url"`
	}
	if len(st.Args) > 0 {
		if err := json.Unmarshal(st.Args, &a); err != nil {
			return captured{}, false, fmt.Errorf("its arguments are not JSON: %v", err)
		}
	}
	c := captured{Kind: st.Tool, URL: st.URLBefore, ExpectTo: navigatedTo(st.URLBefore, st.URLAfter)}
	switch st.Tool {
	case "click", "type", "select", "check", "hover":
		if st.Target == nil {
			return captured{}, false, errors.New("the element it acted on was not recorded")
		}
		c.Target = Target{Role: st.Target.Role, Name: st.Target.Name, Nth: st.Target.Nth}
	}
	switch st.Tool {
	case "click":
		c.ExpectText = appeared(st.Result)
	case "hover", "back", "forward", "reload":
	case "type":
		c.Value, c.Submit = a.Text, a.Submit
		c.Password = strings.Contains(strings.ToLower(c.Target.Name), "password")
	case "press":
		if a.Key == "" {
			return captured{}, false, errors.New("it names no key")
		}
		c.Key = a.Key
	case "select":
		c.Values = a.Values
	case "check":
		c.Checked = a.Checked == nil || *a.Checked
	case "navigate":
		c.URL, c.ExpectTo = a.URL, ""
	case "hand_over":
		var h struct {
			Instruction string `json:"instruction"`
		}
		_ = json.Unmarshal(st.Args, &h)
		c.Value, c.ExpectTo = h.Instruction, ""
	default:
		// Reading, looking and the loop's own tools (plan, answer, questions) are left out;
		// other page actions a skill cannot replay yet refuse the whole task rather than drop
		// a step.
		if loopTools[st.Tool] {
			return captured{}, false, nil
		}
		for _, k := range actions.Default().All() {
			if k.ToolName() == st.Tool && (k.Risk == actions.Reads || k.Risk == actions.Views) {
				return captured{}, false, nil
			}
		}
		return captured{}, false, fmt.Errorf("a %s step cannot be kept in a skill yet", st.Tool)
	}
	return c, true, nil
}

// loopTools are the task loop's own tools, which do nothing on the page.
var loopTools = map[string]bool{"update_plan": true, "finish": true, "fail": true, "ask_user": true}

// navigatedTo is the path a step led to when it changed the page's path ("" otherwise).
func navigatedTo(before, after string) string {
	b, err1 := url.Parse(before)
	a, err2 := url.Parse(after)
	if err1 != nil || err2 != nil || after == "" || a.Path == b.Path {
		return ""
	}
	return a.Path
}

// appearedRe finds a short text or status line a step's observation reports as added ("+") or
// changed ("~", followed by what it was).
var appearedRe = regexp.MustCompile(`(?m)^[+~]\s+(?:text: (.{2,80}?)(?: \(was: .*\))?$|(?:status|alert)\b[^"\n]*"([^"\n]{2,80})")`)

// appeared is the first short text or status line a step added to the page or changed ("" if
// none).
func appeared(result string) string {
	m := appearedRe.FindStringSubmatch(result)
	if m == nil {
		return ""
	}
	return strings.TrimSpace(m[1] + m[2])
}
