package actions

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Risk classes an action kind for the agent's safety rules (package agent/task).
type Risk int

// Risk classes, from harmless to page-changing.
const (
	// Reads never changes the page or the browser (snapshot, console, tabs…).
	Reads Risk = iota
	// Views changes what is shown, not what the page holds (scroll, wait, resize).
	Views
	// Navigates loads another page or opens and closes tabs.
	Navigates
	// Writes acts on the page's elements: it may submit, buy, send or delete.
	Writes
)

// String names the risk class.
func (r Risk) String() string {
	switch r {
	case Reads:
		return "reads"
	case Views:
		return "views"
	case Navigates:
		return "navigates"
	case Writes:
		return "writes"
	}
	return fmt.Sprintf("Risk(%d)", int(r))
}

// Spec declares one action kind with parameter struct P. P's fields are the kind's parameters:
// their `json` tags give the names (a field without omitempty is required), `jsonschema`
// tags the description offered to the model and the CLI's help, `tool:"-"` leaves a
// parameter out of the model's tool, and `cli` tags how `tabrelay act` reads positional
// arguments (see [Registry.ParseArgs]). If *P has a method Validate() error, it checks the
// values; Act calls it before Run.
type Spec[P any] struct {
	// Name is the kind's name in JSON ("click"), on the command line and, unless Tool says
	// otherwise, as the model's tool.
	Name string
	// Doc says what the kind does in one sentence, for the model and the CLI's help.
	Doc string
	// Tool is the model's name for the kind when it differs from Name; "-" keeps the kind
	// from the model.
	Tool string
	// Returns says what the Result carries besides its message.
	Returns string
	// DuringDialog lets the kind run while a JavaScript dialog blocks the page.
	DuringDialog bool
	// Risk is the kind's class for the safety rules.
	Risk Risk
	// Browser marks kinds that act on the browser rather than on a tab (no tab is attached).
	Browser bool
	// Run performs the action. For Browser kinds r.ts is nil.
	Run func(r *runner, ctx context.Context, p *P) (*Result, error)
}

// runner is what a kind's Run gets: the service, the tab acted on (locked) and the kind.
type runner struct {
	*Service
	ts   *tabState
	kind string
}

// Kind is one registered action kind, as the doors see it.
type Kind struct {
	// Name, Doc, Tool, Returns, DuringDialog, Risk and Browser are as declared in the Spec.
	Name, Doc, Tool, Returns string
	DuringDialog             bool
	Risk                     Risk
	Browser                  bool

	typ    reflect.Type // the parameter struct
	fields []param
	run    func(r *runner, ctx context.Context, p any) (*Result, error)
}

// ToolName is the kind's name as the model's tool ("" when the kind is not offered).
func (k *Kind) ToolName() string {
	switch k.Tool {
	case "-":
		return ""
	case "":
		return k.Name
	}
	return k.Tool
}

// Params is the kind's parameter struct type.
func (k *Kind) Params() reflect.Type { return k.typ }

// param is one parameter of a kind, read from its struct tags.
type param struct {
	index    int
	name     string // JSON name
	desc     string
	required bool
	tool     bool   // offered to the model
	cli      string // how the CLI reads it positionally ("" = only with --json)
}

// Registry holds the action kinds. Every door (HTTP, the CLI, the model's tools, skills, the
// fast path) reads its vocabulary from one; [Default] is the service's.
type Registry struct {
	byName map[string]*Kind
	byTool map[string]*Kind
	byType map[reflect.Type]*Kind
	names  []string
}

// NewRegistry returns an empty registry. Use [Default] for the standard kinds.
func NewRegistry() *Registry {
	return &Registry{byName: map[string]*Kind{}, byTool: map[string]*Kind{}, byType: map[reflect.Type]*Kind{}}
}

