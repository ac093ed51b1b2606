package change

import (
	"testing"
	"unicode/utf8"
)

var fuzzSeeds = []string{"", "a", "Visitors: 1,041\n\nhello world", "caf\xe9 \xff", "\xf0\x9f", "1st 2nd 3rd 4th 21st",
	"1,", "1, 2", "12:", "x1\u202f", "\u00a0\u2009\u202f", "東京都の天気 ★ ❤️", "ราคาถูก", "A\n\nB\n\n\n", "\r\n\r\n",
	"e\u0301", "İSTANBUL ǅ", articleFooter}

// FuzzSummarize: Summarize never panics, is deterministic, keeps Hash equal
// to the crawler's content_hash, and its digest survives MarshalBinary and
// compares as unchanged with itself.
func FuzzSummarize(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s, "x")
	}
	f.Fuzz(func(t *testing.T, text, other string) {
		d := Summarize(text)
		if d != Summarize(text) {
			t.Fatal("not deterministic")
		}
		if d.Hash != refHash(text) {
			t.Fatalf("hash %s, want %s", d.Hash, refHash(text))
		}
		if r := Compare(d, d, Options{MinDistance: 3}); r != (Result{}) {
			t.Fatalf("Compare(d, d) = %+v", r)
		}
		b, err := d.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		var back Digest
		if err := back.UnmarshalBinary(b); err != nil || back != d {
			t.Fatalf("round trip: %v", err)
		}
		o := Summarize(other)
		r := Compare(d, o, Options{})
		if r != Compare(o, d, Options{}) {
			t.Fatal("not symmetric")
		}
		if r.Magnitude < 0 || r.Magnitude > 1 || r.Distance < 0 || r.Distance > 64 || r.Changed != (d.Hash != o.Hash && d.Norm != o.Norm) {
			t.Fatalf("%+v", r)
		}
		if utf8.ValidString(text) {
			if d2 := Summarize(text + "\n\n" + text); d2.Shingles != d.Shingles && d.Shingles > 0 {
				// a repeated block adds no distinct shingle
				t.Fatalf("repeated block: %d shingles, want %d", d2.Shingles, d.Shingles)
			}
		}
	})
}

// FuzzUnmarshal: UnmarshalBinary never panics, and what it accepts
// marshals back to the same bytes.
func FuzzUnmarshal(f *testing.F) {
	b, _ := Summarize(article300).MarshalBinary()
	f.Add(b)
	f.Add([]byte{1, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		var d Digest
		if d.UnmarshalBinary(b) != nil {
			return
		}
		out, err := d.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		var d2 Digest
		if err := d2.UnmarshalBinary(out); err != nil || d2 != d {
			t.Fatalf("second round trip: %v", err)
		}
	})
}
