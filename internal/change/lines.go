package change

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// LineMagnitude is the share of lines that differ between two texts, for
// when both are at hand (strata diff, the web viewer): 1 − L / max(nA, nB),
// where nA and nB count the non-empty lines of a and b and L is the length
// of their longest common subsequence of lines, as a line diff finds it. It
// is 0 for texts with the same lines, 1 for texts without a common line (or
// one empty text), about 0.12 when 12 of 100 lines were edited, 0.5 when
// the text doubled or lost half of its lines.
//
// Lines are compared exactly, white space inside a line collapsed and blank
// lines ignored: unlike Compare, a changed number or a moved paragraph
// counts here (a moved line is one deletion and one insertion). Each line
// counts once, whatever its length: in page.txt a paragraph is one line, a
// table row another.
//
// The diff is Myers' O((n+m)·D) algorithm on the lines the two texts have in
// common, after their common prefix and suffix. When D would exceed
// max(256, 2^25/(n+m)) (very long texts with many scattered edits), L is
// instead the number of lines the texts have in common, counted with
// multiplicity and regardless of order: an upper bound that treats moved
// lines as kept.
func LineMagnitude(a, b string) float64 {
	ids := make(map[string]int32)
	la := lineIDs(a, ids, nil)
	lb := lineIDs(b, ids, nil)
	na, nb := len(la), len(lb)
	if na == 0 && nb == 0 {
		return 0
	}
	common := commonLines(la, lb, len(ids))
	return 1 - float64(common)/float64(max(na, nb))
}

// lineIDs appends the ids of the non-empty lines of text to dst, adding new
// lines to ids.
func lineIDs(text string, ids map[string]int32, dst []int32) []int32 {
	var buf []byte
	for text != "" {
		line := text
		if i := strings.IndexByte(text, '\n'); i >= 0 {
			line, text = text[:i], text[i+1:]
		} else {
			text = ""
		}
		line, buf = collapse(line, buf)
		if line == "" {
			continue
		}
		id, ok := ids[line]
		if !ok {
			id = int32(len(ids))
			ids[line] = id
		}
		dst = append(dst, id)
	}
	return dst
}

// collapse returns line with white space collapsed as strings.Fields
// would, reusing buf when the line has to be rewritten.
func collapse(line string, buf []byte) (string, []byte) {
	clean := true // no leading, trailing, repeated or non-" " white space
	prevSpace := true
	for i := 0; i < len(line); {
		c, w, space := line[i], 1, false
		if c < utf8.RuneSelf {
			space = asciiClass[c] == clSpace
			if space && (c != ' ' || prevSpace) {
				clean = false
				break
			}
		} else {
			var r rune
			r, w = utf8.DecodeRuneInString(line[i:])
			if space = unicode.IsSpace(r); space {
				clean = false
				break
			}
		}
		prevSpace = space
		i += w
	}
	if clean && !prevSpace {
		return line, buf
	}
	buf = buf[:0]
	for _, f := range strings.Fields(line) {
		if len(buf) > 0 {
			buf = append(buf, ' ')
		}
		buf = append(buf, f...)
	}
	return string(buf), buf
}

// lcsWork bounds the work of the line diff (see LineMagnitude).
const lcsWork = 1 << 25

// commonLines returns the length of the longest common subsequence of a and
// b (ids below n), or the multiset bound when the diff would take too long.
func commonLines(a, b []int32, n int) int {
	// Common prefix and suffix.
	kept := 0
	for len(a) > 0 && len(b) > 0 && a[0] == b[0] {
		a, b, kept = a[1:], b[1:], kept+1
	}
	for len(a) > 0 && len(b) > 0 && a[len(a)-1] == b[len(b)-1] {
		a, b, kept = a[:len(a)-1], b[:len(b)-1], kept+1
	}
	if len(a) == 0 || len(b) == 0 {
		return kept
	}
	// Lines in only one text are never part of the common subsequence.
	ca, cb := make([]int32, n), make([]int32, n)
	for _, id := range a {
		ca[id]++
	}
	for _, id := range b {
		cb[id]++
	}
	fa, fb := a[:0:0], b[:0:0]
	for _, id := range a {
		if cb[id] > 0 {
			fa = append(fa, id)
		}
	}
	for _, id := range b {
		if ca[id] > 0 {
			fb = append(fb, id)
		}
	}
	if len(fa) == 0 {
		return kept
	}
	maxD := max(256, lcsWork/(len(fa)+len(fb)))
	if d, ok := myers(fa, fb, maxD); ok {
		return kept + (len(fa)+len(fb)-d)/2
	}
	multiset := 0
	for id := range ca {
		multiset += int(min(ca[id], cb[id]))
	}
	return kept + multiset
}

// myers returns the number of insertions and deletions that turn a into b
// (Myers 1986, without the path), or false when it exceeds maxD.
func myers(a, b []int32, maxD int) (int, bool) {
	n, m := len(a), len(b)
	maxD = min(maxD, n+m)
	off := maxD + 1
	v := make([]int, 2*maxD+3)
	for d := 0; d <= maxD; d++ {
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || k != d && v[off+k-1] < v[off+k+1] {
				x = v[off+k+1] // down: an insertion
			} else {
				x = v[off+k-1] + 1 // right: a deletion
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x, y = x+1, y+1
			}
			v[off+k] = x
			if x >= n && y >= m {
				return d, true
			}
		}
	}
	return 0, false
}
