package task

import (
	"fmt"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/tabrelay/tabrelay/snapshot"
)

// ActionContext is what the safety classifier sees of a proposed step. A fill of several
// fields is classified one field at a time, each as a type, select or check.
type ActionContext struct {
	// Tool is the tool name (click, type, press, select, check, drag, upload, dialog, navigate, …).
	Tool string
	// Ref, Text, Key, URL are the relevant arguments (dialog: Text is the prompt's answer).
	Ref, Text, Key, URL string
	// Submit is a type call's submit (Enter pressed after typing).
	Submit bool
	// Files are an upload's file paths.
	Files []string
	// Element is the page model's node the ref points to (zero if unknown).
	Element snapshot.Node
	// Target is a drag's drop target (zero if none).
	Target snapshot.Node
	// Page is the latest snapshot of the tab (nil if unknown): its page model tells which
	// element has focus and which form or dialog a submitting Enter acts in.
	Page *snapshot.Snapshot
	// DialogType and DialogMessage describe the open JavaScript dialog (tool dialog; the
	// message is page text), and Accept is the answer: true for OK.
	DialogType, DialogMessage string
	Accept                    bool
	// PageURL is the tab's current URL.
	PageURL string
	// Goal is the user's request (values it contains count as supplied by the user).
	Goal string
}

// Verdict is the classifier's decision.
type Verdict struct {
	// Confirm is true when the step must wait for the user's approval.
	Confirm bool
	// Reason names the category ("purchase", "send", "delete", "publish", "submit",
	// "password field", "payment field", …).
	Reason string
	// Detail says what in the page made the step risky when the step itself does not show it,
	// e.g. `submits the form with button "Delete account"`; it is added to the user's prompt.
	Detail string
}

// Classifier decides whether a step needs the user's confirmation.
type Classifier func(ActionContext) Verdict

var (
	passwordRe = regexp.MustCompile(`(?i)(password|passcode|passphrase|\bpin\b|one[- ]time|\botp\b|2fa|verification code|security answer|passwort|kennwort|mot de passe|contraseña|パスワード|暗証番号|密码|密碼)`)
	paymentRe  = regexp.MustCompile(`(?i)(card ?number|credit card|debit card|\bcvv\b|\bcvc\b|\bcsc\b|security code|expir|\biban\b|account number|routing number|sort code|\bssn\b|social security|tax id|kartennummer|numéro de carte|número de tarjeta|カード番号|卡号)`)
)

// DefaultClassifier asks for confirmation before:
//   - clicking, selecting in or checking elements whose name says buy, pay, checkout, order,
//     send, wire, delete, remove, publish, deploy, approve, authorize, confirm, submit, … (also
//     in German, French, Spanish, Japanese and Chinese: Bestellen, Payer, Eliminar, 購入, 删除…),
//     or dropping a dragged element on one (a checkbox, radio button or option of a form
//     with a button only sets a choice: the form's button is classified when pressed);
//   - clicking a generic "go on" button (Continue, OK, Next, Weiter, 次へ…) when the page's own
//     words around it (its form or dialog, else the nearby lines) speak of paying, amounts
//     ("$500"), ordering, deleting, sending or publishing, or warn that it cannot be undone;
//   - pressing Enter (also type with submit) on such an element, or in a field whose form or
//     dialog has such a button (Enter submits it); see [SubmitRisk];
//   - typing into password ([password] in the snapshot, or a password-like name) or payment
//     fields a value the user did not give, word for word, in the goal;
//   - accepting a confirm or prompt dialog whose message names such a step or asks "Are you
//     sure?" / says it cannot be undone;
//   - uploading a file the goal does not name.
//
// Every verdict names its reason, and Detail quotes the page's words when they, not the
// control's name, made the step risky.
func DefaultClassifier(a ActionContext) Verdict {
	name := a.Element.Name
	switch a.Tool {
	case "type", "fill":
		if passwordRe.MatchString(name) || a.Element.Has("password") {
			if !suppliedSecret(a.Text, a.Goal) {
				return Verdict{Confirm: true, Reason: "password field"}
			}
		}
		if paymentRe.MatchString(name) {
			if !suppliedSecret(a.Text, a.Goal) {
				return Verdict{Confirm: true, Reason: "payment or identity field"}
			}
		}
		if a.Tool == "type" && a.Submit {
			return SubmitRisk(a.Page, a.Element)
		}
	case "click", "select", "check":
		if reason, _ := actionRisk(name); reason != "" && isActionable(a.Element.Role) && !deferredToSubmit(a.Page, a.Element) {
			return Verdict{Confirm: true, Reason: reason}
		}
		if a.Tool == "click" && isProceed(name) && proceedRole(a.Element.Role) {
			return contextRisk(a.Page, a.Element)
		}
	case "drag":
		if reason, _ := actionRisk(a.Target.Name); reason != "" {
			return Verdict{Confirm: true, Reason: reason, Detail: fmt.Sprintf("drops it on %s %q", a.Target.Role, a.Target.Name)}
		}
	case "press":
		if isEnter(a.Key) {
			el := a.Element
			if el.Ref == "" {
				if f := a.Page.Focused(); f != nil {
					el = *f
				}
			}
			return SubmitRisk(a.Page, el)
		}
	case "dialog":
		if !a.Accept {
			return Verdict{}
		}
		if a.Text != "" && passwordRe.MatchString(a.DialogMessage) && !suppliedSecret(a.Text, a.Goal) {
			return Verdict{Confirm: true, Reason: "password field"}
		}
		if t := strings.ToLower(a.DialogType); t == "alert" || t == "beforeunload" {
			return Verdict{} // OK on an alert only closes it; on beforeunload it leaves the page
		}
		if reason, _ := actionRisk(a.DialogMessage); reason != "" {
			return Verdict{Confirm: true, Reason: reason}
		}
		reason, word := textRisk(a.DialogMessage)
		if w := firstMatch(vocab.confirm, a.DialogMessage); w != "" {
			reason, word = confirmPhrases.reason, w
		}
		if reason != "" {
			return Verdict{Confirm: true, Reason: reason, Detail: fmt.Sprintf("the page asks %q (%q)", truncate(oneLine(a.DialogMessage), 120), word)}
		}
	case "upload":
		for _, f := range a.Files {
			base := filepath.Base(f)
			if !suppliedByUser(f, a.Goal) && (len(base) < 4 || !suppliedByUser(base, a.Goal)) {
				return Verdict{Confirm: true, Reason: "uploading a file"}
			}
		}
	}
	return Verdict{}
}

