package hints_test

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/strata-crawler/strata/internal/hints"
)

var t0 = time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)

func hours(h float64) time.Time { return t0.Add(time.Duration(h * float64(time.Hour))) }

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

// TestUnknown checks equation 5, S = ½ (t_now − t_LC)(N + c), on hand-computed values.
func TestUnknown(t *testing.T) {
	tests := []struct {
		name      string
		now, last float64 // hours
		weight, c float64
		want      float64
	}{
		{"ten hours, weight 10, c 0", 10, 0, 10, 0, 50},
		{"ten hours, weight 10, c 1", 10, 0, 10, 1, 55},
		{"a day, weight 0, c 1", 24, 0, 0, 1, 12},
		{"a week, weight 3, c 0.5", 168, 0, 3, 0.5, 294},
		{"crawled just now", 5, 5, 10, 1, 0},
		{"last crawl in the future", 5, 6, 10, 1, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := hints.Unknown(hours(tt.now), hours(tt.last), tt.weight, tt.c); !near(got, tt.want) {
				t.Errorf("Unknown = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestKnown checks equation 4 on staircases computed by hand: last crawl at 0, now at 10 h,
// weight 10, so N_t = 10 (t − t_0) / 10 = t − t_0 stale accesses.
func TestKnown(t *testing.T) {
	tests := []struct {
		name    string
		updates []float64 // hours
		want    float64
	}{
		// (4−0)·N(4) + (10−4)·N(10) = 0 + 6·6.
		{"one update at 4 h", []float64{4}, 36},
		// 0 + (7−4)·N(7) + (10−7)·N(10) = 3·3 + 3·6.
		{"updates at 4 h and 7 h", []float64{4, 7}, 27},
		{"unsorted", []float64{7, 4}, 27},
		// 0 + 1·N(2) + 1·N(3) + … + 1·N(10) = 1 + 2 + … + 9, with N_t = t − 1.
		{"hourly updates from 1 h", []float64{1, 2, 3, 4, 5, 6, 7, 8, 9}, 45},
		{"update right after the crawl", []float64{1e-9}, 100},
		{"update at now", []float64{10}, 0},
		{"no missed update", nil, 0},
		{"updates before the last crawl only", []float64{-5, -1, 0}, 0},
		{"updates after now only", []float64{11}, 0},
		{"one before, one inside", []float64{-3, 5}, 25},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ups := make([]time.Time, len(tt.updates))
			for i, h := range tt.updates {
				ups[i] = hours(h)
			}
			if got := hints.Known(hours(10), hours(0), ups, 10); !near(got, tt.want) {
				t.Errorf("Known = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestKnownProperties checks what the documentation promises on random staircases: Known is never
// above weight·(t_now − t_LC), twice Unknown's triangle; it reaches that bound for one update just
// after the crawl; it grows with the weight; and it does not depend on the order of the updates.
func TestKnownProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for i := range 2000 {
		window := 1 + rng.Float64()*500
		weight := rng.Float64() * 100
		ups := make([]time.Time, rng.IntN(6))
		for j := range ups {
			ups[j] = hours(rng.Float64() * window)
		}
		now := hours(window)
		s := hints.Known(now, t0, ups, weight)
		bound := 2 * hints.Unknown(now, t0, weight, 0)
		if s < 0 || s > bound*(1+1e-9) {
			t.Fatalf("case %d: Known = %v outside [0, %v]", i, s, bound)
		}
		if s2 := hints.Known(now, t0, ups, 2*weight); !near(s2, 2*s) {
			t.Fatalf("case %d: doubling the weight gives %v, want %v", i, s2, 2*s)
		}
		rev := make([]time.Time, len(ups))
		for j := range ups {
			rev[j] = ups[len(ups)-1-j]
		}
		if s3 := hints.Known(now, t0, rev, weight); !near(s3, s) {
			t.Fatalf("case %d: reversed updates give %v, want %v", i, s3, s)
		}
	}
	if got, want := hints.Known(hours(10), t0, []time.Time{t0.Add(time.Nanosecond)}, 10),
		2*hints.Unknown(hours(10), t0, 10, 0); !near(got, want) {
		t.Errorf("one update just after the crawl: Known = %v, want twice the triangle %v", got, want)
	}
}

// TestPriorityOrder orders a run's due pages the way the documentation says a short run should.
func TestPriorityOrder(t *testing.T) {
	now := hours(48)
	changed := hints.Known(now, hours(0), []time.Time{hours(2)}, 5) // a trusted lastmod: changed
	unknown := hints.Unknown(now, hours(0), 5, hints.DefaultC)      // no hint
	fresh := hints.Known(now, hours(0), []time.Time{hours(-24)}, 5) // a trusted lastmod: unchanged
	older := hints.Unknown(now, hours(-48), 5, hints.DefaultC)      // no hint, crawled longer ago
	heavier := hints.Unknown(now, hours(0), 50, hints.DefaultC)     // no hint, more important
	if !(changed > unknown && unknown > fresh && fresh == 0) {
		t.Errorf("changed %v, unknown %v, fresh %v: want changed > unknown > fresh = 0", changed, unknown, fresh)
	}
	if !(older > unknown && heavier > unknown) {
		t.Errorf("older %v, heavier %v, unknown %v: want age and weight to raise the score", older, heavier, unknown)
	}
}
