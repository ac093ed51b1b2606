package frequency

import (
	"math"
	"math/rand/v2"
	"slices"
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

// bruteForce returns the smallest objective over all x in [minX, maxX]^B within the budget, or +Inf.
func bruteForce(buckets []BucketLoad, budget float64, minX, maxX int, T float64) (best float64, bestX []int) {
	best = math.Inf(1)
	x := make([]int, len(buckets))
	var rec func(i int, used float64)
	rec = func(i int, used float64) {
		if used > budget {
			return
		}
		if i == len(buckets) {
			if v := Objective(buckets, x, T); v < best {
				best, bestX = v, slices.Clone(x)
			}
			return
		}
		for v := minX; v <= maxX; v++ {
			x[i] = v
			rec(i+1, used+float64(buckets[i].Pages*v))
		}
	}
	rec(0, 0)
	return best, bestX
}

func randomInstance(r *rand.Rand, unit bool) (b []BucketLoad, budget float64, minX, maxX int, T float64) {
	b = make([]BucketLoad, 2+r.IntN(3))
	minX = r.IntN(2)
	maxX = minX + 1 + r.IntN(5)
	T = float64(1 + r.IntN(10))
	minCost, maxCost := 0, 0
	for i := range b {
		pages := 1
		if !unit {
			pages = 1 + r.IntN(9)
		}
		b[i] = BucketLoad{Pages: pages, Rate: math.Exp(-5 + 7*r.Float64()), Weight: 0.1 + 2*r.Float64()}
		minCost += pages * minX
		maxCost += pages * maxX
	}
	budget = float64(minCost + r.IntN(maxCost-minCost+2))
	if r.IntN(4) == 0 {
		budget += r.Float64() // fractional budgets round down in effect
	}
	return b, budget, minX, maxX, T
}

func checkAllocation(t *testing.T, b []BucketLoad, budget float64, minX, maxX int, x []int) {
	t.Helper()
	cost := 0.0
	for i, v := range x {
		if v < minX || v > maxX {
			t.Fatalf("x[%d] = %d outside [%d, %d]", i, v, minX, maxX)
		}
		cost += float64(b[i].Pages * v)
	}
	if cost > budget {
		t.Fatalf("allocation %v costs %v crawls, budget %v", x, cost, budget)
	}
}

func TestAllocateBruteForceUnitCost(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for i := range 1000 {
		b, budget, minX, maxX, T := randomInstance(r, true)
		x := Allocate(b, budget, minX, maxX, T)
		checkAllocation(t, b, budget, minX, maxX, x)
		got := Objective(b, x, T)
		want, wantX := bruteForce(b, budget, minX, maxX, T)
		if math.Abs(got-want) > 1e-12*max(1, want) {
			t.Fatalf("instance %d %+v budget %v x in [%d, %d] T %v: greedy %v = %v, optimum %v = %v",
				i, b, budget, minX, maxX, T, x, got, wantX, want)
		}
	}
}

func TestAllocateBruteForceUnequalCost(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	const n = 1000
	exact, worst := 0, 0.0
	for i := range n {
		b, budget, minX, maxX, T := randomInstance(r, false)
		x, gap := allocate(b, budget, minX, maxX, T)
		checkAllocation(t, b, budget, minX, maxX, x)
		got := Objective(b, x, T)
		want, wantX := bruteForce(b, budget, minX, maxX, T)
		tol := 1e-12 * max(1, want)
		if got < want-tol || got > want+gap+tol {
			t.Fatalf("instance %d %+v budget %v: greedy %v = %v, optimum %v = %v, bound %v",
				i, b, budget, x, got, wantX, want, gap)
		}
		if gap == 0 && got > want+tol {
			t.Fatalf("instance %d: no increment rejected but greedy %v above optimum %v", i, got, want)
		}
		if got <= want+tol {
			exact++
		} else {
			worst = max(worst, (got-want)/want)
		}
	}
	t.Logf("unequal costs: greedy optimal on %d of %d instances; worst relative excess %.2f%%", exact, n, 100*worst)
}

func TestAllocateEdgeCases(t *testing.T) {
	b := []BucketLoad{
		{Pages: 10, Rate: 1, Weight: 1},
		{Pages: 0, Rate: 5, Weight: 1},    // empty
		{Pages: 10, Rate: 0, Weight: 1},   // never changes
		{Pages: 10, Rate: 2, Weight: 0},   // unimportant
		{Pages: -5, Rate: 2, Weight: 1},   // nonsense page count
		{Pages: 10, Rate: 0.1, Weight: 1}, // slow
	}
	x := Allocate(b, 1e9, 1, 7, 7)
	if want := []int{7, 1, 1, 1, 1, 7}; !slices.Equal(x, want) {
		t.Errorf("ample budget: %v, want %v", x, want)
	}
	if x := Allocate(b, 0, 2, 7, 7); !slices.Equal(x, []int{2, 2, 2, 2, 2, 2}) {
		t.Errorf("no budget: %v, want minX everywhere", x)
	}
	if x := Allocate(b, 1e9, 3, 1, 7); !slices.Equal(x, []int{3, 3, 3, 3, 3, 3}) {
		t.Errorf("maxX below minX: %v", x)
	}
	if x := Allocate(b, 1e9, -4, 0, 7); !slices.Equal(x, []int{0, 0, 0, 0, 0, 0}) {
		t.Errorf("negative minX: %v", x)
	}
	if x := Allocate(nil, 10, 0, 3, 7); len(x) != 0 {
		t.Errorf("no buckets: %v", x)
	}
	// The faster bucket gets more crawls; equal buckets get equal crawls.
	x = Allocate([]BucketLoad{{100, 0.1, 1}, {100, 1, 1}, {100, 1, 1}}, 1000, 0, 30, 10)
	if !(x[1] > x[0] && x[1] == x[2]) {
		t.Errorf("allocation %v: fast buckets should get more, and equal ones the same", x)
	}
	// A very fast bucket is not worth much: its pages are stale most of the time whatever we do, each
	// crawl buying only about 1/(λT) of freshness, so a moderately fast one gets the crawls.
	x = Allocate([]BucketLoad{{100, 0.5, 1}, {100, 5000, 1}}, 600, 0, 30, 1)
	if !(x[0] == 6 && x[1] == 0) {
		t.Errorf("allocation %v: the moderately fast bucket should win over the hopeless one", x)
	}
	// Weight doubles the value of a bucket's crawls.
	x = Allocate([]BucketLoad{{100, 1, 1}, {100, 1, 2}}, 1000, 0, 30, 7)
	if !(x[1] > x[0]) {
		t.Errorf("allocation %v: the heavier bucket should get more", x)
	}
}

func TestSpread(t *testing.T) {
	const pages, x, T = 10000, 3, 7
	phases := Spread(pages, T, 0)
	if len(phases) != pages {
		t.Fatalf("%d phases", len(phases))
	}
	load := make([]int, T)
	for _, p := range phases {
		runs := CrawlRuns(p, x, T)
		if len(runs) != x {
			t.Fatalf("CrawlRuns(%d, %d, %d) = %v", p, x, T, runs)
		}
		for _, r := range runs {
			load[r]++
		}
	}
	mean := float64(pages*x) / T
	for r, l := range load {
		if math.Abs(float64(l)-mean) > 0.01*mean {
			t.Errorf("run %d gets %d crawls, mean %.1f", r, l, mean)
		}
	}
	t.Logf("exact x: per-run load %v, mean %.1f", load, mean)

	// One fr_max per page: fr_max = FrMaxFor(3, 7) = 2, phases mod 2, over many runs.
	fr := FrMaxFor(x, T)
	phases = Spread(pages, fr, 5)
	load = make([]int, 4*T)
	for _, p := range phases {
		for r := p; r < len(load); r += fr {
			load[r]++
		}
	}
	mean = float64(pages) / float64(fr)
	for r, l := range load {
		if math.Abs(float64(l)-mean) > 1 {
			t.Errorf("fr_max %d: run %d gets %d crawls, mean %.1f", fr, r, l, mean)
		}
	}

	// Several buckets with different x and offsets: the total stays flat.
	total := make([]int, T)
	sum, offset := 0, 0
	for _, bk := range []struct{ pages, x int }{{1234, 1}, {5, 7}, {999, 2}, {3001, 3}, {17, 5}, {4000, 6}} {
		for _, p := range Spread(bk.pages, T, offset) {
			for _, r := range CrawlRuns(p, bk.x, T) {
				total[r]++
			}
		}
		sum += bk.pages * bk.x
		offset += bk.pages
	}
	mean = float64(sum) / T
	for r, l := range total {
		if math.Abs(float64(l)-mean) > 0.01*mean {
			t.Errorf("mixed buckets: run %d gets %d crawls, mean %.1f", r, l, mean)
		}
	}
}

func TestSpreadAndCrawlRunsEdges(t *testing.T) {
	if got := Spread(5, 3, -1); !slices.Equal(got, []int{2, 0, 1, 2, 0}) {
		t.Errorf("Spread(5, 3, -1) = %v", got)
	}
	if got := Spread(3, 0, 7); !slices.Equal(got, []int{0, 0, 0}) {
		t.Errorf("T = 0: %v", got)
	}
	if got := Spread(-1, 7, 0); len(got) != 0 {
		t.Errorf("negative pages: %v", got)
	}
	for _, tt := range []struct {
		phase, x, T int
		want        []int
	}{
		{0, 3, 7, []int{0, 2, 4}},
		{5, 3, 7, []int{0, 2, 5}},
		{-2, 3, 7, []int{0, 2, 5}},
		{3, 1, 7, []int{3}},
		{3, 0, 7, []int{}},
		{3, 7, 7, []int{0, 1, 2, 3, 4, 5, 6}},
		{3, 9, 7, []int{0, 1, 2, 3, 4, 5, 6}},
		{0, 2, 0, []int{0}},
	} {
		if got := CrawlRuns(tt.phase, tt.x, tt.T); !slices.Equal(got, tt.want) {
			t.Errorf("CrawlRuns(%d, %d, %d) = %v, want %v", tt.phase, tt.x, tt.T, got, tt.want)
		}
	}
	// Gaps are floor or ceil of T/x and sum to T.
	for T := 1; T <= 30; T++ {
		for x := 1; x <= T; x++ {
			runs := CrawlRuns(x*T%T, x, T)
			s := 0
			for i := range runs {
				g := (runs[(i+1)%len(runs)] - runs[i] + T) % T
				if g == 0 {
					g = T
				}
				if g != T/x && g != (T+x-1)/x {
					t.Fatalf("T=%d x=%d: gap %d in %v", T, x, g, runs)
				}
				s += g
			}
			if s != T {
				t.Fatalf("T=%d x=%d: gaps sum to %d", T, x, s)
			}
		}
	}
	for _, tt := range []struct{ x, T, want int }{
		{3, 7, 2}, {2, 7, 4}, {1, 7, 7}, {7, 7, 1}, {10, 7, 1}, {0, 7, 7}, {-1, 7, 7}, {3, 30, 10}, {4, 30, 8}, {1, 0, 1},
	} {
		if got := FrMaxFor(tt.x, tt.T); got != tt.want {
			t.Errorf("FrMaxFor(%d, %d) = %d, want %d", tt.x, tt.T, got, tt.want)
		}
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

// BenchmarkAllocate: 256 buckets, 10 M pages, 2 M crawls per run over a period of 30 runs, each page
// crawled 1 to 30 times per period.
func BenchmarkAllocate(bm *testing.B) {
	b := benchBuckets()
	const T = 30
	for bm.Loop() {
		Allocate(b, 2_000_000*T, 1, T, T)
	}
}

// TestAllocateIntervalsBruteForce compares the interval greedy with every combination on small
// instances: never over the budget, and within the bound of one rejected step of the optimum.
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
		f := AllocateIntervals(b, budget, fLo, fHi)
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