// isEnter reports whether key is Enter, alone or with modifiers (Control+Enter sends in many
// mail and chat apps).
func isEnter(key string) bool {
	k := strings.TrimSpace(key)
	if i := strings.LastIndexByte(k, '+'); i >= 0 && i < len(k)-1 {
		k = k[i+1:]
	}
	return strings.EqualFold(k, "Enter") || strings.EqualFold(k, "Return")
}

// SubmitRisk decides whether pressing Enter in el (type with submit, or press Enter) may do
// something irreversible, from the latest snapshot's page model:
//   - el itself is named like an irreversible action (a "Send" button, a "Post a reply" box);
//   - el sits in a form, dialog or alertdialog holding a button named so ("Delete account",
//     "Place order"): Enter submits the form or triggers the dialog's default button;
//   - el is in no form or dialog (script-driven pages, e.g. a chat box): the nearest enclosing
//     element that holds a button is taken as its form;
//   - el is unknown (no ref given and no element has focus): a risky button in any open
//     dialog counts, as Enter may reach a dialog's default button.
//
// The scope is read from the page model's nesting, which keeps forms, dialogs and named
// groups; unnamed wrappers are hoisted away, so a field and a button in the same unnamed
// container are siblings under their nearest kept ancestor.
func SubmitRisk(page *snapshot.Snapshot, el snapshot.Node) Verdict {
	if el.Ref != "" {
		if reason, _ := actionRisk(el.Name); reason != "" {
			return Verdict{Confirm: true, Reason: reason}
		}
		if isProceed(el.Name) && proceedRole(el.Role) {
			if v := contextRisk(page, el); v.Confirm {
				return v
			}
		}
	}
	var at *snapshot.Node
	if el.Ref != "" {
		at = page.Find(el.Ref)
	}
	if at == nil {
		if el.Ref != "" {
			return Verdict{}
		}
		for _, n := range page.Nodes() {
			if n.Role == "dialog" || n.Role == "alertdialog" {
				if b, reason := riskyButton(n); reason != "" {
					return Verdict{Confirm: true, Reason: reason, Detail: fmt.Sprintf("Enter may press button %q of the open dialog", b.Name)}
				}
			}
		}
		return Verdict{}
	}
	scope := at.Closest("form", "dialog", "alertdialog")
	if scope == nil {
		for p := at.Parent(); p != nil && p != page.Root; p = p.Parent() {
			if hasButton(p) {
				scope = p
				break
			}
		}
	}
	if scope == nil {
		return Verdict{}
	}
	what := "form"
	if r := scope.Role; r == "dialog" || r == "alertdialog" {
		what = "dialog"
	}
	if b, reason := riskyButton(scope); reason != "" {
		return Verdict{Confirm: true, Reason: reason, Detail: fmt.Sprintf("Enter submits the %s with button %q", what, b.Name)}
	}
	// A generic button (Continue, OK) carries out what the form's words say.
	for _, n := range scope.Descendants() {
		if n.Role == "button" && !n.Has("disabled") && isProceed(n.Name) {
			if v := contextRisk(page, *n); v.Confirm {
				v.Detail = fmt.Sprintf("Enter submits the %s with button %q; %s", what, n.Name, v.Detail)
				return v
			}
		}
	}
	return Verdict{}
}

