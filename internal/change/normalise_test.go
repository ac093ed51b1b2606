package change

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
)

// TestHashCompatible: Hash is the crawler's content_hash, so that digests
// compare with hashes stored before this package.
func TestHashCompatible(t *testing.T) {
	texts := []string{"", " ", "a", " a  b\t\tc\n\nd ", "caf\xe9 \xff\xfe x", "a\u00a0b\u0085c\u2028d\u3000e",
		"\u200bzero\u200bwidth", "line\r\nline", article300}
	for _, text := range texts {
		if got, want := Summarize(text).Hash, refHash(text); got != want {
			t.Errorf("%q: hash %s, want %s", text, got, want)
		}
	}
}

func refHash(text string) string {
	sum := sha256.Sum256([]byte(strings.Join(strings.Fields(text), " ")))
	return hex.EncodeToString(sum[:16])
}

// TestNormalisation lists what the normalised text ignores and what it
// keeps: pairs with equal and unequal Norm.
func TestNormalisation(t *testing.T) {
	same := [][2]string{
		{"Visitors: 1041", "Visitors: 1042"},
		{"Visitors: 999", "Visitors: 1,000"},
		{"Visitors: 999", "Visitors: 1 000"},
		{"Visitors: 999", "Visitors: 1\u202f000"},
		{"Visitors: 999", "Visitors: 1’000"},
		{"Updated 9:05", "Updated 10:41:07"},
		{"12.05.2026", "1/6/2026"},
		{"2020-2024", "2021–2025"},
		{"v1.2.3 released", "v1.10.0 released"},
		{"May 1st", "June 22nd"},
		{"the 3rd time", "the 4th time"},
		{"Monday 12 May", "Tuesday 13 May"},
		{"Mittwoch, 14. Mai", "Donnerstag, 15. Mai"},
		{"mercredi 14 mai", "jeudi 15 mai"},
		{"14 de mayo", "15 de junio"},
		{"Wed, 14 May 2025 10:41 AM", "Thu, 15 May 2025 9:02 PM"},
		{"3 hours ago", "4 hours ago"},
		{"Page generated in 0.231 seconds", "Page generated in 1.342 seconds"},
		{"Hello World", "HELLO world"},
		{"ÄRGER über", "ärger ÜBER"},
		{"Hello, world!", "Hello world"},
		{"don't stop", "don t stop"},
		{"A\n\nB C D\n\nE F", "E F\n\nA\n\nB C D"},
		{"I ❤ NY", "I ❤️ NY"},
		{"caf\xe9", "caf\xff"},
		{"information", "infor\u00admation"},
		{"1\u200b000 words", "999 words"},
		{"👩\u200d💻", "👩💻"},
		{"", "— · —"},
		{"x", "x\n\n\n"},
	}
	differ := [][2]string{
		{"Visitors: 1041", "Visitors 1041 today"},
		{"closed on Mondays", "closed on Sundays"},
		{"Sunday closed", "Sunday open"},
		{"1 visitor", "2 visitors"},
		{"in stock", "sold out"},
		{"A B C\nD E F", "D E F\nA B C"},
		{"A B C D", "A C B D"},
		{"★★★☆☆", "★★★★☆"},
		{"I ❤ NY", "I ♥ NY"},
		{"東京都の天気", "京都の天気"},
		{"ราคาถูก", "ราคาแพง"},
		{"Straße", "Strasse"},
		{"e\u0301", "\u00e9"}, // no Unicode normalisation
		{"", "0"},
		{"mars", "marsh"},
	}
	for _, p := range same {
		if a, b := Summarize(p[0]), Summarize(p[1]); a.Norm != b.Norm || a.Sim != b.Sim || a.Sketch != b.Sketch {
			t.Errorf("%q and %q differ", p[0], p[1])
		}
	}
	for _, p := range differ {
		a, b := Summarize(p[0]), Summarize(p[1])
		if a.Norm == b.Norm {
			t.Errorf("%q and %q do not differ", p[0], p[1])
		}
		if r := Compare(a, b, Options{}); !r.Changed {
			t.Errorf("%q and %q: %+v", p[0], p[1], r)
		}
	}
}

func TestCounts(t *testing.T) {
	cases := []struct {
		text            string
		lines, shingles int
	}{
		{"", 0, 0},
		{"\n \n\t\n", 0, 0},
		{"one", 1, 1},
		{"one two", 1, 1},
		{"one two three", 1, 1},
		{"one two three four", 1, 2},
		{"one two\nthree four", 2, 2},   // shingles cross lines
		{"one two\n\nthree four", 2, 2}, // but not blocks
		{"a b c a b c a b c", 1, 3},     // distinct
		{"—\n\n·", 2, 0},
		{"東京都", 1, 1},
		{"東京都庁", 1, 2},
	}
	for _, c := range cases {
		if d := Summarize(c.text); d.Lines != c.lines || d.Shingles != c.shingles {
			t.Errorf("%q: %d lines, %d shingles; want %d, %d", c.text, d.Lines, d.Shingles, c.lines, c.shingles)
		}
	}
}

// TestGolden pins the digest of a fixed text. Digests are stored in the
// database and compared across runs, processes and machines: if this test
// fails, stored digests no longer compare with new ones. Change the
// expected value only together with binaryVersion.
func TestGolden(t *testing.T) {
	d := Summarize(article300)
	b, err := d.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	const (
		wantHash = "c5b01bbc215328a5a32f8372e8731652"
		wantNorm = 0xcc94673c5159807d
		wantSim  = 0x8ce150cc640ece0e
		wantBlob = "720b35ae781fc864"
	)
	if d.Hash != wantHash || d.Norm != wantNorm || d.Sim != wantSim || hex.EncodeToString(sum[:8]) != wantBlob {
		t.Errorf("digest changed: Hash %q Norm %#x Sim %#x blob sha256 %x", d.Hash, d.Norm, d.Sim, sum[:8])
	}
	if d.Lines != 13 {
		t.Errorf("Lines = %d", d.Lines)
	}
}
