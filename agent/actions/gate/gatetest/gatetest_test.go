package gatetest

import (
	"context"
	"errors"
	"testing"

	"github.com/tabrelay/tabrelay/agent/actions"
	"github.com/tabrelay/tabrelay/agent/actions/gate"
	"github.com/tabrelay/tabrelay/snapshot"
	"github.com/tabrelay/tabrelay/snapshot/pagetest"
)

var (
	E = pagetest.El
	T = pagetest.Text
)

type ref = pagetest.Ref

// TestRiskFromContext: generic labels (Continue, Weiter, Confirm, 次へ) are judged by the page's
// own words around them: their form or dialog, else the nearby lines.
func TestRiskFromContext(t *testing.T) {
	payPage := pagetest.Page("https://plan.test/", "Plan",
		E("heading", "Your plan", "level=1", ref("e1")),
		T("Pay $500 now to Acme Ltd."),
		E("button", "Continue", ref("e2")),
		E("link", "Next", ref("e3")))
	payForm := pagetest.Page("https://pay.test/", "Pay",
		E("form", "Payment",
			E("textbox", "Name on card", ref("e1")),
			T("Total 49,00 €"),
			E("button", "Weiter", ref("e2"))),
		E("form", "Newsletter",
			E("textbox", "Email", ref("e3")),
			E("button", "Continue", ref("e4"))))
	deleteDialog := pagetest.Page("https://repo.test/", "Repository",
		E("dialog", "Delete repository",
			T("This cannot be undone."),
			E("button", "Cancel", ref("e1")),
			E("button", "Confirm", ref("e2"))))
	plainPage := pagetest.Page("https://welcome.test/", "Welcome",
		E("heading", "Welcome", "level=1", ref("e1")),
		T("Tell us about yourself."),
		E("textbox", "Nickname", ref("e2")),
		E("button", "Continue", ref("e3")),
		E("link", "Share on Mastodon", ref("e4")))
	jaPage := pagetest.Page("https://ja.test/", "確認",
		E("heading", "ご確認ください", ref("e1")),
		T("合計 ¥12,000"),
		E("button", "次へ", ref("e2")))
	g := gate.New(gate.Options{})
	cases := []struct {
		name string
		page *snapshot.Snapshot
		a    actions.Action
		ask  bool
	}{
		{"Continue after 'Pay $500'", payPage, actions.Do(actions.Click{Ref: "e2"}), true},
		{"a Next link pages on", payPage, actions.Do(actions.Click{Ref: "e3"}), false},
		{"Weiter in a payment form", payForm, actions.Do(actions.Click{Ref: "e2"}), true},
		{"Enter in the payment form", payForm, actions.Do(actions.Type{Ref: "e1", Text: "Ada", Submit: true}), true},
		{"Continue in a newsletter form", payForm, actions.Do(actions.Click{Ref: "e4"}), false},
		{"Confirm in a cannot-be-undone dialog", deleteDialog, actions.Do(actions.Click{Ref: "e2"}), true},
		{"Cancel in that dialog", deleteDialog, actions.Do(actions.Click{Ref: "e1"}), false},
		{"Continue on a plain page", plainPage, actions.Do(actions.Click{Ref: "e3"}), false},
		{"次へ after 合計 ¥12,000", jaPage, actions.Do(actions.Click{Ref: "e2"}), true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Check(gate.With(context.Background(), gate.Request{Who: gate.Agent}), g, c.page, c.a)
			if got := errors.Is(err, gate.ErrConfirm); got != c.ask {
				t.Errorf("asked=%v (%v), want %v", got, err, c.ask)
			}
		})
	}
}
