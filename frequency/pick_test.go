package frequency

import (
	"fmt"
	"math"
	"slices"
	"testing"
)

// pickNames runs Pick and returns the names of the chosen candidates, "domain/order".
func pickNames(cands []Candidate, sh Share) []string {
	var out []string
	for _, i := range Pick(cands, sh) {
		out = append(out, cands[i].Domain+"/"+cands[i].Key)
	}
	return out
}

func TestPick(t *testing.T) {
	known := func(d string, key int, v float64) Candidate {
		return Candidate{Domain: d, Key: fmt.Sprint(key), Value: v}
	}
	fresh := func(d string, key int, level int) Candidate {
		return Candidate{Domain: d, New: true, Key: fmt.Sprint(key), Level: level}
	}
	all := func(n int, ds ...string) map[string]int {
		m := map[string]int{}
		for _, d := range ds {
			m[d] = n
		}
		return m
	}
	tests := []struct {
		name  string
		cands []Candidate
		share Share
		want  []string
	}{
		{"nothing left", []Candidate{known("a", 1, 0.5)}, Share{Left: 0, New: 5}, nil},
		{"known by value, ties by key", []Candidate{known("a", 3, 0.2), known("b", 1, 0.9), known("a", 2, 0.2)},
			Share{Left: 2}, []string{"b/1", "a/2"}},
		{"new before known", []Candidate{known("a", 1, 0.99), fresh("a", 2, 0)}, Share{Left: 1, New: 1, Allowance: all(5, "a")}, []string{"a/2"}},
		{"no new share: known first, new pages only spill", []Candidate{fresh("a", 2, 0), known("a", 1, 0.1)},
			Share{Left: 2, New: 0, Allowance: all(5, "a")}, []string{"a/1"}},
		{"no new share, spilling", []Candidate{fresh("a", 2, 0), known("a", 1, 0.1)},
			Share{Left: 2, New: 0, Allowance: all(5, "a"), Spill: true}, []string{"a/1", "a/2"}},
		{"a domain's new pages: nearest a seed first, then by key", []Candidate{fresh("a", 1, 0), fresh("a", 2, 1), fresh("a", 3, 1)},
			Share{Left: 2, New: 2, Allowance: all(5, "a")}, []string{"a/2", "a/3"}},
		{"domains take turns", []Candidate{fresh("a", 1, 0), fresh("a", 2, 0), fresh("a", 3, 0), fresh("b", 4, 0)},
			Share{Left: 3, New: 3, Allowance: all(5, "a", "b")}, []string{"a/1", "b/4", "a/2"}},
		{"rotation changes who goes first", []Candidate{fresh("a", 1, 0), fresh("b", 2, 0)},
			Share{Left: 1, New: 1, Allowance: all(5, "a", "b"), Rotate: 1}, []string{"b/2"}},
		{"a domain without an allowance waits", []Candidate{fresh("farm", 1, 0), known("site", 2, 0.5)},
			Share{Left: 4, New: 4, Allowance: map[string]int{"site": 2}}, []string{"site/2"}},
		// The farm's allowance is 2 for the run: its third page waits for the known pages, then
		// spills only if asked.
		{"the allowance caps a domain's new pages", []Candidate{fresh("farm", 1, 0), fresh("farm", 2, 0), fresh("farm", 3, 0),
			known("site", 4, 0.5)}, Share{Left: 4, New: 4, Allowance: all(2, "farm", "site"), Spill: true},
			[]string{"farm/1", "farm/2", "site/4", "farm/3"}},
		{"the new share bounds new pages before known ones", []Candidate{fresh("a", 1, 0), fresh("a", 2, 0), known("a", 3, 0.1)},
			Share{Left: 2, New: 1, Allowance: all(5, "a")}, []string{"a/1", "a/3"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := pickNames(tt.cands, tt.share); !slices.Equal(got, tt.want) {
				t.Errorf("Pick = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestPickFarm is the budget leak of issue 17: one domain with 5,000 never-fetched URLs beside eight
// domains with a few new pages and known pages due, with a budget of 48 or 96 and each domain's fair
// share of the run as its allowance. Before any spill, the farm gets no more than its share, and every
// other domain's new pages and due known pages are served.
func TestPickFarm(t *testing.T) {
	var cands []Candidate
	order := 0
	add := func(c Candidate) {
		order++
		c.Key = fmt.Sprintf("%05d", order)
		cands = append(cands, c)
	}
	for range 5000 {
		add(Candidate{Domain: "farm", New: true})
	}
	domains := []string{"farm"}
	for d := range 8 {
		dom := fmt.Sprintf("site%d", d)
		domains = append(domains, dom)
		for range 2 {
			add(Candidate{Domain: dom, New: true, Level: 1})
		}
		for k := range 4 {
			add(Candidate{Domain: dom, Value: 0.2 + 0.1*float64(k)})
		}
	}
	for _, budget := range []int{48, 96} {
		fair := FairShare(budget, len(domains))
		allowance := map[string]int{}
		for _, d := range domains {
			allowance[d] = fair
		}
		chosen := Pick(cands, Share{Left: budget, New: budget, Allowance: allowance})
		farm, other := 0, 0
		for _, i := range chosen {
			if cands[i].Domain == "farm" {
				farm++
			} else {
				other++
			}
		}
		if farm > fair || other != min(48, budget-farm) {
			t.Errorf("budget %d: the farm got %d (fair share %d), the other domains %d of their 48 candidates", budget, farm, fair, other)
		}
	}
}

func TestPickIsBoundedAndDeterministic(t *testing.T) {
	var cands []Candidate
	for i := range 200 {
		cands = append(cands, Candidate{Domain: fmt.Sprintf("d%d", i%7), New: i%3 == 0, Level: i % 2, Value: float64(i%11) / 10,
			Key: fmt.Sprintf("%03d", i)})
	}
	for left := 0; left <= 210; left += 15 {
		sh := Share{Left: left, New: left / 3, Rotate: left, Spill: true, Allowance: map[string]int{"d0": 3, "d1": 100}}
		a, b := Pick(cands, sh), Pick(cands, sh)
		if !slices.Equal(a, b) {
			t.Fatalf("left %d: two calls disagree", left)
		}
		seen := map[int]bool{}
		for _, i := range a {
			if seen[i] {
				t.Fatalf("left %d: candidate %d chosen twice", left, i)
			}
			seen[i] = true
		}
		if want := min(left, len(cands)); len(a) != want {
			t.Errorf("left %d: %d chosen, want %d", left, len(a), want)
		}
	}
}

func TestGainValue(t *testing.T) {
	tests := []struct {
		name                        string
		rate, runs, horizon, weight float64
		updated                     bool
		want                        float64
	}{
		{"stale with p = 1 − e^−1, fresh for (1 − e^−1)/0.1 runs of 10", 0.1, 10, 10, 1, false, (1 - math.Exp(-1)) * (1 - math.Exp(-1)) / 0.1},
		{"weight multiplies", 0.1, 10, 10, 2, false, 2 * (1 - math.Exp(-1)) * (1 - math.Exp(-1)) / 0.1},
		{"never seen changing: worth nothing", 0, 10, 10, 1, false, 0},
		{"just fetched: worth nothing", 0.1, 0, 10, 1, false, 0},
		{"the site says it changed", 0.1, 1, 10, 1, true, (1 - math.Exp(-1)) / 0.1},
		{"a static page the site says changed: the whole horizon", 0, 3, 10, 1, true, 10},
		{"NaN weight counts as 1", 0.1, 10, 10, math.NaN(), false, (1 - math.Exp(-1)) * (1 - math.Exp(-1)) / 0.1},
		{"horizon below one run counts as one", 0.5, 100, 0, 1, false, (1 - math.Exp(-50)) * (1 - math.Exp(-0.5)) / 0.5},
	}
	for _, tt := range tests {
		if got := GainValue(tt.rate, tt.runs, tt.horizon, tt.weight, tt.updated); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("%s: GainValue = %v, want %v", tt.name, got, tt.want)
		}
	}
	// Cho's point: a page that changes every run is stale for sure, but a fetch buys it about one
	// run of freshness; one that changes every twenty runs, fetched after ten, buys more.
	fast := GainValue(24, 10, 10, 1, false)
	slow := GainValue(0.05, 10, 10, 1, false)
	if !(slow > fast) {
		t.Errorf("a page changing hourly (%v) outranks one changing every twenty runs (%v)", fast, slow)
	}
}
