package task

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/tabrelay/tabrelay/agent/outline"
)

// ActionContext is what the safety classifier sees of a proposed step.
type ActionContext struct {
	// Tool is the tool name (click, type, press, select, check, navigate, …).
	Tool string
	// Ref, Text, Key, URL are the relevant arguments.
	Ref, Text, Key, URL string
	// Element is the snapshot node the ref points to (zero if unknown).
	Element outline.Node
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
}

// Classifier decides whether a step needs the user's confirmation.
type Classifier func(ActionContext) Verdict

var (
	// irreversibleRe finds words in an element's name that make a click irreversible.
	irreversibleRe = regexp.MustCompile(`(?i)\b(buy|purchase|pay|payment|checkout|check out|place (?:your )?order|order now|complete order|confirm (?:order|purchase|payment|transfer)|send|delete|remove|erase|destroy|publish|post|tweet|share|submit|transfer|donate|subscribe|unsubscribe|book now|reserve|sign and|close account|deactivate)\b`)
	passwordRe     = regexp.MustCompile(`(?i)(password|passcode|passphrase|\bpin\b|one[- ]time|\botp\b|2fa|verification code|security answer)`)
	paymentRe      = regexp.MustCompile(`(?i)(card ?number|credit card|debit card|\bcvv\b|\bcvc\b|\bcsc\b|security code|expir|\biban\b|account number|routing number|sort code|\bssn\b|social security|tax id)`)
)

func reasonFor(word string) string {
	w := strings.ToLower(word)
	switch {
	case strings.HasPrefix(w, "buy"), strings.HasPrefix(w, "purchase"), strings.HasPrefix(w, "pay"),
		strings.Contains(w, "check"), strings.Contains(w, "order"), strings.HasPrefix(w, "book"),
		strings.HasPrefix(w, "reserve"), strings.HasPrefix(w, "donate"), strings.HasPrefix(w, "subscribe"):
		return "purchase or payment"
	case w == "send", w == "transfer", strings.HasPrefix(w, "confirm transfer"):
		return "sending"
	case w == "delete", w == "remove", w == "erase", w == "destroy", w == "close account", w == "deactivate", w == "unsubscribe":
		return "deletion"
	case w == "publish", w == "post", w == "tweet", w == "share":
		return "publishing"
	}
	return "submitting data"
}

// DefaultClassifier asks for confirmation before clicking, pressing Enter on or selecting in
// elements whose name says buy, pay, checkout, order, send, delete, remove, publish, post,
// submit, …; and before typing into password or payment fields a value the user did not give in
// the goal.
func DefaultClassifier(a ActionContext) Verdict {
	name := a.Element.Name
	switch a.Tool {
	case "type", "fill":
		if passwordRe.MatchString(name) || a.Element.Has("password") {
			if !suppliedByUser(a.Text, a.Goal) {
				return Verdict{Confirm: true, Reason: "password field"}
			}
		}
		if paymentRe.MatchString(name) {
			if !suppliedByUser(a.Text, a.Goal) {
				return Verdict{Confirm: true, Reason: "payment or identity field"}
			}
		}
	case "click", "select", "check":
		if m := irreversibleRe.FindString(name); m != "" && isActionable(a.Element.Role) {
			return Verdict{Confirm: true, Reason: reasonFor(m)}
		}
	case "press":
		if strings.EqualFold(a.Key, "Enter") && a.Element.Ref != "" {
			if m := irreversibleRe.FindString(name); m != "" {
				return Verdict{Confirm: true, Reason: reasonFor(m)}
			}
		}
	}
	return Verdict{}
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
	if a.Element.Role != "" || a.Element.Name != "" {
		fmt.Fprintf(&b, " %s %q", a.Element.Role, a.Element.Name)
	} else if a.Ref != "" {
		fmt.Fprintf(&b, " %s", a.Ref)
	}
	if a.Text != "" {
		if a.Tool == "type" && (passwordRe.MatchString(a.Element.Name) || paymentRe.MatchString(a.Element.Name)) {
			b.WriteString(" (value hidden)")
		} else {
			fmt.Fprintf(&b, " text %q", truncate(a.Text, 80))
		}
	}
	if a.Key != "" {
		fmt.Fprintf(&b, " key %s", a.Key)
	}
	if a.URL != "" {
		fmt.Fprintf(&b, " %s", a.URL)
	}
	if a.PageURL != "" {
		fmt.Fprintf(&b, " on %s", hostOf(a.PageURL))
	}
	return b.String()
}

// writeTools are the tools that change pages and are subject to the site allowlist.
func isWriteTool(tool string) bool {
	switch tool {
	case "click", "type", "fill", "press", "select", "check", "hover":
		return true
	}
	return false
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
