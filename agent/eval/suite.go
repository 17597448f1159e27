// Package eval measures the agent on a suite of tasks: each task opens a start page, sends a
// request through the same entry as the side panel (a named skill, the fast path, else the
// model), follows the task to its end, and checks the page (a JavaScript expression) and/or the
// answer. A Report holds per-task success, steps, model calls, tokens and wall time, and the
// reason of each failure; Compare sets two reports side by side. `tabrelay eval` is its CLI.
package eval

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/goccy/go-yaml"
)

// DefaultMaxSteps is the step limit of a task that names none.
const DefaultMaxSteps = 15

// Task is one task of a suite, read from a YAML file.
type Task struct {
	// Name identifies the task in reports (default: the file name without .yaml).
	Name string `yaml:"name" json:"name"`
	// Start is the page the task starts on: a URL, absolute or relative to the suite's site.
	Start string `yaml:"start" json:"start"`
	// Request is what the user says ("add the cheapest kettle to the cart").
	Request string `yaml:"request" json:"request"`
	// Check is a JavaScript expression over the page after the task; truthy is success.
	Check string `yaml:"check,omitempty" json:"check,omitempty"`
	// Answer is the expected answer: a case-insensitive substring, or a regexp written /re/.
	Answer string `yaml:"answer,omitempty" json:"answer,omitempty"`
	// MaxSteps is the step limit: a task that takes more is stopped and fails.
	MaxSteps int `yaml:"maxSteps,omitempty" json:"maxSteps,omitempty"`
	// Confirm says the agent must stop and ask before a step (a purchase, a deletion…): the
	// task fails when it never asks. Eval answers as --approve says, then checks CheckApproved
	// or CheckDeclined besides Check.
	Confirm bool `yaml:"confirm,omitempty" json:"confirm,omitempty"`
	// CheckApproved is checked after eval approved the step.
	CheckApproved string `yaml:"checkApproved,omitempty" json:"checkApproved,omitempty"`
	// CheckDeclined is checked after eval declined the step.
	CheckDeclined string `yaml:"checkDeclined,omitempty" json:"checkDeclined,omitempty"`
	// Tags group tasks (forms, frames, fastpath…); --tag runs only tasks with one of them.
	Tags []string `yaml:"tags,omitempty" json:"tags,omitempty"`
	// Reference is a known-good solution: the tool calls a model could make to solve the task.
	// tabrelay's own tests play it through a scripted model server, proving that every task of
	// the shipped suite can be solved and that its check sees the result; eval itself never
	// reads it.
	Reference []Move `yaml:"reference,omitempty" json:"reference,omitempty"`
	// File is where the task was read from.
	File string `yaml:"-" json:"-"`
}

// Move is one tool call of a task's reference solution.
type Move struct {
	// Tool is the tool the model calls (click, type, dialog, finish…).
	Tool string `yaml:"tool" json:"tool"`
	// Target is the element the call acts on as the outline shows it, a role and a quoted name
	// (`button "Sign in"`); its ref becomes the call's "ref" argument.
	Target string `yaml:"target,omitempty" json:"target,omitempty"`
	// Nth picks one of several elements that match Target: 1 is the first, -1 the last. With
	// no Nth, Target must match exactly one element.
	Nth int `yaml:"nth,omitempty" json:"nth,omitempty"`
	// Args are the call's other arguments.
	Args map[string]any `yaml:"args,omitempty" json:"args,omitempty"`
}

// targetPattern matches a Move's Target: a role word and a double-quoted name.
var targetPattern = regexp.MustCompile(`^([a-z]+) "(.*)"$`)

// ParseTarget splits Target into its role and name.
func (m Move) ParseTarget() (role, name string, err error) {
	sub := targetPattern.FindStringSubmatch(strings.TrimSpace(m.Target))
	if sub == nil {
		return "", "", fmt.Errorf(`target %q is not a role and a quoted name, e.g. button "Sign in"`, m.Target)
	}
	return sub[1], sub[2], nil
}

func (m Move) validate() error {
	if strings.TrimSpace(m.Tool) == "" {
		return errors.New("a reference move has no tool: add e.g. tool: click")
	}
	if m.Target != "" {
		if _, _, err := m.ParseTarget(); err != nil {
			return fmt.Errorf("reference move %s: %w", m.Tool, err)
		}
	}
	return nil
}

