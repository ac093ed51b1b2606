package frequency

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestSampleMore checks P(ρ) = (tanh(10 (ρ − ρ0)) + 1) / 2 against values worked out by hand
// (tanh 1 = 0.76159415595576…, so P(ρ0 ± 0.1) = 0.88079707797788… and 0.11920292202211…), and
// the properties the paper relies on: a probability, monotone in ρ, ½ at ρ0, symmetric about it.
func TestSampleMore(t *testing.T) {
	for _, tt := range []struct {
		rho, rho0, want, tol float64
	}{
		{0.3, 0.3, 0.5, 1e-15},
		{0, 0, 0.5, 1e-15},
		{0.4, 0.3, 0.8807970779778824, 1e-12},
		{0.2, 0.3, 0.11920292202211757, 1e-12},
		{0.35, 0.3, 0.7310585786300049, 1e-12}, // (tanh ½ + 1) / 2 = 1 / (1 + e^−1)
		{1, 0.3, 1, 1e-6},
		{0, 0.3, 0, 0.003},
		{0, 0.6, 0, 1e-5},
		{math.Inf(1), 0.3, 1, 0},
		{math.Inf(-1), 0.3, 0, 0},
	} {
		if got := SampleMore(tt.rho, tt.rho0); math.Abs(got-tt.want) > tt.tol {
			t.Errorf("SampleMore(%v, %v) = %v, want %v ± %v", tt.rho, tt.rho0, got, tt.want, tt.tol)
		}
	}
	if got := SampleMore(math.NaN(), 0.3); !math.IsNaN(got) {
		t.Errorf("NaN: %v", got)
	}
	// Monotone in rho, a probability, and symmetric: P(ρ0 + d) + P(ρ0 − d) = 1.
	for _, rho0 := range []float64{0, 0.2, 0.5, 0.9} {
		prev := -1.0
		for i := -100; i <= 200; i++ {
			rho := float64(i) / 100
			p := SampleMore(rho, rho0)
			if !(p >= 0 && p <= 1) || p < prev {
				t.Fatalf("rho0=%v: P(%v) = %v after %v", rho0, rho, p, prev)
			}
			prev = p
			if s := p + SampleMore(2*rho0-rho, rho0); math.Abs(s-1) > 1e-12 {
				t.Fatalf("rho0=%v: P(%v) + P(%v) = %v", rho0, rho, 2*rho0-rho, s)
			}
		}
	}
	// Raising rho0 lowers the probability for a given rho: resources move away from sampling.
	if !(SampleMore(0.4, 0.5) < SampleMore(0.4, 0.3)) {
		t.Error("raising rho0 does not lower P")
	}
}

// TestSamplerBatches draws many runs of one site's sampler and compares the number of batches with
// the geometric law the paper's U(ρ) describes: the first batch always, each further one with
// probability P(ρ, ρ0), ρ steady here because every page answers alike.
func TestSamplerBatches(t *testing.T) {
	tests := []struct {
		name    string
		changed bool
		rho0    float64
	}{
		{"every page changed, ρ0 0.95", true, 0.95},
		{"every page changed, ρ0 0.9", true, 0.9},
		{"no page changed, ρ0 0.3", false, 0.3},
		{"every page changed, ρ0 1.3: one batch", true, MaxRho0},
	}
	const runs = 20000
	h := Hybrid{SampleSize: 5}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rho := 0.0
			if tt.changed {
				rho = 1
			}
			p := SampleMore(rho, tt.rho0)
			hist := map[int]int{}
			total := 0
			for seed := range uint64(runs) {
				s := h.NewSampler(tt.rho0, rand.New(rand.NewPCG(seed, 1)))
				for n := s.NextBatch(); n > 0; n = s.NextBatch() {
					if n != 5 {
						t.Fatalf("batch of %d, want 5", n)
					}
					for range n {
						s.Observe(tt.changed)
					}
					if s.Batches() > 1000 {
						t.Fatal("sampler does not stop")
					}
				}
				if s.NextBatch() != 0 {
					t.Fatal("a finished sampler handed out another batch")
				}
				hist[s.Batches()]++
				total += s.Batches()
			}
			// P(B = k) = p^(k−1) (1 − p); mean 1/(1 − p). Binomial tolerance: 5 standard errors.
			mean := float64(total) / runs
			if want := 1 / (1 - p); math.Abs(mean-want) > 5*math.Sqrt(p)/(1-p)/math.Sqrt(runs)+1e-9 {
				t.Errorf("mean batches %.4f, want %.4f (P = %.4f)", mean, want, p)
			}
			for k := 1; k <= 3; k++ {
				want := math.Pow(p, float64(k-1)) * (1 - p)
				got := float64(hist[k]) / runs
				if math.Abs(got-want) > 5*math.Sqrt(want*(1-want)/runs)+1e-9 {
					t.Errorf("P(%d batches) = %.4f, want %.4f", k, got, want)
				}
			}
			t.Logf("P(ρ=%v, ρ0=%v) = %.4f: mean %.3f batches over %d runs", rho, tt.rho0, p, mean, runs)
		})
	}
}

