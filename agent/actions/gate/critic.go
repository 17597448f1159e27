package gate

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"
)

// A Critic is a second opinion on a step the rules let run: an alignment check that sees the
// person's words and a structured description of the step ([Review]) — never the page's
// prose — and answers whether the step is what the person asked for. It can only raise a
// step from allow to ask: the rules' asks stand whatever it says. Where a critic judges, a
// name in a script the gate's words are not written in no longer asks by itself (the critic
// reads any language).
//
// What the critic reads. The step's kind and parameters; the element's role, accessible
// name, what it shows, the name its icon or attributes give, its icon names and data-*
// attributes, id, name and value; its form's method, action and every field (labels, chosen
// options, checked boxes, hidden fields); where the request goes and that site; the page's
// address and site. What it never reads: headings, the text around the element, a dialog's
// message, the page's title or body. Those are the page's prose, written by whoever wrote the
// page; a control's own names and a form's field labels are read because they are what the
// step acts on, and they are marked as the page's words in the critic's prompt.
//
// The critic sees only what an attacker's page could also shape (names, labels, values):
// whatever it is told, its answer can only add a question, never remove one.
type Critic interface {
	// Review judges one step. An error, or an answer the critic cannot give, counts as ask;
	// an error matching ErrNoCritic means no model is configured now: the rules alone judge.
	Review(ctx context.Context, r Review) (CriticVerdict, error)
}

// ErrNoCritic is matched (errors.Is) by a critic's error when it has no model to ask (none
// configured, or the agent's model removed while the server runs): the rules alone judge.
var ErrNoCritic = errors.New("no model for the alignment check")

// CriticVerdict is a critic's answer on one step.
type CriticVerdict struct {
	// Ask is true when the step may not be what the person asked for.
	Ask bool
	// Reason is why, in words the person can read (shown with the question).
	Reason string
	// Tokens are the model's input and output tokens for the answer (0 when not reported).
	InputTokens, OutputTokens int
	// Took is how long the answer took.
	Took time.Duration
}

// ReasonCritic is the reason of a step the alignment check asks about.
const ReasonCritic = "the alignment check asks"

// Review is what a critic reads of one step: the person's words and the step, described
// from the [Proposal] the gate judges (see [ReviewOf]).
type Review struct {
	// Goal is the person's own words for the task.
	Goal string `json:"person_words"`
	// Kind is the action kind (click, press, type, select, check, drag, upload, dialog).
	Kind string `json:"kind"`
	// Key is a press's key with its modifiers ("Control+Enter").
	Key string `json:"key,omitempty"`
	// Text is typed text (clipped; "(hidden)" in a password or payment field).
	Text string `json:"text,omitempty"`
	// Submit is true when Enter follows the typed text.
	Submit bool `json:"submit,omitempty"`
	// Values are a select's chosen options; Checked a check's wanted state.
	Values  []string `json:"values,omitempty"`
	Checked *bool    `json:"checked,omitempty"`
	// Files are an upload's paths.
	Files []string `json:"files,omitempty"`
	// Dialog is the kind of the JavaScript dialog answered ("confirm", "prompt"), and Accept
	// the answer; its message is the page's prose and is not given.
	Dialog string `json:"dialog,omitempty"`
	Accept bool   `json:"accept,omitempty"`
	// Element is what the step acts on; Target a drag's drop target.
	Element *ReviewElement `json:"element,omitempty"`
	Target  *ReviewElement `json:"target,omitempty"`
	// Destination is where the step's request goes (a form's action, a navigation's URL, a
	// clicked link's href, the element's document) and DestinationSite its site.
	Destination     string `json:"destination"`
	DestinationSite string `json:"destination_site"`
	// Page is the page's address without its query, and PageSite its site.
	Page     string `json:"page"`
	PageSite string `json:"page_site"`
}

// ReviewElement is an element as a critic reads it: its own names and attributes, never the
// text around it.
type ReviewElement struct {
	Role string `json:"role"`
	// Name is the accessible name; Shows what it shows when that differs.
	Name string `json:"name"`
	// Inferred is the name its icons and attributes give it when it has none (see
	// [Element.Inferred]).
	Inferred string `json:"inferred_from_icon,omitempty"`
	Shows    string `json:"shows,omitempty"`
	// Labels are its other names (aria-label, title, its <label>s).
	Labels []string `json:"labels,omitempty"`
	Tag    string   `json:"tag,omitempty"`
	Type   string   `json:"type,omitempty"`
	// Icons and Data are what its icons and attributes say (see [Element]).
	Icons []string `json:"icons,omitempty"`
	Data  []string `json:"attributes,omitempty"`
	// Options are a list's options (clipped).
	Options []string `json:"options,omitempty"`
	// Form is its form's state: method, action and fields.
	Form *ReviewForm `json:"form,omitempty"`
}

// ReviewForm is a form as a critic reads it.
type ReviewForm struct {
	Method string `json:"method"`
	Action string `json:"action,omitempty"`
	// Fields are rendered as the person sees them in a question ([Field.String]).
	Fields []string `json:"fields"`
}

