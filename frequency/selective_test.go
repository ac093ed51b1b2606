package frequency

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

// children returns n child histories of 10 records each, the first k of them with one change.
func children(n, k int) [][]Record {
	c := make([][]Record, n)
	for i := range c {
		changed := i < k
		c[i] = hist(10, func(j int) bool { return changed && j == 4 })
	}
	return c
}

func TestChildChangeRatio(t *testing.T) {
	ok, ch, fail := Record{}, Record{Changed: true}, Record{Failed: true}
	tests := []struct {
		name     string
		children [][]Record
		limit    int
		want     float64
	}{
		{"no children", nil, 10, 0},
		{"no child with a record", [][]Record{nil, {}}, 10, 0},
		{"table 2 page 1: 10% of internal pages changed", children(10, 1), 10, 0.10},
		{"table 2 page 2: 89% of internal pages changed", children(100, 89), 10, 0.89},
		{"children without records are ignored", [][]Record{{ok, ch}, nil, {ok, ok}, {}}, 10, 0.5},
		{"children with only failed records are ignored", [][]Record{{ok, ch}, {fail, fail}}, 10, 1},
		{"one change is enough", [][]Record{{ok, ok, ok, ok, ch}, {ok, ok}}, 10, 0.5},
		{"a change before the child's window does not count", [][]Record{{ok, ch, ok, ok}, {ok, ch}}, 2, 0.5},
		{"the first record of the child's window counts", [][]Record{{ok, ok, ch, ok}, {ok, ok}}, 2, 0.5},
		{"failed records are skipped, the window reaches back", [][]Record{{ok, ch, ok, fail, fail}}, 2, 1},
		{"Changed on a failed record is ignored", [][]Record{{ok, {Failed: true, Changed: true}}}, 10, 0},
		{"limit <= 0 means 10", [][]Record{append([]Record{ok, ch}, make([]Record, 10)...)}, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ChildChangeRatio(tt.children, tt.limit); math.Abs(got-tt.want) > 1e-12 {
				t.Errorf("ChildChangeRatio = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestSelectiveDecide(t *testing.T) {
	tests := []struct {
		name       string
		s          Selective
		hubChanged bool
		threshold  float64
		ratio      float64
		want       bool
		reason     string
	}{
		{"hub changed, no child changed", Selective{}, true, 0.40, 0, true, "hub changed"},
		{"hub changed, high threshold", Selective{}, true, 0.95, 0.01, true, "hub changed"},
		{"table 2 page 2: 89% >= 40%", Selective{}, false, 0.40, 0.89, true, "89.0% of children changed >= threshold 40.0%"},
		{"table 2 page 1: 10% < 40%", Selective{}, false, 0.40, 0.10, false, "10.0% of children changed < threshold 40.0%"},
		{"ratio equal to the threshold visits", Selective{}, false, 0.40, 0.40, true, ">= threshold 40.0%"},
		{"unset threshold means Start", Selective{}, false, 0, 0.39, false, "< threshold 40.0%"},
		{"unset threshold, custom Start", Selective{Start: 0.3}, false, 0, 0.35, true, ">= threshold 30.0%"},
		{"NaN threshold means Start", Selective{}, false, math.NaN(), 0.45, true, ">= threshold 40.0%"},
		{"threshold above Max is clamped", Selective{}, false, 1, 0.96, true, ">= threshold 95.0%"},
		{"threshold below Min is clamped", Selective{}, false, 0.01, 0.02, false, "< threshold 5.0%"},
		{"no known child: ratio 0", Selective{}, false, 0.05, 0, false, "0.0% of children changed"},
		{"NaN ratio counts as 0", Selective{}, false, 0.05, math.NaN(), false, "0.0% of children changed"},
		{"ratio above 1 counts as 1", Selective{}, false, 0.95, 3, true, "100.0% of children changed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, reason := tt.s.Decide(tt.hubChanged, tt.threshold, tt.ratio)
			if got != tt.want || !strings.Contains(reason, tt.reason) {
				t.Errorf("Decide = %v, %q; want %v, containing %q", got, reason, tt.want, tt.reason)
			}
		})
	}
}

// TestSelectiveNextThreshold is the table of the threshold rule with the default settings:
// t' = clamp(t + 0.25 · ((1 − ratio) − t), 0.05, 0.95).
func TestSelectiveNextThreshold(t *testing.T) {
	tests := []struct {
		name      string
		s         Selective
		threshold float64
		ratio     float64
		want      float64
	}{
		{"start, 89% changed: falls", Selective{}, 0.40, 0.89, 0.3275},
		{"start, 10% changed: rises", Selective{}, 0.40, 0.10, 0.525},
		{"start, 60% changed: steady at 1 − ratio", Selective{}, 0.40, 0.60, 0.40},
		{"start, none changed: rises by a quarter of the gap to 1", Selective{}, 0.40, 0, 0.55},
		{"start, all changed: falls by a quarter of the gap to 0", Selective{}, 0.40, 1, 0.30},
		{"high, all changed", Selective{}, 0.90, 1, 0.675},
		{"low, none changed", Selective{}, 0.10, 0, 0.325},
		{"kept at Min", Selective{}, 0.06, 1, 0.05},
		{"kept at Max", Selective{}, 0.94, 0, 0.95},
		{"unset threshold starts at Start", Selective{}, 0, 0.60, 0.40},
		{"NaN threshold starts at Start", Selective{}, math.NaN(), 0, 0.55},
		{"stored threshold above Max is clamped first", Selective{}, 2, 0, 0.95},
		{"NaN ratio counts as 0", Selective{}, 0.40, math.NaN(), 0.55},
		{"ratio above 1 counts as 1", Selective{}, 0.40, 7, 0.30},
		{"Step 1 jumps to 1 − ratio", Selective{Step: 1}, 0.40, 0.89, 0.11},
		{"Step 0.5", Selective{Step: 0.5}, 0.40, 0.10, 0.65},
		{"custom bounds", Selective{Min: 0.2, Max: 0.6}, 0.55, 0, 0.6},
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
// clamp(1 − ratio, Min, Max), never crosses it, and gets within 1e-6 of it.
func TestSelectiveThresholdConverges(t *testing.T) {
	for _, s := range []Selective{{}, {Step: 0.1}, {Step: 1}, {Min: 0.3, Max: 0.7, Step: 0.6}} {
		_, lo, hi, _ := s.params()
		for _, start := range []float64{0, lo, 0.2, 0.5, 0.8, hi} {
			for _, ratio := range []float64{0, 0.1, 0.4, 0.5, 0.6, 0.89, 1} {
				target := min(max(1-ratio, lo), hi)
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

// TestSelectiveSteadyDecision: with a steady ratio the decision settles, and in the long run an
// unchanged hub's subtree is visited when at least about half of its children change.
func TestSelectiveSteadyDecision(t *testing.T) {
	tests := []struct {
		ratio     float64
		wantFirst bool
		wantLast  bool
	}{
		{0.10, false, false},
		{0.45, true, false}, // 45% >= 40% at first; the threshold rises towards 55%
		{0.55, true, true},
		{0.89, true, true},
	}
	var s Selective
	for _, tt := range tests {
		t.Run(fmt.Sprintf("ratio_%v", tt.ratio), func(t *testing.T) {
			th := 0.0
			var first, last bool
			for i := range 50 {
				last, _ = s.Decide(false, th, tt.ratio)
				if i == 0 {
					first = last
				}
				th = s.NextThreshold(th, tt.ratio)
			}
			if first != tt.wantFirst || last != tt.wantLast {
				t.Errorf("ratio %v: first visit %v, last %v; want %v, %v", tt.ratio, first, last, tt.wantFirst, tt.wantLast)
			}
		})
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
	if got := bad.NextThreshold(0.40, 0.89); math.Abs(got-0.3275) > 1e-12 {
		t.Errorf("NextThreshold with invalid settings = %v, want 0.3275", got)
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
