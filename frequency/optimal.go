package frequency

import (
	"container/heap"
	"math"
	"slices"
)

// Staleness is Wolf et al.'s time-average staleness of a page that changes as a Poisson process of
// rate lambda (changes per run) and is crawled x times, evenly spaced, over a period of T runs: the
// expected share of the period during which the stored copy is out of date,
//
//	A(x) = 1 + (x + 1)/(λT) · (exp(−λT/(x + 1)) − 1)
//
// With u = λT/(x + 1) this is 1 − (1 − exp(−u))/u, computed without cancellation for small u. A is
// 0 for λ = 0 (or λT <= 0, or NaN), lies in [0, 1), tends to 1 as λT grows, and is decreasing and
// convex in x. A negative x counts as 0.
func Staleness(lambda, T float64, x int) float64 {
	lt := lambda * T
	if !(lt > 0) { // also NaN
		return 0
	}
	if math.IsInf(lt, 1) {
		return 1
	}
	u := lt / float64(max(x, 0)+1)
	if u < 1e-3 {
		// 1 − (1 − e^−u)/u = u/2 − u²/6 + u³/24 − u⁴/120 + …; the next term is below 1e-18.
		return u * (0.5 - u*(1.0/6-u*(1.0/24-u/120)))
	}
	return 1 + math.Expm1(-u)/u
}

// BucketLoad describes one change-rate bucket for [Allocate].
type BucketLoad struct {
	Pages  int     // pages in the bucket; each crawl of the bucket's pages costs Pages crawls
	Rate   float64 // the bucket's change rate, changes per run (e.g. [Buckets.Rate])
	Weight float64 // importance of one page of the bucket (1 for plain staleness)
}

// Objective returns Σ_b Pages_b · Weight_b · A_b(x_b), the weighted staleness [Allocate] minimises,
// with A_b = [Staleness] of the bucket's rate over T runs. x must have one entry per bucket.
func Objective(buckets []BucketLoad, x []int, T float64) float64 {
	s := 0.0
	for i, b := range buckets {
		s += float64(max(b.Pages, 0)) * b.Weight * Staleness(b.Rate, T, x[i])
	}
	return s
}

// Allocate returns the number of crawls per period of T runs for the pages of each bucket, x_b in
// [minX, maxX], minimising Σ_b Pages_b · Weight_b · A_b(x_b) ([Objective]) subject to
// Σ_b Pages_b · x_b <= budget, where budget is the crawl capacity of the period (crawls per run R
// times T).
//
// # Algorithm
//
// Fox's greedy algorithm for discrete convex separable resource allocation, as in Wolf et al.: every
// bucket starts at minX, and the next crawl goes to the bucket with the largest decrease of the
// objective per crawl spent, until the budget or the buckets run out. Giving every page of bucket b
// one more crawl per period costs Pages_b crawls and lowers the objective by
// Pages_b · Weight_b · (A_b(x_b) − A_b(x_b + 1)), so the gain per crawl is
// Weight_b · (A_b(x_b) − A_b(x_b + 1)): the page count cancels. A heap keyed by that gain gives
// O(B + K log B) for B buckets and K increments (K <= B · (maxX − minX)). An increment that no longer
// fits in the remaining budget drops its bucket, and the greedy goes on with the others.
//
// # Optimality
//
// With unit costs (every Pages_b = 1, the per-page problem of Wolf et al.) the greedy is exact, for
// any budget: A is convex, so every bucket's gains decrease and the greedy takes the ⌊budget⌋ (less
// the minimum) largest gains there are.
// With unequal costs the problem is a knapsack and the greedy is near-optimal: the increments it takes
// before the first one that does not fit are an optimal solution for the crawls they use, and the
// fractional relaxation gains at most one more increment, so the result is above the optimum by at
// most the gain of that first rejected increment, Pages_b · Weight_b · (A_b(x_b) − A_b(x_b + 1)), and
// is exact whenever no increment is rejected (the budget or the maxX bounds end the greedy first).
// With buckets of thousands of pages and a budget of millions of crawls that is a negligible share.
//
// # Edge cases
//
// A negative minX counts as 0 and maxX below minX as minX. The minimum is honoured even when
// Σ_b Pages_b · minX exceeds the budget: it is the operator's floor (Wolf's m_i), and the caller can
// compare the cost with the budget. Buckets with no pages, zero weight or zero rate gain nothing from
// crawls and stay at minX, as does everything when budget is not positive. Allocate does not modify
// buckets.
func Allocate(buckets []BucketLoad, budget float64, minX, maxX int, T float64) []int {
	x, _ := allocate(buckets, budget, minX, maxX, T)
	return x
}

