package change

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
)

// randomTexts returns a mix of synthetic articles, edits of them, short
// texts and random bytes.
func randomTexts(n int) []string {
	s := newSynth(99)
	rng := rand.New(rand.NewPCG(1, 2))
	var out []string
	for len(out) < n {
		switch rng.IntN(4) {
		case 0:
			out = append(out, s.article(50+rng.IntN(800)).String())
		case 1:
			a := s.article(100 + rng.IntN(400))
			out = append(out, a.String(), s.editSentences(a, 1+rng.IntN(3)).String(), s.editWord(a).String())
		case 2:
			out = append(out, s.sentence(), strings.Repeat(s.sentence()+"\n", rng.IntN(4)))
		default:
			b := make([]byte, rng.IntN(300))
			for i := range b {
				b[i] = byte(rng.UintN(256))
			}
			out = append(out, string(b))
		}
	}
	return out
}

func TestProperties(t *testing.T) {
	texts := randomTexts(200)
	digests := make([]Digest, len(texts))
	for i, text := range texts {
		digests[i] = Summarize(text)
		if again := Summarize(text); again != digests[i] {
			t.Fatalf("Summarize not deterministic on %q", text)
		}
		if r := Compare(digests[i], digests[i], Options{}); r != (Result{}) {
			t.Fatalf("Compare(d, d) = %+v", r)
		}
	}
	for i := range digests {
		for j := range digests {
			for _, md := range []int{0, 3} {
				r := Compare(digests[i], digests[j], Options{MinDistance: md})
				if rr := Compare(digests[j], digests[i], Options{MinDistance: md}); r != rr {
					t.Fatalf("not symmetric: %+v vs %+v", r, rr)
				}
				if r.Distance < 0 || r.Distance > 64 || r.Magnitude < 0 || r.Magnitude > 1 {
					t.Fatalf("out of range: %+v", r)
				}
				if r.Changed && r.Magnitude == 0 {
					t.Fatalf("changed with magnitude 0: %+v", r)
				}
				if digests[i].Norm == digests[j].Norm && (r.Changed || r.Distance != 0 || r.Magnitude != 0) {
					t.Fatalf("equal Norm: %+v", r)
				}
			}
		}
	}
}

// TestConcurrent: pooled state does not leak between concurrent calls (run
// with -race).
func TestConcurrent(t *testing.T) {
	texts := randomTexts(60)
	want := make([]Digest, len(texts))
	for i, text := range texts {
		want[i] = Summarize(text)
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for k := range 3 * len(texts) {
				i := (k*7 + g) % len(texts)
				if got := Summarize(texts[i]); got != want[i] {
					t.Errorf("text %d: concurrent digest differs", i)
					return
				}
			}
		})
	}
	wg.Wait()
}

func TestMarshal(t *testing.T) {
	for _, text := range append(randomTexts(50), "", article300) {
		d := Summarize(text)
		b, err := d.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		if len(b) > 2+16+16+10+SketchSize {
			t.Errorf("%d bytes", len(b))
		}
		var back Digest
		if err := back.UnmarshalBinary(b); err != nil {
			t.Fatal(err)
		}
		if back != d {
			t.Fatalf("round trip: %+v != %+v", back, d)
		}
	}
	b, _ := Summarize(article300).MarshalBinary()
	t.Logf("binary digest of the 300-word article: %d bytes", len(b))

	var d Digest
	for _, bad := range [][]byte{nil, {1}, {2, 0}, b[:len(b)-1], append(bytes.Clone(b), 0), {1, 5, 0, 0}} {
		if err := d.UnmarshalBinary(bad); err == nil {
			t.Errorf("%x: no error", bad)
		}
	}
	if err := d.UnmarshalBinary([]byte{9, 0}); !errors.Is(err, ErrVersion) {
		t.Errorf("version 9: %v", err)
	}
	for _, bad := range []Digest{{Hash: "xyz"}, {Hash: "abcd"}, {Lines: -1}} {
		if _, err := bad.MarshalBinary(); err == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
	if b, err := (Digest{}).MarshalBinary(); err != nil || d.UnmarshalBinary(b) != nil || d != (Digest{}) {
		t.Errorf("zero digest: %v %v %+v", b, err, d)
	}
}
