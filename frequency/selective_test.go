package frequency

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

func TestChildEvidence(t *testing.T) {
	ok, ch, fail := Record{}, Record{Changed: true}, Record{Failed: true}
	tests := []struct {
		name     string
		children [][]Record
		want     Evidence
		enough   bool
	}{
		{"no children", nil, Evidence{}, false},
		{"a site crawled once: every child unknown", [][]Record{{ok}, {ok}, {ok}}, Evidence{Children: 3}, false},
		{"a child with one fetch is unknown, not unchanged", [][]Record{{ok, ok}, {ok}, {ok}}, Evidence{Children: 3, Known: 1}, false},
		{"half known is enough", [][]Record{{ok, ok}, {ok, ch}, {ok}, {}}, Evidence{Children: 4, Known: 2, Changed: 1}, true},
		{"failed fetches are no evidence", [][]Record{{ok, fail, fail}, {fail, ok, ok}}, Evidence{Children: 2, Known: 1}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ChildEvidence(tt.children, 10)
			if got != tt.want || got.Enough() != tt.enough {
				t.Errorf("ChildEvidence = %+v (enough %v), want %+v (enough %v)", got, got.Enough(), tt.want, tt.enough)
			}
		})
	}
}

func TestQuiet(t *testing.T) {
	ok, ch := Record{}, Record{Changed: true}
	tests := []struct {
		name    string
		history []Record
		want    bool
	}{
		{"never fetched", nil, false},
		{"fetched once: no evidence", []Record{ok}, false},
		{"two fetches, no change", []Record{ok, ok}, true},
		{"changed in half of its fetches", []Record{ok, ch, ok, ch}, false},
		{"one change in ten", []Record{ok, ok, ok, ok, ch, ok, ok, ok, ok, ok}, true},
	}
	for _, tt := range tests {
		if got := Quiet(tt.history, 10, 0.4); got != tt.want {
			t.Errorf("%s: Quiet = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestSelectiveDecide(t *testing.T) {
	known := func(n, changed int) Evidence { return Evidence{Children: n, Known: n, Changed: changed} }
	tests := []struct {
		name       string
		s          Selective
		hubChanged bool
		threshold  float64
		e          Evidence
		want       Verdict
		reason     string
	}{
		{"hub changed, no child changed", Selective{}, true, 0.40, known(10, 0), Follow, "hub changed"},
		{"hub changed, high threshold", Selective{}, true, 0.95, known(100, 1), Follow, "hub changed"},
		{"table 2 page 2: 89% >= 40%", Selective{}, false, 0.40, known(100, 89), Open, "89.0% of children changed >= threshold 40.0%"},
		{"table 2 page 1: 10% < 40%", Selective{}, false, 0.40, known(10, 1), Skip, "10.0% of children changed < threshold 40.0%"},
		{"ratio equal to the threshold opens", Selective{}, false, 0.40, known(10, 4), Open, ">= threshold 40.0%"},
		{"unset threshold means Start", Selective{}, false, 0, known(100, 39), Skip, "< threshold 40.0%"},
		{"unset threshold, custom Start", Selective{Start: 0.3}, false, 0, known(100, 35), Open, ">= threshold 30.0%"},
		{"NaN threshold means Start", Selective{}, false, math.NaN(), known(100, 45), Open, ">= threshold 40.0%"},
		{"threshold above Max is clamped", Selective{}, false, 1, known(100, 96), Open, ">= threshold 95.0%"},
		{"threshold below Min is clamped", Selective{}, false, 0.01, known(100, 2), Skip, "< threshold 5.0%"},
		{"children never fetched twice: no grounds to skip", Selective{}, false, 0.40, Evidence{Children: 4051}, Follow, "only 0 of its 4051"},
		{"most children unknown", Selective{}, false, 0.40, Evidence{Children: 10, Known: 4}, Follow, "only 4 of its 10"},
		{"no children at all", Selective{}, false, 0.40, Evidence{}, Follow, "only 0 of its 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, reason := tt.s.Decide(tt.hubChanged, tt.threshold, tt.e)
			if got != tt.want || !strings.Contains(reason, tt.reason) {
				t.Errorf("Decide = %v, %q; want %v, containing %q", got, reason, tt.want, tt.reason)
			}
		})
	}
}

// TestSelectiveNextThreshold is the table of the threshold rule with the default settings, the
// paper's direction: t' = clamp(t + 0.25 · (ratio − t), 0.05, 0.95); mirrored, towards 1 − ratio.
func TestSelectiveNextThreshold(t *testing.T) {
	tests := []struct {
		name      string
		s         Selective
		threshold float64
		ratio     float64
		want      float64
	}{
		{"start, 89% changed: rises", Selective{}, 0.40, 0.89, 0.5225},
		{"start, 10% changed: falls", Selective{}, 0.40, 0.10, 0.325},
		{"start, 40% changed: steady", Selective{}, 0.40, 0.40, 0.40},
		{"start, none changed: falls by a quarter of the gap to 0", Selective{}, 0.40, 0, 0.30},
		{"start, all changed: rises by a quarter of the gap to 1", Selective{}, 0.40, 1, 0.55},
		{"kept at Min", Selective{}, 0.06, 0, 0.05},
		{"kept at Max", Selective{}, 0.94, 1, 0.95},
		{"unset threshold starts at Start", Selective{}, 0, 0.40, 0.40},
		{"NaN threshold starts at Start", Selective{}, math.NaN(), 0, 0.30},
		{"stored threshold above Max is clamped first", Selective{}, 2, 1, 0.95},
		{"NaN ratio counts as 0", Selective{}, 0.40, math.NaN(), 0.30},
		{"ratio above 1 counts as 1", Selective{}, 0.40, 7, 0.55},
		{"Step 1 jumps to the ratio", Selective{Step: 1}, 0.40, 0.89, 0.89},
		{"custom bounds", Selective{Min: 0.2, Max: 0.6}, 0.55, 1, 0.6},
		{"mirrored: 89% changed falls towards 11%", Selective{Mirror: true}, 0.40, 0.89, 0.3275},
		{"mirrored: 10% changed rises towards 90%", Selective{Mirror: true}, 0.40, 0.10, 0.525},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.s.NextThreshold(tt.threshold, tt.ratio); math.Abs(got-tt.want) > 1e-12 {
				t.Errorf("NextThreshold(%v, %v) = %v, want %v", tt.threshold, tt.ratio, got, tt.want)
			}
		})
	}
}

