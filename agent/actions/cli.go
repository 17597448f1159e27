package actions

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/tabrelay/tabrelay/snapshot"
)

// Positional arguments on the command line (`tabrelay act <kind> <args…>`) are read from the
// parameter struct's `cli` tags, in field order:
//
//	ref      an element ref (required)          ref?     a ref, if the next argument is one
//	word     one argument (required)            word?    one argument, if it is not a ref
//	text     the remaining arguments, joined    text?    the same, if any
//	list     the remaining arguments as a list  list?    the same, if any
//	pairs    ref=value pairs (fill)
//	int      a whole number (required)          int?     a whole number, if any
//	number?  a number, if it is the only argument left
//	bool     true or false, if any (default true)
//	a|b      the word a (true) or b (false), if any

// Usage returns one line per kind: `kind args  what it does`, for the CLI's help.
func (r *Registry) Usage() string {
	var b strings.Builder
	for _, k := range r.All() {
		fmt.Fprintf(&b, "  %-34s %s\n", k.synopsis(), k.Doc)
	}
	return b.String()
}

// synopsis is the kind with its positional arguments, e.g. "press [ref] key".
func (k *Kind) synopsis() string {
	parts := []string{k.Name}
	for _, f := range k.fields {
		switch {
		case f.cli == "":
		case f.cli == "list?":
			parts = append(parts, "["+f.name+"…]")
		case strings.HasSuffix(f.cli, "?") || f.cli == "bool":
			parts = append(parts, "["+f.name+"]")
		case f.cli == "text" || f.cli == "list":
			parts = append(parts, f.name+"…")
		case f.cli == "pairs":
			parts = append(parts, "ref=value…")
		case strings.Contains(f.cli, "|"):
			parts = append(parts, "["+f.cli+"]")
		default:
			parts = append(parts, f.name)
		}
	}
	return strings.Join(parts, " ")
}

// ParseArgs reads `kind args…` as typed on the command line into an action; flags names
// bool parameters to set (e.g. "submit"), which the kind must have. It checks the shape of
// the arguments, not their values (Act validates).
func (r *Registry) ParseArgs(kind string, args []string, flags ...string) (Action, error) {
	k, err := r.lookup(strings.ToLower(kind))
	if err != nil {
		return Action{}, err
	}
	usage := func(format string, a ...any) error {
		msg, sep := fmt.Sprintf(format, a...), ": "
		if strings.HasPrefix(msg, "needs ") || strings.HasPrefix(msg, "takes ") {
			sep = " "
		}
		return badf("%s%s%s; usage: tabrelay act %s", k.Name, sep, msg, k.synopsis())
	}
	p := reflect.New(k.typ)
	v := p.Elem()
	rest := args
	for _, f := range k.fields {
		fv := v.Field(f.index)
		next := ""
		if len(rest) > 0 {
			next = rest[0]
		}
		switch mode := f.cli; {
		case mode == "":
		case mode == "ref" || mode == "ref?":
			if next != "" && isRef(next) {
				fv.SetString(next)
				rest = rest[1:]
			} else if mode == "ref" {
				return Action{}, usage("needs %s: an element ref like e3 from `tabrelay snapshot` (got %q)", f.name, next)
			}
		case mode == "word" || mode == "word?":
			if next != "" && (mode == "word" || !isRef(next)) {
				fv.SetString(next)
				rest = rest[1:]
			} else if mode == "word" {
				return Action{}, usage("needs %s", f.name)
			}
		case mode == "text" || mode == "text?":
			if len(rest) > 0 {
				fv.SetString(strings.Join(rest, " "))
				rest = nil
			} else if f.required && f.desc != "" {
				return Action{}, usage("needs %s (%s)", f.name, f.desc)
			} else if f.required {
				return Action{}, usage("needs %s", f.name)
			}
		case mode == "list" || mode == "list?":
			if len(rest) == 0 {
				if mode == "list?" {
					continue
				}
				return Action{}, usage("needs %s", f.name)
			}
			fv.Set(reflect.ValueOf(append([]string(nil), rest...)).Convert(fv.Type()))
			rest = nil
		case mode == "pairs":
			var fields []Field
			for _, kv := range rest {
				ref, val, ok := strings.Cut(kv, "=")
				if !ok || !isRef(ref) {
					return Action{}, usage("takes ref=value pairs like e3=Ann (got %q)", kv)
				}
				fields = append(fields, Field{Ref: ref, Value: Text(val)})
			}
			if len(fields) == 0 {
				return Action{}, usage("needs ref=value pairs like e3=Ann")
			}
			fv.Set(reflect.ValueOf(fields))
			rest = nil
		case mode == "int" || mode == "int?":
			if next == "" {
				if mode == "int" {
					return Action{}, usage("needs %s", f.name)
				}
				continue
			}
			n, err := strconv.Atoi(next)
			if err != nil {
				return Action{}, usage("%s must be a whole number, not %q", f.name, next)
			}
			fv.SetInt(int64(n))
			rest = rest[1:]
		case mode == "number?":
			if len(rest) == 1 {
				if n, err := strconv.ParseFloat(next, 64); err == nil {
					fv.SetFloat(n)
					rest = nil
				}
			}
		case mode == "bool":
			if next != "" {
				b, err := strconv.ParseBool(next)
				if err != nil {
					return Action{}, usage("%s is true or false, not %q", f.name, next)
				}
				fv.SetBool(b)
				rest = rest[1:]
			} else {
				fv.SetBool(true)
			}
		case strings.Contains(mode, "|"):
			yes, no, _ := strings.Cut(mode, "|")
			if next == "" {
				continue
			}
			var b bool
			switch next {
			case yes:
				b = true
			case no:
			default:
				return Action{}, usage("takes %s or %s, not %q", yes, no, next)
			}
			fv.Set(reflect.ValueOf(&b))
			rest = rest[1:]
		default:
			panic(fmt.Sprintf("actions: %s.%s: unknown cli tag %q", k.typ.Name(), f.name, mode))
		}
	}
	if len(rest) > 0 {
		return Action{}, usage("unexpected arguments %q", rest)
	}
	for _, name := range flags {
		ok := false
		for _, f := range k.fields {
			if f.name == name && v.Field(f.index).Kind() == reflect.Bool {
				v.Field(f.index).SetBool(true)
				ok = true
			}
		}
		if !ok {
			return Action{}, badf("%s does not take --%s", k.Name, name)
		}
	}
	return Action{Kind: k.Name, Params: p.Interface()}, nil
}

// isRef reports whether s is written like an element ref (e7, @e7, [ref=e7], f1e7).
func isRef(s string) bool {
	_, err := snapshot.ParseRef(s)
	return err == nil
}
