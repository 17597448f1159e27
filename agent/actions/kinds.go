package actions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/tabrelay/tabrelay/snapshot"
)

// This file declares every action kind: its parameters (one struct per kind) and its entry
// in the default registry. Adding a kind is one struct, one Register call and its handler.

// Default returns the registry of the standard action kinds (built once, read-only).
var Default = sync.OnceValue(func() *Registry {
	r := NewRegistry()
	Register(r, Spec[Snapshot]{Name: "snapshot", Doc: "Read the page as an outline: all of it, or one element's subtree.",
		Returns: "snapshot", DuringDialog: true, Risk: Reads, Run: (*runner).snapshot})
	Register(r, Spec[Search]{Name: "search", Tool: "find", Doc: "Find elements anywhere on the page: refs with context.",
		Returns: "matches", Risk: Reads, Run: (*runner).search})
	Register(r, Spec[Extract]{Name: "extract", Doc: "Read repeated items (rows, cards, results) as JSON records, across pages if asked.",
		Returns: "records", Risk: Views, Run: (*runner).extract})
	Register(r, Spec[Click]{Name: "click", Doc: "Click an element.", Risk: Writes,
		Run: observed((*Service).click)})
	Register(r, Spec[Type]{Name: "type", Doc: "Type text into a field (replaces its content).", Risk: Writes,
		Run: observed((*Service).typeText)})
	Register(r, Spec[Press]{Name: "press", Doc: "Press a key (Enter, Escape, Control+a…) on an element or the focused one.",
		Risk: Writes, Run: observed((*Service).press)})
	Register(r, Spec[Hover]{Name: "hover", Doc: "Move the mouse over an element.", Risk: Writes,
		Run: observed((*Service).hover)})
	Register(r, Spec[Drag]{Name: "drag", Doc: "Drag an element onto another.", Risk: Writes,
		Run: observed((*Service).drag)})
	Register(r, Spec[Select]{Name: "select", Doc: "Choose options of a select or listbox by label or value.", Risk: Writes,
		Run: observed((*Service).selectValues)})
	Register(r, Spec[Check]{Name: "check", Doc: "Set a checkbox, radio or switch.", Risk: Writes,
		Run: observed((*Service).check)})
	Register(r, Spec[Fill]{Name: "fill", Doc: "Fill several fields at once (true/false for checkboxes, radios, switches).", Risk: Writes,
		Run: observed((*Service).fill)})
	Register(r, Spec[Upload]{Name: "upload", Doc: "Set a file input's files.", Risk: Writes,
		Run: observed((*Service).upload)})
	Register(r, Spec[Scroll]{Name: "scroll", Doc: "Scroll the page or an element.", Risk: Views,
		Run: observed((*Service).scroll)})
	Register(r, Spec[Wait]{Name: "wait", Doc: "Wait for one of: text, url part, load state, seconds.",
		Risk: Views, Run: (*runner).wait})
	Register(r, Spec[Evaluate]{Name: "evaluate", Doc: "Evaluate JavaScript in the page.", Tool: "-", Returns: "value",
		Risk: Writes, Run: (*runner).evaluate})
	Register(r, Spec[Resize]{Name: "resize", Doc: "Resize the viewport (0 0 restores the window size).", Tool: "-",
		Risk: Views, Run: (*runner).resize})
	Register(r, Spec[Navigate]{Name: "navigate", Doc: "Open a URL in the current tab.", Risk: Navigates,
		Run: (*runner).navigate})
	Register(r, Spec[Back]{Name: "back", Doc: "Go back in history.", Risk: Navigates,
		Run: func(r *runner, ctx context.Context, _ *Back) (*Result, error) { return r.history(ctx, -1) }})
	Register(r, Spec[Forward]{Name: "forward", Doc: "Go forward in history.", Risk: Navigates,
		Run: func(r *runner, ctx context.Context, _ *Forward) (*Result, error) { return r.history(ctx, 1) }})
	Register(r, Spec[Reload]{Name: "reload", Doc: "Reload the tab.", Risk: Navigates, Run: (*runner).reload})
	Register(r, Spec[Dialog]{Name: "dialog", Doc: "Answer the open JavaScript dialog (alert, confirm, prompt).",
		DuringDialog: true, Risk: Writes, Run: (*runner).handleDialog})
	Register(r, Spec[Screenshot]{Name: "screenshot", Doc: "See the current tab as an image (for layouts, images, canvases the outline cannot show).",
		Returns: "data, mime", Risk: Reads, Run: (*runner).screenshot})
	Register(r, Spec[PDF]{Name: "pdf", Doc: "Print the tab as PDF (headless tabs only).", Tool: "-", Returns: "data, mime",
		Risk: Reads, Run: (*runner).pdf})
	Register(r, Spec[Console]{Name: "console", Doc: "Read console messages.", Returns: "console",
		DuringDialog: true, Risk: Reads,
		Run: func(r *runner, _ context.Context, p *Console) (*Result, error) { return r.ts.consoleLog(p.Limit), nil }})
	Register(r, Spec[Errors]{Name: "errors", Doc: "Read uncaught page errors.", Returns: "errors",
		DuringDialog: true, Risk: Reads,
		Run: func(r *runner, _ context.Context, p *Errors) (*Result, error) { return r.ts.pageErrors(p.Limit), nil }})
	Register(r, Spec[Network]{Name: "network", Doc: "Read network requests.", Returns: "requests",
		DuringDialog: true, Risk: Reads,
		Run: func(r *runner, _ context.Context, p *Network) (*Result, error) { return r.ts.networkLog(p.Limit), nil }})
	Register(r, Spec[Downloads]{Name: "downloads", Doc: "List downloads (name, size, state, path).",
		Returns: "downloads", Browser: true, Risk: Reads, Run: (*runner).downloads})
	Register(r, Spec[Tabs]{Name: "tabs", Doc: "List the shared tabs (id, title, url).", Returns: "tabs", Browser: true,
		Risk: Reads, Run: (*runner).tabs})
	Register(r, Spec[Open]{Name: "open", Tool: "new_tab", Doc: "Open a URL in a new tab, which becomes current.",
		Returns: "targetId of the new tab", Browser: true, Risk: Navigates, Run: (*runner).openTab})
	Register(r, Spec[Focus]{Name: "focus", Tool: "switch_tab", Doc: "Make a shared tab the current one.",
		DuringDialog: true, Risk: Reads, Run: (*runner).focusTab})
	Register(r, Spec[Close]{Name: "close", Tool: "close_tab", Doc: "Close a tab (default: the current one).",
		DuringDialog: true, Risk: Navigates, Run: (*runner).closeTab})
	return r
})

