package serve

import (
	"regexp"
	"strings"

	"github.com/aymanbagabas/go-udiff/lcs"
)

// Op is what a piece of a diff does.
type Op int

const (
	Same Op = iota
	Del     // only in the older version
	Ins     // only in the newer version
	Gap     // unchanged lines left out of a line diff
)

// Line is one row of a line diff.
type Line struct {
	Op           Op
	OldNo, NewNo int    // 1-based line numbers; 0 where the line has none (for Gap: of its first line)
	Text         string // without its newline; empty for Gap
	Skipped      int    // for Gap: how many unchanged lines it stands for
}

// contextLines is how many unchanged lines a line diff keeps around each change, as diff -u does.
const contextLines = 3

// LineDiff compares two texts line by line and returns the rows to show: changed lines with
// contextLines of unchanged lines around them, the rest folded into Gap rows.
func LineDiff(older, newer string) []Line {
	a, b := splitLines(older), splitLines(newer)
	var rows []Line
	i, j := 0, 0
	same := func(untilA int) {
		for ; i < untilA; i, j = i+1, j+1 {
			rows = append(rows, Line{Op: Same, OldNo: i + 1, NewNo: j + 1, Text: a[i]})
		}
	}
	for _, d := range lcs.DiffLines(a, b) {
		same(d.Start)
		for ; i < d.End; i++ {
			rows = append(rows, Line{Op: Del, OldNo: i + 1, Text: a[i]})
		}
		for ; j < d.ReplEnd; j++ {
			rows = append(rows, Line{Op: Ins, NewNo: j + 1, Text: b[j]})
		}
	}
	same(len(a))
	return fold(rows)
}

// fold replaces runs of unchanged lines further than contextLines from any change by one Gap.
func fold(rows []Line) []Line {
	near := make([]bool, len(rows))
	for k, r := range rows {
		if r.Op == Same {
			continue
		}
		for m := max(0, k-contextLines); m < min(len(rows), k+contextLines+1); m++ {
			near[m] = true
		}
	}
	var out []Line
	for k := 0; k < len(rows); {
		if near[k] || rows[k].Op != Same {
			out = append(out, rows[k])
			k++
			continue
		}
		start := k
		for k < len(rows) && !near[k] && rows[k].Op == Same {
			k++
		}
		out = append(out, Line{Op: Gap, Skipped: k - start, OldNo: rows[start].OldNo, NewNo: rows[start].NewNo})
	}
	return out
}

// splitLines splits s into lines without their newlines; a final newline does not start a line.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// Span is a run of text in a word diff.
type Span struct {
	Op   Op
	Text string
}

// tokens splits text into words, runs of white space and single other characters, so that a word
// diff marks whole words and keeps the text's own spacing and line breaks.
var tokens = regexp.MustCompile(`\s+|[\p{L}\p{N}_]+|.`)

// maxWordTokens bounds a word diff: past it, LCS on tokens costs more than a reader gains over the
// line diff, which the handler shows instead.
const maxWordTokens = 60000

// WordDiff compares two texts word by word and returns the newer text as spans, with the deleted
// words in place, and ok = false (no spans) when the texts are too long for it.
func WordDiff(older, newer string) (spans []Span, ok bool) {
	a := tokens.FindAllString(older, maxWordTokens+1) // stop early on a text too long anyway
	b := tokens.FindAllString(newer, maxWordTokens+1-len(a))
	if len(a)+len(b) > maxWordTokens {
		return nil, false
	}
	// Each LCS edit gives its deleted and inserted tokens; the unchanged tokens between two edits
	// are kept unless they are only white space, which is folded into both sides so that "tram
	// line" → "harbour bridge" reads as one replacement rather than two around a shared space.
	var del, ins strings.Builder
	flush := func() {
		if del.Len() > 0 {
			spans = append(spans, Span{Op: Del, Text: del.String()})
		}
		if ins.Len() > 0 {
			spans = append(spans, Span{Op: Ins, Text: ins.String()})
		}
		del.Reset()
		ins.Reset()
	}
	same := func(toks []string) {
		if len(toks) == 0 {
			return
		}
		flush()
		text := strings.Join(toks, "")
		if n := len(spans); n > 0 && spans[n-1].Op == Same {
			spans[n-1].Text += text
			return
		}
		spans = append(spans, Span{Op: Same, Text: text})
	}
	i := 0
	for _, d := range lcs.DiffLines(a, b) {
		between := a[i:d.Start]
		if (del.Len() > 0 || ins.Len() > 0) && len(between) == 1 && strings.TrimSpace(between[0]) == "" && !strings.Contains(between[0], "\n") {
			del.WriteString(between[0])
			ins.WriteString(between[0])
		} else {
			same(between)
		}
		del.WriteString(strings.Join(a[d.Start:d.End], ""))
		ins.WriteString(strings.Join(b[d.ReplStart:d.ReplEnd], ""))
		i = d.End
	}
	same(a[i:])
	flush()
	return spans, true
}
