package relay

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestJoinBatches(t *testing.T) {
	m := func(n int) []byte { return []byte(`{"x":"` + strings.Repeat("a", n) + `"}`) }
	for _, tc := range []struct {
		name  string
		sizes []int
		limit int
		want  []int // messages per frame, 1 = a frame of its own (not an array)
	}{
		{"one", []int{10}, 100, []int{1}},
		{"all fit", []int{10, 10, 10}, 100, []int{3}},
		{"split at the limit", []int{30, 30, 30, 30}, 80, []int{2, 2}},
		{"a large one alone", []int{10, 200, 10, 10}, 100, []int{1, 1, 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var q [][]byte
			for _, n := range tc.sizes {
				q = append(q, m(n))
			}
			frames := joinBatches(q, tc.limit)
			if len(frames) != len(tc.want) {
				t.Fatalf("%d frames, want %d", len(frames), len(tc.want))
			}
			k := 0
			for i, f := range frames {
				var got []json.RawMessage
				if tc.want[i] == 1 {
					got = []json.RawMessage{f}
				} else if err := json.Unmarshal(f, &got); err != nil {
					t.Fatalf("frame %d is no JSON array: %v", i, err)
				}
				if len(got) != tc.want[i] {
					t.Fatalf("frame %d holds %d messages, want %d", i, len(got), tc.want[i])
				}
				for _, g := range got {
					if string(g) != string(q[k]) {
						t.Fatalf("message %d changed or out of order", k)
					}
					k++
				}
			}
		})
	}
}