// Register adds kind s to r. It panics on a programming error (a duplicate name or tool, a
// parameter type registered twice, a non-struct P), as registration happens at start-up.
func Register[P any](r *Registry, s Spec[P]) {
	t := reflect.TypeFor[P]()
	if t.Kind() != reflect.Struct {
		panic(fmt.Sprintf("actions: kind %q: parameters must be a struct, not %s", s.Name, t))
	}
	if s.Name == "" || s.Run == nil {
		panic(fmt.Sprintf("actions: kind %q (%s) needs a name and Run", s.Name, t))
	}
	k := &Kind{Name: s.Name, Doc: s.Doc, Tool: s.Tool, Returns: s.Returns, DuringDialog: s.DuringDialog, Risk: s.Risk,
		Browser: s.Browser, typ: t, fields: paramsOf(t)}
	run := s.Run
	k.run = func(rn *runner, ctx context.Context, p any) (*Result, error) { return run(rn, ctx, p.(*P)) }
	if r.byName[k.Name] != nil || r.byType[t] != nil {
		panic(fmt.Sprintf("actions: kind %q (%s) registered twice", k.Name, t))
	}
	if tn := k.ToolName(); tn != "" {
		if r.byTool[tn] != nil {
			panic(fmt.Sprintf("actions: tool %q registered twice", tn))
		}
		r.byTool[tn] = k
	}
	r.byName[k.Name], r.byType[t] = k, k
	r.names = append(r.names, k.Name)
	sort.Strings(r.names)
}

func paramsOf(t reflect.Type) []param {
	var out []param
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("json")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out = append(out, param{index: i, name: name, desc: f.Tag.Get("jsonschema"),
			required: !strings.Contains(opts, "omitempty") && !strings.Contains(opts, "omitzero"),
			tool:     f.Tag.Get("tool") != "-", cli: f.Tag.Get("cli")})
	}
	return out
}

// Kinds returns the registered kinds' names, sorted.
func (r *Registry) Kinds() []string { return slices.Clone(r.names) }

// Kind returns the kind called name (nil if none).
func (r *Registry) Kind(name string) *Kind { return r.byName[name] }

// All returns the kinds, sorted by name.
func (r *Registry) All() []*Kind {
	out := make([]*Kind, 0, len(r.names))
	for _, n := range r.names {
		out = append(out, r.byName[n])
	}
	return out
}

// ErrUnknownKind is matched (errors.Is) by the error for an action whose kind is missing or
// not registered; the message lists the kinds.
var ErrUnknownKind = errors.New("unknown action kind")

// ErrBadAction is matched (errors.Is) by every error about an action's parameters (missing,
// unknown or out of range), as opposed to errors from running it.
var ErrBadAction = errors.New("bad action")

// badAction is an error about an action's parameters: the message says what to send instead.
type badAction struct {
	msg     string
	unknown bool
}

func (e *badAction) Error() string { return e.msg }

func (e *badAction) Is(target error) bool {
	return target == ErrBadAction || (e.unknown && target == ErrUnknownKind)
}

// phrase is a validator's complaint worded to follow the kind's name ("needs values").
type phrase string

func (p phrase) Error() string { return string(p) }

func badf(format string, args ...any) error { return &badAction{msg: fmt.Sprintf(format, args...)} }

func (r *Registry) lookup(name string) (*Kind, error) {
	if k := r.byName[name]; k != nil {
		return k, nil
	}
	if name == "" {
		return nil, &badAction{msg: "action has no kind: use one of " + strings.Join(r.names, ", "), unknown: true}
	}
	return nil, &badAction{msg: fmt.Sprintf("unknown action kind %q: use one of %s", name, strings.Join(r.names, ", ")), unknown: true}
}

// Action is one thing to do in a tab: a kind and its parameters. Build one with [Do] (or
// [Registry.Do]); HTTP and the CLI decode it from JSON ({"kind":"click","ref":"e3"}, see the
// package doc), the model's tool calls with [Registry.FromTool].
type Action struct {
	// Kind is the kind's name.
	Kind string
	// Params points to the kind's parameter struct, e.g. *Click.
	Params any
	// Timeout in seconds for this action (0: the service's).
	Timeout float64
}