// TestSelectiveThresholdConverges: for a steady ratio the threshold moves monotonically towards
// clamp(ratio, Min, Max) (mirrored: clamp(1 − ratio, …)), never crosses it, and gets within 1e-6 of it.
func TestSelectiveThresholdConverges(t *testing.T) {
	for _, s := range []Selective{{}, {Step: 0.1}, {Step: 1}, {Min: 0.3, Max: 0.7, Step: 0.6}, {Mirror: true}} {
		_, lo, hi, _ := s.params()
		for _, start := range []float64{0, lo, 0.2, 0.5, 0.8, hi} {
			for _, ratio := range []float64{0, 0.1, 0.4, 0.5, 0.6, 0.89, 1} {
				target := min(max(ratio, lo), hi)
				if s.Mirror {
					target = min(max(1-ratio, lo), hi)
				}
				t.Run(fmt.Sprintf("%+v/from_%v/ratio_%v", s, start, ratio), func(t *testing.T) {
					th := s.Threshold(start)
					side := math.Signbit(target - th)
					for i := range 200 {
						next := s.NextThreshold(th, ratio)
						if math.Abs(next-target) > math.Abs(th-target)+1e-15 {
							t.Fatalf("%+v from %v, ratio %v: step %d moved away from %v: %v -> %v", s, start, ratio, i, target, th, next)
						}
						if math.Abs(next-target) > 1e-12 && math.Signbit(target-next) != side {
							t.Fatalf("%+v from %v, ratio %v: step %d overshot %v: %v -> %v", s, start, ratio, i, target, th, next)
						}
						th = next
					}
					if math.Abs(th-target) > 1e-6 {
						t.Errorf("%+v from %v, ratio %v: threshold %v after 200 visits, want %v", s, start, ratio, th, target)
					}
				})
			}
		}
	}
}

// TestSelectiveOpensOnUnusualChange: the paper's threshold learns a hub's normal share of changed
// children, so an unchanged hub's subtree is opened when more of its children changed than usually
// do, and skipped in an ordinary quiet run.
func TestSelectiveOpensOnUnusualChange(t *testing.T) {
	var s Selective
	th := 0.0
	for range 20 { // a hub whose children usually change 20 % at a time
		th = s.NextThreshold(th, 0.2)
	}
	for _, tt := range []struct {
		changed int
		want    Verdict
	}{{10, Skip}, {25, Open}, {60, Open}} {
		if got, _ := s.Decide(false, th, Evidence{Children: 100, Known: 100, Changed: tt.changed}); got != tt.want {
			t.Errorf("threshold %.3f, %d%% of children changed: %v, want %v", th, tt.changed, got, tt.want)
		}
	}
}

