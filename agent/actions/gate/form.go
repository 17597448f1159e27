package gate

import (
	"fmt"
	"slices"
	"strings"
)

// Form is the state of an element's form when the gate reads it: how it sends and what each
// field holds. A commit (a submit button, Enter in a field, Apply or Go beside a bulk-action
// list) carries out what the form says at that moment, so the gate judges it as part of the
// step, and an approval covers exactly this state (see [Decision.Digest]).
type Form struct {
	// Method is the form's method, lower case ("get", "post", "dialog"); the control's
	// formmethod when it has one. "" for a button in no form: the Form is then the lists,
	// boxes and fields beside it (a toolbar's bulk-action list and its Apply), which its
	// page's script may send.
	Method string `json:"method"`
	// Fields are the form's named fields and unnamed choices, in document order (at most 60).
	Fields []Field `json:"fields"`
}

// Field is one field of a [Form] as the form will send it.
type Field struct {
	// Name is the field's name attribute ("" when it has none: it is not sent, but a page's
	// script may read it).
	Name string `json:"name"`
	// Kind is its kind: an input type ("text", "hidden", "checkbox", "radio", …), "select",
	// "textarea".
	Kind string `json:"kind"`
	// Label is what names it for the person: its <label>s, aria-label or title.
	Label string `json:"label"`
	// Value is what it sends: the text (for a password, "" and Secret set), a hidden field's
	// value, a select's chosen options' values, a checked box's value.
	Value string `json:"value"`
	// Chosen are a select's chosen options' labels.
	Chosen []string `json:"chosen"`
	// Checked is a checkbox's or radio's state.
	Checked bool `json:"checked"`
	// Secret marks a password, one-time code or card field: its value is not read.
	Secret bool `json:"secret"`
	// Self marks the field that is the step's own element (the field typed into).
	Self bool `json:"self"`
}

// hidden reports whether f's value is never shown (to the person or the alignment check): a
// secret field, or one whose name or label says it holds a password or payment details.
func (f Field) hidden() bool {
	n := Fold(f.Name + " " + f.Label)
	return f.Secret || passwordRe.MatchString(n) || paymentRe.MatchString(n)
}

// Sent reports whether the field is part of what its form sends now: a checkbox or radio
// only when checked.
func (f Field) Sent() bool {
	switch f.Kind {
	case "checkbox", "radio":
		return f.Checked
	}
	return true
}

// String renders the field as the person and the critic read it: `visibility = "Public"`,
// `op = "delete_account" (hidden)`, `[x] "Also delete all my data"`.
func (f Field) String() string {
	name := f.Label
	if name == "" {
		name = f.Name
	}
	name = clip(oneLine(name), 60)
	switch f.Kind {
	case "checkbox", "radio":
		mark := "[ ]"
		if f.Checked {
			mark = "[x]"
		}
		return fmt.Sprintf("%s %q", mark, name)
	case "select":
		return fmt.Sprintf("%s = %q", name, clip(strings.Join(f.Chosen, ", "), 80))
	case "hidden":
		if f.hidden() {
			return name + " = (secret) (hidden)"
		}
		return fmt.Sprintf("%s = %q (hidden)", name, clip(f.Value, 80))
	}
	if f.hidden() {
		return name + " = (secret)"
	}
	return fmt.Sprintf("%s = %q", name, clip(oneLine(f.Value), 80))
}

// choices are the fields of f a person does not type: chosen options, checked boxes and
// radios, hidden fields — the meaning chosen earlier that a commit carries out.
func (f *Form) choices() []Field {
	if f == nil {
		return nil
	}
	var out []Field
	for _, fd := range f.Fields {
		switch fd.Kind {
		case "select", "hidden":
			out = append(out, fd)
		case "checkbox", "radio":
			if fd.Checked {
				out = append(out, fd)
			}
		}
	}
	return out
}

// summary renders the choices of f for the step the person is asked about (clipped).
func (f *Form) summary() string {
	var parts []string
	for _, fd := range f.choices() {
		parts = append(parts, fd.String())
	}
	return clip(strings.Join(parts, ", "), 300)
}

