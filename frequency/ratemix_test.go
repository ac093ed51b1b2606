package frequency

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestRateMixFit: pages of two kinds, slow (0.02 per run) and fast (2 per run), visited every 5
// runs; the fitted prior puts its mass near the two rates, and the equivalent rate tells the kinds
// apart where Cho's estimate on a short history cannot.
func TestRateMixFit(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	var hs [][]Interval
	for i := range 2000 {
		lambda := 0.02
		if i%2 == 1 {
			lambda = 2
		}
		hs = append(hs, poissonHistory(r, lambda, 4, every(5)))
	}
	m := NewRateMix(DefaultMinRate, DefaultMaxRate, 25)
	m.Fit(hs, 50)
	var slow, fast float64
	for k, rate := range m.Rates {
		switch {
		case rate <= 0.1:
			slow += m.Weights[k]
		case rate >= 0.5:
			fast += m.Weights[k]
		}
	}
	if slow < 0.4 || fast < 0.4 {
		t.Errorf("fitted prior: %.2f of the mass at or below 0.1, %.2f at or above 0.5; want about half each", slow, fast)
	}
	allChanged := []Interval{{Length: 5, Changed: true}, {Length: 5, Changed: true}}
	noChange := []Interval{{Length: 5}, {Length: 5}}
	eqFast, ok1 := m.Equivalent(allChanged, 5)
	eqSlow, ok2 := m.Equivalent(noChange, 5)
	cho, _ := EstimateRate(allChanged)
	if !ok1 || !ok2 || !(eqFast > 0.5) || !(eqSlow < 0.1) {
		t.Errorf("equivalent rates: changed twice %v, never %v; want > 0.5 and < 0.1", eqFast, eqSlow)
	}
	if !(cho < eqFast) {
		t.Errorf("Cho's estimate %v for two changed visits not below the equivalent rate %v", cho, eqFast)
	}
	mean, _ := m.Mean(allChanged)
	if !(mean >= eqFast) {
		t.Errorf("posterior mean %v below the equivalent rate %v", mean, eqFast)
	}
	if _, ok := m.Mean(nil); ok {
		t.Error("Mean of no interval: ok")
	}
	if _, ok := (RateMix{}).Equivalent(allChanged, 5); ok {
		t.Error("empty mix: ok")
	}
	s := 0.0
	for _, w := range m.Weights {
		s += w
	}
	if math.Abs(s-1) > 1e-9 {
		t.Errorf("weights sum to %v", s)
	}
}

// TestRateMixDated checks that the posterior reads a dated change's age: of two pages whose visits
// ten runs apart both saw a change, the one whose last change was half a run before the fetch is
// believed faster than the one whose change was nine runs before — by more than the factor of
// five that would still leave them in neighbouring revisit classes — each near 1/age.
func TestRateMixDated(t *testing.T) {
	m := NewRateMix(1e-3, 10, 25)
	fresh := []Interval{{Changed: true, Dated: true, Age: 0.5}, {Length: 10, Changed: true, Dated: true, Age: 0.5}}
	old := []Interval{{Changed: true, Dated: true, Age: 9}, {Length: 10, Changed: true, Dated: true, Age: 9}}
	f, _ := m.Mean(fresh)
	o, _ := m.Mean(old)
	if !(f > 0.8 && f < 4) || !(o > 0.05 && o < 0.4) || f < 5*o {
		t.Errorf("posterior means: last change 0.5 runs ago %.3f (want 0.8–4), 9 runs ago %.3f (want 0.05–0.4 and a fifth of the other)", f, o)
	}
}

