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
	Text         string // without its newline; for Gap, the lines it folds, newline-separated
	Skipped      int    // for Gap: how many unchanged lines it stands for
	// Words marks the words that changed inside a changed line that has a counterpart on the other
	// side: Same and Del spans for a deleted line, Same and Ins spans for an inserted one. Nil when
	// the line has none or the two lines have too little in common for it to help.
	Words []Span
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
	markWords(rows)
	return fold(rows)
}

// minCommon is the share of a changed line's characters that must be unchanged in its counterpart
// for the changed words to be marked: below it the lines are simply different, and marking nearly
// every word would only add noise.
const minCommon = 0.3

// markWords pairs each block of deleted lines with the inserted lines that follow it, line by line,
// and marks the words that changed between the two lines of each pair.
func markWords(rows []Line) {
	for k := 0; k < len(rows); {
		if rows[k].Op != Del {
			k++
			continue
		}
		d0 := k
		for k < len(rows) && rows[k].Op == Del {
			k++
		}
		i0 := k
		for k < len(rows) && rows[k].Op == Ins {
			k++
		}
		for p := 0; p < min(i0-d0, k-i0); p++ {
			del, ins := &rows[d0+p], &rows[i0+p]
			spans, ok := WordDiff(del.Text, ins.Text)
			if !ok {
				continue
			}
			common := 0
			for _, sp := range spans {
				if sp.Op == Same {
					common += len(sp.Text)
				}
			}
			if float64(common) < minCommon*float64(max(len(del.Text), len(ins.Text))) {
				continue
			}
			for _, sp := range spans {
				if sp.Op != Ins {
					del.Words = append(del.Words, sp)
				}
				if sp.Op != Del {
					ins.Words = append(ins.Words, sp)
				}
			}
		}
	}
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
		var hidden []string
		for k < len(rows) && !near[k] && rows[k].Op == Same {
			hidden = append(hidden, rows[k].Text)
			k++
		}
		out = append(out, Line{Op: Gap, Skipped: k - start, OldNo: rows[start].OldNo, NewNo: rows[start].NewNo,
			Text: strings.Join(hidden, "\n")})
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

// foldLines is how many lines an unchanged stretch of a word diff may have before its middle is
// folded; foldKeep lines stay on each side of the fold.
const (
	foldLines = 12
	foldKeep  = 3
)

// FoldSpans folds the middle of every long unchanged span of a word diff into a Gap span holding
// the folded text, keeping foldKeep lines next to each change (and none before the first change or
// after the last).
func FoldSpans(spans []Span) []Span {
	var out []Span
	for k, sp := range spans {
		if sp.Op != Same || strings.Count(sp.Text, "\n") < foldLines {
			out = append(out, sp)
			continue
		}
		lines := strings.SplitAfter(sp.Text, "\n")
		head, tail := foldKeep, foldKeep
		if k == 0 {
			head = 0
		}
		if k == len(spans)-1 {
			tail = 0
		}
		if len(lines)-head-tail < 2 {
			out = append(out, sp)
			continue
		}
		if head > 0 {
			out = append(out, Span{Op: Same, Text: strings.Join(lines[:head], "")})
		}
		out = append(out, Span{Op: Gap, Text: strings.Join(lines[head:len(lines)-tail], "")})
		if tail > 0 {
			out = append(out, Span{Op: Same, Text: strings.Join(lines[len(lines)-tail:], "")})
		}
	}
	return out
}
