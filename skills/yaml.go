package skills

import (
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
)

// The YAML of a SKILL.md (front matter and ```steps block) is read with github.com/goccy/go-yaml:
// strict decoding (unknown keys and duplicate keys are errors) and typed errors that carry the
// position of the token at fault, so every problem is reported with its line without reading
// a number out of an error's text.

// frontStyle and stepsStyle are how a SKILL.md's YAML is written: two-space indents, single
// quotes; the front matter's lists indented under their key, the steps block a list at the
// left margin (so its nested lists stand at their key's indent).
var (
	frontStyle = []yaml.EncodeOption{yaml.Indent(2), yaml.UseSingleQuote(true), yaml.IndentSequence(true)}
	stepsStyle = []yaml.EncodeOption{yaml.Indent(2), yaml.UseSingleQuote(true)}
)

// parseYAML parses text into its document's body (nil for an empty text). offset is the file
// line just before text, for the error's line.
func parseYAML(file string, offset int, text string) (ast.Node, error) {
	f, err := parser.ParseBytes([]byte(text), 0)
	if err != nil {
		return nil, yamlError(file, offset, err)
	}
	if len(f.Docs) == 0 || f.Docs[0].Body == nil {
		return nil, nil
	}
	return f.Docs[0].Body, nil
}

// strictInto decodes n into v (a pointer to one of the format's structs) refusing unknown and
// duplicate keys. An unknown key of n's own mapping becomes an *unknownKeyError naming the
// keys v's type has; the format's structs each decode through strictInto (their
// UnmarshalYAML), so a key unknown deeper down was already named by its own type.
func strictInto(n ast.Node, v any) error {
	err := yaml.NodeToValue(n, v, yaml.Strict())
	var known *unknownKeyError
	var unknown *yaml.UnknownFieldError
	if err == nil || errors.As(err, &known) || !errors.As(err, &unknown) {
		return err
	}
	tok := unknown.GetToken()
	return &unknownKeyError{Key: tok.Value, Line: tok.Position.Line, Keys: yamlKeys(reflect.TypeOf(v).Elem())}
}

// unknownKeyError is a key the format does not have at its place.
type unknownKeyError struct {
	Key string
	// Line is the key's line in the YAML text (1-based).
	Line int
	// Keys are the valid keys at that place.
	Keys []string
}

func (e *unknownKeyError) Error() string {
	return fmt.Sprintf("unknown key %q: valid keys here are %s", e.Key, strings.Join(e.Keys, ", "))
}

// nodeError is an error of a custom decoder (a target that does not parse) with the line of
// the YAML node it read.
type nodeError struct {
	Line int
	Err  error
}

func (e *nodeError) Error() string { return e.Err.Error() }
func (e *nodeError) Unwrap() error { return e.Err }

// at wraps err with n's line.
func at(n ast.Node, err error) error {
	if err == nil {
		return nil
	}
	return &nodeError{Line: lineOf(n), Err: err}
}

// yamlError turns a YAML error into a ParseError at the line of the token at fault (offset is
// the file line just before the YAML text).
func yamlError(file string, offset int, err error) error {
	var known *unknownKeyError
	var ne *nodeError
	var ye yaml.Error
	switch {
	case errors.As(err, &known):
		return &ParseError{File: file, Line: offset + known.Line, Reason: known.Error()}
	case errors.As(err, &ne):
		return &ParseError{File: file, Line: offset + ne.Line, Reason: ne.Err.Error()}
	case errors.As(err, &ye):
		l := 1
		if tok := ye.GetToken(); tok != nil && tok.Position != nil {
			l = tok.Position.Line
		}
		return &ParseError{File: file, Line: offset + l, Reason: ye.GetMessage()}
	default:
		return &ParseError{File: file, Line: offset + 1, Reason: err.Error()}
	}
}

// lineOf is n's first line in its YAML text (1-based): a mapping's first key's.
func lineOf(n ast.Node) int {
	if kv := entries(n); len(kv) > 0 {
		n = kv[0].Key
	}
	if tok := n.GetToken(); tok != nil && tok.Position != nil {
		return tok.Position.Line
	}
	return 1
}

// entries are the key-value pairs of a mapping node (nil for another node). goccy parses a
// one-key block mapping as a lone MappingValueNode.
func entries(n ast.Node) []*ast.MappingValueNode {
	switch m := n.(type) {
	case *ast.MappingNode:
		return m.Values
	case *ast.MappingValueNode:
		return []*ast.MappingValueNode{m}
	}
	return nil
}

// isMapping reports whether n is a mapping.
func isMapping(n ast.Node) bool {
	switch n.(type) {
	case *ast.MappingNode, *ast.MappingValueNode:
		return true
	}
	return false
}

// keyLine is the line of key in mapping n, 0 when absent.
func keyLine(n ast.Node, key string) int {
	for _, kv := range entries(n) {
		if kv.Key.GetToken().Value == key {
			return kv.Key.GetToken().Position.Line
		}
	}
	return 0
}

// valueOf is the value of key in mapping n, nil when absent.
func valueOf(n ast.Node, key string) ast.Node {
	for _, kv := range entries(n) {
		if kv.Key.GetToken().Value == key {
			return kv.Value
		}
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

// UnmarshalYAML decodes a step strictly.
func (st *Step) UnmarshalYAML(n ast.Node) error { type plain Step; return strictInto(n, (*plain)(st)) }

// UnmarshalYAML decodes a parameter strictly.
func (p *Param) UnmarshalYAML(n ast.Node) error { type plain Param; return strictInto(n, (*plain)(p)) }

// UnmarshalYAML decodes a fill field strictly.
func (f *FieldStep) UnmarshalYAML(n ast.Node) error {
	type plain FieldStep
	return strictInto(n, (*plain)(f))
}

// UnmarshalYAML decodes an expectation strictly.
func (e *Expect) UnmarshalYAML(n ast.Node) error {
	type plain Expect
	return strictInto(n, (*plain)(e))
}

// UnmarshalYAML accepts the short string form and the mapping form (strictly).
func (t *Target) UnmarshalYAML(n ast.Node) error {
	if !isMapping(n) {
		if _, ok := n.(*ast.NullNode); ok {
			return nil
		}
		s, ok := n.(ast.ScalarNode)
		if !ok {
			return at(n, &TargetSyntaxError{Text: n.String()})
		}
		v, err := ParseTarget(fmt.Sprint(s.GetValue()))
		if err != nil {
			return at(n, err)
		}
		*t = v
		return nil
	}
	type plain Target
	return strictInto(n, (*plain)(t))
}
