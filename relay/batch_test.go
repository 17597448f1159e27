package relay

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestBatchFrames: messages queued together become JSON arrays of at most max bytes, in order;
// a message alone, or as large as max, keeps a frame of its own.
func TestBatchFrames(t *testing.T) {
	m := func(n int) []byte { return []byte(`{"x":"` + strings.Repeat("a", n) + `"}`) } // n+10 bytes
	tests := []struct {
		name string
		in   [][]byte
		max  int
		want []string // each frame: "a" for a message alone, "[n]" for a batch of n
	}{
		{"one", [][]byte{m(1)}, 100, []string{"a"}},
		{"small ones together", [][]byte{m(1), m(2), m(3)}, 100, []string{"[3]"}},
		{"split at the bound", [][]byte{m(30), m(30), m(30)}, 90, []string{"[2]", "a"}},
		{"a large one alone", [][]byte{m(1), m(200), m(1), m(1)}, 100, []string{"a", "a", "[2]"}},
		{"large first", [][]byte{m(200), m(1)}, 100, []string{"a", "a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := make([][]byte, len(tt.in))
			copy(in, tt.in)
			frames := batchFrames(in, tt.max)
			var got []string
			var all [][]byte
			for _, f := range frames {
				if f[0] != '[' {
					got = append(got, "a")
					all = append(all, f)
					continue
				}
				if len(f) > tt.max {
					t.Errorf("a batch frame of %d bytes, more than %d", len(f), tt.max)
				}
				var list []json.RawMessage
				if err := json.Unmarshal(f, &list); err != nil {
					t.Fatalf("batch frame %q: %v", f, err)
				}
				got = append(got, "["+string(rune('0'+len(list)))+"]")
				for _, e := range list {
					all = append(all, e)
				}
			}
			if strings.Join(got, " ") != strings.Join(tt.want, " ") {
				t.Errorf("frames %v, want %v", got, tt.want)
			}
			if len(all) != len(tt.in) {
				t.Fatalf("%d messages out, %d in", len(all), len(tt.in))
			}
			for i := range all {
				if !bytes.Equal(all[i], tt.in[i]) {
					t.Errorf("message %d is %q, want %q", i, all[i], tt.in[i])
				}
			}
		})
	}
}

// FuzzBatchFrames: whatever the messages (JSON objects) and the bound, the frames hold every
// message once, in order, and every batch frame is a JSON array no larger than the bound.
func FuzzBatchFrames(f *testing.F) {
	f.Add(`{"id":1}`, `{"id":2,"params":{"a":"]"}}`, `{}`, 16)
	f.Add(`{"a":"\u00e9"}`, `{"b":[1,2]}`, `{"c":null}`, 1000)
	f.Fuzz(func(t *testing.T, a, b, c string, max int) {
		var in [][]byte
		for _, s := range []string{a, b, c} {
			if json.Valid([]byte(s)) && strings.HasPrefix(strings.TrimSpace(s), "{") {
				in = append(in, []byte(s))
			}
		}
		if len(in) == 0 || max < 2 || max > 1<<20 {
			return
		}
		want := make([][]byte, len(in))
		copy(want, in)
		var got [][]byte
		for _, fr := range batchFrames(in, max) {
			if fr[0] != '[' {
				got = append(got, fr)
				continue
			}
			if len(fr) > max {
				t.Fatalf("batch frame of %d bytes over the bound %d", len(fr), max)
			}
			var list []json.RawMessage
			if err := json.Unmarshal(fr, &list); err != nil {
				t.Fatalf("batch frame %q is not a JSON array: %v", fr, err)
			}
			if len(list) < 2 {
				t.Fatalf("batch frame %q holds %d message(s)", fr, len(list))
			}
			for _, e := range list {
				got = append(got, e)
			}
		}
		if len(got) != len(want) {
			t.Fatalf("%d messages out, %d in", len(got), len(want))
		}
		for i := range got {
			if !bytes.Equal(bytes.TrimSpace(got[i]), bytes.TrimSpace(want[i])) {
				t.Fatalf("message %d is %q, want %q", i, got[i], want[i])
			}
		}
	})
}

// TestSplitBatch: a batch frame from the extension gives its messages as they were written,
// in order; anything but one well-formed JSON array is refused.
func TestSplitBatch(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string
		bad  bool
	}{
		{"two", `[{"id":1},{"id":2,"result":{"a":"]"}}]`, []string{`{"id":1}`, `{"id":2,"result":{"a":"]"}}`}, false},
		{"spaces", " [ {\"a\":1} ,\n{\"b\":[2]} ] ", []string{`{"a":1}`, `{"b":[2]}`}, false},
		{"empty", `[]`, nil, false},
		{"unterminated", `[{"a":1}`, nil, true},
		{"trailing", `[{"a":1}] x`, nil, true},
		{"missing comma", `[{"a":1} {"b":2}]`, nil, true},
		{"not an array", `{"a":1}`, nil, true},
		{"broken element", `[{"a":1]`, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := splitBatch([]byte(tt.in))
			if (err != nil) != tt.bad {
				t.Fatalf("error %v, want one: %v", err, tt.bad)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("%d messages %q, want %d", len(got), got, len(tt.want))
			}
			for i := range got {
				if string(got[i]) != tt.want[i] {
					t.Errorf("message %d is %q, want %q", i, got[i], tt.want[i])
				}
			}
		})
	}
}

// FuzzSplitBatch: splitBatch never panics, and what it splits is what encoding/json finds in
// a valid array.
func FuzzSplitBatch(f *testing.F) {
	f.Add(`[{"id":1},{"id":2}]`)
	f.Add(`[{"a":"\"]"},[1,{"b":null}]]`)
	f.Add(`[`)
	f.Fuzz(func(t *testing.T, in string) {
		got, err := splitBatch([]byte(in))
		if err != nil || !json.Valid([]byte(in)) {
			return
		}
		var want []json.RawMessage
		if err := json.Unmarshal([]byte(in), &want); err != nil {
			t.Fatalf("split %q though it is no JSON array: %v", in, err)
		}
		if len(got) != len(want) {
			t.Fatalf("%d messages, encoding/json finds %d in %q", len(got), len(want), in)
		}
		for i := range got {
			if !bytes.Equal(got[i], bytes.TrimSpace(want[i])) {
				t.Fatalf("message %d is %q, encoding/json finds %q", i, got[i], want[i])
			}
		}
	})
}
