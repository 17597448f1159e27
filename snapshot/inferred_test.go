package snapshot

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestInferredNames: controls with no accessible name are shown with the name their icons,
// ids and data give (marked [icon]); fields without one with the text just before them
// (marked [text before]); a slider with its value; a field's value as typed.
func TestInferredNames(t *testing.T) {
	cases := []struct {
		page       string
		want, lack []string
	}{
		{"/outline/unnamed.html", []string{
			`button "star" [icon] [ref=`,
			`button "trash" [icon] [ref=`,
			`button "reply" [icon] [ref=`,
			`button "retweet" [icon] [ref=`,
			`button "like" [icon] [ref=`,
			`button "more" [icon] [ref=`,
			`button "send message" [icon] [ref=`,
			`link "close" [icon] [ref=`,
			`- button [ref=e10]`,          // nothing says what it does: no name is made up
			`button "Bookmark" [ref=e11]`, // an SVG's title names it, as in Chrome's tree
			`button "Archive" [ref=`,
			`button "Edit" [ref=`,
		}, []string{`"Archive" [icon]`, `"box"`, `"Bookmark" [icon]`}},
		{"/outline/labels.html", []string{
			`textbox "Time" [text before] [ref=`,
			`textbox "Departure" [text before] [ref=`,
			`combobox "Seats" [text before] [ref=`,
			`slider "Volume" [text before] [ref=e`,
			`slider "Speed" [ref=`,
			`textbox "City" [ref=`,
			`: "Paris "`,
			`textbox "Note" [multiline] [ref=`,
			`: "two\nlines"`,
		}, []string{`- text: Time`, `- text: Departure`, `"This long sentence`, `textbox "Search"`, `textbox "Shipping address"`}},
	}
	for _, c := range cases {
		t.Run(strings.TrimPrefix(c.page, "/"), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			tab := openTab(t, ctx, c.page)
			s, err := tab.Snapshot(ctx, Options{})
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range c.want {
				if !strings.Contains(s.Text, w) {
					t.Errorf("outline lacks %q", w)
				}
			}
			// an emoji drawn by CSS (::before) names its button by a glyph or its word
			if c.page == "/outline/unnamed.html" && !regexp.MustCompile(`button "[^"]+" \[icon\] \[ref=e9\]`).MatchString(s.Text) {
				t.Errorf("the emoji button has no inferred name")
			}
			for _, w := range c.lack {
				if strings.Contains(s.Text, w) {
					t.Errorf("outline has %q", w)
				}
			}
			if t.Failed() {
				t.Log(s.Text)
			}
		})
	}
}