func TestSelectiveValidate(t *testing.T) {
	tests := []struct {
		name    string
		s       Selective
		wantErr bool
	}{
		{"zero value", Selective{}, false},
		{"defaults spelled out", DefaultSelective(), false},
		{"Step 1", Selective{Step: 1}, false},
		{"negative", Selective{Step: -0.1}, true},
		{"above 1", Selective{Max: 1.5}, true},
		{"NaN", Selective{Start: math.NaN()}, true},
		{"Min above Max", Selective{Min: 0.6, Max: 0.5}, true},
		{"Start outside [Min, Max]", Selective{Start: 0.3, Min: 0.35}, true},
		{"Min above the default Start", Selective{Min: 0.5}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.s.Validate(); (err != nil) != tt.wantErr {
				t.Errorf("Validate() = %v, want error %v", err, tt.wantErr)
			}
		})
	}
}

func TestSelectiveDefaults(t *testing.T) {
	if a, b := (Selective{}), DefaultSelective(); a.Threshold(0) != b.Threshold(0) || a.NextThreshold(0.3, 0.2) != b.NextThreshold(0.3, 0.2) {
		t.Error("the zero Selective does not behave as DefaultSelective()")
	}
	// Invalid settings fall back to the defaults rather than produce thresholds outside (0, 1].
	bad := Selective{Start: math.NaN(), Min: 0.9, Max: 0.1, Step: 5}
	if got := bad.Threshold(0); got != DefaultThresholdStart {
		t.Errorf("Threshold with invalid settings = %v, want %v", got, DefaultThresholdStart)
	}
	if got := bad.NextThreshold(0.40, 0.89); math.Abs(got-0.5225) > 1e-12 {
		t.Errorf("NextThreshold with invalid settings = %v, want 0.5225", got)
	}
}

func TestHubAdjust(t *testing.T) {
	tests := []struct {
		name       string
		frMax      int
		childRatio float64
		want       int
	}{
		{"paper: 6 -> 3 with 89% of internal pages changed", 6, 0.89, 3},
		{"no child changed: unchanged", 6, 0, 6},
		{"all children changed: halved", 6, 1, 3},
		{"all children changed, odd: floor", 7, 1, 3},
		{"exact integer despite binary rounding", 10, 0.8, 6},
		{"exact integer despite binary rounding (2)", 10, 0.6, 7},
		{"50%", 30, 0.5, 22},
		{"10%", 9, 0.1, 8},
		{"never below 1", 1, 1, 1},
		{"never below 1 (2)", 1, 0.89, 1},
		{"fr_max 0 counts as 1", 0, 0.5, 1},
		{"negative fr_max counts as 1", -3, 0, 1},
		{"NaN ratio counts as 0", 6, math.NaN(), 6},
		{"negative ratio counts as 0", 6, -1, 6},
		{"ratio above 1 counts as 1", 6, 4, 3},
		{"huge fr_max", math.MaxInt, 0, math.MaxInt},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := HubAdjust(tt.frMax, tt.childRatio); got != tt.want {
				t.Errorf("HubAdjust(%d, %v) = %d, want %d", tt.frMax, tt.childRatio, got, tt.want)
			}
		})
	}
}

// TestHubAdjustExhaustive checks the float formula against exact integer arithmetic for every ratio
// k/n a hub with up to 100 children can have: floor(f · (2n − k) / (2n)).
func TestHubAdjustExhaustive(t *testing.T) {
	for f := 1; f <= 60; f++ {
		for n := 1; n <= 100; n++ {
			for k := 0; k <= n; k++ {
				want := max(f*(2*n-k)/(2*n), 1)
				if got := HubAdjust(f, float64(k)/float64(n)); got != want {
					t.Fatalf("HubAdjust(%d, %d/%d) = %d, want %d", f, k, n, got, want)
				}
			}
		}
	}
}

// children returns n child histories of 10 records each, the first k of them with one change.
func children(n, k int) [][]Record {
	c := make([][]Record, n)
	for i := range c {
		changed := i < k
		c[i] = hist(10, func(j int) bool { return changed && j == 4 })
	}
	return c
}

// TestPaperPage2Settles follows table 2, page 2 through repeated recalculations: the hub changes once
// in 10 crawls (NextFrMax: 2 -> 6) while 89% of its internal pages change (HubAdjust: 6 -> 3), and
// the pair settles at 3.
func TestPaperPage2Settles(t *testing.T) {
	hub := hist(10, func(i int) bool { return i == 5 })
	ratio := ChildChangeRatio(children(100, 89), 10)
	if r := ChangeRatio(hub, 10); !(ratio > r) {
		t.Fatalf("children ratio %v not above the hub's own %v", ratio, r)
	}
	var b Bouras
	fr := 2
	want := [][2]int{{6, 3}, {6, 3}, {6, 3}}
	for i, w := range want {
		own := b.NextFrMax(Page{FrMax: fr, History: hub})
		fr = HubAdjust(own, ratio)
		if own != w[0] || fr != w[1] {
			t.Fatalf("recalculation %d: NextFrMax %d, HubAdjust %d; want %d, %d", i+1, own, fr, w[0], w[1])
		}
	}
}
