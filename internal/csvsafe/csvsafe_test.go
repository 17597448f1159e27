package csvsafe

import (
	"strings"
	"testing"
)

// TestCell: cells a spreadsheet would evaluate get an apostrophe; text and numbers stay.
func TestCell(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", ""},
		{"Blue mug", "Blue mug"},
		{"$12.00", "$12.00"},
		{"-5", "-5"},
		{"-12.50", "-12.50"},
		{"+1 555 0100", "+1 555 0100"},
		{"+44 (0)20 7946 0958", "+44 (0)20 7946 0958"},
		{"=HYPERLINK(\"http://evil.test\",\"click\")", "'=HYPERLINK(\"http://evil.test\",\"click\")"},
		{"=1+1", "'=1+1"},
		{"@SUM(A1:A9)", "'@SUM(A1:A9)"},
		{"+cmd|' /C calc'!A0", "'+cmd|' /C calc'!A0"},
		{"-2+3+cmd|' /C calc'!A0", "'-2+3+cmd|' /C calc'!A0"},
		{"-", "'-"},
		{"\t=1", "'\t=1"},
		{"\r=1", "'\r=1"},
		{"a=1", "a=1"},
	} {
		if got := Cell(c.in); got != c.want {
			t.Errorf("Cell(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestWriter writes safe rows and leaves the caller's row as it was.
func TestWriter(t *testing.T) {
	var b strings.Builder
	w := NewWriter(&b)
	row := []string{"name", "=1+1"}
	if err := w.Write(row); err != nil {
		t.Fatal(err)
	}
	w.Flush()
	if err := w.Error(); err != nil {
		t.Fatal(err)
	}
	if got, want := b.String(), "name,'=1+1\n"; got != want {
		t.Errorf("wrote %q, want %q", got, want)
	}
	if row[1] != "=1+1" {
		t.Errorf("the caller's row became %q", row)
	}
}

// FuzzCell: a safe cell never starts with a formula character, and only ever gains an apostrophe.
func FuzzCell(f *testing.F) {
	for _, s := range []string{"", "=1", "-5", "+x", "@a", "text"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := Cell(s)
		if got != s && got != "'"+s {
			t.Fatalf("Cell(%q) = %q", s, got)
		}
		if got != "" && strings.ContainsRune("=@\t\r", rune(got[0])) {
			t.Fatalf("Cell(%q) = %q starts with a formula character", s, got)
		}
	})
}