func TestSamplerStopsWithoutEvidence(t *testing.T) {
	s := Hybrid{}.NewSampler(0, rand.New(rand.NewPCG(1, 2)))
	if n := s.NextBatch(); n != DefaultSampleSize {
		t.Fatalf("first batch %d, want %d", n, DefaultSampleSize)
	}
	if n := s.NextBatch(); n != 0 {
		t.Errorf("no page of the first batch observed: another batch of %d", n)
	}
}

func TestHybridRho0(t *testing.T) {
	h := Hybrid{}
	for _, tt := range []struct {
		run  int
		want float64
	}{{0, 0.3}, {10, 0.5}, {35, 1.0}, {1000, MaxRho0}, {-5, 0.3}} {
		if got := h.Rho0(tt.run); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("Rho0(%d) = %v, want %v", tt.run, got, tt.want)
		}
	}
	if got := (Hybrid{Rho0Start: 0.5, Step: -1}).Rho0(10); got != 0.5 {
		t.Errorf("negative step: Rho0 = %v, want 0.5 (no rise)", got)
	}
}

func TestHybridQueue(t *testing.T) {
	ok, ch, fail := Record{}, Record{Changed: true}, Record{Failed: true}
	runs := func(rs ...Record) []Record {
		for i := range rs {
			rs[i].Run = int64(i * 2) // every other run
		}
		return rs
	}
	h := Hybrid{} // Normal 15, Slow 30, cut 1/√450 ≈ 0.047 per run, 4 records
	tests := []struct {
		name    string
		history []Record
		wantFr  int
		wantOK  bool
	}{
		{"no history: sampled", nil, 0, false},
		{"three records: sampled", runs(ok, ch, ch), 0, false},
		{"failures do not count", runs(ok, ch, fail, ch, fail), 0, false},
		{"changes often: Normal", runs(ok, ch, ch, ok, ch), 15, true},
		{"never changes: Slow", runs(ok, ok, ok, ok, ok, ok), 30, true},
		// Over 10 intervals of 2 runs, one change: Cho's λ = −log(9.5/10.5)/2 ≈ 0.050 >= cut.
		{"one change in ten: just Normal", runs(ok, ok, ok, ok, ok, ch, ok, ok, ok, ok, ok), 15, true},
		{"one change in 20: Slow", runs(ok, ok, ok, ok, ok, ok, ok, ok, ok, ok, ch, ok, ok, ok, ok, ok, ok, ok, ok, ok, ok), 30, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fr, got := h.Queue(Page{History: tt.history})
			if fr != tt.wantFr || got != tt.wantOK {
				t.Errorf("Queue = %d, %v; want %d, %v", fr, got, tt.wantFr, tt.wantOK)
			}
		})
	}
	if fr, _ := (Hybrid{Normal: 3, Slow: 9, Cut: 10}).Queue(Page{History: runs(ch, ch, ch, ch, ch)}); fr != 9 {
		t.Errorf("explicit cut above any estimate: fr %d, want Slow 9", fr)
	}
	for _, bad := range []Hybrid{{SampleSize: -1}, {Normal: 10, Slow: 5}, {Cut: math.NaN()}, {MinHistory: -2}} {
		if bad.Validate() == nil {
			t.Errorf("Validate(%+v) = nil, want an error", bad)
		}
	}
	if err := (Hybrid{}).Validate(); err != nil {
		t.Errorf("zero Hybrid: %v", err)
	}
}

func TestHybridPolicy(t *testing.T) {
	h := Hybrid{MinHistory: 3, Normal: 5, Slow: 20}
	p := h.Policy()
	rec := func(changed ...bool) []Record {
		var out []Record
		for i, c := range changed {
			out = append(out, Record{Run: int64(i + 1), Changed: c && i > 0})
		}
		return out
	}
	tests := []struct {
		name    string
		history []Record
		want    int
	}{
		{"still sampled", rec(false, true), 1},
		{"changes often: Normal", rec(false, true, true, true), 5},
		{"never changes: Slow", rec(false, false, false, false), 20},
	}
	for _, tc := range tests {
		if got := p.NextFrMax(Page{FrMax: 1, History: tc.history}); got != tc.want {
			t.Errorf("%s: fr_max %d, want %d", tc.name, got, tc.want)
		}
	}
	if p.Name() != "hybrid" || h.History() != 3 || (Hybrid{}).History() != DefaultMinHistory {
		t.Errorf("name %q, history %d", p.Name(), h.History())
	}
}
