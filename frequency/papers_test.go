package frequency

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
)

// TestWolfOrdering reproduces the ordering of Wolf et al.'s figure 8, which Cho and Garcia-Molina
// found first: for Poisson pages with Zipf-distributed rates, at an equal budget of crawls, the
// optimal allocation is the least stale, and spreading crawls uniformly beats giving each page crawls
// in proportion to its rate. The budgets are 5 to 20 % of the pages a run: with whole-run intervals
// (a page is crawled at most once a run) a larger budget caps the proportional schedule's fastest
// pages at one crawl a run, and the two suboptimal schedules come close. The schedules are judged by an oracle independent of the
// planner's own Staleness: each page's changes are drawn as a Poisson process over 3,000 runs, the
// page is crawled every f runs from a random phase, and the share of the time its copy was stale is
// counted. The simulated staleness of the optimal schedule must also match the analytic value the
// planner optimised, which checks the formula the other way round.
func TestWolfOrdering(t *testing.T) {
	const n, horizon = 1000, 3000
	rates := make([]float64, n)
	h := 0.0
	for k := 1; k <= n; k++ {
		h += 1 / float64(k)
	}
	for k := range rates {
		rates[k] = 0.15 * n / h / float64(k+1) // Zipf, mean 0.15 changes per run
	}
	r := rand.New(rand.NewPCG(8, 9))
	r.Shuffle(n, func(i, j int) { rates[i], rates[j] = rates[j], rates[i] })
	// Every schedule is judged on the same changes and phases (common random numbers), so that the
	// differences between them are measured far more precisely than each staleness alone.
	changes := make([][]float64, n)
	phases := make([]float64, n)
	for i, lambda := range rates {
		for c := r.ExpFloat64() / lambda; c < 2*horizon; c += r.ExpFloat64() / lambda {
			changes[i] = append(changes[i], c)
		}
		phases[i] = r.Float64()
	}
	var table strings.Builder
	fmt.Fprintf(&table, "\n%6s %9s %9s %12s %9s\n", "budget", "optimal", "uniform", "proportional", "analytic")
	for _, share := range []float64{0.05, 0.1, 0.2} {
		budget := share * n
		loads := make([]BucketLoad, n)
		for i, lambda := range rates {
			loads[i] = BucketLoad{Pages: 1, Rate: lambda, Weight: 1}
		}
		opt := AllocateIntervals(loads, budget, 1, horizon)
		uni := uniformIntervals(n, budget)
		prop := proportionalIntervals(rates, budget)
		for name, f := range map[string][]int{"optimal": opt, "uniform": uni, "proportional": prop} {
			if l := load(f); l > budget*1.001 {
				t.Fatalf("budget %v: the %s schedule crawls %.1f pages a run", budget, name, l)
			}
		}
		so, su, sp, seOU, seUP := pairedStaleness(changes, phases, opt, uni, prop, horizon)
		analytic := 0.0
		for i, lambda := range rates {
			analytic += Staleness(lambda, float64(opt[i]), 0) / n
		}
		fmt.Fprintf(&table, "%5.0f%% %9.4f %9.4f %12.4f %9.4f\n", 100*share, so, su, sp, analytic)
		if !(su-so > 3*seOU && sp-su > 3*seUP) {
			t.Errorf("budget %.0f%%: staleness optimal %.4f, uniform %.4f, proportional %.4f (standard errors of the differences %.4f, %.4f); "+
				"want optimal < uniform < proportional by three standard errors", 100*share, so, su, sp, seOU, seUP)
		}
		if math.Abs(so-analytic) > 0.01 {
			t.Errorf("budget %.0f%%: the optimal schedule's staleness is %.4f by simulation, %.4f by the formula", 100*share, so, analytic)
		}
	}
	t.Log(table.String())
}

// uniformIntervals gives n pages intervals of ⌊n/budget⌋ and ⌈n/budget⌉ runs, mixed so that the load
// is the budget.
func uniformIntervals(n int, budget float64) []int {
	mean := float64(n) / budget
	lo := max(int(math.Floor(mean)), 1)
	hi := lo + 1
	// k pages at lo and n−k at hi: k/lo + (n−k)/hi = budget.
	k := int(math.Round((budget - float64(n)/float64(hi)) / (1/float64(lo) - 1/float64(hi))))
	f := make([]int, n)
	for i := range f {
		f[i] = hi
		if i < k {
			f[i] = lo
		}
	}
	return f
}

// proportionalIntervals gives each page an interval inversely proportional to its rate, c/λ rounded
// (at least one run), with c found by bisection so that the load is at most the budget.
func proportionalIntervals(rates []float64, budget float64) []int {
	f := make([]int, len(rates))
	set := func(c float64) {
		for i, lambda := range rates {
			f[i] = max(int(math.Round(c/lambda)), 1)
		}
	}
	lo, hi := 1e-9, 1e9
	for range 200 {
		mid := math.Sqrt(lo * hi)
		set(mid)
		if load(f) > budget {
			lo = mid
		} else {
			hi = mid
		}
	}
	set(hi)
	return f
}

func load(f []int) float64 {
	l := 0.0
	for _, x := range f {
		l += 1 / float64(x)
	}
	return l
}

// pairedStaleness judges three schedules on the same change times and phases: for each, the mean
// over pages of the share of [phase, phase + horizon) the page's copy was stale (crawled every f[i]
// runs from phase·f[i], a copy stale from the first change after a crawl to the next crawl), and the
// standard errors of the mean differences a − b and b − c.
func pairedStaleness(changes [][]float64, phases []float64, a, b, c []int, horizon float64) (sa, sb, sc, seAB, seBC float64) {
	n := float64(len(changes))
	var dab, dab2, dbc, dbc2 float64
	for i, ch := range changes {
		x := staleShare(ch, phases[i], a[i], horizon)
		y := staleShare(ch, phases[i], b[i], horizon)
		z := staleShare(ch, phases[i], c[i], horizon)
		sa, sb, sc = sa+x/n, sb+y/n, sc+z/n
		dab, dab2 = dab+(x-y), dab2+(x-y)*(x-y)
		dbc, dbc2 = dbc+(y-z), dbc2+(y-z)*(y-z)
	}
	se := func(sum, sum2 float64) float64 { m := sum / n; return math.Sqrt(max(sum2/n-m*m, 0) / n) }
	return sa, sb, sc, se(dab, dab2), se(dbc, dbc2)
}

// staleShare is the share of the time from the first crawl, at phase·f, over horizon runs (at least
// one interval) that a copy crawled every f runs was stale, given the page's change times.
func staleShare(changes []float64, phase float64, f int, horizon float64) float64 {
	interval := float64(f)
	crawl := phase * interval
	end := crawl + max(horizon, interval)
	k := sort.SearchFloat64s(changes, crawl)
	stale, total := 0.0, 0.0
	for crawl < end {
		next := crawl + interval
		for k < len(changes) && changes[k] < crawl {
			k++
		}
		if k < len(changes) && changes[k] < next {
			stale += next - changes[k]
		}
		total += interval
		crawl = next
	}
	return stale / total
}
