package describe

import (
	"strings"
	"testing"
)

func TestInfer(t *testing.T) {
	for _, tc := range []struct {
		icons, data []string
		want        string
	}{
		{[]string{"fa-trash-can"}, nil, "trash can"},
		{[]string{"fa", "fa-star"}, nil, "star"},
		{[]string{"/sprites.svg#icon-reply"}, nil, "reply"},
		{[]string{"trash.svg"}, nil, "trash"},
		{[]string{"material-icons-outlined"}, []string{"id send-reply"}, "send reply"},
		{nil, []string{"id btn-3f9a2c", "action archive"}, "archive"},
		{nil, []string{"testid likeButton"}, "like"},
		{[]string{"🗑"}, nil, "🗑"},
		{[]string{"✕"}, nil, "✕"},
		{[]string{"\ue872"}, []string{"id close"}, "close"}, // a private-use glyph says nothing
		{[]string{"icon"}, []string{"id 12345"}, ""},
		{nil, nil, ""},
		{[]string{"deleteMessageIcon"}, nil, "delete message"},
		{[]string{"Retweet"}, nil, "retweet"},
		// generated ids (saved pages carry them by the dozen) say nothing
		{nil, []string{"id gxcgprxevu"}, ""},
		{nil, []string{"id caiuykjwpr"}, ""},
		{nil, []string{"id h5psqrh1qa", "id strengths"}, "strengths"},
	} {
		if got := Infer(tc.icons, tc.data); got != tc.want {
			t.Errorf("Infer(%q, %q) = %q, want %q", tc.icons, tc.data, got, tc.want)
		}
	}
}

func TestTokens(t *testing.T) {
	for in, want := range map[string]string{
		"fa-trash-can":         "fa trash can",
		"deleteFile":           "delete file",
		"tr\u200bash-can":      "trash can",
		"/img/icons/trash.svg": "img icons trash svg",
		"":                     "",
	} {
		if got := strings.Join(Tokens(in), " "); got != want {
			t.Errorf("Tokens(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestEvidenceJSIsAFunction: the embedded script is one function expression, as both callers
// wrap it: "(" + EvidenceJS + ")(el)".
func TestEvidenceJSIsAFunction(t *testing.T) {
	body := EvidenceJS
	for strings.HasPrefix(strings.TrimSpace(body), "//") {
		_, body, _ = strings.Cut(body, "\n")
	}
	if !strings.HasPrefix(strings.TrimSpace(body), "function (el) {") || !strings.HasSuffix(strings.TrimSpace(body), "}") {
		t.Fatalf("evidence.js must be one function expression after its comments, got %.80q", strings.TrimSpace(body))
	}
}

func FuzzInfer(f *testing.F) {
	f.Add("fa-trash-can", "id send")
	f.Add("\ue872", "")
	f.Fuzz(func(t *testing.T, icon, data string) {
		got := Infer([]string{icon}, []string{data})
		if len(Tokens(got)) > 4 && pictographs(got) == "" {
			t.Errorf("Infer gave more than four words: %q", got)
		}
	})
}
