package skills

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
)

// Kinds of skills.
const (
	// KindAction is a single action (search, extract, fill).
	KindAction = "action"
	// KindWorkflow is a sequence of actions that achieves a task.
	KindWorkflow = "workflow"
)

// StepKinds are the values a step's "do" may take.
var stepKinds = []string{"click", "type", "press", "select", "check", "uncheck", "fill", "hover",
	"navigate", "wait", "evaluate", "back", "forward", "reload", "scroll", "hand_over"}

// StepKinds returns the step kinds a skill may use, sorted.
func StepKinds() []string {
	out := slices.Clone(stepKinds)
	slices.Sort(out)
	return out
}

// Skill is one parsed SKILL.md.
type Skill struct {
	// Name is the skill's identifier: lowercase letters, digits and hyphens (the folder name).
	Name string `yaml:"name" json:"name"`
	// Description says what the skill does and when to use it (one or two sentences).
	Description string `yaml:"description" json:"description"`
	// Kind is action or workflow (default workflow).
	Kind string `yaml:"kind,omitempty" json:"kind"`
	// Sites are the URL patterns the skill applies to ("*" or empty: any site).
	Sites []string `yaml:"sites,omitempty" json:"sites,omitempty"`
	// Parameters are the values a run needs.
	Parameters []Param `yaml:"parameters,omitempty" json:"parameters,omitempty"`

	// Body is the markdown after the front matter (intent, preconditions, steps, verification,
	// notes), as written.
	Body string `yaml:"-" json:"body"`
	// Steps are the structured steps of the ```steps block, if any.
	Steps []Step `yaml:"-" json:"steps,omitempty"`
	// Source is where the skill was loaded from ("bundled:site-search/SKILL.md" or a path).
	Source string `yaml:"-" json:"source,omitempty"`
	// Bundled is true for skills embedded in the binary.
	Bundled bool `yaml:"-" json:"bundled"`
	// Raw is the file as read.
	Raw string `yaml:"-" json:"-"`
}

// Param is one parameter of a skill.
type Param struct {
	Name        string `yaml:"name" json:"name"`
	Description string `yaml:"description,omitempty" json:"description,omitempty"`
	Required    bool   `yaml:"required,omitempty" json:"required,omitempty"`
	Example     string `yaml:"example,omitempty" json:"example,omitempty"`
	// Default is used when the run does not give the parameter.
	Default string `yaml:"default,omitempty" json:"default,omitempty"`
	// Secret parameters (passwords) are never logged, echoed or stored in task records.
	Secret bool `yaml:"secret,omitempty" json:"secret,omitempty"`
}

// Step is one structured, replayable step.
type Step struct {
	// Do is the step kind: click, type, press, select, check, uncheck, fill, hover, navigate,
	// wait, evaluate, back, forward, reload, scroll, hand_over (the person does something in
	// the tab, Text says what, and the run goes on when they press Continue).
	Do string `yaml:"do" json:"do"`
	// Target is the element acted on, by role and accessible name.
	Target *Target `yaml:"target,omitempty" json:"target,omitempty"`
	// Text is what to type (type), the text to wait for (wait), or what the person must do
	// (hand_over). Templates allowed.
	Text string `yaml:"text,omitempty" json:"text,omitempty"`
	// Submit presses Enter after typing.
	Submit bool `yaml:"submit,omitempty" json:"submit,omitempty"`
	// Key is the key to press (press), e.g. Enter.
	Key string `yaml:"key,omitempty" json:"key,omitempty"`
	// Values are the options to select (select). Templates allowed.
	Values []string `yaml:"values,omitempty" json:"values,omitempty"`
	// URL is where to navigate (navigate) or a URL part to wait for (wait). Templates allowed.
	URL string `yaml:"url,omitempty" json:"url,omitempty"`
	// Script is a JavaScript expression to evaluate (evaluate); its value is the run's output.
	Script string `yaml:"script,omitempty" json:"script,omitempty"`
	// Fields are the fields to fill (fill), each a target and a value.
	Fields []FieldStep `yaml:"fields,omitempty" json:"fields,omitempty"`
	// From fills the form from a "Label: value" list (one per line, or JSON object) given as a
	// template such as {{values}}; each label is matched to a form field by accessible name.
	From string `yaml:"from,omitempty" json:"from,omitempty"`
	// Direction of a scroll (up, down).
	Direction string `yaml:"direction,omitempty" json:"direction,omitempty"`
	// Optional steps are skipped when their target is not on the page.
	Optional bool `yaml:"optional,omitempty" json:"optional,omitempty"`
	// If runs the step only when the template is not empty (e.g. "{{submit}}").
	If string `yaml:"if,omitempty" json:"if,omitempty"`
	// Hint is one line for the model when the step has to be handed over.
	Hint string `yaml:"hint,omitempty" json:"hint,omitempty"`
	// Expect is the effect the step must have.
	Expect *Expect `yaml:"expect,omitempty" json:"expect,omitempty"`
	// Line is the step's line in the SKILL.md file.
	Line int `yaml:"-" json:"line,omitempty"`
}

