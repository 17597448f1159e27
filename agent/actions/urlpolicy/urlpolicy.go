// Package urlpolicy is the one place that decides which URLs tabrelay's action service may
// open in a tab (navigate, open). It reads a URL the way a browser does (the WHATWG URL
// parser's clean-up: leading and trailing C0 control characters and spaces are dropped, tabs
// and newlines anywhere are removed, the scheme is case-insensitive, backslashes are slashes
// in http(s) URLs, any number of slashes may follow "https:"), so that what is checked is what
// the browser would load, and then allows only http, https and about:blank (and file: when
// the server allows it).
//
//	u, err := urlpolicy.Policy{}.Normalize("example.com/docs", "")   // https://example.com/docs
//	_, err = urlpolicy.Policy{}.Normalize("\x01file:///etc/passwd", "")
//	errors.Is(err, urlpolicy.ErrRefused)                              // true
//
// Every door that opens pages (the agent's tools, the fast path, /api/act, the CLI's act,
// skills, MCP) reaches the browser through agent/actions, which applies this policy.
package urlpolicy

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// ErrRefused is matched (errors.Is) by every error for a URL whose scheme tabrelay does not
// open; the error is a *RefusedError.
var ErrRefused = errors.New("URL not allowed")

// ErrInvalid is matched by errors for input that is not a URL a browser could load (empty,
// a relative path with no page to resolve it against, no host, bad characters).
var ErrInvalid = errors.New("not a valid URL")

// RefusedError says which scheme was refused and why.
type RefusedError struct {
	// Scheme is the refused scheme, lowercased ("javascript", "file", "view-source", …).
	Scheme string
	// FileNeedsOption is true for file: URLs, which the server may allow.
	FileNeedsOption bool
}

// Error reads like `file: URLs are not allowed: only http, https and about:blank pages can be
// opened`, which a model or a person can act on.
func (e *RefusedError) Error() string {
	msg := fmt.Sprintf("%s: URLs are not allowed: only http, https and about:blank pages can be opened", e.Scheme)
	if e.FileNeedsOption {
		msg += " (local files only when the server was started with file URLs allowed)"
	}
	return msg
}

// Is makes errors.Is(err, ErrRefused) true.
func (e *RefusedError) Is(target error) bool { return target == ErrRefused }

// Policy says which URLs may be opened beyond http, https and about:blank. The zero value is
// the default policy.
type Policy struct {
	// AllowFile allows file: URLs (local files of the machine running the browser).
	AllowFile bool
}

