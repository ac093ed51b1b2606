package change

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// equivAlphabet mixes what the tokenizer treats differently: ASCII letters
// of both cases, digits and the characters that join them, white space of
// every kind, punctuation, ordinal suffixes, calendar words, letters that
// lower-case to a different length, marks, format characters, unspaced
// scripts, symbols, invalid and truncated UTF-8.
var equivAlphabet = []string{"a", "B", "z", "Q", "0", "7", "1st", "2nd", "th", "RD", " ", "  ", "\t", "\n", "\n\n",
	"\r\n", "\v", "\f", ".", ",", ":", "/", "'", "-", "!", "(", "\u00a0", "\u2009", "\u202f", "\u2019", "\u2013",
	"\u3000", "\u2028", "\u0085", "é", "É", "ß", "İ", "ǅ", "Ω", "e\u0301", "\u00ad", "\u200b", "\ufe0f", "東", "京",
	"の", "ก", "★", "❤", "٣", "Ⅻ", "½", "\xff", "\xe9", "\xf0\x9f", "\xc0\x80", "May", "monday", "März", "word",
	"Information", "x", "1,041", "12:05", "2020–2024"}

// randomText is a text of n pieces of equivAlphabet, or of ASCII prose
// when ascii is set.
func randomText(r *rand.Rand, n int, ascii bool) string {
	var b strings.Builder
	for range n {
		if ascii {
			switch k := r.IntN(20); {
			case k < 12:
				for range 1 + r.IntN(9) {
					b.WriteByte(byte('a' + r.IntN(26)))
				}
			case k < 16:
				b.WriteByte(' ')
			case k < 17:
				b.WriteString("\n\n")
			default:
				b.WriteByte(" .,;:-'0123456789\n\tABC"[r.IntN(22)])
			}
			continue
		}
		b.WriteString(equivAlphabet[r.IntN(len(equivAlphabet))])
	}
	return b.String()
}

// TestSummarizeMatchesOld: the rewritten Summarize gives the digest of the
// implementation it replaced on the fixtures, the fuzz seeds and random
// texts, ASCII and not.
func TestSummarizeMatchesOld(t *testing.T) {
	texts := append([]string{benchText(50 << 10), article300}, fuzzSeeds...)
	names, err := filepath.Glob(filepath.Join("testdata", "*.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		texts = append(texts, string(b))
	}
	r := rand.New(rand.NewPCG(19, 19))
	for i := range 3000 {
		texts = append(texts, randomText(r, 1+r.IntN(1+i/3), i%3 == 0))
	}
	for i, text := range texts {
		if got, want := Summarize(text), oldSummarize(text); got != want {
			t.Fatalf("text %d %.80q: digest\n%+v, want\n%+v", i, text, got, want)
		}
	}
}

// FuzzSummarizeMatchesOld: the rewritten Summarize gives the old digest on
// any input.
func FuzzSummarizeMatchesOld(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		if got, want := Summarize(text), oldSummarize(text); got != want {
			t.Fatalf("digest\n%+v, want\n%+v", got, want)
		}
	})
}

// BenchmarkSummarizeOld is BenchmarkSummarize/50KB for the old
// implementation, to compare the two under the same load.
func BenchmarkSummarizeOld(b *testing.B) {
	text := benchText(50 << 10)
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		oldSummarize(text)
	}
}
