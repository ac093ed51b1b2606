package frequency

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// poissonHistory simulates n visits to a page whose changes are a Poisson process of rate lambda per
// run: interval(i) is the length of the i-th interval, and it shows a change with probability
// 1 − exp(−lambda · length).
func poissonHistory(r *rand.Rand, lambda float64, n int, interval func(i int) float64) []Interval {
	h := make([]Interval, n)
	for i := range h {
		l := interval(i)
		h[i] = Interval{Length: l, Changed: r.Float64() < -math.Expm1(-lambda*l)}
	}
	return h
}

func every(l float64) func(int) float64 { return func(int) float64 { return l } }

// irregular returns intervals of 1 to 5 runs, drawn uniformly.
func irregular(r *rand.Rand) func(int) float64 {
	return func(int) float64 { return float64(1 + r.IntN(5)) }
}

// naive is X/n · f, the share of visits that saw a change times the visit frequency.
func naive(h []Interval) float64 {
	x, sum := 0, 0.0
	for _, iv := range h {
		sum += iv.Length
		if iv.Changed {
			x++
		}
	}
	return float64(x) / sum
}

func relErr(got, want float64) float64 { return math.Abs(got-want) / want }

func TestEstimateChoClosedForm(t *testing.T) {
	// With equal intervals I the estimate is exactly Cho's r̂·f, r̂ = −log((X̄+0.5)/(n+0.5)), f = 1/I.
	for _, n := range []int{1, 2, 5, 10, 50} {
		for x := 0; x <= n; x++ {
			for _, I := range []float64{1, 2, 7} {
				h := make([]Interval, n)
				for i := range h {
					h[i] = Interval{Length: I, Changed: i < x}
				}
				want := -math.Log((float64(n-x)+0.5)/(float64(n)+0.5)) / I
				want = min(max(want, DefaultMinRate), DefaultMaxRate)
				got, ok := EstimateRate(h)
				if !ok || relErr(got, want) > 1e-9 {
					t.Errorf("n=%d X=%d I=%v: EstimateRate = %v, %v; want %v", n, x, I, got, ok, want)
				}
			}
		}
	}
}

func TestEstimateLongHistories(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, lambda := range []float64{0.05, 0.1, 0.2, 0.5, 1, 2} {
		for _, pattern := range []string{"every run", "irregular 1-5 runs"} {
			interval := every(1)
			if pattern != "every run" {
				interval = irregular(r)
			}
			// One long history: 20000 visits keep the sampling error near 3 % at the lowest rate.
			got, ok := EstimateRate(poissonHistory(r, lambda, 20000, interval))
			if !ok || relErr(got, lambda) > 0.10 {
				t.Errorf("λ=%v, %s, 20000 visits: estimate %v (ok %v), more than 10%% off", lambda, pattern, got, ok)
			}
			// Many pages of 200 visits: the mean estimate (the estimator's bias) is within 10 % too.
			const pages = 100
			mean := 0.0
			for range pages {
				est, _ := EstimateRate(poissonHistory(r, lambda, 200, interval))
				mean += est / pages
			}
			if relErr(mean, lambda) > 0.10 {
				t.Errorf("λ=%v, %s, %d pages × 200 visits: mean estimate %v, more than 10%% off", lambda, pattern, pages, mean)
			}
			t.Logf("λ=%-4v %-18s 20000 visits: %.4f   mean of %d × 200 visits: %.4f", lambda, pattern, got, pages, mean)
		}
	}
}

