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