// Do returns the action with parameters p (a parameter struct such as Click{Ref: "e7"}, or a
// pointer to one) from the default registry.
func Do(p any) Action { return Default().Do(p) }

// Do returns the action with parameters p. An unregistered p gives an action that fails
// validation with a clear error.
func (r *Registry) Do(p any) Action {
	v := reflect.ValueOf(p)
	if v.Kind() != reflect.Pointer {
		pv := reflect.New(v.Type())
		pv.Elem().Set(v)
		v = pv
	}
	a := Action{Params: v.Interface()}
	if k := r.byType[v.Type().Elem()]; k != nil {
		a.Kind = k.Name
	}
	return a
}

// WithTimeout returns a copy of a with its own timeout in seconds.
func (a Action) WithTimeout(seconds float64) Action {
	a.Timeout = seconds
	return a
}

// Tab is the tab the action names itself (close and focus take one), or "".
func (a Action) Tab() string {
	if t, ok := a.Params.(interface{ tab() string }); ok {
		return t.tab()
	}
	return ""
}

// MarshalJSON writes the action as one object: {"kind":…, the parameters in their struct's
// order…, "timeout":…}.
func (a Action) MarshalJSON() ([]byte, error) {
	kind, err := json.Marshal(a.Kind)
	if err != nil {
		return nil, err
	}
	out := append([]byte(`{"kind":`), kind...)
	if a.Params != nil {
		b, err := json.Marshal(a.Params)
		if err != nil {
			return nil, err
		}
		if b = bytes.TrimSpace(b); len(b) < 2 || b[0] != '{' {
			return nil, fmt.Errorf("%s: the parameters are not a JSON object", a.Kind)
		}
		if inner := b[1 : len(b)-1]; len(bytes.TrimSpace(inner)) > 0 {
			out = append(append(out, ','), inner...)
		}
	}
	if a.Timeout != 0 {
		out = append(out, `,"timeout":`...)
		out = strconv.AppendFloat(out, a.Timeout, 'f', -1, 64)
	}
	return append(out, '}'), nil
}

// UnmarshalJSON reads an action object with the default registry (see [Registry.Decode]).
func (a *Action) UnmarshalJSON(b []byte) error {
	d, err := Default().Decode(b)
	if err != nil {
		return err
	}
	*a = d
	return nil
}

// Decode reads an action object ({"kind":"click","ref":"e3"}) strictly: the kind must be
// registered, every required parameter present and no field unknown. It does not validate
// values (Act does; see [Registry.Validate]).
func (r *Registry) Decode(b []byte) (Action, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil || m == nil {
		return Action{}, badf(`an action is a JSON object like {"kind":"click","ref":"e3"}`)
	}
	var kind string
	if raw, ok := m["kind"]; ok {
		if err := json.Unmarshal(raw, &kind); err != nil {
			return Action{}, badf("kind must be a string, e.g. \"click\"")
		}
	}
	k, err := r.lookup(strings.ToLower(strings.TrimSpace(kind)))
	if err != nil {
		return Action{}, err
	}
	a := Action{Kind: k.Name}
	if raw, ok := m["timeout"]; ok {
		if err := json.Unmarshal(raw, &a.Timeout); err != nil {
			return Action{}, badf("%s: timeout must be a number of seconds", k.Name)
		}
	}
	delete(m, "kind")
	delete(m, "timeout")
	a.Params, err = k.decode(m, true)
	return a, err
}

