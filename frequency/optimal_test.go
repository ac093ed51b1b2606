package frequency

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestStaleness(t *testing.T) {
	// Closed form at x = 0: 1 + (e^−λT − 1)/(λT).
	for _, lt := range []float64{0.01, 0.5, 1, 3, 10} {
		want := 1 + (math.Exp(-lt)-1)/lt
		if got := Staleness(lt, 1, 0); relErr(got, want) > 1e-9 { // want loses digits to cancellation
			t.Errorf("A(0) for λT=%v: %v, want %v", lt, got, want)
		}
		// λ and T enter only as their product.
		if a, b := Staleness(lt/4, 4, 2), Staleness(lt, 1, 2); relErr(a, b) > 1e-12 {
			t.Errorf("λT=%v: A depends on λ and T apart: %v vs %v", lt, a, b)
		}
	}
	if got, want := Staleness(1, 1, 0), 1/math.E; relErr(got, want) > 1e-12 {
		t.Errorf("A(0) for λT=1 = %v, want 1/e = %v", got, want)
	}
	for _, tt := range []struct {
		name      string
		lambda, T float64
		x         int
		want      float64
	}{
		{"λ = 0", 0, 7, 0, 0},
		{"T = 0", 2, 0, 3, 0},
		{"negative λ", -1, 7, 0, 0},
		{"NaN", math.NaN(), 7, 0, 0},
		{"+Inf", math.Inf(1), 7, 5, 1},
	} {
		if got := Staleness(tt.lambda, tt.T, tt.x); got != tt.want {
			t.Errorf("%s: Staleness(%v, %v, %d) = %v, want %v", tt.name, tt.lambda, tt.T, tt.x, got, tt.want)
		}
	}
	if a, b := Staleness(1, 1, -3), Staleness(1, 1, 0); a != b {
		t.Errorf("negative x: %v, want A(0) = %v", a, b)
	}
	// The small-u series joins the closed form smoothly.
	for _, u := range []float64{0.9e-3, 0.999e-3, 1e-3, 1.1e-3} {
		want := 1 - (1-math.Exp(-u))/u
		if got := Staleness(u, 1, 0); relErr(got, want) > 1e-9 {
			t.Errorf("u=%v: %v, want %v", u, got, want)
		}
	}
	if got := Staleness(1e-12, 1, 0); relErr(got, 0.5e-12) > 1e-9 {
		t.Errorf("tiny λT: %v, want λT/2", got)
	}
	// Decreasing and convex in x, within [0, 1), for a range of λT.
	for _, lt := range []float64{1e-6, 1e-3, 0.1, 1, 3, 10, 100, 1e4} {
		prev, prevDrop := Staleness(lt, 1, 0), math.Inf(1)
		for x := 1; x <= 200; x++ {
			a := Staleness(lt, 1, x)
			drop := prev - a
			if !(a >= 0 && a < 1) || drop <= 0 {
				t.Fatalf("λT=%v: A(%d) = %v after A(%d) = %v: not decreasing within [0, 1)", lt, x, a, x-1, prev)
			}
			if drop > prevDrop*(1+1e-9) {
				t.Fatalf("λT=%v: drop %v at x=%d above the previous %v: not convex", lt, drop, x, prevDrop)
			}
			prev, prevDrop = a, drop
		}
	}
	if got := Staleness(1e6, 1, 0); got < 0.999 {
		t.Errorf("λT = 1e6: A(0) = %v, want about 1", got)
	}
}

// benchBuckets returns 256 buckets with the default rates, whose page counts sum to 10 million.
func benchBuckets() []BucketLoad {
	var k Buckets
	b := make([]BucketLoad, k.Len())
	r := rand.New(rand.NewPCG(11, 12))
	left := 10_000_000
	for i := range b {
		pages := left / (len(b) - i)
		if i < len(b)-1 {
			pages = pages/2 + r.IntN(pages)
		}
		left -= pages
		b[i] = BucketLoad{Pages: pages, Rate: k.Rate(uint8(i)), Weight: 1}
	}
	return b
}

