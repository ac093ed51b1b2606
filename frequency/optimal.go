package frequency

import (
	"container/heap"
	"math"
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

// BucketLoad describes one change-rate bucket for [AllocateIntervals].
type BucketLoad struct {
	Pages  int     // pages in the bucket; each crawl of the bucket's pages costs Pages crawls
	Rate   float64 // the bucket's change rate, changes per run (e.g. [Buckets.Rate])
	Weight float64 // importance of one page of the bucket (1 for plain staleness)
}

// AllocateIntervals returns a revisit interval in runs for the pages of each bucket, f_b in
// [fLo, fHi], minimising Σ_b Pages_b · Weight_b · S_b(f_b) subject to Σ_b Pages_b / f_b <= budget,
// where budget is in crawls per run and S_b(f) = [Staleness](Rate_b, f, 0) is the time-average
// staleness of a page crawled every f runs: Wolf et al.'s allocation with the interval, the thing a
// crawler with one fr_max per page can do, as the decision. Every interval from fHi down to fLo is a
// step of its own, so the load Σ Pages/f is exact and never exceeds the budget (unless fHi alone
// does), and the staleness the plan assumes is the staleness of the intervals it gives.
//
// The algorithm is Fox's greedy: every bucket starts at fHi, and the next step goes to the bucket
// with the largest decrease of the objective per crawl per run it costs,
// Weight · (S(f) − S(f−1)) / (1/(f−1) − 1/f). Staleness is convex in the crawl rate 1/f, so each
// bucket's ratios decrease as its interval shortens and the greedy takes the best steps there are;
// a step that does not fit in what is left of the budget drops its bucket and the greedy goes on with
// the others. With unit costs this is exact; with unequal costs it is a knapsack, and the result is
// above the optimum by at most the objective decrease of the first step that did not fit (see
// allocateIntervals). fLo < 1 counts as 1 and fHi below fLo as fLo. AllocateIntervals does not
// modify buckets.
func AllocateIntervals(buckets []BucketLoad, budget float64, fLo, fHi int) []int {
	f, _ := allocateIntervals(buckets, budget, fLo, fHi)
	return f
}

// allocateIntervals is AllocateIntervals that also returns the bound on its distance from the
// optimum: the objective decrease the first step that did not fit would have brought (0 when every
// step fitted). The steps taken before it are an optimal allocation of the load they use, and the
// fractional relaxation of the rest gains at most that step's decrease.
func allocateIntervals(buckets []BucketLoad, budget float64, fLo, fHi int) (f []int, gap float64) {
	fLo = max(fLo, 1)
	fHi = max(fHi, fLo)
	f = make([]int, len(buckets))
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
	rejected := false
	for len(h) > 0 && left > 0 {
		top := h[0]
		b := buckets[top.bucket]
		cur := f[top.bucket]
		cost := float64(b.Pages) * (1/float64(cur-1) - 1/float64(cur))
		if cost > left {
			if !rejected {
				rejected, gap = true, cost*top.gain
			}
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
	return f, gap
}

// intervalGain is the objective's decrease per crawl per run when b's interval goes from f to f−1.
func intervalGain(b BucketLoad, f int) float64 {
	if !(b.Weight > 0) || f <= 1 {
		return 0
	}
	drop := Staleness(b.Rate, float64(f), 0) - Staleness(b.Rate, float64(f-1), 0)
	return b.Weight * drop / (1/float64(f-1) - 1/float64(f))
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