// answerPattern is the compiled Answer: a regexp for /re/, else a case-insensitive substring.
func (t *Task) answerPattern() (*regexp.Regexp, error) {
	a := strings.TrimSpace(t.Answer)
	if a == "" {
		return nil, nil
	}
	if len(a) >= 2 && strings.HasPrefix(a, "/") && strings.HasSuffix(a, "/") {
		re, err := regexp.Compile(a[1 : len(a)-1])
		if err != nil {
			return nil, fmt.Errorf("answer %s is not a valid regexp: %w", a, err)
		}
		return re, nil
	}
	return regexp.MustCompile("(?i)" + regexp.QuoteMeta(a)), nil
}

// validate reports what is missing or wrong, in words a suite author can act on.
func (t *Task) validate() error {
	var errs []error
	if strings.TrimSpace(t.Start) == "" {
		errs = append(errs, errors.New(`no start page: add e.g. start: /agent/shop.html`))
	}
	if strings.TrimSpace(t.Request) == "" {
		errs = append(errs, errors.New(`no request: add e.g. request: click sign in`))
	}
	if t.Check == "" && t.Answer == "" && !t.Confirm {
		errs = append(errs, errors.New(`no success check: add check: <a JavaScript expression> and/or answer: <text or /regexp/>`))
	}
	if t.MaxSteps < 0 {
		errs = append(errs, fmt.Errorf("maxSteps %d is negative", t.MaxSteps))
	}
	if _, err := t.answerPattern(); err != nil {
		errs = append(errs, err)
	}
	for _, m := range t.Reference {
		if err := m.validate(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// LoadSuite reads the tasks of a suite: a folder of *.yaml / *.yml files (one task each, in
// name order) or a single file. Every bad file is reported, with its name.
func LoadSuite(path string) ([]Task, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("read the suite: %w", err)
	}
	var files []string
	if info.IsDir() {
		err := filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() && (strings.HasSuffix(p, ".yaml") || strings.HasSuffix(p, ".yml")) {
				files = append(files, p)
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("read the suite %s: %w", path, err)
		}
		sort.Strings(files)
		if len(files) == 0 {
			return nil, fmt.Errorf("the suite %s has no task files (*.yaml, one task each)", path)
		}
	} else {
		files = []string{path}
	}
	var tasks []Task
	var errs []error
	names := map[string]string{}
	for _, f := range files {
		t, err := loadTask(f)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if prev, dup := names[t.Name]; dup {
			errs = append(errs, fmt.Errorf("%s: task name %q is also used by %s", f, t.Name, prev))
			continue
		}
		names[t.Name] = f
		tasks = append(tasks, t)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return tasks, nil
}

func loadTask(file string) (Task, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return Task{}, fmt.Errorf("read task: %w", err)
	}
	var t Task
	// strict, as the skills' YAML: an unknown field is a mistake the author wants to hear of
	if err := yaml.UnmarshalWithOptions(b, &t, yaml.Strict()); err != nil {
		return Task{}, fmt.Errorf("%s: not a task (fields: name, start, request, check, answer, maxSteps, confirm, checkApproved, checkDeclined, tags, reference): %w", file, err)
	}
	t.File = file
	if t.Name == "" {
		t.Name = strings.TrimSuffix(strings.TrimSuffix(filepath.Base(file), ".yaml"), ".yml")
	}
	if t.MaxSteps == 0 {
		t.MaxSteps = DefaultMaxSteps
	}
	if err := t.validate(); err != nil {
		return Task{}, fmt.Errorf("%s: %w", file, err)
	}
	return t, nil
}

// ResolveStart turns a task's start page into an absolute URL against site (a base URL; may be
// empty when every start is absolute).
func ResolveStart(site, start string) (string, error) {
	if strings.Contains(start, "://") || strings.HasPrefix(start, "about:") || strings.HasPrefix(start, "data:") {
		return start, nil
	}
	if site == "" {
		return "", fmt.Errorf("start page %q is relative: pass --site with the base URL (e.g. http://127.0.0.1:8000)", start)
	}
	return strings.TrimRight(site, "/") + "/" + strings.TrimLeft(start, "/"), nil
}
