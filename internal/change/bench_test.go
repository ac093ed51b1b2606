package change

// Speed of the package:
//
//	go test ./internal/change/ -run '^$' -bench . -benchmem -count 5
//
// MB/s counts the bytes of the text.

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
