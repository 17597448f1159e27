package gate

import "strings"

// Comparison. What leaves is read in every form it decodes to (decoded); each form is then
// compared with the values read, in one pass over its bytes whatever the number of values:
//
//   - a value is carried whole when its normal form, or that reversed, is in a form of the
//     text (values are found by their first minDigits characters, see reads.byPrefix);
//   - a distinctive piece of the text that is part of a longer value read carries that value;
//   - a secret is carried by any piece of pieceLen of its characters (phraseLen for a phrase
//     of words), with its letters shifted along the alphabet or not: a piece is compared by
//     the distances between its letters (see letterSteps), so rot13 and every other Caesar
//     shift read as the secret itself;
//   - a secret long and random enough (see spreadable) is carried when its characters appear
//     in order with at most maxSpreadGap other letters or digits between each two: the secret
//     spread among filler characters, at a regular stride or not.

const (
	// maxSpreadGap is the most filler characters between two characters of a spread secret.
	maxSpreadGap = 4
	// minSpread is the shortest secret (normal form) looked for spread among filler.
	minSpread = 16
)

// carried returns the values read (by their token) that a text carries, as its normal decoded
// forms vars (see decoded: not reversed; the values are looked for reversed too) and its
// distinctive pieces; counts says which values may count (not held on the destination's site,
// not in the person's own words). A piece the person's own words (words, normal form) hold is
// theirs.
func (r *reads) carried(vars, pieces []string, words string, counts func(*readValue) bool) map[string]bool {
	found := map[string]bool{}
	ok := map[string]bool{} // counts, asked once per value
	may := func(tok string) bool {
		c, seen := ok[tok]
		if !seen {
			c = counts(r.by[tok])
			ok[tok] = c
		}
		return c && !found[tok]
	}
	// whole
	for _, h := range vars {
		for i := 0; i+minDigits <= len(h); i++ {
			for _, tok := range r.byPrefix[h[i:i+minDigits]] {
				if may(tok) {
					for _, f := range r.by[tok].forms {
						if strings.HasPrefix(h[i:], f) {
							found[tok] = true
						}
					}
				}
			}
		}
	}
	// a distinctive piece of a longer value
	if len(pieces) > 0 {
		for _, tok := range r.order {
			v := r.by[tok]
			for _, pc := range pieces {
				if len(pc) < len(v.norm) && strings.Contains(v.norm, pc) && !strings.Contains(words, pc) && may(tok) {
					found[tok] = true
					break
				}
			}
		}
	}
	// secrets: their pieces, shifted or not, and spread among filler
	if r.idx == nil || r.idxGen != r.secretGen {
		r.idx, r.idxGen = r.indexSecrets(), r.secretGen
	}
	if len(r.idx.pieces) > 0 {
		var d []byte
		var next []int
		hit := func(tok, w string) {
			if may(tok) && !strings.Contains(words, w) && !strings.Contains(words, reverse(w)) {
				found[tok] = true
			}
		}
		for _, h := range vars {
			d, next = letterSteps(h, d[:0], next[:0])
			for _, idx := range r.idx.pieces {
				idx.find(h, d, next, hit)
			}
		}
	}
	for _, h := range vars {
		r.idx.spread.find(h, func(tok string) {
			if may(tok) {
				found[tok] = true
			}
		})
	}
	return found
}

// secretIndex finds the secrets read in a text, in pieces (shifted or not) and spread.
type secretIndex struct {
	pieces map[int]*shiftIndex // by piece length
	spread spreadSet
}

// indexSecrets indexes the secrets read, as read and reversed: kept until which values are
// secrets changes (see reads.secretGen).
func (r *reads) indexSecrets() *secretIndex {
	x := &secretIndex{pieces: map[int]*shiftIndex{}}
	for _, tok := range r.order {
		v := r.by[tok]
		if !v.secret {
			continue
		}
		n := secretPiece(v.norm)
		for _, f := range v.forms {
			for i := 0; n > 0 && i+n <= len(f); i++ {
				if x.pieces[n] == nil {
					x.pieces[n] = newShiftIndex(n)
				}
				x.pieces[n].add(f[i:i+n], tok)
			}
			if spreadable(v.norm) {
				x.spread.add(f, tok)
			}
		}
	}
	return x
}

// secretPiece is the length of the pieces of a secret (normal form) that count as it: pieceLen,
// phraseLen for a phrase of words (longer than 48 characters); 0 (none) for a secret shorter
// than pieceLen, compared only whole and unshifted (a short word shifted is too often another
// word).
func secretPiece(norm string) int {
	switch {
	case len(norm) < pieceLen:
		return 0
	case len(norm) > 48:
		return phraseLen
	}
	return pieceLen
}

// Pieces of secrets are compared up to a Caesar shift of their letters: a piece w is read as
// its letter steps — each letter written as its distance along the alphabet from the letter
// before it, the first letter as firstLetter, digits and other bytes as they are — which a
// shift leaves alone. A text's steps are computed once (letterSteps); a piece of it at i is
// then its steps with the first letter in the piece made firstLetter again, hashed rolling.

const (
	// firstLetter stands for a piece's first letter in its letter steps.
	firstLetter = '*'
	// stepHashBase is the base of the rolling hash of letter steps.
	stepHashBase = 1099511628211
)