// allocate is Allocate that also returns the bound on its distance from the optimum: the objective
// gain of the first increment that did not fit in the budget (0 when none was rejected).
func allocate(buckets []BucketLoad, budget float64, minX, maxX int, T float64) (x []int, gap float64) {
	minX = max(minX, 0)
	maxX = max(maxX, minX)
	x = make([]int, len(buckets))
	left := budget
	h := make(gainHeap, 0, len(buckets))
	for i, b := range buckets {
		x[i] = minX
		left -= float64(max(b.Pages, 0)) * float64(minX)
		if g := marginal(b, T, minX); b.Pages > 0 && minX < maxX && g > 0 {
			h = append(h, gainItem{bucket: i, gain: g})
		}
	}
	heap.Init(&h)
	rejected := false
	for len(h) > 0 && left > 0 {
		top := h[0]
		b := buckets[top.bucket]
		cost := float64(b.Pages)
		if cost > left {
			if !rejected {
				rejected, gap = true, cost*top.gain
			}
			heap.Pop(&h)
			continue
		}
		left -= cost
		x[top.bucket]++
		if g := marginal(b, T, x[top.bucket]); x[top.bucket] < maxX && g > 0 {
			h[0].gain = g
			heap.Fix(&h, 0)
		} else {
			heap.Pop(&h)
		}
	}
	return x, gap
}

// marginal is the objective's decrease per crawl when every page of b gets one more crawl than x.
func marginal(b BucketLoad, T float64, x int) float64 {
	if !(b.Weight > 0) {
		return 0
	}
	return b.Weight * (Staleness(b.Rate, T, x) - Staleness(b.Rate, T, x+1))
}

type gainItem struct {
	bucket int
	gain   float64
}

// gainHeap is a max-heap on gain; ties go to the lower bucket index, so results are deterministic.
type gainHeap []gainItem

func (h gainHeap) Len() int { return len(h) }
func (h gainHeap) Less(i, j int) bool {
	if h[i].gain != h[j].gain {
		return h[i].gain > h[j].gain
	}
	return h[i].bucket < h[j].bucket
}
func (h gainHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *gainHeap) Push(v any)   { *h = append(*h, v.(gainItem)) }
func (h *gainHeap) Pop() any {
	old := *h
	v := old[len(old)-1]
	*h = old[:len(old)-1]
	return v
}

// Spread returns the phases of the pages of a bucket, so that their crawls are spread evenly over
// the runs instead of all falling on the same run (no thundering herd).
//
// Phases are dealt round-robin: phase[i] = (i + offset) mod T, so every run 0 … T−1 is the phase of
// ⌊pages/T⌋ or ⌈pages/T⌉ pages. offset (any integer) rotates them; giving each bucket a different
// offset, such as the number of pages in the buckets before it, spreads the remainders of different
// buckets over different runs, so that the total load stays flat too. T <= 0 counts as 1; a negative
// pages gives none.
//
// There are two ways to use them, for the two ways a crawler can follow an allocation of x crawls per
// period of T runs ([Allocate]):
//
//   - exactly x crawls per period: with phases := Spread(pages, T, offset), page i is crawled on the
//     runs [CrawlRuns](phases[i], x, T) of every period. All pages' k-th crawls are shifted by the
//     same ⌊k·T/x⌋ runs, so every run gets x·pages/T of the bucket's crawls, give or take x;
//   - one fr_max per page, as strata's fr/fr_max counters have: fr_max = [FrMaxFor](x, T) ≈ T/x, and
//     with phases := Spread(pages, fr_max, offset) page i starts with fr = phases[i] + 1, so every
//     run gets pages/fr_max of the bucket's crawls, give or take 1. The page is then crawled T/fr_max
//     times per period rather than x: the rounding of T/x costs up to a third more crawls than
//     allocated (T = 7, x = 3: fr_max 2, 3.5 crawls), or fewer, which the next allocation sees.
func Spread(pages, T, offset int) []int {
	T = max(T, 1)
	phases := make([]int, max(pages, 0))
	start := ((offset % T) + T) % T
	for i := range phases {
		phases[i] = (start + i) % T
	}
	return phases
}

