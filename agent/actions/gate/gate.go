// Package gate is the one place that decides whether an action may reach the page. The
// action service (agent/actions) asks it for every action of every door — the model's tools,
// skill steps, the fast path and compound commands, MCP, /api/act and the CLI — after the
// action's element is resolved on the live page and before anything is sent to it. A door
// only decides how to ask the person when the gate says so (a panel event, an MCP
// elicitation, an HTTP answer); it never judges risk itself.
//
// The gate reads what the action will really touch: the element's visible text and every
// name it carries (accessible name, aria-label, aria-labelledby, title, alt, label), its
// form, dialog and nearby words, amounts of money, and what the action does to it (Enter or
// Space on a button activates it; Enter in a field submits its form; a select or checkbox may
// commit). Text is folded first (see [Fold]) so look-alike letters, full-width forms and
// invisible characters hide nothing. It judges what a step does, not only what its control
// says (effects.go): every key for what it can start, control characters in typed text as
// keys, icons and data-* attributes, the headings of the dialog and section around a commit,
// where its form sends, account-takeover forms, and account, security, billing and consent
// pages; what it cannot read (a nameless commit or drop zone) it asks about.
//
// Every step is also judged against its task's boundary (boundary.go, sites.go, flow.go) at
// the documents that receive it: a site is the registrable domain, or the tenant's host on a
// domain of many owners' tenants (acme.slack.com, acme.github.io); a page the agent opens by
// itself is judged by its host too (tenants of a domain no list names are told apart);
// secrets are held to their origin; a host the gate cannot read as the browser does is
// outside every task. Where a critic is configured, opening a page new to the task that
// carries nothing the task read is the critic's to judge, not the person's.
//
// Approvals ([Grants]) name one decision (its [Decision.Digest]: the action and the element
// it resolved to) and are used once; a user's own command that names an element approves
// that element at [Ordinary] risk only.
package gate

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"github.com/tabrelay/tabrelay/snapshot/describe"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Who is who asks for an action.
type Who int

const (
	// Agent is a model (tabrelay's agent, a skill it runs, an outside model through MCP) or
	// the fast path acting for the user's words: every action is judged.
	Agent Who = iota
	// Caller is a caller's own explicit action by ref (/api/act, `tabrelay act`, a script
	// holding the secret): it is recorded, not stopped, as on Chrome's own endpoint.
	Caller
)

// Request is who asks for the actions of a context, for what, and the approvals they hold.
type Request struct {
	// Who asks (the zero value, Agent, is judged).
	Who Who
	// Goal is the person's own words (the side panel, `tabrelay run`, the CLI, the HTTP API
	// called with the secret): values, paths, sites and verbs it names count as the person's.
	// A model's words (an MCP client's goal or arguments) are never put here: they name and
	// approve nothing.
	Goal string
	// Grants are the approvals the requester holds (nil: none).
	Grants *Grants
	// Picked are files the user picked in the panel for this task.
	Picked []string
	// Task is the task's boundary: its sites and what it read (nil: the context's, see
	// WithTask; a request with none is judged without a boundary).
	Task *Task
}

type taskKey struct{}

// WithTask returns ctx carrying the task boundary t: the action service records what the
// reads under ctx see (Task.Read) and the gate judges the actions under it against t.
func WithTask(ctx context.Context, t *Task) context.Context {
	return context.WithValue(ctx, taskKey{}, t)
}

// TaskFrom returns the task boundary ctx carries (nil when none).
func TaskFrom(ctx context.Context) *Task {
	t, _ := ctx.Value(taskKey{}).(*Task)
	return t
}

type requestKey struct{}

// With returns ctx carrying r: the action service judges the actions run under it for r.
func With(ctx context.Context, r Request) context.Context {
	return context.WithValue(ctx, requestKey{}, r)
}

// From returns the request ctx carries. A context that carries none is judged as an agent's
// with no goal and no approvals: a door that forgets to say who asks fails safe (its risky
// steps are held, never run unasked). Only the caller's own explicit doors (/api/act,
// `tabrelay act`) mark their contexts Caller.
func From(ctx context.Context) Request {
	r, ok := ctx.Value(requestKey{}).(Request)
	if !ok {
		r = Request{Who: Agent}
	}
	if r.Task == nil {
		r.Task = TaskFrom(ctx)
	}
	return r
}

// Action is what an action does, as the gate reads it.
type Action struct {
	// Kind is the action kind (click, type, press, select, check, drag, upload, dialog,
	// evaluate, hover, …); a fill is judged one field at a time as type, select or check.
	Kind string
	// Key is a press's key without modifiers, as named by the keyboard ("Enter", " " is
	// "Space").
	Key string
	// Text is typed text, or a prompt dialog's answer.
	Text string
	// Submit is a type's Enter after typing.
	Submit bool
	// Values are a select's chosen options.
	Values []string
	// Checked is a check's wanted state.
	Checked bool
	// Files are an upload's paths.
	Files []string
	// Accept is a dialog's answer: true for OK.
	Accept bool
	// Modifiers are a press's held modifiers ("Control", "Alt", "Meta", "Shift").
	Modifiers []string
	// URL is the absolute URL a navigate or open goes to (back, forward, reload: the history
	// entry loaded).
	URL string
	// Resubmits marks a reload, back or forward whose entry was a form's POST: loading it
	// sends the form again.
	Resubmits bool
}