// FieldStep is one field of a fill step.
type FieldStep struct {
	Target *Target `yaml:"target" json:"target"`
	Value  string  `yaml:"value" json:"value"`
}

// Expect is a step's expected effect, checked after it runs (each part waits up to Timeout).
type Expect struct {
	// Text must appear on the page.
	Text string `yaml:"text,omitempty" json:"text,omitempty"`
	// Gone must disappear from the page.
	Gone string `yaml:"gone,omitempty" json:"gone,omitempty"`
	// URL must be part of the tab's URL.
	URL string `yaml:"url,omitempty" json:"url,omitempty"`
	// Timeout in seconds (default 5).
	Timeout float64 `yaml:"timeout,omitempty" json:"timeout,omitempty"`
}

// Target finds an element in a role snapshot: role and accessible name, the nth of several
// equal matches (1-based), inside an enclosing element (a landmark, form, dialog, row…), or
// any of several alternatives (the first that resolves wins).
//
// A name written /like this/ is a case-insensitive regular expression; otherwise names match
// exactly, ignoring case and surrounding space; an empty name matches any name. In YAML a target
// may also be written as a snapshot line: `button "Save"`, `textbox "Email" nth=2`.
type Target struct {
	Role   string   `yaml:"role,omitempty" json:"role,omitempty"`
	Name   string   `yaml:"name,omitempty" json:"name,omitempty"`
	Nth    int      `yaml:"nth,omitempty" json:"nth,omitempty"`
	Within *Target  `yaml:"within,omitempty" json:"within,omitempty"`
	Any    []Target `yaml:"any,omitempty" json:"any,omitempty"`
}

var shortTarget = regexp.MustCompile(`^\s*([A-Za-z][\w-]*)(?:\s+"((?:[^"\\]|\\.)*)")?(?:\s+nth=(\d+))?\s*$`)

// TargetSyntaxError says that a target is neither the short form nor a mapping.
type TargetSyntaxError struct {
	// Text is the target as written.
	Text string
}

func (e *TargetSyntaxError) Error() string {
	return fmt.Sprintf("target %q is not `role \"name\"` (e.g. button \"Save\") nor a mapping with role and name", e.Text)
}

// ParseTarget reads the short form `role "name" nth=N` (name and nth optional); a
// *TargetSyntaxError says why s is not one.
func ParseTarget(s string) (Target, error) {
	m := shortTarget.FindStringSubmatch(s)
	if m == nil {
		return Target{}, &TargetSyntaxError{Text: s}
	}
	t := Target{Role: m[1]}
	if m[2] != "" {
		name, err := strconv.Unquote(`"` + m[2] + `"`)
		if err != nil {
			name = m[2]
		}
		t.Name = name
	}
	if m[3] != "" {
		t.Nth, _ = strconv.Atoi(m[3])
	}
	return t, nil
}

// String renders the target as `button "Save"` (with nth and within), for messages and hints.
func (t Target) String() string {
	if len(t.Any) > 0 {
		parts := make([]string, len(t.Any))
		for i, a := range t.Any {
			parts[i] = a.String()
		}
		return strings.Join(parts, " or ")
	}
	s := t.Role
	if s == "" {
		s = "element"
	}
	if t.Name != "" {
		s += " " + strconv.Quote(t.Name)
	}
	if t.Nth > 0 {
		s += fmt.Sprintf(" (number %d)", t.Nth)
	}
	if t.Within != nil {
		s += " in " + t.Within.String()
	}
	return s
}

// short is the target in the short YAML form when it has one, else "".
func (t Target) short() string {
	if len(t.Any) > 0 || t.Within != nil || t.Role == "" || !shortTarget.MatchString(t.Role) {
		return ""
	}
	s := t.Role
	if t.Name != "" {
		s += " " + strconv.Quote(t.Name)
	}
	if t.Nth > 0 {
		s += " nth=" + strconv.Itoa(t.Nth)
	}
	if _, err := ParseTarget(s); err != nil {
		return ""
	}
	return s
}

