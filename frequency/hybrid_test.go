package frequency

import (
	"math"
	"testing"
)

func TestSampleMore(t *testing.T) {
	for _, tt := range []struct {
		rho, rho0, want, tol float64
	}{
		{0.3, 0.3, 0.5, 1e-15},
		{0, 0, 0.5, 1e-15},
		{0.4, 0.3, (math.Tanh(1) + 1) / 2, 1e-15}, // 0.881
		{0.2, 0.3, (1 - math.Tanh(1)) / 2, 1e-15}, // 0.119
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
