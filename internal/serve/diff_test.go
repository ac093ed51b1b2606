package serve_test

import (
	"strings"
	"testing"

	"github.com/strata-crawler/strata/internal/serve"
)

func TestLineDiff(t *testing.T) {
	many := func(prefix string, n int) string {
		var b strings.Builder
		for i := range n {
			b.WriteString(prefix + string(rune('a'+i%26)) + "\n")
		}
		return b.String()
	}
	tests := []struct {
		name         string
		older, newer string
		want         string // one letter per row: = same, - del, + ins, ~ gap
	}{
		{"same", "a\nb\n", "a\nb\n", "~"},
		{"changed line", "a\nb\nc\n", "a\nB\nc\n", "=-+="},
		{"added at the end", "a\n", "a\nb\n", "=+"},
		{"no final newline", "a\nb", "a\nc", "=-+"},
		{"from nothing", "", "a\nb\n", "++"},
		{"long unchanged runs fold", many("x", 10) + "old\n" + many("y", 10), many("x", 10) + "new\n" + many("y", 10), "~===-+===~"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rows := serve.LineDiff(tt.older, tt.newer)
			var got strings.Builder
			for _, r := range rows {
				got.WriteByte("=-+~"[r.Op])
			}
			if got.String() != tt.want {
				t.Errorf("LineDiff = %s, want %s (%+v)", got.String(), tt.want, rows)
			}
			checkLines(t, tt.older, tt.newer, rows)
		})
	}
}

// checkLines verifies that the rows of a line diff give back both texts: the old lines are the
// same and deleted rows plus the gaps, the new lines the same and inserted rows plus the gaps.
func checkLines(t *testing.T, older, newer string, rows []serve.Line) {
	t.Helper()
	lines := func(s string) []string {
		if s == "" {
			return nil
		}
		return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	}
	a, b := lines(older), lines(newer)
	i, j := 0, 0
	for _, r := range rows {
		switch r.Op {
		case serve.Same:
			if i >= len(a) || j >= len(b) || a[i] != r.Text || b[j] != r.Text || r.OldNo != i+1 || r.NewNo != j+1 {
				t.Fatalf("same row %+v does not match old line %d / new line %d", r, i+1, j+1)
			}
			i, j = i+1, j+1
		case serve.Del:
			if i >= len(a) || a[i] != r.Text || r.OldNo != i+1 {
				t.Fatalf("deleted row %+v is not old line %d", r, i+1)
			}
			i++
		case serve.Ins:
			if j >= len(b) || b[j] != r.Text || r.NewNo != j+1 {
				t.Fatalf("inserted row %+v is not new line %d", r, j+1)
			}
			j++
		case serve.Gap:
			if r.OldNo != i+1 || r.NewNo != j+1 || i+r.Skipped > len(a) || j+r.Skipped > len(b) {
				t.Fatalf("gap %+v at old line %d, new line %d", r, i+1, j+1)
			}
			for k := 0; k < r.Skipped; k++ {
				if a[i+k] != b[j+k] {
					t.Fatalf("gap %+v hides a difference: %q vs %q", r, a[i+k], b[j+k])
				}
			}
			i, j = i+r.Skipped, j+r.Skipped
		}
	}
	if i != len(a) || j != len(b) {
		t.Fatalf("rows cover %d of %d old and %d of %d new lines", i, len(a), j, len(b))
	}
}

func TestWordDiff(t *testing.T) {
	spans, ok := serve.WordDiff("the tram line opens today", "the harbour bridge opens today!")
	if !ok {
		t.Fatal("WordDiff refused two short texts")
	}
	var got strings.Builder
	for _, s := range spans {
		switch s.Op {
		case serve.Del:
			got.WriteString("[-" + s.Text + "-]")
		case serve.Ins:
			got.WriteString("{+" + s.Text + "+}")
		default:
			got.WriteString(s.Text)
		}
	}
	if want := "the [-tram line-]{+harbour bridge+} opens today{+!+}"; got.String() != want {
		t.Errorf("WordDiff = %q, want %q", got.String(), want)
	}
	if _, ok := serve.WordDiff(strings.Repeat("word ", 40000), "x"); ok {
		t.Error("WordDiff accepted 80,000 tokens")
	}
}

func FuzzDiff(f *testing.F) {
	f.Add("a\nb\nc\n", "a\nc\nd\n")
	f.Add("one two three", "one 2 three four")
	f.Add("", "x")
	f.Add("ü ñ\n\n\t ", "ü\n ñ")
	f.Fuzz(func(t *testing.T, older, newer string) {
		checkLines(t, older, newer, serve.LineDiff(older, newer))
		spans, ok := serve.WordDiff(older, newer)
		if !ok {
			return
		}
		var a, b strings.Builder
		for _, s := range spans {
			if s.Op != serve.Ins {
				a.WriteString(s.Text)
			}
			if s.Op != serve.Del {
				b.WriteString(s.Text)
			}
		}
		if a.String() != older || b.String() != newer {
			t.Errorf("word diff spans give back %q and %q", a.String(), b.String())
		}
	})
}