// observed runs an input handler under the service's observation of what it changed.
func observed[P any](fn func(s *Service, ctx context.Context, ts *tabState, p P) (string, error)) func(*runner, context.Context, *P) (*Result, error) {
	return func(r *runner, ctx context.Context, p *P) (*Result, error) {
		return r.observe(ctx, r.ts, func() (string, error) { return fn(r.Service, ctx, r.ts, *p) })
	}
}

// Snapshot reads the tab as a role outline.
type Snapshot struct {
	// Scope is a ref: only that element's subtree is read (snapshot.Options.Scope, which it
	// sets when Options leaves it empty).
	Scope   string            `json:"scope,omitempty" jsonschema:"a ref: only its subtree"`
	Options *snapshot.Options `json:"snapshot,omitempty" tool:"-" jsonschema:"snapshot options"`
}

// Click clicks an element.
type Click struct {
	Ref string `json:"ref" cli:"ref"`
	// Button is left (default), right or middle.
	Button string `json:"button,omitempty" tool:"-" jsonschema:"left, right or middle"`
	// Double makes it a double click.
	Double bool `json:"double,omitempty" tool:"-" jsonschema:"double click"`
	// Modifiers are held during the click: Control, Shift, Alt, Meta.
	Modifiers []string `json:"modifiers,omitempty" tool:"-" jsonschema:"keys held: Control, Shift, Alt, Meta"`
}

