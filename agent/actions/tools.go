package actions

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/google/jsonschema-go/jsonschema"
)

// ToolDef is an action kind as a model's tool: a name, what it does, and the JSON Schema of
// its arguments (generated from the kind's parameter struct, as plain maps: some model APIs
// take nothing else).
type ToolDef struct {
	Name        string
	Description string
	Parameters  map[string]any
	// Kind is the action kind the tool runs.
	Kind *Kind
}

// Tools returns the kinds offered to the model as tools, in registration order of names
// (sorted by kind name). [Registry.FromTool] reads their calls back.
func (r *Registry) Tools() ([]ToolDef, error) {
	var out []ToolDef
	for _, k := range r.All() {
		name := k.ToolName()
		if name == "" {
			continue
		}
		params, err := k.toolSchema()
		if err != nil {
			return nil, err
		}
		out = append(out, ToolDef{Name: name, Description: k.Doc, Parameters: params, Kind: k})
	}
	return out, nil
}

// Schema is the JSON Schema of the kind's tool arguments (as in [Registry.Tools]) with the
// parameters named in extra added although they are tagged tool:"-" (a door that offers more
// options than the model's tools, such as the MCP server's screenshot labels).
func (k *Kind) Schema(extra ...string) (map[string]any, error) { return k.toolSchema(extra...) }

// toolSchema is the JSON Schema of the kind's parameters offered to the model (fields tagged
// tool:"-" left out unless named in extra), compacted: no "additionalProperties", and a
// nullable type (a pointer or slice field) written as its plain type.
func (k *Kind) toolSchema(extra ...string) (map[string]any, error) {
	s, err := jsonschema.ForType(k.typ, &jsonschema.ForOptions{})
	if err != nil {
		return nil, fmt.Errorf("actions: schema of %s: %w", k.Name, err)
	}
	for _, f := range k.fields {
		if !f.tool && !slices.Contains(extra, f.name) {
			delete(s.Properties, f.name)
			s.Required = slices.DeleteFunc(s.Required, func(n string) bool { return n == f.name })
		}
	}
	compact(s)
	b, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("actions: schema of %s: %w", k.Name, err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("actions: schema of %s: %w", k.Name, err)
	}
	if _, ok := m["properties"]; !ok {
		m["properties"] = map[string]any{} // some model APIs insist on it
	}
	return m, nil
}

// compact drops what a model does not need from a generated schema, recursively.
func compact(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	s.AdditionalProperties = nil
	if len(s.Types) == 2 && s.Types[0] == "null" {
		s.Type, s.Types = s.Types[1], nil
	}
	if len(s.Required) == 0 {
		s.Required = nil
	}
	for _, p := range s.Properties {
		compact(p)
	}
	compact(s.Items)
}