func TestBenchBuckets(t *testing.T) {
	sum := 0
	for _, b := range benchBuckets() {
		sum += b.Pages
	}
	if sum != 10_000_000 {
		t.Fatalf("benchmark pages sum to %d", sum)
	}
}

// BenchmarkAllocateIntervals: 256 buckets, 10 M pages, 2 M crawls per run, intervals of 1 to 30 runs
// (the optimiser's target: under a second).
func BenchmarkAllocateIntervals(bm *testing.B) {
	b := benchBuckets()
	for bm.Loop() {
		AllocateIntervals(b, 2_000_000, 1, 30)
	}
}

// TestAllocateIntervalsBruteForce compares the interval greedy with every combination on small
// instances: never over the budget, never below the optimum (which would mean the brute force or the
// objective is wrong), and on every instance within the bound it reports — the decrease of the
// first step that did not fit — of the optimum.
func TestAllocateIntervalsBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	exact := 0
	const n = 400
	for i := range n {
		nb := 1 + r.IntN(3)
		b := make([]BucketLoad, nb)
		for k := range b {
			b[k] = BucketLoad{Pages: 1 + r.IntN(20), Rate: math.Exp(r.Float64()*6 - 5), Weight: 1}
		}
		fLo, fHi := 1, 2+r.IntN(8)
		minLoad := 0.0
		for _, x := range b {
			minLoad += float64(x.Pages) / float64(fHi)
		}
		budget := minLoad + r.Float64()*20
		f, gap := allocateIntervals(b, budget, fLo, fHi)
		load, got := 0.0, 0.0
		for k, x := range b {
			if f[k] < fLo || f[k] > fHi {
				t.Fatalf("instance %d: interval %d outside [%d, %d]", i, f[k], fLo, fHi)
			}
			load += float64(x.Pages) / float64(f[k])
			got += float64(x.Pages) * Staleness(x.Rate, float64(f[k]), 0)
		}
		if load > budget+1e-9 {
			t.Fatalf("instance %d: load %v over the budget %v", i, load, budget)
		}
		best := math.Inf(1)
		cur := make([]int, nb)
		var rec func(k int)
		rec = func(k int) {
			if k == nb {
				l, s := 0.0, 0.0
				for j, x := range b {
					l += float64(x.Pages) / float64(cur[j])
					s += float64(x.Pages) * Staleness(x.Rate, float64(cur[j]), 0)
				}
				if l <= budget+1e-9 {
					best = min(best, s)
				}
				return
			}
			for f := fLo; f <= fHi; f++ {
				cur[k] = f
				rec(k + 1)
			}
		}
		rec(0)
		if got < best-1e-9 {
			t.Fatalf("instance %d: greedy %v below the optimum %v", i, got, best)
		}
		if got > best+gap+1e-9 {
			t.Fatalf("instance %d: greedy %v above the optimum %v by more than its bound %v", i, got, best, gap)
		}
		if got <= best+1e-9 {
			exact++
		}
	}
	if exact < n*8/10 {
		t.Errorf("greedy optimal on %d of %d instances, want at least 80%%", exact, n)
	}
	t.Logf("interval greedy optimal on %d of %d small instances", exact, n)
}

// TestMakePlanLoadWithinBudget: the plan's load Σ pages/fr_max never exceeds the budget, and uses
// most of it, where the rounding of crawls per period to intervals could overshoot.
func TestMakePlanLoadWithinBudget(t *testing.T) {
	k := Buckets{}
	for _, budget := range []int{3000, 5000, 10000, 20000} {
		var groups []Group
		for b := 0; b < 256; b += 5 {
			groups = append(groups, Group{Bucket: b, Pages: 200 + 7*b, Rate: k.Rate(uint8(b))})
		}
		p := MakePlan(groups, PlanConfig{Budget: budget, Period: 30, MinCrawls: 1, Buckets: k})
		if p.ExpectedPerRun > float64(budget)+1e-9 || p.ExpectedPerRun < 0.95*float64(budget) {
			t.Errorf("budget %d: plan load %.1f per run, want within (95%%, 100%%] of the budget", budget, p.ExpectedPerRun)
		}
	}
}

