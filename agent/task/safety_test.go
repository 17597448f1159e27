package task

import (
	"encoding/json"
	"testing"

	"github.com/tabrelay/tabrelay/agent/outline"
)

func el(role, name string, attrs ...string) outline.Node {
	n := outline.Node{Role: role, Name: name, Ref: "e1"}
	for _, a := range attrs {
		if n.Attrs == nil {
			n.Attrs = map[string]string{}
		}
		n.Attrs[a] = ""
	}
	return n
}

func TestDefaultClassifier(t *testing.T) {
	tests := []struct {
		name   string
		a      ActionContext
		reason string // "" means no confirmation
	}{
		{"plain button", ActionContext{Tool: "click", Element: el("button", "Next")}, ""},
		{"buy now", ActionContext{Tool: "click", Element: el("button", "Buy now")}, "purchase or payment"},
		{"place order", ActionContext{Tool: "click", Element: el("button", "Place your order")}, "purchase or payment"},
		{"checkout link", ActionContext{Tool: "click", Element: el("link", "Proceed to checkout")}, "purchase or payment"},
		{"pay", ActionContext{Tool: "click", Element: el("button", "Pay 39,00 €")}, "purchase or payment"},
		{"send", ActionContext{Tool: "click", Element: el("button", "Send")}, "sending"},
		{"delete", ActionContext{Tool: "click", Element: el("menuitem", "Delete conversation")}, "deletion"},
		{"remove", ActionContext{Tool: "click", Element: el("button", "Remove from cart")}, "deletion"},
		{"publish", ActionContext{Tool: "click", Element: el("button", "Publish")}, "publishing"},
		{"post", ActionContext{Tool: "click", Element: el("button", "Post")}, "publishing"},
		{"submit", ActionContext{Tool: "click", Element: el("button", "Submit application")}, "submitting data"},
		{"orders link is fine", ActionContext{Tool: "click", Element: el("link", "Your orders")}, ""},
		{"posts link is fine", ActionContext{Tool: "click", Element: el("link", "Posts")}, ""},
		{"heading text not a control", ActionContext{Tool: "click", Element: el("heading", "Buy more, save more")}, ""},
		{"enter on send", ActionContext{Tool: "press", Key: "Enter", Element: el("button", "Send")}, "sending"},
		{"enter in a textbox", ActionContext{Tool: "press", Key: "Enter", Element: el("textbox", "Search")}, ""},
		{"password not supplied", ActionContext{Tool: "type", Text: "hunter2", Element: el("textbox", "Password"), Goal: "log in"}, "password field"},
		{"password supplied", ActionContext{Tool: "type", Text: "hunter2", Element: el("textbox", "Password"), Goal: "log in with hunter2"}, ""},
		{"card number", ActionContext{Tool: "type", Text: "4111111111111111", Element: el("textbox", "Card number")}, "payment or identity field"},
		{"cvc", ActionContext{Tool: "type", Text: "123", Element: el("textbox", "CVC")}, "payment or identity field"},
		{"email ok", ActionContext{Tool: "type", Text: "a@b.c", Element: el("textbox", "Email")}, ""},
		{"navigate ok", ActionContext{Tool: "navigate", URL: "https://shop.test/checkout"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := DefaultClassifier(tt.a)
			if v.Confirm != (tt.reason != "") || v.Reason != tt.reason {
				t.Fatalf("verdict %+v, want reason %q", v, tt.reason)
			}
		})
	}
}

func TestSiteAllowed(t *testing.T) {
	tests := []struct {
		allowed []string
		url     string
		want    bool
	}{
		{nil, "https://anything.test/", true},
		{[]string{"example.com"}, "https://example.com/a", true},
		{[]string{"example.com"}, "https://www.example.com/a", true},
		{[]string{"example.com"}, "https://badexample.com/", false},
		{[]string{"*.example.com"}, "https://mail.example.com/", true},
		{[]string{"https://github.com/tabrelay"}, "https://github.com/x", true},
		{[]string{"example.com"}, "", false},
	}
	for _, tt := range tests {
		if got := siteAllowed(tt.allowed, tt.url); got != tt.want {
			t.Errorf("siteAllowed(%v, %q) = %v", tt.allowed, tt.url, got)
		}
	}
}

func TestBrowserAction(t *testing.T) {
	tests := []struct {
		tool string
		args string
		tab  string
		want string
	}{
		{"click", `{"ref":"e3"}`, "t1", `{"kind":"click","ref":"e3"}`},
		{"type", `{"ref":"e4","text":"hi","submit":true}`, "t1", `{"kind":"type","ref":"e4","submit":true,"text":"hi"}`},
		{"press", `{"key":"Enter"}`, "t1", `{"key":"Enter","kind":"press"}`},
		{"select", `{"ref":"e5","values":["Blue"]}`, "t1", `{"kind":"select","ref":"e5","values":["Blue"]}`},
		{"check", `{"ref":"e6","checked":false}`, "t1", `{"fields":[{"ref":"e6","value":"false"}],"kind":"fill"}`},
		{"wait", `{"ms":1500}`, "t1", `{"kind":"wait","seconds":1.5}`},
		{"wait", `{"text":"Saved"}`, "t1", `{"kind":"wait","text":"Saved"}`},
		{"new_tab", `{"url":"https://x.test"}`, "t1", `{"kind":"open","url":"https://x.test"}`},
		{"close_tab", `{"tab":"t2"}`, "t2", `{"kind":"close"}`},
		{"close_tab", `{}`, "t1", `{"kind":"close"}`},
		{"switch_tab", `{"tab":"t3"}`, "t3", `{"kind":"focus"}`},
		{"back", `{}`, "t1", `{"kind":"back"}`},
		{"scroll", `{"direction":"down","ref":"e2"}`, "t1", `{"direction":"down","kind":"scroll","ref":"e2"}`},
		{"scroll", `{"direction":"bottom"}`, "t1", `{"key":"End","kind":"press"}`},
	}
	for _, tt := range tests {
		var args map[string]any
		_ = json.Unmarshal([]byte(tt.args), &args)
		tab, got := BrowserAction(tt.tool, args, "t1")
		if tab != tt.tab || string(got) != tt.want {
			t.Errorf("%s %s: tab %s action %s, want %s %s", tt.tool, tt.args, tab, got, tt.tab, tt.want)
		}
	}
}