func hasButton(scope *snapshot.Node) bool {
	for _, n := range scope.Descendants() {
		if n.Role == "button" {
			return true
		}
	}
	return false
}

// riskyButton returns the first enabled button under scope named like an irreversible action,
// and its category ("" if none).
func riskyButton(scope *snapshot.Node) (*snapshot.Node, string) {
	for _, n := range scope.Descendants() {
		if n.Role == "button" && !n.Has("disabled") {
			if reason, _ := actionRisk(n.Name); reason != "" {
				return n, reason
			}
		}
	}
	return nil, ""
}

// proceedRole reports whether a generic "go on" label on an element of role carries out the
// step its surroundings propose: buttons (and menu items), not links (a "Next" link pages
// through results).
func proceedRole(role string) bool {
	return role == "button" || role == "menuitem" || role == ""
}

// deferredToSubmit reports whether changing el only sets a choice that a form's own button
// sends: a checkbox, radio button or option inside a form with a button. Its name may say
// "Send me the monthly letter" or "Delete my data after a year", but ticking it does nothing
// yet; the button that submits the form is classified when it is pressed (SubmitRisk).
func deferredToSubmit(page *snapshot.Snapshot, el snapshot.Node) bool {
	switch el.Role {
	case "checkbox", "radio", "option":
	default:
		return false
	}
	if page == nil || el.Ref == "" {
		return false
	}
	at := page.Find(el.Ref)
	if at == nil {
		return false
	}
	form := at.Closest("form")
	return form != nil && hasButton(form)
}

func isActionable(role string) bool {
	switch role {
	case "button", "link", "menuitem", "option", "checkbox", "radio", "switch", "tab", "menuitemcheckbox", "menuitemradio", "":
		return true
	}
	return false
}

// suppliedByUser reports whether the typed value appears verbatim in the user's goal.
func suppliedByUser(value, goal string) bool {
	v := strings.TrimSpace(value)
	return v != "" && strings.Contains(goal, v)
}

// describe renders a step for the user: `click button "Place order"`.
func describe(a ActionContext) string {
	var b strings.Builder
	b.WriteString(a.Tool)
	if a.Tool == "dialog" {
		verb := "dismiss"
		if a.Accept {
			verb = "accept"
		}
		fmt.Fprintf(&b, " %s %s %q", verb, a.DialogType, truncate(a.DialogMessage, 200))
		if a.Text != "" {
			if passwordRe.MatchString(a.DialogMessage) {
				b.WriteString(" answering (value hidden)")
			} else {
				fmt.Fprintf(&b, " answering %q", truncate(a.Text, 80))
			}
		}
		if a.PageURL != "" {
			fmt.Fprintf(&b, " on %s", hostOf(a.PageURL))
		}
		return b.String()
	}
	if a.Element.Role != "" || a.Element.Name != "" {
		fmt.Fprintf(&b, " %s %q", a.Element.Role, a.Element.Name)
	} else if a.Ref != "" {
		fmt.Fprintf(&b, " %s", a.Ref)
	}
	if a.Target.Role != "" || a.Target.Name != "" {
		fmt.Fprintf(&b, " onto %s %q", a.Target.Role, a.Target.Name)
	}
	if len(a.Files) > 0 {
		fmt.Fprintf(&b, " files %s", truncate(strings.Join(a.Files, ", "), 300))
	}
	if a.Text != "" {
		if (a.Tool == "type" || a.Tool == "fill") && (a.Element.Has("password") || passwordRe.MatchString(a.Element.Name) || paymentRe.MatchString(a.Element.Name)) {
			b.WriteString(" (value hidden)")
		} else {
			fmt.Fprintf(&b, " text %q", truncate(a.Text, 80))
		}
	}
	if a.Key != "" {
		fmt.Fprintf(&b, " key %s", a.Key)
	}
	if a.Submit {
		b.WriteString(" and press Enter")
	}
	if a.URL != "" {
		fmt.Fprintf(&b, " %s", a.URL)
	}
	if a.PageURL != "" {
		fmt.Fprintf(&b, " on %s", hostOf(a.PageURL))
	}
	return b.String()
}

// siteAllowed reports whether pageURL's host is one of allowed (exact host or a subdomain);
// an empty allowlist allows everything.
func siteAllowed(allowed []string, pageURL string) bool {
	if len(allowed) == 0 {
		return true
	}
	host := hostOf(pageURL)
	for _, a := range allowed {
		a = strings.ToLower(strings.TrimPrefix(strings.TrimSpace(a), "*."))
		if a == "" {
			continue
		}
		if h := hostOf(a); h != "" && strings.Contains(a, "/") {
			a = h
		}
		if host == a || strings.HasSuffix(host, "."+a) {
			return true
		}
	}
	return false
}

func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return ""
	}
	return strings.ToLower(u.Hostname())
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && cut < len(s) && (s[cut]&0xC0) == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}