// Validate checks the ref, button and modifiers.
func (p *Click) Validate() error {
	if err := checkRef(p.Ref, "ref", true); err != nil {
		return err
	}
	p.Button = strings.ToLower(p.Button)
	switch p.Button {
	case "", "left", "right", "middle":
	default:
		return fmt.Errorf("bad button %q: use left, right or middle", p.Button)
	}
	_, err := parseModifiers(p.Modifiers)
	return err
}

// Type types text into a field.
type Type struct {
	Ref  string `json:"ref" cli:"ref"`
	Text string `json:"text" cli:"text"`
	// Append types after the current content instead of replacing it.
	Append bool `json:"append,omitempty" tool:"-" jsonschema:"add to the content instead of replacing it"`
	// Slowly types one key at a time, for pages that react to each key (autocompletion,
	// masks). Control characters in the text are keys however it is typed: a line break is
	// Enter and a tab is Tab, and the safety gate judges them as the keys they are.
	Slowly bool `json:"slowly,omitempty" jsonschema:"one key at a time, for pages that react to each key (a line break is Enter)"`
	Submit bool `json:"submit,omitempty" jsonschema:"press Enter after"`
}

// Validate checks the ref (and that appending has text).
func (p *Type) Validate() error {
	if err := checkRef(p.Ref, "ref", true); err != nil {
		return err
	}
	if p.Text == "" && p.Append {
		return phrase("needs text")
	}
	return nil
}

// Press presses a key or combination.
type Press struct {
	Ref string `json:"ref,omitempty" jsonschema:"element ref" cli:"ref?"`
	Key string `json:"key" jsonschema:"key name" cli:"word"`
}

// Validate checks the key and ref.
func (p *Press) Validate() error {
	if err := checkRef(p.Ref, "ref", false); err != nil {
		return err
	}
	_, err := ParseKeys(p.Key)
	return err
}

// Hover moves the mouse over an element.
type Hover struct {
	Ref string `json:"ref" cli:"ref"`
}

// Validate checks the ref.
func (p *Hover) Validate() error { return checkRef(p.Ref, "ref", true) }

// Drag drags an element onto another.
type Drag struct {
	Ref string `json:"ref" cli:"ref"`
	To  string `json:"to" jsonschema:"drop target ref" cli:"ref"`
}

// Validate checks both refs.
func (p *Drag) Validate() error {
	if err := checkRef(p.Ref, "ref", true); err != nil {
		return err
	}
	return checkRef(p.To, "to", true)
}

// Select chooses options of a native select, ARIA combobox or listbox.
type Select struct {
	Ref    string  `json:"ref" cli:"ref"`
	Values Strings `json:"values" cli:"list"`
}

// Validate checks the ref and that there are values.
func (p *Select) Validate() error {
	if err := checkRef(p.Ref, "ref", true); err != nil {
		return err
	}
	if len(p.Values) == 0 {
		return phrase("needs values (option labels or values)")
	}
	return nil
}

// Check sets a checkbox, radio or switch.
type Check struct {
	Ref     string `json:"ref" cli:"ref"`
	Checked bool   `json:"checked" jsonschema:"true to check, false to uncheck" cli:"bool"`
}

// Validate checks the ref.
func (p *Check) Validate() error { return checkRef(p.Ref, "ref", true) }

// Fill fills several form fields.
type Fill struct {
	Fields []Field `json:"fields" cli:"pairs"`
}

// Field is one form field to fill: text for text fields, an option for selects, and
// true/false (also on/off, yes/no, checked/unchecked) for checkboxes, radios and switches.
type Field struct {
	Ref   string `json:"ref"`
	Value Text   `json:"value"`
}

// Validate checks every field's ref.
func (p *Fill) Validate() error {
	if len(p.Fields) == 0 {
		return phrase(`needs fields: [{"ref":"e3","value":"..."}]`)
	}
	for i, f := range p.Fields {
		if err := checkRef(f.Ref, fmt.Sprintf("fields[%d].ref", i), true); err != nil {
			return err
		}
	}
	return nil
}

// Upload sets a file input's files.
type Upload struct {
	Ref   string  `json:"ref" cli:"ref"`
	Files Strings `json:"files" jsonschema:"paths on the user's computer" cli:"list"`
}