// Control is a button of an element's form or dialog: what it shows and its other names.
type Control struct {
	Text   string   `json:"text"`
	Labels []string `json:"labels,omitempty"`
}

// Element is the live element an action resolved to, read from the page just before acting.
type Element struct {
	// Ref, Role and Name are the element's ref, role and accessible name from the page model.
	Ref, Role, Name string
	// Tag and Type are its HTML tag ("button", "input") and input type ("submit", "checkbox").
	Tag  string `json:"tag"`
	Type string `json:"type"`
	// Text is what it shows: its rendered text (a button input's value, an image's alt).
	Text string `json:"text"`
	// Labels are its other names: aria-label, aria-labelledby's text, title, its <label>s,
	// placeholder, the text of its aria-describedby.
	Labels []string `json:"labels"`
	// Password marks an <input type=password>; Autocomplete is its autocomplete attribute.
	Password     bool   `json:"password"`
	Autocomplete string `json:"autocomplete"`
	// Options are a select's option labels.
	Options []string `json:"options"`
	// Scope is "form" or "dialog" when the element is in one ("" otherwise); ScopeText is the
	// scope's own words (not its controls'), or the text near the element when it has none.
	Scope     string `json:"scope"`
	ScopeText string `json:"scopeText"`
	// Buttons are the enabled buttons of its scope (or of the nearest ancestor holding
	// buttons): what Enter in a field may press.
	Buttons []Control `json:"buttons"`
	// Submits is true when the element is in a form with a submit button: Enter in it
	// submits the form, and a choice in it only sets what the form will send.
	Submits bool `json:"submits"`
	// Headings are what its dialog and its section are headed: the dialog's name or first
	// heading, the nearest heading before it, its region's or fieldset's name.
	Headings []string `json:"headings"`
	// FormAction is where its form sends (the control's formaction, else the form's action).
	FormAction string `json:"formAction"`
	// Href is where a click on it goes when it is, or is inside, a link: the link's resolved
	// href ("" otherwise). A link with a click handler may go elsewhere; this is the best the
	// page says.
	Href string `json:"href"`
	// Form is the state of its form at the moment of reading (nil when it is in none): what
	// a commit sends.
	Form *Form `json:"form"`
	// Icons are the names its icons carry: the ::before/::after content of it and its
	// descendants, background-image and unnamed image file names, icon-font classes, SVG
	// symbols and titles.
	Icons []string `json:"icons"`
	// Data are its and its descendants' data-* attributes, "name value" ("action delete-file").
	Data []string `json:"data"`
	// Classes are the plain class names of it and its descendants: read only through Inferred,
	// for a control nothing else names.
	Classes []string `json:"classes"`
	// Opens is true for a control that opens a menu, popup or section (aria-haspopup,
	// aria-expanded): it commits nothing itself.
	Opens bool `json:"opens"`
	// Multiline is true for a textarea or an editable region: Enter there may only add a line.
	Multiline bool `json:"multiline"`
	// URL is the URL of the element's own document: the page's, or a frame's.
	URL string `json:"url"`
	// Inferred is the name the element's icons and attributes give it when it has no name
	// and shows no text (describe.Infer): the same words the model's outline shows, rendered
	// `button "trash" [icon]`.
	Inferred string `json:"inferred,omitempty"`
}

// Proposal is an action about to run and what it touches.
type Proposal struct {
	Action Action
	// Element is the element acted on (for a press without one: the focused element); nil
	// when there is none.
	Element *Element
	// Target is a drag's drop target.
	Target *Element
	// DialogType and DialogMessage describe the open JavaScript dialog (kind dialog).
	DialogType, DialogMessage string
	// URL is the page's URL.
	URL string
	// Receiver is the URL of the document that receives the step when it is none of the
	// above: the frame a key goes to when the focused element is a frame, the tab a close
	// closes ("" when none).
	Receiver string
	// Page is what the gate reads of the page around the action (nil: nothing read).
	Page *Page
}

// Verdict is the gate's answer.
type Verdict int

const (
	// Allow lets the action run.
	Allow Verdict = iota
	// Confirm holds the action until the person approves this very decision.
	Confirm
	// Block refuses the action whoever approves it.
	Block
)

// String names the verdict.
func (v Verdict) String() string {
	switch v {
	case Allow:
		return "allow"
	case Confirm:
		return "confirm"
	case Block:
		return "block"
	}
	return "verdict?"
}