// TestEstimateBias compares Cho's estimator with X/n when pages change more often than they are
// visited: X/n cannot exceed the visit frequency (1 per run here) and saturates, Cho's estimator
// keeps growing.
func TestEstimateBias(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const pages = 300
	var table strings.Builder
	fmt.Fprintf(&table, "\n%5s %6s %10s %10s %10s\n", "λ", "visits", "mean X/n", "mean Cho", "Cho+prior")
	for _, lambda := range []float64{0.2, 0.5, 1, 2, 3, 5} {
		for _, n := range []int{10, 50, 200} {
			var meanNaive, meanCho, meanPrior float64
			// The prior is a deliberately wrong site mean, half the true rate.
			withPrior := Estimator{Prior: lambda / 2}
			for range pages {
				h := poissonHistory(r, lambda, n, every(1))
				est, _ := EstimateRate(h)
				pr, _ := withPrior.Estimate(h)
				meanNaive += naive(h) / pages
				meanCho += est / pages
				meanPrior += pr / pages
			}
			fmt.Fprintf(&table, "%5v %6d %10.3f %10.3f %10.3f\n", lambda, n, meanNaive, meanCho, meanPrior)
			if lambda >= 1 && n >= 50 && math.Abs(meanCho-lambda) >= math.Abs(meanNaive-lambda) {
				t.Errorf("λ=%v, %d visits: Cho's mean %v is not less biased than X/n's %v", lambda, n, meanCho, meanNaive)
			}
			if lambda == 3 && n == 200 {
				if meanNaive > 1 || relErr(meanNaive, lambda) < 0.5 {
					t.Errorf("λ=3: X/n mean %v does not saturate", meanNaive)
				}
				if relErr(meanCho, lambda) > 0.10 {
					t.Errorf("λ=3, 200 visits: Cho's mean %v more than 10%% off", meanCho)
				}
			}
		}
	}
	t.Log(table.String())
}

func TestEstimateBoundsAndShrinkage(t *testing.T) {
	all := func(n int, changed bool) []Interval {
		h := make([]Interval, n)
		for i := range h {
			h[i] = Interval{Length: 1, Changed: changed}
		}
		return h
	}
	t.Run("no usable interval", func(t *testing.T) {
		for _, h := range [][]Interval{nil, {}, {{Length: 0, Changed: true}, {Length: -1}, {Length: math.NaN()}, {Length: math.Inf(1)}}} {
			if got, ok := EstimateRate(h); ok || got != 0 {
				t.Errorf("EstimateRate(%v) = %v, %v; want 0, false", h, got, ok)
			}
			if got, ok := (Estimator{Prior: 0.3}).Estimate(h); ok || got != 0.3 {
				t.Errorf("with prior 0.3: Estimate(%v) = %v, %v; want 0.3, false", h, got, ok)
			}
			if got, _ := (Estimator{Prior: 50}).Estimate(h); got != DefaultMaxRate {
				t.Errorf("with prior 50: Estimate = %v; want the max rate", got)
			}
		}
	})
	t.Run("never changed gives MinRate", func(t *testing.T) {
		if got, ok := EstimateRate(all(100, false)); !ok || got != DefaultMinRate {
			t.Errorf("EstimateRate = %v, %v", got, ok)
		}
		if got, _ := (Estimator{MinRate: 0.01}).Estimate(all(3, false)); got != 0.01 {
			t.Errorf("MinRate 0.01: %v", got)
		}
	})
	t.Run("always changed is bounded", func(t *testing.T) {
		// Cho's correction alone: log(2n+1) for n visits at interval 1.
		if got, _ := EstimateRate(all(3, true)); relErr(got, math.Log(7)) > 1e-9 {
			t.Errorf("3 changes in 3 visits: %v, want log 7", got)
		}
		if got, _ := EstimateRate(all(100000, true)); got != DefaultMaxRate {
			t.Errorf("100000 changes in 100000 visits: %v, want the max rate", got)
		}
		if got, _ := (Estimator{MaxRate: 1}).Estimate(all(3, true)); got != 1 {
			t.Errorf("MaxRate 1: %v", got)
		}
	})
	t.Run("shrinkage", func(t *testing.T) {
		// Three visits, all changed: Cho alone says 1.95 per run; with the site's mean of 0.1 and the
		// default 2 pseudo-visits the estimate stays between the two, much closer to the data than
		// the naive unbounded MLE but far from starving the prior's pages.
		h := all(3, true)
		cho, _ := EstimateRate(h)
		e := Estimator{Prior: 0.1}
		got, _ := e.Estimate(h)
		if !(got > 0.1 && got < cho) {
			t.Errorf("shrunk estimate %v not between prior 0.1 and Cho's %v", got, cho)
		}
		heavier, _ := Estimator{Prior: 0.1, PriorWeight: 20}.Estimate(h)
		if !(heavier > 0.1 && heavier < got) {
			t.Errorf("weight 20: %v, want between 0.1 and %v", heavier, got)
		}
		t.Logf("3/3 changed: Cho %.3f, prior 0.1 k=2 %.3f, k=20 %.3f", cho, got, heavier)
		// Data that agree with the prior leave it about where it is.
		if got, _ := (Estimator{Prior: math.Log(2)}).Estimate(append(all(50, true), all(50, false)...)); relErr(got, math.Log(2)) > 0.02 {
			t.Errorf("50/100 changed with prior log 2: %v", got)
		}
		// A long history outweighs the prior.
		r := rand.New(rand.NewPCG(5, 6))
		long := poissonHistory(r, 0.5, 5000, every(1))
		a, _ := EstimateRate(long)
		b, _ := Estimator{Prior: 0.01}.Estimate(long)
		if relErr(b, a) > 0.01 {
			t.Errorf("5000 visits: prior moved the estimate from %v to %v", a, b)
		}
	})
	t.Run("monotone in changes", func(t *testing.T) {
		for _, e := range []Estimator{{}, {Prior: 0.2}} {
			prev := 0.0
			for x := 0; x <= 20; x++ {
				h := append(all(x, true), all(20-x, false)...)
				got, _ := e.Estimate(h)
				if got < prev {
					t.Errorf("%+v: %d changes of 20 give %v, below %v for %d", e, x, got, prev, x-1)
				}
				prev = got
			}
		}
	})
}

