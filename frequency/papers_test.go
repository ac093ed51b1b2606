package frequency

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
)

// TestWolfOrdering reproduces the ordering of Wolf et al.'s figure 8 (average staleness, Poisson
// pages with Zipf-distributed rates, mean 1.5 updates per scheduling interval of one day, analytic
// A(x) as in the paper): at equal budget, optimal < uniform < proportional, for R/N from 1.5 to 5.
func TestWolfOrdering(t *testing.T) {
	const n = 2000
	rates := make([]float64, n)
	h := 0.0
	for k := 1; k <= n; k++ {
		h += 1 / float64(k)
	}
	for k := range rates {
		rates[k] = 1.5 * n / h / float64(k+1) // Zipf, q = 0: mean 1.5 per day
	}
	r := rand.New(rand.NewPCG(8, 9))
	r.Shuffle(n, func(i, j int) { rates[i], rates[j] = rates[j], rates[i] })
	staleness := func(x []int) float64 {
		s := 0.0
		for i, lambda := range rates {
			s += Staleness(lambda, 1, x[i])
		}
		return s / n
	}
	var table strings.Builder
	fmt.Fprintf(&table, "\n%5s %9s %9s %12s\n", "R/N", "optimal", "uniform", "proportional")
	for _, rn := range []float64{1.5, 2, 2.5, 3, 4, 5} {
		budget := int(rn * n)
		// Optimal: Fox's greedy per page (unit costs: exact).
		loads := make([]BucketLoad, n)
		for i, lambda := range rates {
			loads[i] = BucketLoad{Pages: 1, Rate: lambda, Weight: 1}
		}
		opt := Allocate(loads, float64(budget), 0, budget, 1)
		// Uniform: as evenly as possible.
		uni := make([]int, n)
		for i := range uni {
			uni[i] = budget / n
			if i < budget%n {
				uni[i]++
			}
		}
		// Proportional: x_i ∝ λ_i, largest remainders.
		total := 0.0
		for _, lambda := range rates {
			total += lambda
		}
		prop := make([]int, n)
		rem := make([]int, n)
		used := 0
		for i, lambda := range rates {
			q := float64(budget) * lambda / total
			prop[i] = int(q)
			used += prop[i]
			rem[i] = i
		}
		sort.Slice(rem, func(a, b int) bool {
			fa := float64(budget)*rates[rem[a]]/total - float64(prop[rem[a]])
			fb := float64(budget)*rates[rem[b]]/total - float64(prop[rem[b]])
			return fa > fb
		})
		for _, i := range rem[:budget-used] {
			prop[i]++
		}
		so, su, sp := staleness(opt), staleness(uni), staleness(prop)
		fmt.Fprintf(&table, "%5.1f %9.4f %9.4f %12.4f\n", rn, so, su, sp)
		if !(so < su && su < sp) {
			t.Errorf("R/N %v: staleness optimal %.4f, uniform %.4f, proportional %.4f; want optimal < uniform < proportional", rn, so, su, sp)
		}
		if math.IsNaN(so + su + sp) {
			t.Fatal("NaN staleness")
		}
	}
	t.Log(table.String())
}
