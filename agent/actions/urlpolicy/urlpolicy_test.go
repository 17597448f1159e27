package urlpolicy

import (
	"errors"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestNormalize(t *testing.T) {
	const base = "https://shop.example/cart/items?x=1"
	tests := []struct {
		in, base string
		file     bool
		want     string // "" with refused or invalid set
		refused  string // the refused scheme
		invalid  bool
	}{
		{in: "https://example.com/a?b=c#d", want: "https://example.com/a?b=c#d"},
		{in: "http://example.com", want: "http://example.com"},
		{in: "HTTPS://EXAMPLE.com/Path", want: "https://example.com/Path"},
		{in: "  https://example.com/  ", want: "https://example.com/"},
		{in: "https://exa\tmple.com/\na", want: "https://example.com/a"},
		{in: `https:\\example.com\a`, want: "https://example.com/a"},
		{in: "https:example.com", want: "https://example.com"},
		{in: "https:////example.com", want: "https://example.com"},
		{in: "example.com", want: "https://example.com"},
		{in: "example.com/docs?q=1", want: "https://example.com/docs?q=1"},
		{in: "localhost:8080/x", want: "https://localhost:8080/x"},
		{in: "example.com:8443", want: "https://example.com:8443"},
		{in: "//example.com/x", want: "https://example.com/x"},
		{in: "about:blank", want: "about:blank"},
		{in: "ABOUT:BLANK", want: "about:blank"},
		{in: " about:blank\n", want: "about:blank"},
		{in: "/checkout", base: base, want: "https://shop.example/checkout"},
		{in: "?page=2", base: base, want: "https://shop.example/cart/items?page=2"},
		{in: "../help", base: base, want: "https://shop.example/help"},
		{in: "#top", base: base, want: "https://shop.example/cart/items?x=1#top"},
		{in: "file:///tmp/a.html", file: true, want: "file:///tmp/a.html"},
		{in: "FILE:///tmp/a.html", file: true, want: "file:///tmp/a.html"},

		// refused: what a prompt-injected model might try, in every spelling a browser accepts
		{in: "file:///etc/passwd", refused: "file"},
		{in: "\x01file:///etc/passwd", refused: "file"},
		{in: "\x00\x1f file:///etc/passwd", refused: "file"},
		{in: "fi\tle:///etc/passwd", refused: "file"},
		{in: "fi\nle:///etc/passwd", refused: "file"},
		{in: "f\ri\tl\ne:///etc/passwd", refused: "file"},
		{in: "FILE:///etc/passwd", refused: "file"},
		{in: "FiLe:/etc/passwd", refused: "file"},
		{in: " file:///etc/passwd", refused: "file"},
		{in: "file:///etc/passwd\x7f", refused: "file"},
		{in: "view-source:file:///etc/passwd", refused: "view-source"},
		{in: "VIEW-SOURCE:https://example.com", refused: "view-source"},
		{in: "view-source:\tfile:///etc/passwd", refused: "view-source"},
		{in: "javascript:alert(1)", refused: "javascript"},
		{in: "jav\nascript:alert(1)", refused: "javascript"},
		{in: "JaVaScRiPt:alert(1)", refused: "javascript"},
		{in: "\x0cjavascript:alert(1)", refused: "javascript"},
		{in: "data:text/html,<script>alert(1)</script>", refused: "data"},
		{in: "DATA:text/html;base64,PGgxPg==", refused: "data"},
		{in: "blob:https://example.com/1234", refused: "blob"},
		{in: "filesystem:https://example.com/temporary/a", refused: "filesystem"},
		{in: "chrome://settings", refused: "chrome"},
		{in: "chrome-extension://abcdefghijklmnop/options.html", refused: "chrome-extension"},
		{in: "chrome-untrusted://x", refused: "chrome-untrusted"},
		{in: "devtools://devtools/bundled/inspector.html", refused: "devtools"},
		{in: "about:config", refused: "about"},
		{in: "about:srcdoc", refused: "about"},
		{in: "mailto:a@example.com", refused: "mailto"},
		{in: "ftp://example.com", refused: "ftp"},
		{in: "ws://example.com", refused: "ws"},
		{in: "intent://x#Intent;end", refused: "intent"},

		// invalid: not loadable
		{in: "", invalid: true},
		{in: " \t\n ", invalid: true},
		{in: "/checkout", invalid: true}, // relative, no page
		{in: "/checkout", base: "about:blank", invalid: true},
		{in: "https://", invalid: true},
		{in: "https:///", invalid: true},
		{in: "https://exa\x01mple.com", invalid: true},
	}
	for _, tt := range tests {
		got, err := Policy{AllowFile: tt.file}.Normalize(tt.in, tt.base)
		switch {
		case tt.refused != "":
			var re *RefusedError
			if !errors.Is(err, ErrRefused) || !errors.As(err, &re) {
				t.Errorf("Normalize(%q) = %q, %v; want refused %s:", tt.in, got, err, tt.refused)
				continue
			}
			if re.Scheme != tt.refused {
				t.Errorf("Normalize(%q) refused scheme %q, want %q", tt.in, re.Scheme, tt.refused)
			}
			if !strings.Contains(err.Error(), "only http, https and about:blank") {
				t.Errorf("Normalize(%q) error %q does not say what is allowed", tt.in, err)
			}
		case tt.invalid:
			if !errors.Is(err, ErrInvalid) || errors.Is(err, ErrRefused) {
				t.Errorf("Normalize(%q, %q) = %q, %v; want an ErrInvalid error", tt.in, tt.base, got, err)
			}
		default:
			if err != nil || got != tt.want {
				t.Errorf("Normalize(%q, %q) = %q, %v; want %q", tt.in, tt.base, got, err, tt.want)
			}
		}
	}
}

// TestRelativeAgainstRefusedBase: a relative URL cannot borrow a refused page's scheme.
func TestRelativeAgainstRefusedBase(t *testing.T) {
	_, err := Policy{}.Normalize("./passwd", "file:///etc/hosts")
	if !errors.Is(err, ErrRefused) {
		t.Fatalf("relative to a file: page: %v, want ErrRefused", err)
	}
}

// FuzzNormalize: whatever the input, an accepted URL is http(s) with a host or about:blank,
// it is stable (normalising it again gives it back), and it contains no character the browser
// would strip; a refused one is never accepted once the browser's own clean-up is applied.
func FuzzNormalize(f *testing.F) {
	for _, s := range []string{"https://example.com", "\x01file:///etc/passwd", "fi\tle:x", "view-source:file:///",
		"jav\nascript:alert(1)", "example.com", "localhost:1", `https:\\a\b`, "about:blank", "/x", "data:,x",
		" FILE:///", "https://a@b.c/", "//x.y", "https://[::1]:8080/"} {
		f.Add(s, "https://base.example/p/q")
	}
	f.Fuzz(func(t *testing.T, in, base string) {
		got, err := Policy{}.Normalize(in, base)
		if err != nil {
			if !errors.Is(err, ErrRefused) && !errors.Is(err, ErrInvalid) {
				t.Fatalf("Normalize(%q) error %v is neither ErrRefused nor ErrInvalid", in, err)
			}
			// what the browser would see of a refused input is refused too
			if errors.Is(err, ErrRefused) {
				if _, err2 := (Policy{}).Normalize(Clean(in), base); !errors.Is(err2, ErrRefused) {
					t.Fatalf("Normalize(Clean(%q)) = %v, but the raw input was refused", in, err2)
				}
			}
			return
		}
		if got == "about:blank" {
			return
		}
		if !utf8.ValidString(in) {
			return // Go's parser escapes what a browser would; only the scheme matters below
		}
		u, perr := url.Parse(got)
		if perr != nil {
			t.Fatalf("Normalize(%q) = %q, which does not parse: %v", in, got, perr)
		}
		if u.Scheme != "http" && u.Scheme != "https" {
			t.Fatalf("Normalize(%q) = %q: scheme %q let through", in, got, u.Scheme)
		}
		if u.Hostname() == "" {
			t.Fatalf("Normalize(%q) = %q: no host", in, got)
		}
		if strings.ContainsFunc(got, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
			t.Fatalf("Normalize(%q) = %q: control characters remain", in, got)
		}
		again, err := Policy{}.Normalize(got, "")
		if err != nil || again != got {
			t.Fatalf("Normalize is not stable: %q → %q → %q, %v", in, got, again, err)
		}
	})
}