// TestEquivalentPlansLikeTheFullPosterior: the optimiser plans each page with one rate, the
// equivalent rate; the plan that minimises the expected staleness under each page's whole posterior
// is what a Bayesian would do with the same evidence. On a population with Cho and Garcia-Molina's
// spread of rates, visited 1, 3 or 10 times at the budget's mean interval, the one-rate plan must be
// as good as the full one, judged by the pages' true rates, and better than uniform revisiting; the
// posterior mean, planned the same way, is not (at 10 %, one interval: 0.594 against 0.628). The
// log gives both against the plan with the true rates: with so little evidence no plan gets near it
// (0.95–0.97 here), which is why docs/experiments.md's 30-day runs stop short of it too.
func TestEquivalentPlansLikeTheFullPosterior(t *testing.T) {
	const pages, fHi = 600, 30
	for _, tc := range []struct {
		visits int
		budget float64 // share of the pages per run
	}{{1, 0.1}, {1, 0.2}, {3, 0.1}, {3, 0.2}, {10, 0.1}, {10, 0.2}} {
		r := rand.New(rand.NewPCG(uint64(tc.visits), uint64(tc.budget*100)))
		interval := 1 / tc.budget
		rates := make([]float64, pages)
		hs := make([][]Interval, pages)
		for i := range rates {
			rates[i] = choRate(r)
			hs[i] = poissonHistory(r, rates[i], tc.visits, every(interval))
		}
		m := NewRateMix(1e-3, 10, 25)
		m.Fit(hs, 100)
		budget := tc.budget * pages
		freshness := func(f []int) float64 {
			s := 0.0
			for i, fi := range f {
				s += Staleness(rates[i], float64(fi), 0)
			}
			return 1 - s/pages
		}
		oneRate := func(rate func(i int) float64) []int {
			loads := make([]BucketLoad, pages)
			for i := range loads {
				loads[i] = BucketLoad{Pages: 1, Rate: rate(i), Weight: 1}
			}
			return AllocateIntervals(loads, budget, 1, fHi)
		}
		equivalent := freshness(oneRate(func(i int) float64 { rate, _ := m.Equivalent(hs[i], interval); return rate }))
		mean := freshness(oneRate(func(i int) float64 { rate, _ := m.Mean(hs[i]); return rate }))
		truth := freshness(oneRate(func(i int) float64 { return rates[i] }))
		// The full posterior's plan: each page's expected staleness Σ_k post_k · S(λ_k, f), by a
		// greedy of the test's own over the pages' curves, with the posterior computed here.
		curves := make([]func(f int) float64, pages)
		for i := range curves {
			post := make([]float64, len(m.Rates))
			sum := 0.0
			for k, lambda := range m.Rates {
				lik := m.Weights[k]
				for _, iv := range hs[i] {
					if iv.Changed {
						lik *= -math.Expm1(-lambda * iv.Length)
					} else {
						lik *= math.Exp(-lambda * iv.Length)
					}
				}
				post[k], sum = lik, sum+lik
			}
			curves[i] = func(f int) float64 {
				s := 0.0
				for k, lambda := range m.Rates {
					s += post[k] / sum * Staleness(lambda, float64(f), 0)
				}
				return s
			}
		}
		full := freshness(planCurves(curves, budget, fHi))
		uniform := make([]int, pages)
		for i := range uniform {
			uniform[i] = int(interval)
		}
		t.Logf("%d visits, %.0f %%: uniform %.3f, posterior mean %.3f, equivalent %.3f, full posterior %.3f, true rates %.3f (equivalent / true %.3f)",
			tc.visits, 100*tc.budget, freshness(uniform), mean, equivalent, full, truth, equivalent/truth)
		if equivalent < full-0.003 {
			t.Errorf("%d visits, %.0f %%: the equivalent rate's plan reaches %.3f, the full posterior's %.3f", tc.visits, 100*tc.budget, equivalent, full)
		}
		if equivalent <= freshness(uniform) {
			t.Errorf("%d visits, %.0f %%: the equivalent rate's plan reaches %.3f, uniform revisiting %.3f", tc.visits, 100*tc.budget, equivalent, freshness(uniform))
		}
	}
}

// planCurves is Fox's greedy over pages with staleness curves of their own: every page starts at
// fHi, and the step with the largest staleness decrease per crawl per run goes next while it fits.
func planCurves(curves []func(f int) float64, budget float64, fHi int) []int {
	f := make([]int, len(curves))
	load := 0.0
	for i := range f {
		f[i] = fHi
		load += 1 / float64(fHi)
	}
	gain := func(i int) float64 {
		if f[i] <= 1 {
			return 0
		}
		return (curves[i](f[i]) - curves[i](f[i]-1)) / (1/float64(f[i]-1) - 1/float64(f[i]))
	}
	gains := make([]float64, len(curves))
	for i := range gains {
		gains[i] = gain(i)
	}
	for {
		best := -1
		for i, g := range gains {
			if g > 0 && (best < 0 || g > gains[best]) {
				best = i
			}
		}
		if best < 0 {
			return f
		}
		if cost := 1/float64(f[best]-1) - 1/float64(f[best]); load+cost <= budget {
			load += cost
			f[best]--
			gains[best] = gain(best)
		} else {
			gains[best] = 0 // does not fit: the others go on
		}
	}
}

// choRate draws a page's change rate (per run, a run being a day) from Cho and Garcia-Molina's
// spread: 23 % faster than daily, 15 % daily to weekly, 16 % weekly to monthly, 16 % monthly to
// four-monthly, 30 % slower; log-uniform within a band.
func choRate(r *rand.Rand) float64 {
	bands := []struct{ share, lo, hi float64 }{
		{0.23, 1, 5}, {0.15, 1.0 / 7, 1}, {0.16, 1.0 / 30, 1.0 / 7}, {0.16, 1.0 / 120, 1.0 / 30}, {0.30, 1.0 / 1000, 1.0 / 120},
	}
	u := r.Float64()
	for _, b := range bands {
		if u < b.share {
			return b.lo * math.Pow(b.hi/b.lo, r.Float64())
		}
		u -= b.share
	}
	return bands[len(bands)-1].lo // u rounded past the last share
}