// Decision is the gate's decision on one proposal.
type Decision struct {
	Verdict Verdict
	// Level is how grave the step is (None for a harmless one).
	Level Level
	// Reason names the category ("purchase or payment", "deletion or cancellation", …).
	Reason string
	// Detail says what on the page made the step risky when the step's own label does not
	// show it, e.g. `Enter submits the form with button "Delete account"`.
	Detail string
	// Step describes the step for the person: `click button "Delete account" on shop.example`.
	Step string
	// Digest names this decision: the action and the element it resolved to. An approval of
	// it lets exactly this step run once.
	Digest string
	// Approved is true when an approval the requester held let the step run.
	Approved bool
	// Reviewed is the alignment check's answer on the step (nil when it was not asked).
	Reviewed *CriticVerdict
	// unread is true when the only thing that made the step ask is a name in a script the
	// gate's words are not written in: a critic, which reads any language, judges it instead.
	unread bool
	// newOrigin is true when the only thing that made the step ask is that it opens a page of
	// a site or host new to the task, carrying nothing the task read: a critic, which sees the
	// person's words and the destination, judges it instead.
	newOrigin bool
}

// Prompt is what the person is asked: the step, then what made it risky.
func (d Decision) Prompt() string {
	if d.Detail == "" {
		return d.Step
	}
	return d.Step + " (" + d.Detail + ")"
}

// ErrConfirm is matched (errors.Is) by the error of an action held for the person's approval.
var ErrConfirm = errors.New("needs the user's confirmation")

// ErrBlocked is matched (errors.Is) by the error of an action the gate refused.
var ErrBlocked = errors.New("refused by the safety gate")

// ConfirmError is the error of an action held for the person's approval: nothing reached the
// page. Approve its Decision (Grants.Approve) and run the action again.
type ConfirmError struct{ Decision Decision }

func (e *ConfirmError) Error() string {
	return fmt.Sprintf("%s: %s (%s); nothing was done", ErrConfirm, e.Decision.Prompt(), e.Decision.Reason)
}

// Is matches ErrConfirm.
func (e *ConfirmError) Is(target error) bool { return target == ErrConfirm }

// BlockedError is the error of an action the gate refused: nothing reached the page.
type BlockedError struct{ Decision Decision }

func (e *BlockedError) Error() string {
	return fmt.Sprintf("%s: %s (%s)", ErrBlocked, e.Decision.Prompt(), e.Decision.Reason)
}

// Is matches ErrBlocked.
func (e *BlockedError) Is(target error) bool { return target == ErrBlocked }

// Grant is one approval: of one decision (Digest), or of an element the user's own words
// named (Kind and Ref) up to Level.
type Grant struct {
	Digest    string
	Kind, Ref string
	Level     Level
}

// Grants are approvals a requester holds. Each is used once. Safe for concurrent use.
type Grants struct {
	mu   sync.Mutex
	list []Grant
}

// NewGrants returns an empty set of approvals.
func NewGrants() *Grants { return &Grants{} }

// Approve records the person's yes to decision d: the same action on the same element runs
// once.
func (g *Grants) Approve(d Decision) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.list = append(g.list, Grant{Digest: d.Digest, Level: Grave})
}

// Name records that the user's own words named the element ref for an action of kind: the
// next such action on it runs if its risk is at most level.
func (g *Grants) Name(kind, ref string, level Level) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.list = append(g.list, Grant{Kind: kind, Ref: ref, Level: level})
}

