package change

// Speed of the package:
//
//	go test ./internal/change/ -run '^$' -bench . -benchmem -count 5
//
// MB/s counts the bytes of the text (both texts for LineMagnitude).

import (
	"fmt"
	"strings"
	"testing"
)

// benchText returns a synthetic article text of at least n bytes.
func benchText(n int) string {
	s := newSynth(uint64(n))
	var b strings.Builder
	for b.Len() < n {
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString(s.article(500).String())
	}
	return b.String()
}

func BenchmarkSummarize(b *testing.B) {
	for _, size := range []int{50 << 10, 1 << 20} {
		text := benchText(size)
		b.Run(fmt.Sprintf("%dKB", size>>10), func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			for b.Loop() {
				Summarize(text)
			}
		})
	}
}

func BenchmarkCompare(b *testing.B) {
	s := newSynth(1)
	a := s.article(1000)
	da, db := Summarize(a.String()), Summarize(s.editSentences(a, 3).String())
	b.ReportAllocs()
	for b.Loop() {
		Compare(da, db, Options{})
	}
}

func BenchmarkMarshal(b *testing.B) {
	d := Summarize(article300)
	b.ReportAllocs()
	for b.Loop() {
		buf, _ := d.MarshalBinary()
		_ = d.UnmarshalBinary(buf)
	}
}

// BenchmarkLineMagnitude diffs two 2,000-line texts: 5 % of the lines
// edited, and two unrelated texts.
func BenchmarkLineMagnitude(b *testing.B) {
	s := newSynth(2)
	lines := make([]string, 2000)
	for i := range lines {
		lines[i] = s.sentence()
	}
	edited := append([]string(nil), lines...)
	for i := 0; i < len(edited); i += 20 {
		edited[i] = s.sentence()
	}
	other := make([]string, 2000)
	for i := range other {
		other[i] = s.sentence()
	}
	a := strings.Join(lines, "\n")
	for _, c := range []struct{ name, b string }{
		{"edited5pct", strings.Join(edited, "\n")},
		{"unrelated", strings.Join(other, "\n")},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(a) + len(c.b)))
			b.ReportAllocs()
			for b.Loop() {
				LineMagnitude(a, c.b)
			}
		})
	}
}
