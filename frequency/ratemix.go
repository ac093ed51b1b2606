package frequency

import (
	"math"
	"slices"
)

// RateMix is a prior over change rates: a discrete distribution on log-spaced rates, fitted to a
// population of pages (a site's, or the whole archive's) by empirical Bayes, and used to turn a
// page's short history into an estimate that knows what pages with that history usually are.
//
// Why a distribution and not one pooled rate. Visited every ten runs, a page that changes twice a
// day and one that changes every four days both show a change at every visit: their histories are
// the same, and Cho's estimator gives both log(2n+1)/10, a rate the optimiser values highly. Shrinking
// it towards the site's one pooled rate pulls it further into that range. But on a web like the one
// Cho and Garcia-Molina measured, most pages that change at every ten-day visit are pages that change
// daily, which no budget can keep fresh; the posterior mean under the population's distribution of
// rates says so, and the optimiser stops spending crawls on them until their history says otherwise.
// Pages never seen changing are pulled up from Cho's 0 towards the slow pages the population has,
// so they are not starved on the evidence of one visit either.
//
// A RateMix is fitted with [RateMix.Fit] (EM for the mixing weights of a non-parametric maximum
// likelihood estimate) and applied with [RateMix.Mean]. Its methods do not modify their arguments;
// Fit modifies the receiver, the others are safe for concurrent use.
type RateMix struct {
	Rates   []float64 // ascending
	Weights []float64 // one per rate, summing to 1
}

// NewRateMix returns a flat prior on n rates log-spaced from lo to hi (n >= 2, 0 < lo < hi; other
// values are corrected to 2 rates and the [Estimator] defaults).
func NewRateMix(lo, hi float64, n int) RateMix {
	n = max(n, 2)
	lo, hi = positive(lo, DefaultMinRate), positive(hi, DefaultMaxRate)
	if !(lo < hi) {
		lo, hi = DefaultMinRate, DefaultMaxRate
	}
	m := RateMix{Rates: make([]float64, n), Weights: make([]float64, n)}
	for k := range n {
		m.Rates[k] = lo * math.Pow(hi/lo, float64(k)/float64(n-1))
		m.Weights[k] = 1 / float64(n)
	}
	return m
}

// logLik writes into out the log-likelihood of h under each rate of m: for an interval of length I
// that changed, log(1 − e^{−λI}); for one that did not, −λI. It returns the number of usable
// intervals.
func (m RateMix) logLik(h []Interval, out []float64) int {
	clear(out)
	n := 0
	for _, iv := range h {
		if !iv.evidence() {
			continue
		}
		n++
		for k, r := range m.Rates {
			out[k] += iv.logLik(r)
		}
	}
	return n
}

// posterior writes the posterior over m's rates given the log-likelihoods ll into post.
func (m RateMix) posterior(ll, post []float64) {
	top := math.Inf(-1)
	for k, w := range m.Weights {
		if w > 0 {
			top = max(top, ll[k])
		}
	}
	sum := 0.0
	for k, w := range m.Weights {
		post[k] = 0
		if w > 0 {
			post[k] = w * math.Exp(ll[k]-top)
		}
		sum += post[k]
	}
	for k := range post {
		post[k] /= sum
	}
}

// Mean returns the posterior mean rate of a page with intervals h under the prior m. ok is false,
// and the result the prior mean, when h has no usable interval; an empty m gives 0, false.
func (m RateMix) Mean(h []Interval) (rate float64, ok bool) {
	if len(m.Rates) == 0 || len(m.Rates) != len(m.Weights) {
		return 0, false
	}
	ll := make([]float64, len(m.Rates))
	post := make([]float64, len(m.Rates))
	n := m.logLik(h, ll)
	m.posterior(ll, post)
	for k, r := range m.Rates {
		rate += post[k] * r
	}
	return rate, n > 0
}

// Fit runs iters steps of EM on the mixing weights, from the current ones, for the pages whose
// intervals are hs: each step replaces the weights by the average posterior of the pages. Pages
// without a usable interval are ignored. With few pages, start from the previous fit and run one or
// two steps: the weights then follow the population from run to run without overfitting one run.
func (m *RateMix) Fit(hs [][]Interval, iters int) {
	if len(m.Rates) == 0 || len(m.Rates) != len(m.Weights) {
		return
	}
	lls := make([][]float64, 0, len(hs))
	for _, h := range hs {
		ll := make([]float64, len(m.Rates))
		if m.logLik(h, ll) > 0 {
			lls = append(lls, ll)
		}
	}
	if len(lls) == 0 {
		return
	}
	post := make([]float64, len(m.Rates))
	next := make([]float64, len(m.Rates))
	for range iters {
		clear(next)
		for _, ll := range lls {
			m.posterior(ll, post)
			for k, p := range post {
				next[k] += p
			}
		}
		for k := range next {
			// A floor keeps every rate possible, so that later evidence can still move a page there.
			next[k] = max(next[k]/float64(len(lls)), 1e-6)
		}
		s := 0.0
		for _, v := range next {
			s += v
		}
		for k := range next {
			m.Weights[k] = next[k] / s
		}
	}
}

// Clone returns a copy of m that shares no memory with it.
func (m RateMix) Clone() RateMix {
	return RateMix{Rates: slices.Clone(m.Rates), Weights: slices.Clone(m.Weights)}
}

// Equivalent returns the rate whose staleness at an interval of f runs is the page's expected
// staleness at that interval under its posterior: the λ with Staleness(λ, f, 0) = Σ_k post_k ·
// Staleness(λ_k, f, 0). ok is as for [RateMix.Mean].
//
// The optimiser needs a single rate per page, and neither the posterior mean nor Cho's estimate is
// the right one for it: a page that changed at every visit might change every four days or twice a
// day; the mean says "twice a day" and the optimiser gives up on the page, Cho's estimate says
// "every four days" and it spends crawls on a page that is likely hopeless. The equivalent rate gets
// the expected staleness right at the interval the page is being planned around (the budget's mean
// interval, pages / budget), which is what the allocation trades.
func (m RateMix) Equivalent(h []Interval, f float64) (rate float64, ok bool) {
	if len(m.Rates) == 0 || len(m.Rates) != len(m.Weights) || !(f > 0) {
		return 0, false
	}
	ll := make([]float64, len(m.Rates))
	post := make([]float64, len(m.Rates))
	n := m.logLik(h, ll)
	m.posterior(ll, post)
	want := 0.0
	for k, r := range m.Rates {
		want += post[k] * Staleness(r, f, 0)
	}
	lo, hi := m.Rates[0], m.Rates[len(m.Rates)-1]
	if Staleness(lo, f, 0) >= want {
		return lo, n > 0
	}
	if Staleness(hi, f, 0) <= want {
		return hi, n > 0
	}
	for range 60 { // bisection on log λ; Staleness is increasing in λ
		mid := math.Sqrt(lo * hi)
		if Staleness(mid, f, 0) < want {
			lo = mid
		} else {
			hi = mid
		}
	}
	return math.Sqrt(lo * hi), n > 0
}