// CrawlRuns returns the runs of a period of T runs (0 to T−1, ascending) at which a page with the
// given phase is crawled when it gets x crawls per period: (phase + ⌊k·T/x⌋) mod T for k = 0 … x−1.
// The gaps between consecutive crawls, around the period, are ⌊T/x⌋ or ⌈T/x⌉ runs and average exactly
// T/x, so the page's effective fr_max is T/x. A page can be crawled at most once a run, so x is kept
// within [0, T]; x = 0 gives no runs. T <= 0 counts as 1; the phase is taken mod T.
func CrawlRuns(phase, x, T int) []int {
	T = max(T, 1)
	x = min(max(x, 0), T)
	phase = ((phase % T) + T) % T
	runs := make([]int, 0, x)
	for k := range x {
		runs = append(runs, (phase+k*T/x)%T)
	}
	slices.Sort(runs)
	return runs
}

// FrMaxFor returns the single revisit interval, in runs, that approximates x crawls per period of T
// runs for a crawler that keeps one fr_max per page: round(T/x) (halves round up), at least 1 and at
// most T. It rounds the mean gap T/x of [CrawlRuns]; see [Spread] for the phases that go with it. x <= 0
// (no crawl in the period) gives T: the page is looked at again after the period, when the allocation
// is recomputed. T <= 0 counts as 1.
func FrMaxFor(x, T int) int {
	T = max(T, 1)
	if x <= 0 {
		return T
	}
	return min(max((T+x/2)/x, 1), T)
}

// AllocateIntervals returns a revisit interval in runs for the pages of each bucket, f_b in
// [fLo, fHi], minimising Σ_b Pages_b · Weight_b · S_b(f_b) subject to Σ_b Pages_b / f_b <= budget,
// where budget is in crawls per run and S_b(f) = [Staleness](Rate_b, f, 0) is the time-average
// staleness of a page crawled every f runs.
//
// It is [Allocate]'s problem with the interval, the thing a crawler with one fr_max per page can
// actually do, as the decision: Allocate's crawls per period must be rounded to an interval
// afterwards ([FrMaxFor]), and the rounding of T/x can cost up to a third more crawls than
// allocated (T = 30, x = 4: fr_max 8, 3.75 crawls a period where 4 were allowed; summed over the
// buckets the load can end above the budget, and the runs that are over it leave pages overdue) or
// leave part of the budget unused. Here every interval from fHi down to fLo is a step of its own, the
// load Σ Pages/f is exact, and it never exceeds the budget (unless fHi alone does).
//
// The algorithm is Fox's greedy again: every bucket starts at fHi, and the next step goes to the
// bucket with the largest decrease of the objective per crawl per run it costs,
// Weight · (S(f) − S(f−1)) / (1/(f−1) − 1/f). Staleness is convex in the crawl rate 1/f, so each
// bucket's ratios decrease as its interval shortens and the greedy takes the best steps there are;
// a step that does not fit in what is left of the budget drops its bucket, as in Allocate. fLo < 1
// counts as 1 and fHi below fLo as fLo. AllocateIntervals does not modify buckets.
func AllocateIntervals(buckets []BucketLoad, budget float64, fLo, fHi int) []int {
	fLo = max(fLo, 1)
	fHi = max(fHi, fLo)
	f := make([]int, len(buckets))
	left := budget
	h := make(gainHeap, 0, len(buckets))
	for i, b := range buckets {
		f[i] = fHi
		left -= float64(max(b.Pages, 0)) / float64(fHi)
		if g := intervalGain(b, fHi); b.Pages > 0 && fHi > fLo && g > 0 {
			h = append(h, gainItem{bucket: i, gain: g})
		}
	}
	heap.Init(&h)
	for len(h) > 0 && left > 0 {
		top := h[0]
		b := buckets[top.bucket]
		cur := f[top.bucket]
		cost := float64(b.Pages) * (1/float64(cur-1) - 1/float64(cur))
		if cost > left {
			heap.Pop(&h)
			continue
		}
		left -= cost
		f[top.bucket] = cur - 1
		if g := intervalGain(b, cur-1); cur-1 > fLo && g > 0 {
			h[0].gain = g
			heap.Fix(&h, 0)
		} else {
			heap.Pop(&h)
		}
	}
	return f
}

// intervalGain is the objective's decrease per crawl per run when b's interval goes from f to f−1.
func intervalGain(b BucketLoad, f int) float64 {
	if !(b.Weight > 0) || f <= 1 {
		return 0
	}
	drop := Staleness(b.Rate, float64(f), 0) - Staleness(b.Rate, float64(f-1), 0)
	return b.Weight * drop / (1/float64(f-1) - 1/float64(f))
}
