package snapshot

import (
	"fmt"
	"sync"
	"unicode/utf8"

	tiktoken "github.com/pkoukk/tiktoken-go"
	tiktokenloader "github.com/pkoukk/tiktoken-go-loader"
)

// Token budgets (Options.MaxTokens) count real tokens: cl100k_base, the encoding of GPT-4-class
// models, whose counts are close to other current models' on English and CJK text. The
// encoding's ranks are compiled into the binary (tiktoken-go-loader): counting never fetches
// anything, and works where the network is closed.

// cl100k is the encoding, loaded on first use (about 0.3 s: 100k ranks to decode); it is
// read-only once loaded.
var cl100k = sync.OnceValues(func() (*tiktoken.Tiktoken, error) {
	// tiktoken-go's loader is a process-wide setting of that library: the offline one only
	// changes where the ranks come from (the binary, never the network), for every user of it.
	tiktoken.SetBpeLoader(tiktokenloader.NewOfflineLoader())
	enc, err := tiktoken.GetEncoding(tiktoken.MODEL_CL100K_BASE)
	if err != nil {
		return nil, fmt.Errorf("load the cl100k_base token encoding: %w", err)
	}
	return enc, nil
})

// Tokens is how many cl100k_base tokens text takes: what a budget (Options.MaxTokens) counts.
// Should the encoding fail to load (it is compiled in; it cannot unless the binary is
// corrupt), it falls back to an estimate that errs high.
func Tokens(text string) int {
	enc, err := cl100k()
	if err != nil {
		return estimateHigh(text)
	}
	return len(enc.EncodeOrdinary(text))
}

// meter counts the tokens of outline lines, each line once per render: counting runs at about
// 1 MB/s, so a budget estimates (estimate) to choose, and counts exactly only what it keeps.
type meter struct {
	lines map[string]int
}

func newMeter() *meter { return &meter{lines: map[string]int{}} }

// size is the tokens of lines joined with newlines. Counted line by line (each with its
// newline) it matches the joined text's count within a token or two per thousand lines: a
// cl100k piece never spans a newline followed by "-" or spaces.
func (m *meter) size(lines []string) int {
	n := 0
	for _, l := range lines {
		c, ok := m.lines[l]
		if !ok {
			c = Tokens(l + "\n")
			m.lines[l] = c
		}
		n += c
	}
	return n
}

// estimate is a cheap guess of the tokens text takes, for choosing what a budget keeps before
// counting it: about four ASCII letters a token, three digits a token, one a punctuation mark,
// one a CJK character (most are one token, some two), two other non-ASCII letters a token.
func estimate(s string) int {
	q := 0.0 // quarters of a token
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			i++
			switch {
			case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
				q++
			case c >= '0' && c <= '9':
				q += 4.0 / 3
			case c == ' ' || c == '\n':
				q += 0.5
			default:
				q += 3
			}
			continue
		}
		r, w := utf8.DecodeRuneInString(s[i:])
		i += w
		switch {
		case r >= 0x2E80 && r <= 0x9FFF, r >= 0xAC00 && r <= 0xD7AF, r >= 0xF900 && r <= 0xFAFF, r >= 0xFF00 && r <= 0xFFEF:
			q += 5 // CJK, kana, hangul, full-width forms
		default:
			q += 2
		}
	}
	return int(q/4) + 1
}

// estimateHigh is an estimate that is never below the real count: one token a byte.
func estimateHigh(s string) int { return len(s) }