// ReviewOf describes proposal p for a critic, with the person's words goal. It is rendered
// from the proposal the rules judge, the same one the person is asked about.
func ReviewOf(p Proposal, goal string) Review {
	a := p.Action
	r := Review{Goal: goal, Kind: a.Kind, Submit: a.Submit, Values: a.Values, Files: a.Files, Page: withoutQuery(p.URL), PageSite: string(SiteOf(p.URL))}
	if a.Key != "" {
		r.Key = strings.Join(append(append([]string(nil), a.Modifiers...), a.Key), "+")
	}
	if a.Kind == "check" {
		r.Checked = &a.Checked
	}
	if a.Kind == "dialog" {
		r.Dialog, r.Accept = p.DialogType, a.Accept
	}
	if a.Text != "" {
		r.Text = clip(a.Text, 300)
		if el := p.Element; a.Kind == "dialog" || (el != nil && (el.Password || passwordRe.MatchString(Fold(el.Name)) || paymentRe.MatchString(Fold(el.Name)))) {
			r.Text = "(hidden)"
		}
	}
	r.Element, r.Target = reviewElement(p.Element), reviewElement(p.Target)
	dest := p.Action.URL
	if rs := receivers(p); dest == "" && len(rs) > 0 {
		dest = rs[len(rs)-1] // the most specific: a form's target, else the element's document
	}
	if el := p.Element; el != nil && el.FormAction != "" && (a.Kind == "click" || a.Kind == "press" || a.Submit) {
		dest = resolve(el.URL, el.FormAction)
	}
	if el := p.Element; el != nil && el.Href != "" && a.Kind == "click" {
		dest = el.Href // a link's click goes where it points
	}
	r.Destination, r.DestinationSite = clip(dest, 300), string(SiteOf(dest))
	return r
}

func reviewElement(el *Element) *ReviewElement {
	if el == nil {
		return nil
	}
	re := &ReviewElement{Role: el.Role, Name: clip(oneLine(el.Name), 120), Inferred: el.Inferred, Tag: el.Tag, Type: el.Type, Icons: el.Icons, Data: el.Data}
	if s := shown(el); Fold(s) != Fold(re.Name) {
		re.Shows = s
	}
	for _, l := range el.Labels {
		if l = clip(oneLine(l), 120); Fold(l) != Fold(re.Name) && len(re.Labels) < 8 {
			re.Labels = append(re.Labels, l)
		}
	}
	for _, o := range el.Options {
		if len(re.Options) < 30 {
			re.Options = append(re.Options, clip(o, 60))
		}
	}
	if f := el.Form; f != nil {
		rf := &ReviewForm{Method: f.Method, Action: resolve(el.URL, el.FormAction)}
		for _, fd := range f.Fields {
			rf.Fields = append(rf.Fields, fd.String())
		}
		re.Form = rf
	}
	return re
}

// resolve is ref resolved against the document URL base ("" when ref is "").
func resolve(base, ref string) string {
	ref = strings.TrimSpace(ref)
	if ref == "" {
		return ""
	}
	b, err := url.Parse(base)
	if err != nil {
		return ref
	}
	u, err := b.Parse(ref)
	if err != nil {
		return ref
	}
	return u.String()
}

// changes reports whether p may change something: the steps a critic reviews. Typing that
// ends in no Enter only fills a field, and a choice in a form with a submit button only sets
// what the form sends (the commit is reviewed, with the form's state); a key that moves the
// focus or types into a field, and a dismissed dialog, change nothing; reads have no
// proposals.
func changes(p Proposal) bool {
	a, el := p.Action, p.Element
	switch a.Kind {
	case "type":
		return a.Submit || strings.ContainsAny(a.Text, "\n\r")
	case "dialog":
		return a.Accept
	case "select", "check":
		return el == nil || !el.Submits
	case "press":
		switch classifyKey(a.Key) {
		case keyMove:
			return false
		case keyChar, keySpace:
			return hasCommand(a) || el == nil || !textField(el)
		}
		return true
	case "click", "drag", "upload", "evaluate":
		return true
	}
	return false
}

// review asks the gate's critic about a step the rules allowed, for the person's words goal:
// the decision d raised to ask when the critic asks, errs or cannot answer. With no critic, no
// person's words (an outside program's own steps: there is nothing to align with) or a step
// that changes nothing, d stands.
func (g *Gate) review(ctx context.Context, p Proposal, r Request, d Decision) Decision {
	c := g.opts.Critic
	if c == nil || r.Who == Caller || strings.TrimSpace(r.Goal) == "" || !changes(p) && !d.newOrigin {
		return d
	}
	rules := d
	if d.Verdict == Confirm && (d.unread || d.newOrigin) {
		// only an unreadable name, or a page new to the task, asked: the critic judges it
		d = Decision{Verdict: Allow, Step: d.Step, Digest: d.Digest}
	}
	if d.Verdict != Allow || d.Approved {
		return d
	}
	var v CriticVerdict
	var err error
	if r.Grants.holds(d.Digest) {
		// the person already approved this very step (after the check asked): no second call
		v = CriticVerdict{Ask: true, Reason: "approved by the person"}
	} else {
		v, err = c.Review(ctx, ReviewOf(p, r.Goal))
		if errors.Is(err, ErrNoCritic) {
			return rules
		}
		if err == nil {
			d.Reviewed = &v
		}
	}
	asked := d
	asked.Verdict, asked.Reason = Confirm, ReasonCritic
	if asked.Level < Ordinary {
		asked.Level = Ordinary
	}
	switch {
	case err != nil:
		asked.Detail = fmt.Sprintf("the alignment check could not answer: %v", err)
	case v.Ask:
		asked.Detail = "the alignment check says: " + clip(oneLine(v.Reason), 200)
	default:
		return d
	}
	if r.Grants.use(asked, p.Action.Kind, refOf(p)) {
		asked.Verdict, asked.Approved = Allow, true
	}
	return asked
}

func refOf(p Proposal) string {
	if p.Element != nil {
		return p.Element.Ref
	}
	return ""
}

// withoutQuery is a URL as a reader is shown it: without its query and fragment (which may
// carry tokens), or the URL itself when it does not parse.
func withoutQuery(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	return u.Scheme + "://" + u.Host + u.Path
}