// holds reports whether g holds the person's approval of the decision named digest.
func (g *Grants) holds(digest string) bool {
	if g == nil || digest == "" {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, gr := range g.list {
		if gr.Digest == digest {
			return true
		}
	}
	return false
}

// use consumes an approval covering d (an action of kind on ref), reporting whether there
// was one.
func (g *Grants) use(d Decision, kind, ref string) bool {
	if g == nil {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	for i, gr := range g.list {
		ok := gr.Digest != "" && gr.Digest == d.Digest
		ok = ok || (gr.Digest == "" && gr.Ref == ref && gr.Kind == kind && d.Level <= gr.Level)
		if ok {
			g.list = append(g.list[:i:i], g.list[i+1:]...)
			return true
		}
	}
	return false
}

// Options configure a Gate.
type Options struct {
	// Home is tabrelay's home directory (its secret, database, skills): never uploaded.
	Home string
	// UserHome is the user's home directory, whose dot-files and dot-folders are never
	// uploaded (default: os.UserHomeDir()).
	UserHome string
	// UploadDirs are folders the user configured whose files the agent may upload without
	// asking (--agent-upload-dir).
	UploadDirs []string
	// Critic, when not nil, is the second opinion on every step the rules allow that changes
	// something (see [Critic]); nil: the rules alone.
	Critic Critic
}

// Gate decides on proposals. It is safe for concurrent use.
type Gate struct {
	opts  Options
	vocab *vocabulary
}

// New returns a gate.
func New(opts Options) *Gate {
	return &Gate{opts: opts.withDefaults(), vocab: buildVocabulary()}
}

// Check decides whether p may run for r: Allow, Confirm (with the reason and what the person
// is asked) or Block. A Caller's actions are allowed (the door records them). An Ordinary
// step whose words the user's goal names, or that an approval r holds covers, is allowed;
// the approval is used up.
func (g *Gate) Check(p Proposal, r Request) Decision {
	d := g.judge(p, r)
	if r.Who != Caller {
		if b := g.boundary(p, r); b.Level > d.Level {
			d = b
		}
	}
	d.Step = stepText(p)
	d.Digest = digest(p)
	switch {
	case r.Who == Caller:
		d.Verdict = Allow
	case d.Verdict == Block || d.Level == None:
	case d.Level == Ordinary && g.goalNames(r.Goal, p, d):
		d.Verdict = Allow
	default:
		ref := ""
		if p.Element != nil {
			ref = p.Element.Ref
		}
		if r.Grants.use(d, p.Action.Kind, ref) {
			d.Verdict, d.Approved = Allow, true
			approvedBoundary(d, p, r.Task)
		} else {
			d.Verdict = Confirm
		}
	}
	return d
}

// judge is the decision before approvals: the step's level, reason and detail (Verdict Block
// for what no approval allows).
func (g *Gate) judge(p Proposal, r Request) Decision {
	a, el := p.Action, p.Element
	switch a.Kind {
	case "click":
		if el == nil {
			return Decision{}
		}
		// a link's click is a navigation to its href: its words judged as an opened URL's
		return maxDecision(g.activate(el, p), g.linkURL(el, r.Goal))
	case "press":
		return g.key(p)
	case "type":
		if el == nil {
			return Decision{}
		}
		if d := g.secret(el, a.Text, r.Goal); d.Level != None {
			return d
		}
		var d Decision
		if a.Submit || strings.ContainsAny(a.Text, "\n\r") {
			d = g.boxKey(Proposal{Action: Action{Kind: "press", Key: "Enter"}, Page: p.Page})
		}
		if t := g.typedKeys(p); t.Level > d.Level {
			d = t
		}
		if a.Submit {
			d = maxDecision(g.commitField(el, p), d)
		}
		return d
	case "select", "check":
		if el == nil {
			return Decision{}
		}
		return g.choose(el, a, p)
	case "drag":
		return g.drop(p)
	case "upload":
		return g.upload(a.Files, r)
	case "dialog":
		return g.dialog(p, r.Goal)
	case "evaluate":
		return Decision{Level: Ordinary, Reason: ReasonScript}
	}
	return Decision{}
}

// names are every name of el, folded: what it shows first.
func names(el *Element) []string {
	out := make([]string, 0, 2+len(el.Labels))
	seen := map[string]bool{}
	for _, s := range append([]string{el.Text, el.Name}, el.Labels...) {
		f := Fold(s)
		if f != "" && !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	return out
}

// shown is what el shows (its visible text, else its accessible name).
func shown(el *Element) string {
	if t := strings.TrimSpace(el.Text); t != "" {
		return clip(oneLine(t), 80)
	}
	return clip(oneLine(el.Name), 80)
}

// labelHit is the gravest hit among el's names, icons and data-* attributes, and where it was
// for the person ("its name says …", "its icon is …"; "" when in what el shows).
func (g *Gate) labelHit(el *Element) (hit, string) {
	var best hit
	where := ""
	money := el.Role != "link" && el.Tag != "a"
	for _, n := range names(el) {
		if h := g.vocab.actionHit(n, money); h.level > best.level {
			best, where = h, ""
			if n != Fold(el.Text) {
				where = fmt.Sprintf("its name says %q", clip(n, 80))
			}
		}
	}
	if best.level == Grave {
		return best, where
	}
	for _, ic := range el.Icons {
		if h := g.vocab.iconHit(ic); h.level > best.level {
			best, where = h, fmt.Sprintf("its icon is %q", clip(ic, 80))
		}
	}
	// a control nothing names is judged by the name its evidence gives it, as the model and
	// the person read it (its class names included)
	if el.Inferred != "" && strings.TrimSpace(el.Name) == "" {
		if h := g.vocab.iconHit(el.Inferred); h.level > best.level {
			best, where = h, fmt.Sprintf("its icon or class says %q", clip(el.Inferred, 80))
		}
	}
	for _, dt := range el.Data {
		if h := g.vocab.iconHit(dt); h.level > best.level {
			best, where = h, fmt.Sprintf("its data attribute says %q", clip(dt, 80))
		}
	}
	return best, where
}

// activate judges activating el (a click, Enter or Space on it).
func (g *Gate) activate(el *Element, p Proposal) Decision {
	if choice(el) {
		return g.choose(el, Action{Kind: "check", Checked: true}, p)
	}
	h, where := g.labelHit(el)
	var d Decision
	if h.level != None {
		d = Decision{Level: h.level, Reason: h.reason, Detail: where}
	}
	if d.Level == Grave {
		return d
	}
	ordinaryLabel := d.Level == Ordinary
	if g.commitControl(el) {
		if c := g.formCommit(el); c.Level == Grave {
			return c
		}
		if c := g.commitContext(el, p); c.Level > d.Level {
			d = c
		}
		if d.Level == None && !el.Opens && el.Scope != "" && len(names(el)) == 0 && len(el.Icons) == 0 {
			d = Decision{Level: Ordinary, Reason: ReasonUnnamed, Detail: fmt.Sprintf("a %s in a %s that shows and says nothing", orRole(el), el.Scope)}
		}
		// an author's button that shows and says nothing (an SVG path, a drawn shape) may
		// do anything, wherever it stands
		if d.Level == None && !el.Opens && el.Role == "button" && len(names(el)) == 0 && len(el.Icons) == 0 {
			d = Decision{Level: Ordinary, Reason: ReasonUnnamed, Detail: fmt.Sprintf("a %s that shows and says nothing", orRole(el))}
		}
		if d.Level == None {
			d = g.unreadName(el)
		}
		if d.Level == Grave {
			return d
		}
	} else if d.Level == None && !el.Opens && (el.Role == "link" || el.Tag == "a") {
		// a link goes wherever its address or its page's handler sends it, as a button does
		d = g.unreadName(el)
	}
	// A submit button or a generic "go on" carries out what its form or dialog says; so does
	// any commit in a dialog ("Sure", "Do it") but the ones that close it.
	proceed := el.Scope == "dialog" && g.commitControl(el)
	if el.Role != "link" && el.Tag != "a" { // a "Next" link pages through results
		for _, n := range names(el) {
			proceed = proceed || g.vocab.isProceed(n)
		}
	}
	if proceed || ordinaryLabel {
		if c := g.context(el); c.Level > d.Level {
			return c
		}
	}
	return d
}

// unreadName asks about el when a name of it is in a script the gate's words are not written
// in: it says nothing the gate can read (where a critic reviews the step, it reads it
// instead: see review). The zero Decision when every name is readable.
func (g *Gate) unreadName(el *Element) Decision {
	for _, n := range names(el) {
		if r := g.vocab.unreadable(n); r != "" {
			return Decision{Level: Ordinary, Reason: ReasonUnnamed, Detail: fmt.Sprintf("its name %q is in a script the gate does not read (%q)", clip(n, 80), r), unread: true}
		}
	}
	return Decision{}
}

// context judges el's surroundings: the words of its form or dialog, else the text near it.
func (g *Gate) context(el *Element) Decision {
	text := Fold(el.ScopeText)
	if text == "" {
		return Decision{}
	}
	h := g.vocab.contextHit(text)
	if h.level == None {
		return Decision{}
	}
	what := el.Scope
	if what == "" {
		what = "page"
	}
	return Decision{Level: h.level, Reason: h.reason,
		Detail: fmt.Sprintf("the %s around it says %q (%q)", what, quote(el.ScopeText, text, h.word), h.word)}
}

// quote is the words around word in page text orig (whose folded form is folded), for the
// person to see what made a step risky.
func quote(orig, folded, word string) string {
	src, i := oneLine(orig), -1
	if j := strings.Index(strings.ToLower(src), word); j >= 0 {
		i = j
	} else if j := strings.Index(folded, word); j >= 0 {
		src, i = folded, j
	}
	if i < 0 {
		return clip(word, 60)
	}
	from, to := max(0, i-40), min(len(src), i+len(word)+60)
	for from > 0 && (src[from]&0xC0) == 0x80 {
		from--
	}
	for to < len(src) && (src[to]&0xC0) == 0x80 {
		to++
	}
	q := strings.TrimSpace(src[from:to])
	if from > 0 {
		q = "…" + q
	}
	if to < len(src) {
		q += "…"
	}
	return q
}

// submit judges Enter in el: el's own name, then its form's or dialog's buttons (Enter
// presses the default one) and words.
func (g *Gate) submit(el *Element, p Proposal) Decision {
	if h, _ := g.labelHit(el); h.level == Grave {
		return Decision{Level: h.level, Reason: h.reason}
	}
	what := el.Scope
	if what == "" {
		what = "form"
	}
	var d Decision
	for _, b := range el.Buttons {
		bel := &Element{Text: b.Text, Labels: b.Labels, Role: "button", Scope: el.Scope, ScopeText: el.ScopeText, Submits: true}
		bd := g.activate(bel, Proposal{})
		if bd.Level > d.Level {
			d = bd
			d.Detail = joinDetail(fmt.Sprintf("Enter submits the %s with button %q", what, shown(bel)), bd.Detail)
		}
	}
	return d
}

// choose judges selecting options in, or checking, el: by its own names and the chosen
// options. A choice inside a form with a submit button only sets what the form sends (the
// button is judged when pressed) unless it names money. Whatever the form, a choice that
// hands the account over (an Owner role, two-factor authentication off) is grave, and a
// switch or checkbox on an account, security, billing or consent page asks.
func (g *Gate) choose(el *Element, a Action, p Proposal) Decision {
	if d := g.takeoverChoice(el, a, p); d.Level != None {
		return d
	}
	h, where := g.labelHit(withoutOptions(el))
	for _, v := range a.Values {
		if vh := g.vocab.actionHit(Fold(v), true); vh.level > h.level {
			h, where = vh, fmt.Sprintf("it says %q", clip(Fold(v), 80))
		}
	}
	if h.level == None || (el.Submits && h.reason != ReasonPayment) {
		return Decision{}
	}
	return Decision{Level: h.level, Reason: h.reason, Detail: where}
}

// withoutOptions is el with its options' words taken out of its names: a label that wraps a
// list holds every option's text, and only the chosen ones are chosen (judged as values).
func withoutOptions(el *Element) *Element {
	if len(el.Options) == 0 {
		return el
	}
	c := *el
	strip := func(s string) string {
		f := Fold(s)
		for _, o := range el.Options {
			if o := Fold(o); o != "" {
				f = strings.ReplaceAll(f, o, " ")
			}
		}
		return f
	}
	c.Text, c.Name = strip(el.Text), strip(el.Name)
	c.Labels = make([]string, len(el.Labels))
	for i, l := range el.Labels {
		c.Labels[i] = strip(l)
	}
	return &c
}

var (
	passwordRe = regexp.MustCompile(`(?i)(password|passcode|passphrase|\bpin\b|one[- ]time|\botp\b|2fa|verification code|security answer|passwort|kennwort|mot de passe|contraseña|パスワード|暗証番号|密码|密碼)`)
	paymentRe  = regexp.MustCompile(`(?i)(card ?number|credit card|debit card|\bcvv\b|\bcvc\b|\bcsc\b|security code|expir|\biban\b|account number|routing number|sort code|\bssn\b|social security|tax id|kartennummer|numéro de carte|número de tarjeta|カード番号|卡号)`)
)

// secret judges typing text into el: a password or payment field takes only a value the user
// gave in the goal.
func (g *Gate) secret(el *Element, text, goal string) Decision {
	pw, pay := el.Password || strings.Contains(el.Autocomplete, "password"), strings.HasPrefix(el.Autocomplete, "cc-")
	for _, n := range names(el) {
		pw = pw || passwordRe.MatchString(n)
		pay = pay || paymentRe.MatchString(n)
	}
	if (pw || pay) && !suppliedSecret(text, goal) {
		if pw {
			return Decision{Level: Grave, Reason: ReasonPassword}
		}
		return Decision{Level: Grave, Reason: ReasonPayField}
	}
	return Decision{}
}

// dialog judges answering the open JavaScript dialog.
func (g *Gate) dialog(p Proposal, goal string) Decision {
	if !p.Action.Accept {
		return Decision{} // dismissing changes nothing and may be the only way off a page
	}
	msg := Fold(p.DialogMessage)
	if p.Action.Text != "" && passwordRe.MatchString(msg) && !suppliedSecret(p.Action.Text, goal) {
		return Decision{Level: Grave, Reason: ReasonPassword}
	}
	if t := strings.ToLower(p.DialogType); t == "alert" || t == "beforeunload" {
		return Decision{} // OK on an alert only closes it; on beforeunload it leaves the page
	}
	if h := g.vocab.actionHit(msg, false); h.level != None {
		return Decision{Level: h.level, Reason: h.reason, Detail: fmt.Sprintf("the page asks %q", clip(oneLine(p.DialogMessage), 120))}
	}
	h := g.vocab.contextHit(msg)
	if w := firstMatch(g.vocab.confirm, msg); w != "" {
		h = hit{ReasonConfirm, Grave, w}
	}
	if h.level != None {
		return Decision{Level: h.level, Reason: h.reason, Detail: fmt.Sprintf("the page asks %q (%q)", clip(oneLine(p.DialogMessage), 120), h.word)}
	}
	return Decision{}
}

// goalNames reports whether the user's goal names an Ordinary step: the word that made it
// risky ("submit") or what the element shows ("Save draft").
func (g *Gate) goalNames(goal string, p Proposal, d Decision) bool {
	fg := Fold(goal)
	if fg == "" {
		return false
	}
	switch d.Reason {
	case ReasonScript, ReasonUnnamed:
		return false
	case ReasonKey:
		return p.Action.Kind == "press" && keyNamed(fg, p.Action.Key)
	}
	el := p.Element
	if el == nil {
		return false
	}
	for _, n := range names(el) {
		if utf8.RuneCountInString(n) >= 3 && containsWord(fg, n) {
			return true
		}
		if h := g.vocab.actionHit(n, false); h.level == Ordinary && containsWord(fg, Fold(h.word)) {
			return true
		}
	}
	for _, b := range el.Buttons {
		for _, n := range append([]string{b.Text}, b.Labels...) {
			if h := g.vocab.actionHit(Fold(n), false); h.level == Ordinary && containsWord(fg, Fold(h.word)) {
				return true
			}
		}
	}
	return false
}

// containsWord reports whether w occurs in s between non-letters.
func containsWord(s, w string) bool {
	for from := 0; ; {
		i := strings.Index(s[from:], w)
		if i < 0 {
			return false
		}
		start, end := from+i, from+i+len(w)
		before, _ := utf8.DecodeLastRuneInString(s[:start])
		after, _ := utf8.DecodeRuneInString(s[end:])
		if (start == 0 || !isWordRune(before)) && (end == len(s) || !isWordRune(after)) {
			return true
		}
		from = start + 1
	}
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// textField reports whether el takes typed text (Enter in it submits; Space types a space).
func textField(el *Element) bool {
	if el.Multiline { // a text area or an editable region, whatever role the page gave it
		return true
	}
	switch el.Role {
	case "textbox", "searchbox", "combobox", "spinbutton":
		return true
	}
	switch el.Tag {
	case "textarea":
		return true
	case "input":
		switch el.Type {
		case "submit", "button", "image", "reset", "checkbox", "radio", "file", "range", "color":
			return false
		}
		return true
	}
	return false
}

// choice reports whether el is a checkbox, radio, switch or option: activating it sets a choice.
func choice(el *Element) bool {
	switch el.Role {
	case "checkbox", "radio", "switch", "option", "menuitemcheckbox", "menuitemradio":
		return true
	}
	return el.Tag == "input" && (el.Type == "checkbox" || el.Type == "radio")
}

// isEnter reports whether key is Enter (Return, NumpadEnter).
func isEnter(key string) bool {
	k := strings.ToLower(strings.TrimSpace(key))
	return k == "enter" || k == "return" || k == "numpadenter" || k == "\r" || k == "\n"
}

// isSpace reports whether key is the space bar.
func isSpace(key string) bool {
	k := strings.ToLower(key)
	return k == " " || k == "space" || k == "spacebar"
}

// minSecret is the shortest value that counts as a secret the user gave.
const minSecret = 4

// suppliedSecret reports whether value, typed into a password or payment field, is a value
// the user gave in the goal: quoted there (any length: "pw", 'pw', “pw”), or as a word of its
// own at least minSecret characters long.
func suppliedSecret(value, goal string) bool {
	v := strings.TrimSpace(value)
	if v == "" {
		return false
	}
	for _, q := range [][2]string{{`"`, `"`}, {"'", "'"}, {"“", "”"}, {"‘", "’"}, {"«", "»"}, {"「", "」"}} {
		if strings.Contains(goal, q[0]+v+q[1]) {
			return true
		}
	}
	if utf8.RuneCountInString(v) < minSecret {
		return false
	}
	for from := 0; from <= len(goal); {
		i := strings.Index(goal[from:], v)
		if i < 0 {
			return false
		}
		start, end := from+i, from+i+len(v)
		if leftBoundary(goal[:start]) && rightBoundary(goal[end:]) {
			return true
		}
		_, size := utf8.DecodeRuneInString(goal[start:])
		from = start + size
	}
	return false
}

func leftBoundary(before string) bool {
	if before == "" {
		return true
	}
	r, _ := utf8.DecodeLastRuneInString(before)
	return separator(r) || r == ':'
}

func rightBoundary(after string) bool {
	if after == "" {
		return true
	}
	r, size := utf8.DecodeRuneInString(after)
	if r == '.' || r == ':' {
		next, _ := utf8.DecodeRuneInString(after[size:])
		return size == len(after) || unicode.IsSpace(next)
	}
	return separator(r)
}

func separator(r rune) bool {
	return unicode.IsSpace(r) || unicode.In(r, unicode.Quotation_Mark, unicode.Ps, unicode.Pe, unicode.Pi, unicode.Pf) ||
		strings.ContainsRune(",;!?`", r)
}

// stepText renders a step for the person: `click button "Place order" on shop.example`.
func stepText(p Proposal) string {
	a := p.Action
	var b strings.Builder
	b.WriteString(a.Kind)
	if a.Kind == "dialog" {
		verb := "dismiss"
		if a.Accept {
			verb = "accept"
		}
		fmt.Fprintf(&b, " %s %s %q", verb, p.DialogType, clip(p.DialogMessage, 200))
		if a.Text != "" {
			b.WriteString(" answering (value hidden)")
		}
	}
	if el := p.Element; el != nil {
		if el.Inferred != "" && strings.TrimSpace(el.Name) == "" {
			fmt.Fprintf(&b, " %s %q [%s]", el.Role, clip(el.Inferred, 80), describe.Mark)
		} else {
			fmt.Fprintf(&b, " %s %q", el.Role, clip(oneLine(el.Name), 80))
		}
		if t := shown(el); t != "" && Fold(t) != Fold(clip(oneLine(el.Name), 80)) {
			fmt.Fprintf(&b, " (shows %q)", t)
		}
	}
	if t := p.Target; t != nil {
		fmt.Fprintf(&b, " onto %s %q", t.Role, shown(t))
	}
	if len(a.Files) > 0 {
		fmt.Fprintf(&b, " files %s", clip(strings.Join(a.Files, ", "), 300))
	}
	if len(a.Values) > 0 {
		fmt.Fprintf(&b, " choosing %s", clip(strings.Join(a.Values, ", "), 120))
	}
	if a.Text != "" && (a.Kind == "type" || a.Kind == "fill") {
		if el := p.Element; el != nil && (el.Password || passwordRe.MatchString(Fold(el.Name)) || paymentRe.MatchString(Fold(el.Name))) {
			b.WriteString(" (value hidden)")
		} else {
			fmt.Fprintf(&b, " text %q", clip(a.Text, 80))
		}
	}
	if a.Key != "" {
		fmt.Fprintf(&b, " key %s", strings.Join(append(append([]string(nil), a.Modifiers...), a.Key), "+"))
	}
	if a.URL != "" {
		fmt.Fprintf(&b, " to %s", clip(a.URL, 200))
	}
	if a.Submit {
		b.WriteString(" and press Enter")
	}
	if el := p.Element; el != nil && a.Kind == "click" && el.Href != "" {
		fmt.Fprintf(&b, " (its link goes to %s)", clip(el.Href, 200))
	}
	if el := p.Element; el != nil && (a.Kind == "click" || a.Kind == "press" || a.Submit) {
		b.WriteString(formText(el))
	}
	if u, err := url.Parse(p.URL); err == nil && u.Hostname() != "" {
		fmt.Fprintf(&b, " on %s", strings.ToLower(u.Hostname()))
	}
	return b.String()
}

// digest names proposal p: the action's parameters, the element it resolved to with its
// form's action and state, and the page (origin and path) it runs on. An approval names this
// digest, so it covers no other step: not the same button once the page has pointed its form
// elsewhere or changed what the form sends.
func digest(p Proposal) string {
	h := sha256.New()
	a := p.Action
	fmt.Fprintf(h, "%q %q %q %v %q %v %q %v %q %q\n", a.Kind, a.Key, a.Text, a.Submit, a.Values, a.Checked, a.Files, a.Accept, a.Modifiers, a.URL)
	for _, el := range []*Element{p.Element, p.Target} {
		if el == nil {
			fmt.Fprintln(h, "-")
			continue
		}
		fmt.Fprintf(h, "%q %q %q %q %q %q %q %q\n", el.Ref, el.Role, el.Name, el.Tag, el.Text, el.Labels, el.Icons, el.Data)
		// where its form sends and what the form holds: an approval covers this state only
		fmt.Fprintf(h, "%q %q %q\n", el.FormAction, el.URL, el.Href)
		if f := el.Form; f != nil {
			fmt.Fprintf(h, "%q", f.Method)
			for _, fd := range f.Fields {
				fmt.Fprintf(h, " %q %q %q %q %q %v", fd.Name, fd.Kind, fd.Label, fd.Value, fd.Chosen, fd.Checked)
			}
			fmt.Fprintln(h)
		}
	}
	page := pageOf(p.URL)
	if page == "" {
		page = p.URL
	}
	fmt.Fprintf(h, "%q %q %q", p.DialogType, p.DialogMessage, page)
	return hex.EncodeToString(h.Sum(nil)[:16])
}

func joinDetail(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "; " + b
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && (s[cut]&0xC0) == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}

// CheckAll judges the proposals of one action (a fill's fields, or the one element) in order
// for req, telling seen (if not nil) of each decision: a *ConfirmError or *BlockedError at the
// first that may not run; else the first decision an approval allowed (nil if none was needed).
// A step the rules allow that changes something goes to the critic (Options.Critic) when the
// request carries the person's words.
func (g *Gate) CheckAll(ctx context.Context, props []Proposal, req Request, seen func(Decision)) (*Decision, error) {
	var approved *Decision
	for _, p := range props {
		d := g.review(ctx, p, req, g.Check(p, req))
		if seen != nil {
			seen(d)
		}
		switch d.Verdict {
		case Confirm:
			return nil, &ConfirmError{Decision: d}
		case Block:
			return nil, &BlockedError{Decision: d}
		}
		if d.Approved && approved == nil {
			approved = &d
		}
	}
	return approved, nil
}