// MarshalYAML writes the short form when it is enough.
func (t Target) MarshalYAML() (any, error) {
	if s := t.short(); s != "" {
		return s, nil
	}
	type plain Target
	return plain(t), nil
}

// ParseError is a problem in a SKILL.md file, with the file and the 1-based line.
type ParseError struct {
	File   string `json:"file"`
	Line   int    `json:"line"`
	Reason string `json:"reason"`
}

// Error formats the problem as file:line: reason.
func (e *ParseError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Reason)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Reason)
}

var (
	nameRE     = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)
	templateRE = regexp.MustCompile(`\{\{\s*([A-Za-z_][\w-]*)\s*\}\}`)
)

// ValidName reports whether name is a valid skill name: 1-64 lowercase letters, digits and
// single hyphens.
func ValidName(name string) bool { return len(name) <= 64 && nameRE.MatchString(name) }

// Parse reads a SKILL.md. file names it in errors; every error is a *ParseError with the line.
func Parse(file string, data []byte) (*Skill, error) {
	perr := func(line int, format string, args ...any) error {
		return &ParseError{File: file, Line: line, Reason: fmt.Sprintf(format, args...)}
	}
	text := strings.ReplaceAll(string(data), "\r\n", "\n")
	text = strings.TrimPrefix(text, "\ufeff")
	lines := strings.Split(text, "\n")
	if len(lines) == 0 || strings.TrimSpace(lines[0]) != "---" {
		return nil, perr(1, "a SKILL.md starts with a YAML front matter block: a line \"---\", name: and description:, and another \"---\"")
	}
	end := -1
	for i := 1; i < len(lines); i++ {
		if strings.TrimRight(lines[i], " \t") == "---" {
			end = i
			break
		}
	}
	if end < 0 {
		return nil, perr(1, "the front matter opened on line 1 is never closed: add a line \"---\" after it")
	}
	front := strings.Join(lines[1:end], "\n")
	root, err := parseYAML(file, 1, front)
	if err != nil {
		return nil, err
	}
	if !isMapping(root) {
		return nil, perr(2, "the front matter must be a YAML mapping with name: and description:")
	}
	var fm frontMatter
	if err := strictInto(root, &fm); err != nil {
		return nil, yamlError(file, 1, err)
	}
	s := &fm.Skill
	s.Source, s.Raw = file, string(data)
	s.Body = strings.Join(lines[end+1:], "\n")
	s.Body = strings.TrimLeft(s.Body, "\n")

	keyLine := func(key string) int {
		if l := keyLine(root, key); l > 0 {
			return l + 1
		}
		return 2
	}
	switch {
	case s.Name == "":
		return nil, perr(keyLine("name"), "name: is missing (lowercase letters, digits and hyphens, like the folder name)")
	case !ValidName(s.Name):
		return nil, perr(keyLine("name"), "name %q must be 1-64 lowercase letters, digits and single hyphens (e.g. site-search)", s.Name)
	case strings.TrimSpace(s.Description) == "":
		return nil, perr(keyLine("description"), "description: is missing: say what the skill does and when to use it")
	}
	switch s.Kind {
	case "":
		s.Kind = KindWorkflow
	case KindAction, KindWorkflow:
	default:
		return nil, perr(keyLine("kind"), "kind %q is unknown: use action or workflow", s.Kind)
	}
	params := map[string]bool{}
	if pn := valueOf(root, "parameters"); pn != nil {
		items, _ := pn.(*ast.SequenceNode)
		for i, p := range s.Parameters {
			line := 1 + keyLine("parameters")
			if items != nil && i < len(items.Values) {
				line = 1 + lineOf(items.Values[i])
			}
			if p.Name == "" || !regexp.MustCompile(`^[A-Za-z_][\w-]*$`).MatchString(p.Name) {
				return nil, perr(line, "parameter %d needs a name: letters, digits, _ or -", i+1)
			}
			if params[p.Name] {
				return nil, perr(line, "parameter %q is declared twice", p.Name)
			}
			params[p.Name] = true
		}
	}

	// The ```steps block.
	start, stop := -1, -1
	for i := end + 1; i < len(lines); i++ {
		l := strings.TrimSpace(lines[i])
		if start < 0 && (l == "```steps" || l == "```yaml steps") {
			start = i
			continue
		}
		if start >= 0 && l == "```" {
			stop = i
			break
		}
	}
	if start >= 0 && stop < 0 {
		return nil, perr(start+1, "the ```steps block is never closed: add a line ``` after the steps")
	}
	if start >= 0 {
		block := strings.Join(lines[start+1:stop], "\n")
		sn, err := parseYAML(file, start+1, block)
		if err != nil {
			return nil, err
		}
		if sn == nil {
			return nil, perr(start+1, "the ```steps block is empty: list steps such as `- do: click` with a target")
		}
		seq, ok := sn.(*ast.SequenceNode)
		if !ok {
			return nil, perr(start+1+lineOf(sn), "the ```steps block must be a YAML list of steps (lines starting with \"- do:\")")
		}
		for _, item := range seq.Values {
			if !isMapping(item) {
				return nil, perr(start+1+lineOf(item), "a step must be a mapping with do: and its fields")
			}
		}
		// Strictly, once for the whole block: a misspelled key at any depth (a step's, its
		// expect:'s, a field's, a target's), a value of the wrong type or a target that does not
		// parse is an error with its line.
		var steps []Step
		if err := yaml.NodeToValue(seq, &steps, yaml.Strict()); err != nil {
			return nil, yamlError(file, start+1, err)
		}
		for i, st := range steps {
			line := start + 1 + lineOf(seq.Values[i])
			st.Line = line
			if err := validateStep(&st); err != nil {
				return nil, perr(line, "%s", err.Error())
			}
			for _, name := range st.templateNames() {
				if !params[name] {
					return nil, perr(line, "{{%s}} is not a declared parameter: add it under parameters: (declared: %s)", name, strings.Join(sortedKeys(params), ", "))
				}
			}
			s.Steps = append(s.Steps, st)
		}
	}
	return s, nil
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	if len(out) == 0 {
		return []string{"none"}
	}
	return out
}

