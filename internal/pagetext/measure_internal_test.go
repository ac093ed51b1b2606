package pagetext

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/net/html"
)

// measureTextByRune is measureText as first written, a rune at a time: the reference the fast
// paths must agree with.
func measureTextByRune(s string, weight float64) textStats {
	var t textStats
	space := false
	for _, c := range s {
		switch {
		case isSpace(c):
			if !space {
				t.chars++
			}
			space = true
			continue
		case isComma(c):
			t.commas++
		}
		space = false
		t.chars++
	}
	t.link = weight * float64(t.chars)
	return t
}

// TestMeasureTextAgreesRuneByRune compares measureText with the rune-at-a-time reference on
// strings of every kind of character, invalid UTF-8 included, and on the text of real pages.
func TestMeasureTextAgreesRuneByRune(t *testing.T) {
	pieces := []string{"a", "Z", "0", " ", "  ", "\t", "\n", "\r\n", ",", "，", "、", "\u00a0", "\u200b", "\x00", "\x7f", "\x01",
		"é", "日本", "\u2003", "\xff", "\xe2\x82", "word", "long words here", ", ", " ,"}
	rng := rand.New(rand.NewPCG(3, 4))
	var cases []string
	for range 5000 {
		var b strings.Builder
		for range rng.IntN(12) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		cases = append(cases, b.String())
	}
	pages, _ := filepath.Glob(filepath.Join("testdata", "realpages", "*.html"))
	for _, p := range pages[:min(len(pages), 10)] {
		src, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		cases = append(cases, string(src))
	}
	for _, s := range cases {
		if got, want := measureText(s, 0.5), measureTextByRune(s, 0.5); got != want {
			t.Fatalf("measureText(%q) = %+v, want %+v (valid UTF-8: %v)", s, got, want, utf8.ValidString(s))
		}
	}
}

// TestMeasureNodeKeepsTheCounts checks that a text node's counts read back from the node are the
// ones measured, at other link weights too, including counts at and past what the node can hold.
func TestMeasureNodeKeepsTheCounts(t *testing.T) {
	cases := []string{"", " ", "plain words", "a, b, c", "日本、語，", strings.Repeat("x", measuredMaxC),
		strings.Repeat("x", measuredMaxC+1), strings.Repeat(",", measuredMaxK), strings.Repeat(",", measuredMaxK+1),
		strings.Repeat("word, ", 5000)}
	for _, s := range cases {
		n := &html.Node{Type: html.TextNode, Data: s}
		for _, w := range []float64{0, 1, 0.3, 0} {
			if got, want := measureNode(n, w), measureText(s, w); got != want {
				t.Fatalf("measureNode(%.20q, %v) = %+v, want %+v", s, w, got, want)
			}
		}
	}
}

// TestRuneCounts compares runeCount and fewerRunes with utf8.RuneCountInString on strings of
// every kind of character, invalid and truncated UTF-8 included, around the eight-byte steps.
func TestRuneCounts(t *testing.T) {
	pieces := []string{"a", "Z", " ", "\n", "é", "日本", "\U0001F600", "\xff", "\xe2\x82", "\xf0\x9f\x98", "abcdefgh", "word "}
	rng := rand.New(rand.NewPCG(5, 6))
	for range 5000 {
		var b strings.Builder
		for range rng.IntN(40) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		s := b.String()
		want := utf8.RuneCountInString(s)
		if got := runeCount(s); got != want {
			t.Fatalf("runeCount(%q) = %d, want %d", s, got, want)
		}
		for _, n := range []int{0, 1, want - 1, want, want + 1, 200} {
			if got := fewerRunes(s, n); got != (want < n) {
				t.Fatalf("fewerRunes(%q, %d) = %v, want %v", s, n, got, want < n)
			}
		}
	}
}
