package simulate

import (
	"bytes"
	"fmt"
	"image/color"
	"strings"
	"testing"
)

func TestPlotStylesAreDistinct(t *testing.T) {
	var ps []PolicyResult
	for i := range len(palette) {
		ps = append(ps, PolicyResult{Name: fmt.Sprint("policy", i)})
	}
	seen := map[color.Color]string{}
	for _, s := range policyStyles(ps) {
		if other, ok := seen[s.color]; ok {
			t.Errorf("%s and %s share a colour", s.name, other)
		}
		seen[s.color] = s.name
	}
}

func TestPlotTicks(t *testing.T) {
	tests := []struct {
		name   string
		ticks  niceTicks
		lo, hi float64
		want   string // the labelled ticks
	}{
		{"days", niceTicks{whole}, 0, 29, "0 10 20"},
		{"days, short", niceTicks{whole}, 0, 9, "0 2 4 6 8"},
		{"fetches", niceTicks{thousands}, 0, 2500, "0 500 1,000 1,500 2,000 2,500"},
		{"freshness", niceTicks{percent}, 0, 1, "0% 20% 40% 60% 80% 100%"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, tk := range tt.ticks.Ticks(tt.lo, tt.hi) {
				if tk.Label != "" {
					got = append(got, tk.Label)
				}
			}
			if strings.Join(got, " ") != tt.want {
				t.Errorf("ticks over [%g, %g] = %q, want %q", tt.lo, tt.hi, strings.Join(got, " "), tt.want)
			}
		})
	}
}

// TestPlotHasOneLegend checks that the points carry no text labels of their own (close policies'
// labels overlapped) and that the legend names each policy once.
func TestPlotHasOneLegend(t *testing.T) {
	r := &Result{Config: Config{Pages: 10, Days: 3, Budget: 2}}
	for _, n := range []string{"uniform", "nutch", "bouras"} {
		r.Policies = append(r.Policies, PolicyResult{Name: n, FetchesPerDay: 2, Freshness: 0.5, DailyFresh: []float64{1, 0.5, 0.4}})
	}
	var buf bytes.Buffer
	if err := r.WritePlot(&buf, "svg"); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"uniform", "nutch", "bouras"} {
		if c := strings.Count(buf.String(), n+"<"); c != 1 {
			t.Errorf("%s is written %d times, want once (in the legend)", n, c)
		}
	}
}