func validateStep(st *Step) error {
	if st.Do == "" {
		return errors.New("step has no do: (one of " + strings.Join(StepKinds(), ", ") + ")")
	}
	if !slices.Contains(stepKinds, st.Do) {
		return fmt.Errorf("do: %q is not a step kind: use one of %s", st.Do, strings.Join(StepKinds(), ", "))
	}
	needTarget := func() error {
		if st.Target == nil {
			return fmt.Errorf("a %s step needs target: (e.g. target: button \"Save\")", st.Do)
		}
		return validateTarget(*st.Target)
	}
	switch st.Do {
	case "click", "hover", "check", "uncheck":
		return needTarget()
	case "type":
		if err := needTarget(); err != nil {
			return err
		}
	case "select":
		if err := needTarget(); err != nil {
			return err
		}
		if len(st.Values) == 0 {
			return errors.New("a select step needs values: (the options to choose)")
		}
	case "press":
		if st.Key == "" {
			return errors.New("a press step needs key: (e.g. Enter)")
		}
	case "navigate":
		if st.URL == "" {
			return errors.New("a navigate step needs url: (the address to open)")
		}
	case "evaluate":
		if strings.TrimSpace(st.Script) == "" {
			return errors.New("an evaluate step needs script: (a JavaScript expression)")
		}
	case "fill":
		if len(st.Fields) == 0 && st.From == "" {
			return errors.New("a fill step needs fields: (target and value each) or from: (e.g. from: \"{{values}}\")")
		}
		for i, f := range st.Fields {
			if f.Target == nil {
				return fmt.Errorf("field %d of the fill step needs target: (what to fill)", i+1)
			}
			if err := validateTarget(*f.Target); err != nil {
				return fmt.Errorf("field %d: %w", i+1, err)
			}
		}
	case "wait":
		// The wait action takes exactly one condition: a wait with only expect: has none to
		// replay, one with both text: and url: has two.
		switch {
		case st.Text == "" && st.URL == "":
			return errors.New("a wait step needs text: or url: (what to wait for; expect: only checks after a step that acts)")
		case st.Text != "" && st.URL != "":
			return errors.New("a wait step waits for one thing: text: or url:, not both (use two wait steps)")
		}
	case "hand_over":
		if strings.TrimSpace(st.Text) == "" {
			return errors.New("a hand_over step needs text: (what the person must do in the tab, e.g. \"Sign in, then press Continue.\")")
		}
	case "scroll":
		if st.Direction == "" && st.Target == nil {
			return errors.New("a scroll step needs direction: (up or down) or target: (an element to scroll into view)")
		}
	}
	return nil
}

