package change

import (
	"math/rand/v2"
	"strings"
	"testing"
)

func TestLineMagnitude(t *testing.T) {
	cases := []struct {
		a, b string
		want float64
	}{
		{"", "", 0},
		{"", "a", 1},
		{"a", "", 1},
		{"a\nb\nc", "a\nb\nc", 0},
		{"a\nb\nc", "  a \n\nb\t\n\n\nc\n", 0},
		{"a  b", "a b", 0},
		{"a\tb", "a b", 0},
		{"a\nb\nc\nd", "a\nx\nc\nd", 0.25},
		{"a\nb", "a\nb\nc\nd", 0.5},
		{"a\nb\nc\nd", "a\nb", 0.5},
		{"a\nb\nc", "c\nb\na", 2.0 / 3},
		{"a\nb", "x\ny", 1},
		{"a\na\na", "a", 2.0 / 3},
		{"Visitors: 1041", "Visitors: 1042", 1},
	}
	for _, c := range cases {
		for _, swap := range []bool{false, true} {
			a, b := c.a, c.b
			if swap {
				a, b = b, a
			}
			if got := LineMagnitude(a, b); !near(got, c.want) {
				t.Errorf("LineMagnitude(%q, %q) = %v, want %v", a, b, got, c.want)
			}
		}
	}
}

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }

// refLCS is the textbook O(nm) LCS of the non-empty collapsed lines.
func refLCS(a, b string) (lcs, na, nb int) {
	split := func(s string) []string {
		var out []string
		for _, l := range strings.Split(s, "\n") {
			if l = strings.Join(strings.Fields(l), " "); l != "" {
				out = append(out, l)
			}
		}
		return out
	}
	la, lb := split(a), split(b)
	prev, cur := make([]int, len(lb)+1), make([]int, len(lb)+1)
	for i := range la {
		for j := range lb {
			if la[i] == lb[j] {
				cur[j+1] = prev[j] + 1
			} else {
				cur[j+1] = max(cur[j], prev[j+1])
			}
		}
		prev, cur = cur, prev
	}
	return prev[len(lb)], len(la), len(lb)
}

func refLineMagnitude(a, b string) float64 {
	lcs, na, nb := refLCS(a, b)
	if na == 0 && nb == 0 {
		return 0
	}
	return 1 - float64(lcs)/float64(max(na, nb))
}

// randomLines returns n lines over an alphabet of k distinct lines.
func randomLines(rng *rand.Rand, n, k int) string {
	lines := make([]string, n)
	for i := range lines {
		lines[i] = string(rune('a' + rng.IntN(k)))
	}
	return strings.Join(lines, "\n")
}

func TestLineMagnitudeMatchesLCS(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 3000 {
		a := randomLines(rng, rng.IntN(30), 1+rng.IntN(8))
		b := randomLines(rng, rng.IntN(30), 1+rng.IntN(8))
		if got, want := LineMagnitude(a, b), refLineMagnitude(a, b); !near(got, want) {
			t.Fatalf("LineMagnitude(%q, %q) = %v, want %v", a, b, got, want)
		}
	}
}

// TestLineMagnitudeCap: beyond the work bound the multiset count is used,
// an upper bound of the common subsequence.
func TestLineMagnitudeCap(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	a := strings.Split(randomLines(rng, 300, 20), "\n")
	b := append([]string(nil), a...)
	rng.Shuffle(len(b), func(i, j int) { b[i], b[j] = b[j], b[i] })
	ids := map[string]int32{}
	ia := lineIDs(strings.Join(a, "\n"), ids, nil)
	ib := lineIDs(strings.Join(b, "\n"), ids, nil)
	exact, _, _ := refLCS(strings.Join(a, "\n"), strings.Join(b, "\n"))
	if d, ok := myers(ia, ib, 10); ok {
		t.Fatalf("shuffled lines within 10 edits: %d", d)
	}
	if d, ok := myers(ia, ib, 1000); !ok || (len(ia)+len(ib)-d)/2 != exact {
		t.Fatalf("myers = %d, %v; LCS %d", d, ok, exact)
	}
	// The multiset bound: every line is common.
	if got := LineMagnitude(strings.Join(a, "\n"), strings.Join(b, "\n")); !near(got, 1-float64(exact)/300) {
		t.Errorf("small input uses the exact diff: %v", got)
	}
}

func TestLineMagnitudeHuge(t *testing.T) {
	if testing.Short() {
		t.Skip("large input")
	}
	lines := make([]string, 200000)
	for i := range lines {
		lines[i] = "line " + itoa(i)
	}
	a := strings.Join(lines, "\n")

	// An edit every 50 lines: the edited lines are in one text only and
	// dropped before the diff, which is then exact and quick.
	edited := append([]string(nil), lines...)
	for i := 0; i < len(edited); i += 50 {
		edited[i] += " edited"
	}
	if got, want := LineMagnitude(a, strings.Join(edited, "\n")), 4000.0/200000; !near(got, want) {
		t.Errorf("edited: got %v, want %v", got, want)
	}

	// Every 50th line moved to the end: D = 8,000 > 2^25/400,000, so the
	// multiset bound counts every line as kept.
	var moved, tail []string
	for i, l := range lines {
		if i%50 == 0 {
			tail = append(tail, l)
		} else {
			moved = append(moved, l)
		}
	}
	if got := LineMagnitude(a, strings.Join(append(moved, tail...), "\n")); got != 0 {
		t.Errorf("moved: got %v, want the multiset bound 0", got)
	}
}

func itoa(i int) string {
	var b []byte
	for {
		b = append([]byte{byte('0' + i%10)}, b...)
		if i /= 10; i == 0 {
			return string(b)
		}
	}
}