// letterSteps appends to d the letter steps of h (normal form, see above) and to next, for each
// byte of h, where the first letter at or after it is (len(h) if none).
func letterSteps(h string, d []byte, next []int) ([]byte, []int) {
	prev := -1
	for i := 0; i < len(h); i++ {
		c := h[i]
		if c >= 'a' && c <= 'z' {
			if prev < 0 {
				d = append(d, firstLetter)
			} else {
				d = append(d, 'a'+byte((int(c)-prev+26)%26))
			}
			prev = int(c)
			continue
		}
		d = append(d, c)
	}
	next = append(next, make([]int, len(h))...)
	at := len(h)
	for i := len(h) - 1; i >= 0; i-- {
		if c := h[i]; c >= 'a' && c <= 'z' {
			at = i
		}
		next[i] = at
	}
	return d, next
}

// shiftIndex finds the pieces of n bytes of secrets, shifted or not, in texts.
type shiftIndex struct {
	n     int
	pow   []uint64 // pow[k] is stepHashBase to the k
	bloom [1 << 10]uint64
	by    map[uint64][]shiftPiece
}

// shiftPiece is one piece of a secret: the piece, its letter steps and the secret's token.
type shiftPiece struct{ w, steps, tok string }

func newShiftIndex(n int) *shiftIndex {
	x := &shiftIndex{n: n, pow: make([]uint64, n), by: map[uint64][]shiftPiece{}}
	x.pow[0] = 1
	for k := 1; k < n; k++ {
		x.pow[k] = x.pow[k-1] * stepHashBase
	}
	return x
}

func (x *shiftIndex) add(w, tok string) {
	d, _ := letterSteps(w, nil, nil)
	h := x.hash(d)
	x.bloom[h>>54] |= 1 << (h >> 48 & 63)
	x.by[h] = append(x.by[h], shiftPiece{w, string(d), tok})
}

func (x *shiftIndex) hash(d []byte) uint64 {
	var h uint64
	for _, c := range d {
		h = h*stepHashBase + uint64(c)
	}
	return h
}

// find calls hit with each piece of a secret (and the secret's token) that a piece of h
// carries, shifted or not; d and next are h's letterSteps.
func (x *shiftIndex) find(h string, d []byte, next []int, hit func(tok, w string)) {
	n := x.n
	if len(h) < n {
		return
	}
	roll := x.hash(d[:n])
	var piece []byte
	for i := 0; ; i++ {
		k := roll
		if f := next[i]; f < i+n && d[f] != firstLetter { // the piece's first letter starts it afresh
			k += (firstLetter - uint64(d[f])) * x.pow[n-1-(f-i)]
		}
		if x.bloom[k>>54]&(1<<(k>>48&63)) != 0 {
			piece = piece[:0]
			for _, p := range x.by[k] {
				if len(piece) == 0 {
					piece, _ = letterSteps(h[i:i+n], piece, nil)
				}
				if string(piece) == p.steps {
					hit(p.tok, p.w)
				}
			}
		}
		if i+n >= len(h) {
			return
		}
		roll = (roll-uint64(d[i])*x.pow[n-1])*stepHashBase + uint64(d[i+n])
	}
}

// spreadable reports whether a secret (normal form) is long and random enough that its
// characters in order, each within maxSpreadGap of the last, cannot turn up in ordinary text
// by chance: at least minSpread characters mixing letters and digits (two of each at least),
// or half as long again.
func spreadable(norm string) bool {
	if len(norm) < minSpread {
		return false
	}
	letters, digits := 0, 0
	for i := 0; i < len(norm); i++ {
		switch c := norm[i]; {
		case c >= '0' && c <= '9':
			digits++
		default:
			letters++
		}
	}
	return letters >= 2 && digits >= 2 || len(norm) >= minSpread*3/2
}

// maxSpreadLen is how much of a long secret is looked for spread (its first characters).
const maxSpreadLen = 64

// spreadSet finds secrets spread among filler characters, all at once: a bit-parallel
// automaton (shift-and) per 64 characters of secrets, each bit one prefix of one secret. A
// text's byte extends the prefixes that ended within the last maxSpreadGap+1 bytes.
type spreadSet struct {
	words []*spreadWord
}

type spreadWord struct {
	at     [256]uint64 // per byte, the bits of the secrets' positions that hold it
	start  uint64      // the bits of the secrets' first characters
	accept uint64      // the bits of their last characters
	toks   [64]string  // the secret a last character's bit ends
	used   int         // bits taken
}

// add looks for secret (normal form) spread, as tok.
func (s *spreadSet) add(secret, tok string) {
	secret = secret[:min(len(secret), maxSpreadLen)]
	if len(s.words) == 0 || s.words[len(s.words)-1].used+len(secret) > 64 {
		s.words = append(s.words, &spreadWord{})
	}
	w := s.words[len(s.words)-1]
	for i := 0; i < len(secret); i++ {
		w.at[secret[i]] |= 1 << (w.used + i)
	}
	w.start |= 1 << w.used
	last := w.used + len(secret) - 1
	w.accept |= 1 << last
	w.toks[last] = tok
	w.used += len(secret)
}

// find calls hit with each secret h (normal form) holds spread: its characters in order, with
// at most maxSpreadGap characters between each two.
func (s *spreadSet) find(h string, hit func(tok string)) {
	for _, w := range s.words {
		var ended [maxSpreadGap + 1]uint64 // the prefixes ended at the last bytes, by i mod len
		var recent uint64                  // the union of ended
		for i := 0; i < len(h); i++ {
			d := (recent<<1 | w.start) & w.at[h[i]]
			if a := d & w.accept; a != 0 {
				for b := range 64 {
					if a&(1<<b) != 0 {
						hit(w.toks[b])
					}
				}
			}
			ended[i%len(ended)] = d
			recent = 0
			for k := range ended {
				recent |= ended[k]
			}
		}
	}
}