// formCommit judges the state of el's form when el commits it: a chosen option, a checked box
// or radio, or a hidden field that names a grave step (a bulk action "Move to Trash" then
// Apply; a ticked "also delete all my data" then Save; op=delete_account sent by Save; a
// visibility set to Public or "Anyone with the link"). Fields the person types are their
// words, not the form's meaning, and are not judged here.
func (g *Gate) formCommit(el *Element) Decision {
	if el.Form == nil {
		return Decision{}
	}
	// a GET form is a query: a "Public" filter in a search publishes nothing (a bulk action
	// sent by GET still deletes, and is judged)
	visible := func(text string) string {
		if el.Form.Method == "get" || el.Form.Method == "" {
			return ""
		}
		return firstMatch(g.vocab.visibility, text)
	}
	for _, fd := range el.Form.choices() {
		if el.Form.Method == "" && fd.Kind != "select" && fd.Kind != "hidden" {
			// beside a button in no form, ticked rows are what it acts on, not what it does
			continue
		}
		var texts []string
		switch fd.Kind {
		case "select":
			texts = fd.Chosen
		case "checkbox", "radio":
			texts = []string{fd.Label}
		}
		for _, t := range texts {
			f := Fold(t)
			h := g.vocab.actionHit(f, false)
			if (h.reason == ReasonSending || h.reason == ReasonPayment && !amountRe.MatchString(f)) && fd.Kind != "select" {
				// a box that says "send me the letter" or "subscribe to news" chooses what the
				// person receives (a price in its label still counts); what the commit itself
				// sends or buys is judged by the commit's own label
				h = hit{}
			}
			if h.level < Grave {
				if w := visible(f); w != "" {
					h = hit{ReasonPublishing, Grave, w}
				}
			}
			if h.level == Grave {
				return Decision{Level: Grave, Reason: h.reason, Detail: fmt.Sprintf("%s %s", formWhere(el.Form), fd)}
			}
		}
		if fd.Kind == "hidden" || (fd.Kind != "select" && fd.Name != "") {
			// a field's name and short value are the page's own code naming the step
			v := fd.Value
			if len(v) > 64 {
				v = ""
			}
			if h := g.vocab.iconHit(fd.Name + " " + v); h.level == Grave && !receives(fd, h) {
				return Decision{Level: Grave, Reason: h.reason, Detail: fmt.Sprintf("%s %s", formWhere(el.Form), fd)}
			}
			if w := visible(strings.Join(iconTokens(v), " ")); w != "" {
				return Decision{Level: Grave, Reason: ReasonPublishing, Detail: fmt.Sprintf("%s %s", formWhere(el.Form), fd)}
			}
		}
	}
	return Decision{}
}

// formText is what a commit on el sends, for the step the person approves: ` (its form sends
// to "/settings/save" with visibility = "Public")`; "" when el is in no form.
func formText(el *Element) string {
	if el.Form == nil {
		return ""
	}
	sum := el.Form.summary()
	if el.FormAction == "" && sum == "" {
		return ""
	}
	var b strings.Builder
	b.WriteString(" (its form sends")
	if el.Form.Method == "" {
		b.Reset()
		b.WriteString(" (beside it:")
	}
	if el.FormAction != "" {
		fmt.Fprintf(&b, " to %q", clip(el.FormAction, 120))
	}
	switch {
	case sum == "":
	case el.Form.Method == "":
		b.WriteString(" " + sum)
	default:
		b.WriteString(" with " + sum)
	}
	b.WriteString(")")
	return b.String()
}

// formWhere says where a field of f stands, for the person: "its form sends", or "beside it is"
// for the controls beside a button in no form.
func formWhere(f *Form) string {
	if f.Method == "" {
		return "beside it is"
	}
	return "its form sends"
}

// receives reports whether hit h on a box's own name only says what the person receives ("send
// me the letter", "subscribe to news"): not a step's meaning (a price in it still counts).
func receives(fd Field, h hit) bool {
	return (fd.Kind == "checkbox" || fd.Kind == "radio") && (h.reason == ReasonSending || h.reason == ReasonPayment && !amountRe.MatchString(Fold(fd.Label)))
}

// Landed reports whether now, the step read again as its input lands on the page (the pointer
// down on the element, Enter or Space down in it), commits what p, the step as the gate judged
// it, commits: the same element, form action, link and form state (see [Decision.Digest]).
// Only the text of the step's own field may differ, and only as the step itself or a box that
// sends leaves it: typed by a type step (it holds the step's text), or emptied (a chat box's
// keydown handler that sends and clears it). A page that changes what a commit sends in its
// pointerdown or keydown handlers, after the gate read it, makes the two differ: the input
// path then has the new state judged before the input finishes.
func (p Proposal) Landed(now Proposal) bool {
	return digest(p) == digest(ownWords(p, now))
}

// ownWords is now with its own field's text as in the judged step p where the difference is
// the step's own doing (see Landed).
func ownWords(p, now Proposal) Proposal {
	if p.Element == nil || p.Element.Form == nil || now.Element == nil || now.Element.Form == nil {
		return now
	}
	was := p.Element.Form.Fields
	e, f := *now.Element, *now.Element.Form
	f.Fields = slices.Clone(f.Fields)
	for i := range f.Fields {
		fd := &f.Fields[i]
		if !fd.Self || i >= len(was) || !was[i].Self || fd.Kind == "hidden" {
			continue
		}
		if fd.Value == "" || (p.Action.Kind == "type" && p.Action.Text != "" && strings.Contains(fd.Value, p.Action.Text)) {
			fd.Value = was[i].Value
		}
	}
	e.Form, now.Element = &f, &e
	return now
}
