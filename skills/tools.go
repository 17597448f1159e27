package skills

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/tmc/langchaingo/llms"

	"github.com/tabrelay/tabrelay/agent/task"
)

// Tool names offered to the agent's model by Tools.
const (
	ToolListSkills = "list_skills"
	ToolReadSkill  = "read_skill"
	ToolRunSkill   = "run_skill"
)

// Tools returns the tool definitions that let the agent's model find, read and run skills
// (for the task loop to offer next to its browser tools; see CallTool).
func (s *Service) Tools() []llms.Tool {
	str := func(d string) map[string]any {
		if d == "" {
			return map[string]any{"type": "string"}
		}
		return map[string]any{"type": "string", "description": d}
	}
	obj := func(props map[string]any, req ...string) map[string]any {
		o := map[string]any{"type": "object", "properties": props}
		if len(req) > 0 {
			o["required"] = req
		}
		return o
	}
	tool := func(name, desc string, params map[string]any) llms.Tool {
		return llms.Tool{Type: "function", Function: &llms.FunctionDefinition{Name: name, Description: desc, Parameters: params}}
	}
	return []llms.Tool{
		tool(ToolListSkills, "Saved skills (replayable procedures) that fit a request on this page, best first.",
			obj(map[string]any{"request": str("the user's words")})),
		tool(ToolReadSkill, "A skill's SKILL.md: intent, parameters, steps.",
			obj(map[string]any{"name": str("")}, "name")),
		tool(ToolRunSkill, "Run a skill on this tab.",
			obj(map[string]any{"name": str(""), "params": map[string]any{
				"type": "object", "description": "values by name", "additionalProperties": map[string]any{"type": "string"}, "properties": map[string]any{},
			}}, "name")),
	}
}

// ReadOnlyTool reports whether the tool never changes a page: list_skills and read_skill only
// read the library; run_skill acts on the tab.
func (s *Service) ReadOnlyTool(name string) bool {
	return name == ToolListSkills || name == ToolReadSkill
}

// CallTool runs one of the Tools for the model on tab (whose URL is pageURL) and returns the
// text to give back. Errors are worded for the model to act on.
func (s *Service) CallTool(ctx context.Context, name string, args json.RawMessage, tab, pageURL string) (string, error) {
	var a struct {
		Request string            `json:"request"`
		Name    string            `json:"name"`
		Params  map[string]string `json:"params"`
	}
	if len(args) > 0 {
		if err := json.Unmarshal(args, &a); err != nil {
			return "", fmt.Errorf("the %s arguments are not valid JSON: %w", name, err)
		}
	}
	switch name {
	case ToolListSkills:
		ms := s.lib.Rank(a.Request, pageURL)
		if len(ms) == 0 {
			return "No skill fits; do the task step by step.", nil
		}
		var b strings.Builder
		for i, m := range ms {
			if i == 8 {
				break
			}
			var ps []string
			for _, p := range m.Skill.Parameters {
				r := ""
				if p.Required {
					r = "*"
				}
				ps = append(ps, p.Name+r)
			}
			fmt.Fprintf(&b, "- %s: %s (parameters: %s)\n", m.Skill.Name, m.Skill.Description, strings.Join(ps, ", "))
		}
		return b.String(), nil
	case ToolReadSkill:
		sk, err := s.lib.Get(a.Name)
		if err != nil {
			return "", err
		}
		return sk.Raw, nil
	case ToolRunSkill:
		res, err := s.Run(ctx, a.Name, RunRequest{Params: a.Params, Tab: tab})
		var mp *MissingParamsError
		switch {
		case errors.As(err, &mp):
			mp.How = fmt.Sprintf(`Call %s again with "params": {"%s": "…"} taken from the goal; if the goal does not give it, call fail saying what is missing.`, ToolRunSkill, mp.Missing[0].Name)
			return "", mp
		case err != nil:
			return "", err
		}
		out, _ := json.Marshal(struct {
			Status string `json:"status"`
			Error  string `json:"error,omitempty"`
			Output string `json:"output,omitempty"`
			Steps  int    `json:"steps"`
			Task   string `json:"task"`
		}{string(res.Status), res.Error, capText(res.Output, 8000), len(res.Steps), res.TaskID})
		return string(out), nil
	}
	return "", fmt.Errorf("unknown skills tool %q (use %s, %s or %s)", name, ToolListSkills, ToolReadSkill, ToolRunSkill)
}

// fitScore is the [Match.Score] above which a skill could serve a goal ([Service.Fits]): a
// skill for the page's site that shares a word with it, or one for any site whose name and
// description cover more than a quarter of its words.
const fitScore = 0.5

// Fits reports whether a saved skill could serve goal on the page at pageURL: the goal names
// it, or it ranks above [fitScore]. The task loop offers the skill tools only then, so
// that a task no skill fits does not carry their schemas.
func (s *Service) Fits(goal, pageURL string) bool {
	for _, m := range s.lib.Rank(goal, pageURL) {
		if m.Named || m.Score > fitScore {
			return true
		}
	}
	return false
}

// The task loop offers the skill tools through these interfaces.
var (
	_ task.Toolbox    = (*Service)(nil)
	_ task.ToolboxFit = (*Service)(nil)
)