// Validate checks the ref and that there are files.
func (p *Upload) Validate() error {
	if err := checkRef(p.Ref, "ref", true); err != nil {
		return err
	}
	if len(p.Files) == 0 {
		return phrase("needs files (paths to upload)")
	}
	return nil
}

// Scroll scrolls the page or an element; a ref alone scrolls it into view.
type Scroll struct {
	Direction string `json:"direction,omitempty" jsonschema:"up, down, left, right, top or bottom" cli:"word?"`
	Ref       string `json:"ref,omitempty" jsonschema:"to scroll into view or within" cli:"ref?"`
	// Amount in CSS pixels (default: most of the viewport).
	Amount float64 `json:"amount,omitempty" tool:"-" jsonschema:"pixels"`
}

// Validate checks the direction (default down) and ref.
func (p *Scroll) Validate() error {
	if err := checkRef(p.Ref, "ref", false); err != nil {
		return err
	}
	p.Direction = strings.ToLower(p.Direction)
	switch p.Direction {
	case "", "up", "down", "left", "right", "top", "bottom":
	default:
		return fmt.Errorf("bad direction %q: use up, down, left, right, top or bottom", p.Direction)
	}
	if p.Direction == "" && p.Ref == "" {
		p.Direction = "down"
	}
	return nil
}

// Wait waits for exactly one condition.
type Wait struct {
	Seconds    float64 `json:"seconds,omitempty" jsonschema:"seconds" cli:"number?"`
	Text       string  `json:"text,omitempty" jsonschema:"text to wait for" cli:"text"`
	TextGone   string  `json:"textGone,omitempty" tool:"-" jsonschema:"text to wait to disappear"`
	URL        string  `json:"url,omitempty" jsonschema:"URL part"`
	State      string  `json:"state,omitempty" jsonschema:"load, domcontentloaded or networkidle"`
	Expression string  `json:"expression,omitempty" tool:"-" jsonschema:"JavaScript to wait to be truthy"`
}

// Validate checks that exactly one condition is set and in range.
func (p *Wait) Validate() error {
	n := 0
	for _, set := range []bool{p.Text != "", p.TextGone != "", p.URL != "", p.State != "", p.Expression != "", p.Seconds > 0} {
		if set {
			n++
		}
	}
	if n == 0 {
		return phrase("needs one of text, textGone, url, state, expression, seconds")
	}
	if n > 1 {
		return phrase("takes only one of text, textGone, url, state, expression, seconds")
	}
	p.State = strings.ToLower(p.State)
	switch p.State {
	case "", "load", "domcontentloaded", "networkidle":
	default:
		return fmt.Errorf("bad state %q: use load, domcontentloaded or networkidle", p.State)
	}
	if p.Seconds > 60 {
		return errors.New("at most 60 seconds")
	}
	return nil
}

// Evaluate evaluates JavaScript; with Ref, Expression is a function receiving the element.
type Evaluate struct {
	Ref        string `json:"ref,omitempty" jsonschema:"optional element ref passed to the function" cli:"ref?"`
	Expression string `json:"expression" jsonschema:"JavaScript, or with ref a function like el => el.value" cli:"text"`
}

// Validate checks the ref.
func (p *Evaluate) Validate() error { return checkRef(p.Ref, "ref", false) }

// Resize sets the viewport size; both 0 restores the window size.
type Resize struct {
	Width  int `json:"width,omitempty" jsonschema:"CSS pixels" cli:"int"`
	Height int `json:"height,omitempty" jsonschema:"CSS pixels" cli:"int"`
}

// Validate checks the size.
func (p *Resize) Validate() error {
	if p.Width < 0 || p.Height < 0 || p.Width > 10000 || p.Height > 10000 || (p.Width == 0) != (p.Height == 0) {
		return phrase("needs width and height between 1 and 10000 (both 0 to restore the window size)")
	}
	return nil
}

// Navigate loads a URL in the tab.
type Navigate struct {
	URL string `json:"url" jsonschema:"absolute URL" cli:"word"`
}