func TestIntervals(t *testing.T) {
	h := []Record{
		{Run: 1},
		{Run: 3, Changed: true},
		{Run: 4, Failed: true, Changed: true},
		{Run: 7},
		{Run: 8, Changed: true},
	}
	want := []Interval{{Length: 2, Changed: true}, {Length: 4}, {Length: 1, Changed: true}}
	got := Intervals(h)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Intervals = %v, want %v", got, want)
	}
	if got := Intervals([]Record{{Failed: true}, {Run: 5}}); len(got) != 0 {
		t.Errorf("one successful record: %v", got)
	}
	// A dated first fetch is a change Age runs before it; later records keep their dates.
	dated := []Record{{Run: 2, Dated: true, Age: 40}, {Run: 5, Changed: true, Dated: true, Age: 1.5}, {Run: 9}}
	want = []Interval{{Changed: true, Dated: true, Age: 40}, {Length: 3, Changed: true, Dated: true, Age: 1.5}, {Length: 4}}
	if got := Intervals(dated); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Intervals(dated) = %v, want %v", got, want)
	}
}

// TestEstimateDated checks the estimate from dated changes against the exponential's closed form,
// X / (Σ Age + Σ unchanged I) (Cho's half visit aside, which the test adds), and that one dated
// fetch each tells a page that changes daily from one that changes monthly, where the undated
// visits of a ten-run crawl see both change every time.
func TestEstimateDated(t *testing.T) {
	h := []Interval{
		{Changed: true, Dated: true, Age: 2},
		{Length: 10, Changed: true, Dated: true, Age: 4},
		{Length: 10},
		{Length: 10, Changed: true, Dated: true, Age: 30}, // clamped to its interval: 10
	}
	// Σ Age = 2 + 4 + 10, unchanged 10, Cho's half visit 0.5 × the undated mean length, 10.
	want := 3 / (2 + 4 + 10 + 10 + 5.0)
	if got, ok := EstimateRate(h); !ok || relErr(got, want) > 1e-9 {
		t.Errorf("EstimateRate(%v) = %v, %v; want %v", h, got, ok, want)
	}

	r := rand.New(rand.NewPCG(7, 7))
	for _, tt := range []struct {
		name string
		rate float64
	}{{"daily", 1}, {"monthly", 1.0 / 30}} {
		var undated, dated []float64
		for range 400 {
			// three visits ten runs apart; the page changed at rate tt.rate; its last change before
			// each visit is Exp(rate) ago.
			var hu, hd []Interval
			for k := range 3 {
				age := r.ExpFloat64() / tt.rate
				changed := age < 10
				if k == 0 {
					hd = append(hd, Interval{Changed: true, Dated: true, Age: age})
					continue
				}
				hu = append(hu, Interval{Length: 10, Changed: changed})
				hd = append(hd, Interval{Length: 10, Changed: changed, Dated: changed, Age: age})
			}
			u, _ := EstimateRate(hu)
			d, _ := EstimateRate(hd)
			undated, dated = append(undated, math.Log(u/tt.rate)), append(dated, math.Log(d/tt.rate))
		}
		mu, md := medianOf(undated), medianOf(dated)
		t.Logf("%s: median log(estimate/rate) undated %+.2f, dated %+.2f", tt.name, mu, md)
		if math.Abs(md) > math.Log(2) {
			t.Errorf("%s: dated estimates are off by a factor %.2f in the median, want within 2", tt.name, math.Exp(md))
		}
		if tt.name == "daily" && math.Abs(mu) < math.Log(2) {
			t.Errorf("daily: undated estimates within a factor 2 in the median: the test does not show what dates add")
		}
	}
}

