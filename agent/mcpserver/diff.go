package mcpserver

import (
	"fmt"
	"strings"
)

// maxDiffLines bounds the outlines compared line by line (the table is their product).
const maxDiffLines = 3000

// changes says what changed from outline before to after: the removed lines ("- ") and the
// added ones ("+ "), in order, without the unchanged ones. When the changes would be longer
// than the new outline (a new page, say), it returns the new outline instead.
// TODO(issue 17): a structured diff of the page model replaces this line diff.
func changes(before, after string) string {
	if before == after {
		return "No change in the outline."
	}
	a, b := strings.Split(before, "\n"), strings.Split(after, "\n")
	if len(a) > maxDiffLines || len(b) > maxDiffLines {
		return "The page now:\n" + after
	}
	// lcs[i][j] is the length of the longest common subsequence of a[i:] and b[j:].
	lcs := make([][]int32, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int32, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out strings.Builder
	n := 0
	for i, j := 0, 0; i < len(a) || j < len(b); {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			i++
			j++
		case i < len(a) && (j == len(b) || lcs[i+1][j] >= lcs[i][j+1]):
			fmt.Fprintf(&out, "- %s\n", a[i])
			i++
			n++
		default:
			fmt.Fprintf(&out, "+ %s\n", b[j])
			j++
			n++
		}
	}
	if out.Len() >= len(after) {
		return "The page now:\n" + after
	}
	return fmt.Sprintf("Changes in the outline (%d lines; - removed, + added):\n%s", n, strings.TrimRight(out.String(), "\n"))
}