// Back goes back in the tab's history.
type Back struct{}

// Forward goes forward in the tab's history.
type Forward struct{}

// Reload reloads the tab.
type Reload struct{}

// Dialog accepts (default) or dismisses the open JavaScript dialog.
type Dialog struct {
	Accept     *bool  `json:"accept,omitempty" jsonschema:"true: OK, false: Cancel" cli:"accept|dismiss"`
	PromptText string `json:"promptText,omitempty" jsonschema:"prompt answer" cli:"text?"`
}

// Screenshot captures the viewport, the full page or one element.
type Screenshot struct {
	FullPage bool   `json:"fullPage,omitempty" tool:"-" jsonschema:"the whole page, not just the viewport"`
	Ref      string `json:"ref,omitempty" tool:"-" jsonschema:"capture only this element" cli:"ref?"`
	Labels   bool   `json:"labels,omitempty" tool:"-" jsonschema:"draw each ref over its element"`
	Format   string `json:"format,omitempty" tool:"-" jsonschema:"png (default) or jpeg"`
}

// Validate checks the ref and format.
func (p *Screenshot) Validate() error {
	if err := checkRef(p.Ref, "ref", false); err != nil {
		return err
	}
	p.Format = strings.ToLower(p.Format)
	switch p.Format {
	case "", "png", "jpeg", "jpg":
	default:
		return fmt.Errorf("bad format %q: use png or jpeg", p.Format)
	}
	return nil
}

// PDF prints the tab as PDF.
type PDF struct{}

// Console reads the tab's latest console messages.
type Console struct {
	Limit int `json:"limit,omitempty" tool:"-" jsonschema:"how many (default 50)" cli:"int?"`
}

// Errors reads the tab's latest uncaught page errors.
type Errors struct {
	Limit int `json:"limit,omitempty" tool:"-" jsonschema:"how many (default 50)" cli:"int?"`
}

// Network reads the tab's latest network requests.
type Network struct {
	Limit int `json:"limit,omitempty" tool:"-" jsonschema:"how many (default 50)" cli:"int?"`
}

// Tabs lists the browser's page tabs.
type Tabs struct{}

// Open opens a new tab (about:blank without URL).
type Open struct {
	URL string `json:"url,omitempty" jsonschema:"absolute URL" cli:"word?"`
}

// Focus brings a tab to the front.
type Focus struct {
	Tab string `json:"tab,omitempty" jsonschema:"tab id"`
}

func (p *Focus) tab() string { return p.Tab }

// Close closes a tab.
type Close struct {
	Tab string `json:"tab,omitempty" jsonschema:"tab id"`
}

func (p *Close) tab() string { return p.Tab }

// checkRef checks a ref parameter (required or, when empty, optional).
func checkRef(r, field string, required bool) error {
	if r == "" {
		if !required {
			return nil
		}
		return phrase("needs " + field + " (an element ref like e7 from a snapshot)")
	}
	if _, err := snapshot.ParseRef(r); err != nil {
		return fmt.Errorf("%s: %w", field, err)
	}
	return nil
}

// Strings is a list of strings that also decodes from one string ("a.pdf" as ["a.pdf"]).
type Strings []string

// UnmarshalJSON accepts a list of strings or one string.
func (l *Strings) UnmarshalJSON(b []byte) error {
	var one string
	if json.Unmarshal(b, &one) == nil {
		if strings.TrimSpace(one) == "" {
			*l = nil
		} else {
			*l = Strings{one}
		}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return errors.New("must be a list of strings")
	}
	*l = many
	return nil
}

// Text is a string that also decodes from a JSON boolean or number (a checkbox's true, an
// amount's 3), written out as text.
type Text string

// UnmarshalJSON accepts a string, boolean or number.
func (t *Text) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		*t = Text(s)
		return nil
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	switch v := v.(type) {
	case bool:
		*t = Text(strconv.FormatBool(v))
	case float64:
		*t = Text(strconv.FormatFloat(v, 'f', -1, 64))
	default:
		return errors.New("must be text, true/false or a number")
	}
	return nil
}