// FromTool reads a model's tool call (tool name and JSON arguments) into an action and
// validates it. Unknown arguments are ignored, as models add some; missing or bad ones are
// errors worded for the model.
func (r *Registry) FromTool(tool string, args json.RawMessage) (Action, error) {
	k := r.byTool[tool]
	if k == nil {
		return Action{}, &badAction{msg: fmt.Sprintf("unknown tool %q", tool), unknown: true}
	}
	var m map[string]json.RawMessage
	if len(args) > 0 && string(args) != "null" {
		if err := json.Unmarshal(args, &m); err != nil {
			return Action{}, badf("%s: the arguments must be a JSON object: %v", tool, err)
		}
	}
	p, err := k.decode(m, false)
	if err != nil {
		return Action{}, err
	}
	a := Action{Kind: k.Name, Params: p}
	return a, r.Validate(&a)
}

// decode reads the parameters in m into a new parameter struct.
func (k *Kind) decode(m map[string]json.RawMessage, strict bool) (any, error) {
	p := reflect.New(k.typ)
	known := map[string]bool{}
	for _, f := range k.fields {
		known[f.name] = true
		if f.required {
			if raw, ok := m[f.name]; !ok || string(raw) == "null" {
				return nil, badf("%s needs %s", k.Name, k.describe(f))
			}
		}
	}
	obj := map[string]json.RawMessage{}
	for name, raw := range m {
		if !known[name] {
			if strict {
				return nil, badf("%s: unknown field %q (%s takes %s)", k.Name, name, k.Name, k.paramList())
			}
			continue
		}
		obj[name] = raw
	}
	b, _ := json.Marshal(obj)
	if err := json.Unmarshal(b, p.Interface()); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return nil, badf("%s: %s must be %s, not %s", k.Name, te.Field, jsonType(te.Type), te.Value)
		}
		return nil, badf("%s: %v", k.Name, err)
	}
	return p.Interface(), nil
}

func jsonType(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice:
		return "a list"
	case reflect.Int, reflect.Int64, reflect.Float64:
		return "a number"
	}
	return "a " + t.Kind().String()
}

func (k *Kind) describe(f param) string {
	if f.desc == "" {
		return f.name
	}
	return fmt.Sprintf("%s (%s)", f.name, f.desc)
}

func (k *Kind) paramList() string {
	if len(k.fields) == 0 {
		return "no parameters"
	}
	names := make([]string, 0, len(k.fields)+1)
	for _, f := range k.fields {
		names = append(names, f.name)
	}
	return strings.Join(append(names, "timeout"), ", ")
}

// validator is implemented by parameter structs with constraints beyond their types.
type validator interface{ Validate() error }

// Validate checks that a has a registered kind whose parameters fit it, and the parameters'
// constraints, normalising values (lower-case names, defaults) in place.
func (r *Registry) Validate(a *Action) error {
	a.Kind = strings.ToLower(strings.TrimSpace(a.Kind))
	k, err := r.lookup(a.Kind)
	if err != nil {
		return err
	}
	if a.Params == nil {
		a.Params = reflect.New(k.typ).Interface()
	}
	if reflect.TypeOf(a.Params) != reflect.PointerTo(k.typ) {
		if reflect.TypeOf(a.Params) == k.typ {
			pv := reflect.New(k.typ)
			pv.Elem().Set(reflect.ValueOf(a.Params))
			a.Params = pv.Interface()
		} else {
			return badf("%s takes %s parameters, not %T", k.Name, k.typ.Name(), a.Params)
		}
	}
	if v, ok := a.Params.(validator); ok {
		if err := v.Validate(); err != nil {
			// "needs …" and "takes …" follow the kind's name; anything else after a colon.
			var ph phrase
			if errors.As(err, &ph) {
				return &badAction{msg: k.Name + " " + err.Error()}
			}
			return &badAction{msg: k.Name + ": " + err.Error()}
		}
	}
	if a.Timeout < 0 || a.Timeout > 600 {
		return badf("%s: timeout must be between 0 and 600 seconds", k.Name)
	}
	return nil
}

// Validate checks the action against the default registry (see [Registry.Validate]).
func (a *Action) Validate() error { return Default().Validate(a) }

// Kinds returns the default registry's kinds, sorted.
func Kinds() []string { return Default().Kinds() }