func validateTarget(t Target) error {
	if len(t.Any) > 0 {
		for _, a := range t.Any {
			if err := validateTarget(a); err != nil {
				return err
			}
		}
		return nil
	}
	if t.Role == "" && t.Name == "" {
		return errors.New("a target needs role: and/or name: (e.g. button \"Save\")")
	}
	if t.Nth < 0 {
		return errors.New("nth counts from 1")
	}
	if isPattern(t.Name) {
		if _, err := regexp.Compile("(?i)" + t.Name[1:len(t.Name)-1]); err != nil {
			return fmt.Errorf("name pattern %s is not a valid regular expression: %v", t.Name, err)
		}
	}
	if t.Within != nil {
		return validateTarget(*t.Within)
	}
	return nil
}

func isPattern(name string) bool { return len(name) >= 2 && name[0] == '/' && name[len(name)-1] == '/' }

// templateNames lists the {{names}} the step uses.
func (st *Step) templateNames() []string {
	var out []string
	add := func(s string) {
		for _, m := range templateRE.FindAllStringSubmatch(s, -1) {
			if !slices.Contains(out, m[1]) {
				out = append(out, m[1])
			}
		}
	}
	add(st.Text)
	add(st.URL)
	add(st.From)
	add(st.If)
	add(st.Script)
	for _, v := range st.Values {
		add(v)
	}
	for _, f := range st.Fields {
		add(f.Value)
	}
	var addTarget func(t *Target)
	addTarget = func(t *Target) {
		if t == nil {
			return
		}
		add(t.Name)
		addTarget(t.Within)
		for i := range t.Any {
			addTarget(&t.Any[i])
		}
	}
	addTarget(st.Target)
	for _, f := range st.Fields {
		addTarget(f.Target)
	}
	if st.Expect != nil {
		add(st.Expect.Text)
		add(st.Expect.Gone)
		add(st.Expect.URL)
	}
	return out
}

// frontMatter is the front matter of a SKILL.md: the skill's own fields, and the other fields
// of the Agent Skills format, which tabrelay accepts and leaves alone.
type frontMatter struct {
	Skill         `yaml:",inline"`
	License       any `yaml:"license"`
	Metadata      any `yaml:"metadata"`
	AllowedTools  any `yaml:"allowed-tools"`
	Compatibility any `yaml:"compatibility"`
}

// Markdown renders the skill as a SKILL.md: front matter, then the body with its ```steps block
// replaced by (or, when the body has none, followed by) the current structured steps.
func (s *Skill) Markdown() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteString("---\n")
	type front struct {
		Name        string   `yaml:"name"`
		Description string   `yaml:"description"`
		Kind        string   `yaml:"kind,omitempty"`
		Sites       []string `yaml:"sites,omitempty"`
		Parameters  []Param  `yaml:"parameters,omitempty"`
	}
	fm, err := yaml.MarshalWithOptions(front{s.Name, s.Description, s.Kind, s.Sites, s.Parameters}, frontStyle...)
	if err != nil {
		return nil, fmt.Errorf("encode the front matter of %s: %w", s.Name, err)
	}
	buf.Write(fm)
	buf.WriteString("---\n")
	steps := ""
	if len(s.Steps) > 0 {
		b, err := yaml.MarshalWithOptions(s.Steps, stepsStyle...)
		if err != nil {
			return nil, fmt.Errorf("encode the steps of %s: %w", s.Name, err)
		}
		steps = "```steps\n" + string(b) + "```"
	}
	body := s.Body
	if steps != "" {
		if re := regexp.MustCompile("(?s)```(?:yaml )?steps\n(?:.*?\n)?```"); re.MatchString(body) {
			body = re.ReplaceAllLiteralString(body, steps)
		} else {
			body = strings.TrimRight(body, "\n")
			if body != "" {
				body += "\n\n"
			}
			body += "## Steps\n\n" + steps + "\n"
		}
	}
	buf.WriteString("\n" + strings.TrimLeft(body, "\n"))
	if !strings.HasSuffix(buf.String(), "\n") {
		buf.WriteString("\n")
	}
	return buf.Bytes(), nil
}

// Param returns the parameter with the name.
func (s *Skill) Param(name string) (Param, bool) {
	for _, p := range s.Parameters {
		if p.Name == name {
			return p, true
		}
	}
	return Param{}, false
}

// expand fills {{name}} templates from params (missing names become "").
func expand(s string, params map[string]string) string {
	return templateRE.ReplaceAllStringFunc(s, func(m string) string {
		return params[templateRE.FindStringSubmatch(m)[1]]
	})
}