// TestMakePlanFloorBends is issue 17's leak: 5,550 pages, a floor of one crawl per 30 runs (185 a
// run) against a budget of 48, which made the plan give every page the floor and nothing else. The
// floor is lowered until it takes at most half of the budget, the plan stays within the budget and
// uses it, and it does at least as well as revisiting every page uniformly at the same budget. (Here
// the optimum keeps the 5,000 near-static pages fresh and gives up on the pages that change faster
// than 48 crawls a run can follow, as Cho and Wolf found it should.) With no floor at all
// (min_crawls 0) the plan may leave a page a year.
func TestMakePlanFloorBends(t *testing.T) {
	k := Buckets{}
	groups := []Group{
		{Bucket: int(k.Of(0.002)), Pages: 5000, Rate: 0.002}, // near-static
		{Bucket: int(k.Of(0.1)), Pages: 400, Rate: 0.1},      // changes every ten runs
		{Bucket: int(k.Of(0.5)), Pages: 150, Rate: 0.5},      // every other run
	}
	for _, minCrawls := range []int{1, 0} {
		p := MakePlan(groups, PlanConfig{Budget: 48, Period: 30, MinCrawls: minCrawls, Buckets: k})
		if p.ExpectedPerRun > 48+1e-9 || p.ExpectedPerRun < 0.9*48 {
			t.Errorf("min_crawls %d: the plan crawls %.1f pages a run, want (90%%, 100%%] of 48", minCrawls, p.ExpectedPerRun)
		}
		static, mid, fast := p.Buckets[0], p.Buckets[1], p.Buckets[2]
		uniform := 0.0 // every page every 5550/48 runs
		for _, g := range groups {
			uniform += float64(g.Pages) * (1 - Staleness(g.Rate, 5550.0/48, 0)) / 5550
		}
		if p.ExpectedFreshness < uniform {
			t.Errorf("min_crawls %d: expected freshness %.4f, below uniform revisiting's %.4f", minCrawls, p.ExpectedFreshness, uniform)
		}
		floorLoad := float64(5550) / float64(p.FrMaxHi)
		if minCrawls == 1 && (floorLoad > 0.5*48+1e-9 || p.FrMaxHi <= 30) {
			t.Errorf("min_crawls 1: the longest interval is %d runs (floor load %.1f a run); want it past 30, the floor at most half of 48",
				p.FrMaxHi, floorLoad)
		}
		if minCrawls == 0 && p.FrMaxHi != MaxInterval {
			t.Errorf("min_crawls 0: the longest interval is %d runs, want %d", p.FrMaxHi, MaxInterval)
		}
		t.Logf("min_crawls %d: intervals %d / %d / %d runs, %.1f crawls a run, expected freshness %.3f", minCrawls,
			static.FrMax, mid.FrMax, fast.FrMax, p.ExpectedPerRun, p.ExpectedFreshness)
	}
}

// TestPhase: a page comes due on its phase, (r + key) mod f = 0, half an interval away at least and
// within one interval and a half, and over many pages the first gap averages the interval.
func TestPhase(t *testing.T) {
	for _, f := range []int{1, 2, 3, 7, 30} {
		sum, n := 0, 0
		for run := int64(0); run < 40; run++ {
			for key := int64(0); key < 200; key++ {
				k := Phase(run, key, f)
				if (run+int64(k)+key)%int64(f) != 0 {
					t.Fatalf("f %d, run %d, key %d: due %d runs later, off its phase", f, run, key, k)
				}
				if lo, hi := (f+1)/2, f+(f+1)/2-1; k < max(lo, 1) || k > max(hi, 1) {
					t.Fatalf("f %d, run %d, key %d: due %d runs later, want %d to %d", f, run, key, k, lo, hi)
				}
				sum, n = sum+k, n+1
			}
		}
		if mean := float64(sum) / float64(n); math.Abs(mean-float64(f)) > 1 {
			t.Errorf("f %d: the first gap averages %.2f runs, want about %d", f, mean, f)
		}
	}
	if Phase(5, 3, 0) != 1 || Phase(5, 3, -4) != 1 {
		t.Error("an interval below 1 must count as 1")
	}
}