// Normalize cleans raw as a browser's URL parser would, completes scheme-less input
// ("example.com/x", "localhost:8080" → https://…) and resolves relative input ("/x", "?q=1",
// "#top", "./a") against base (the tab's current URL; "" when there is none), and returns the
// URL to load. It returns a *RefusedError (ErrRefused) for a scheme the policy does not allow
// and an error matching ErrInvalid for input that is not a loadable URL.
func (p Policy) Normalize(raw, base string) (string, error) {
	s := Clean(raw)
	if s == "" {
		return "", fmt.Errorf("%w: the URL is empty; give a full URL like https://example.com", ErrInvalid)
	}
	scheme, rest, ok := splitScheme(s)
	if !ok {
		switch {
		case strings.HasPrefix(s, "//") || strings.HasPrefix(s, `\\`):
			scheme, rest = "https", s
		case strings.HasPrefix(s, "/") || strings.HasPrefix(s, "?") || strings.HasPrefix(s, "#") || strings.HasPrefix(s, "."):
			return p.resolve(s, base)
		default:
			scheme, rest = "https", "//"+s
		}
	}
	switch scheme {
	case "http", "https":
		// Special schemes: backslashes are slashes, and any run of slashes introduces the host.
		rest = strings.TrimLeft(strings.ReplaceAll(rest, `\`, "/"), "/")
		u, err := url.Parse(scheme + "://" + rest)
		if err != nil {
			return "", fmt.Errorf("%w: %q: %v", ErrInvalid, clip(raw), unwrapURLError(err))
		}
		if u.Hostname() == "" {
			return "", fmt.Errorf("%w: %q has no host; give a full URL like https://example.com/path", ErrInvalid, clip(raw))
		}
		u.Host = strings.ToLower(u.Host)
		return u.String(), nil
	case "about":
		if strings.EqualFold(rest, "blank") {
			return "about:blank", nil
		}
		return "", &RefusedError{Scheme: scheme}
	case "file":
		if !p.AllowFile {
			return "", &RefusedError{Scheme: scheme, FileNeedsOption: true}
		}
		u, err := url.Parse("file:" + strings.ReplaceAll(rest, `\`, "/"))
		if err != nil {
			return "", fmt.Errorf("%w: %q: %v", ErrInvalid, clip(raw), unwrapURLError(err))
		}
		return u.String(), nil
	}
	return "", &RefusedError{Scheme: scheme}
}

// resolve resolves a relative reference against base, which must itself pass the policy.
func (p Policy) resolve(ref, base string) (string, error) {
	if base == "" || base == "about:blank" {
		return "", fmt.Errorf("%w: %q is a relative URL and there is no page to resolve it against; give a full URL like https://example.com%s", ErrInvalid, clip(ref), clip(ref))
	}
	b, err := p.Normalize(base, "")
	if err != nil {
		return "", fmt.Errorf("resolving %q against the current page: %w", clip(ref), err)
	}
	bu, err := url.Parse(b)
	if err != nil {
		return "", fmt.Errorf("%w: the current page's URL: %v", ErrInvalid, unwrapURLError(err))
	}
	ru, err := url.Parse(strings.ReplaceAll(ref, `\`, "/"))
	if err != nil {
		return "", fmt.Errorf("%w: %q: %v", ErrInvalid, clip(ref), unwrapURLError(err))
	}
	// The result has the base's scheme, already allowed; normalise it once more all the same.
	return p.Normalize(bu.ResolveReference(ru).String(), "")
}

// Clean applies the browser URL parser's first steps: leading and trailing C0 control
// characters and spaces are removed, and so are ASCII tabs and newlines anywhere.
func Clean(raw string) string {
	s := strings.TrimFunc(raw, func(r rune) bool { return r <= 0x20 })
	if strings.ContainsAny(s, "\t\n\r") {
		s = strings.Map(func(r rune) rune {
			if r == '\t' || r == '\n' || r == '\r' {
				return -1
			}
			return r
		}, s)
	}
	return s
}

// splitScheme splits a cleaned URL into its lowercased scheme and the rest, as the WHATWG
// scheme state does (an ASCII letter, then letters, digits, "+", "-" or "."; then ":").
// "host:port" input ("localhost:8080", "example.com:8443/x") is not a scheme: browsers' address
// bars read it as a host, and so does this.
func splitScheme(s string) (scheme, rest string, ok bool) {
	i := strings.IndexByte(s, ':')
	if i <= 0 || !isAlpha(s[0]) {
		return "", "", false
	}
	for j := 1; j < i; j++ {
		c := s[j]
		if !isAlpha(c) && !(c >= '0' && c <= '9') && c != '+' && c != '-' && c != '.' {
			return "", "", false
		}
	}
	rest = s[i+1:]
	port := rest
	if k := strings.IndexAny(rest, "/?#"); k >= 0 {
		port = rest[:k]
	}
	if isDigits(port) {
		return "", "", false
	}
	return strings.ToLower(s[:i]), rest, true
}

func isAlpha(c byte) bool { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') }

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

func clip(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}

// Host returns the lowercased host name of a normalised http(s) URL ("" for about:blank,
// file: or anything unparsable), for site allowlists.
func Host(normalized string) string {
	u, err := url.Parse(normalized)
	if err != nil {
		return ""
	}
	return strings.ToLower(u.Hostname())
}
