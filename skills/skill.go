package skills

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
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

// UnmarshalYAML accepts the short string form and the mapping form.
func (t *Target) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		v, err := ParseTarget(n.Value)
		if err != nil {
			return err
		}
		*t = v
		return nil
	}
	type plain Target
	if err := knownKeys(n, reflect.TypeFor[plain]()); err != nil {
		return err // Node.Decode below is not strict: check the keys here
	}
	var p plain
	if err := n.Decode(&p); err != nil {
		return err
	}
	*t = Target(p)
	return nil
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
	yamlLineRE = regexp.MustCompile(`^yaml: (?:unmarshal errors:\n\s*)?line (\d+): (.*)$`)
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
	var node yaml.Node
	if err := yaml.Unmarshal([]byte(front), &node); err != nil {
		return nil, yamlError(file, 1, err)
	}
	if len(node.Content) == 0 || node.Content[0].Kind != yaml.MappingNode {
		return nil, perr(2, "the front matter must be a YAML mapping with name: and description:")
	}
	root := node.Content[0]
	var fm frontMatter
	if err := decodeStrict(front, &fm); err != nil {
		return nil, yamlError(file, 1, err)
	}
	s := &fm.Skill
	s.Source, s.Raw = file, string(data)
	s.Body = strings.Join(lines[end+1:], "\n")
	s.Body = strings.TrimLeft(s.Body, "\n")
	bodyStart := end + 2 // 1-based line of the first body line

	keyLine := func(key string) int {
		if l := findKey(root, key); l > 0 {
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
	if pn := findValue(root, "parameters"); pn != nil {
		for i, p := range s.Parameters {
			line := 1 + keyLine("parameters")
			if i < len(pn.Content) {
				line = pn.Content[i].Line + 1
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
		var sn yaml.Node
		if err := yaml.Unmarshal([]byte(block), &sn); err != nil {
			return nil, yamlError(file, start+1, err)
		}
		if len(sn.Content) == 0 {
			return nil, perr(start+1, "the ```steps block is empty: list steps such as `- do: click` with a target")
		}
		seq := sn.Content[0]
		if seq.Kind != yaml.SequenceNode {
			return nil, perr(start+1+seq.Line, "the ```steps block must be a YAML list of steps (lines starting with \"- do:\")")
		}
		// Strictly, once for the whole block: a misspelled key at any depth (a step's, its
		// expect:'s, a field's, a target's) is an error with its line.
		var strict []Step
		if err := decodeStrict(block, &strict); err != nil {
			// A target that does not parse carries no line: the step-by-step decoding below
			// points at it. Anything else (a misspelled key, a wrong type) has its line.
			var tse *TargetSyntaxError
			if !errors.As(err, &tse) {
				return nil, yamlError(file, start+1, err)
			}
		}
		for _, item := range seq.Content {
			line := start + 1 + item.Line
			if item.Kind != yaml.MappingNode {
				return nil, perr(line, "a step must be a mapping with do: and its fields")
			}
			var st Step
			if err := item.Decode(&st); err != nil {
				if bad := (*TargetSyntaxError)(nil); errors.As(err, &bad) {
					// Target.UnmarshalYAML's: point at the target.
					l := line
					if k := findKey(item, "target"); k > 0 {
						l = start + 1 + k
					}
					return nil, perr(l, "%s", err.Error())
				}
				return nil, yamlError(file, start+1, err)
			}
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
	_ = bodyStart
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

// checkKeys rejects keys outside known, naming the line and the valid keys.
// frontMatter is the front matter of a SKILL.md: the skill's own fields, and the other fields
// of the Agent Skills format, which tabrelay accepts and leaves alone.
type frontMatter struct {
	Skill         `yaml:",inline"`
	License       yaml.Node `yaml:"license"`
	Metadata      yaml.Node `yaml:"metadata"`
	AllowedTools  yaml.Node `yaml:"allowed-tools"`
	Compatibility yaml.Node `yaml:"compatibility"`
}

// decodeStrict decodes YAML text into v, refusing keys v's type does not declare
// (yaml.v3's Decoder.KnownFields), at every depth.
func decodeStrict(text string, v any) error {
	dec := yaml.NewDecoder(strings.NewReader(text))
	dec.KnownFields(true)
	if err := dec.Decode(v); err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	return nil
}

// yamlKeys are the YAML keys of struct type t (inline structs included), in order.
func yamlKeys(t reflect.Type) []string {
	var keys []string
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("yaml")
		name, opts, _ := strings.Cut(tag, ",")
		switch {
		case name == "-":
		case strings.Contains(opts, "inline") && f.Type.Kind() == reflect.Struct:
			keys = append(keys, yamlKeys(f.Type)...)
		case name != "":
			keys = append(keys, name)
		case f.IsExported():
			keys = append(keys, strings.ToLower(f.Name))
		}
	}
	return keys
}

// knownKeys refuses a key of mapping m that struct type t does not declare, with its line.
func knownKeys(m *yaml.Node, t reflect.Type) error {
	known := yamlKeys(t)
	for i := 0; i+1 < len(m.Content); i += 2 {
		if k := m.Content[i]; !slices.Contains(known, k.Value) {
			return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: field %s not found in type %s", k.Line, k.Value, t)}}
		}
	}
	return nil
}

// keysOf maps the Go types a SKILL.md decodes into to their YAML keys, to turn the decoder's
// "field x not found in type skills.Step" into "unknown key "x": valid keys here are …".
var keysOf = func() map[string][]string {
	type plain Target // as in Target.UnmarshalYAML
	m := map[string][]string{}
	for _, t := range []reflect.Type{reflect.TypeFor[frontMatter](), reflect.TypeFor[Param](), reflect.TypeFor[Step](),
		reflect.TypeFor[FieldStep](), reflect.TypeFor[Expect](), reflect.TypeFor[plain]()} {
		m[t.String()] = yamlKeys(t)
	}
	return m
}()

var unknownFieldRE = regexp.MustCompile(`^field (\S+) not found in type (\S+)$`)

// unknownKey rewrites the decoder's unknown-field message for a person.
func unknownKey(reason string) string {
	m := unknownFieldRE.FindStringSubmatch(reason)
	if m == nil {
		return reason
	}
	keys, ok := keysOf[m[2]]
	if !ok {
		return fmt.Sprintf("unknown key %q", m[1])
	}
	return fmt.Sprintf("unknown key %q: valid keys here are %s", m[1], strings.Join(keys, ", "))
}

func findKey(m *yaml.Node, key string) int {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i].Line
		}
	}
	return 0
}

func findValue(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// yamlError turns a yaml.v3 error into a ParseError with the file's line (offset is the file
// line just before the YAML text). yaml.v3 gives the line only in its messages ("yaml: line
// N: …", and TypeError's "line N: …" strings), so this reads it from there: the one place
// that reads an error's text, for a number to show, never to decide what the error means.
func yamlError(file string, offset int, err error) error {
	msg := err.Error()
	if te := (*yaml.TypeError)(nil); errors.As(err, &te) && len(te.Errors) > 0 {
		msg = te.Errors[0]
		if m := regexp.MustCompile(`^line (\d+): (.*)$`).FindStringSubmatch(msg); m != nil {
			n, _ := strconv.Atoi(m[1])
			return &ParseError{File: file, Line: offset + n, Reason: unknownKey(m[2])}
		}
	}
	if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
		n, _ := strconv.Atoi(m[1])
		return &ParseError{File: file, Line: offset + n, Reason: m[2]}
	}
	// Errors from UnmarshalYAML (a bad target) carry no line.
	return &ParseError{File: file, Line: offset + 1, Reason: strings.TrimPrefix(msg, "yaml: ")}
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
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(front{s.Name, s.Description, s.Kind, s.Sites, s.Parameters}); err != nil {
		return nil, fmt.Errorf("encode the front matter of %s: %w", s.Name, err)
	}
	_ = enc.Close()
	buf.WriteString("---\n")
	steps := ""
	if len(s.Steps) > 0 {
		var sb bytes.Buffer
		e := yaml.NewEncoder(&sb)
		e.SetIndent(2)
		if err := e.Encode(s.Steps); err != nil {
			return nil, fmt.Errorf("encode the steps of %s: %w", s.Name, err)
		}
		_ = e.Close()
		steps = "```steps\n" + sb.String() + "```"
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