func medianOf(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

func TestEstimatorValidate(t *testing.T) {
	for _, tt := range []struct {
		e       Estimator
		wantErr string
	}{
		{Estimator{}, ""},
		{Estimator{MinRate: 0.01, MaxRate: 5, Prior: 0.2, PriorWeight: 4}, ""},
		{Estimator{MinRate: -1}, "min rate -1"},
		{Estimator{Prior: math.NaN()}, "prior NaN"},
		{Estimator{PriorWeight: math.Inf(1)}, "prior weight +Inf"},
		{Estimator{MinRate: 20}, "min rate 20 is above max rate 10"},
	} {
		err := tt.e.Validate()
		if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
			t.Errorf("%+v.Validate() = %v, want %q", tt.e, err, tt.wantErr)
		}
	}
	// Settings Validate rejects are still corrected: MaxRate below MinRate counts as MinRate.
	if got, _ := (Estimator{MinRate: 20}).Estimate([]Interval{{Length: 1}}); got != 20 {
		t.Errorf("MinRate 20 above the default max: %v", got)
	}
}

func FuzzEstimate(f *testing.F) {
	f.Add(1.0, true, 2.0, false, 0.5, 0.0, 0.0, 0.0, false, 0.0)
	f.Add(1e-300, true, 1e300, true, 0.0, 0.0, 0.1, 3.0, true, 0.5)
	f.Add(math.NaN(), false, -1.0, true, 7.0, 0.001, 0.2, 0.0, true, math.Inf(1))
	f.Add(0.0, false, 0.0, false, 0.0, 0.0, 0.0, 0.0, true, 1e-300)
	f.Fuzz(func(t *testing.T, l1 float64, c1 bool, l2 float64, c2 bool, l3, minRate, prior, weight float64, dated bool, age float64) {
		e := Estimator{MinRate: minRate, Prior: prior, PriorWeight: weight}
		h := []Interval{{Length: l1, Changed: c1}, {Length: l2, Changed: c2}, {Length: l3, Changed: true, Dated: dated, Age: age}}
		got, ok := e.Estimate(h)
		lo, hi := e.bounds()
		if ok || got != 0 {
			if !(got >= lo && got <= hi) {
				t.Fatalf("%+v.Estimate(%v) = %v, %v: outside [%v, %v]", e, h, got, ok, lo, hi)
			}
		}
		if ok != (usable(l1) || usable(l2) || h[2].evidence()) {
			t.Fatalf("ok = %v for %v", ok, h)
		}
	})
}
