package simulate

import (
	"testing"

	"github.com/strata-crawler/strata/frequency"
)

func TestDebugCeiling(t *testing.T) {
	for _, share := range []float64{0.1, 0.2, 0.5} {
		cfg := Config{Pages: 1000, Sites: 10, Days: 30, Seed: 1, Mix: mustMix(t, "cho"), Budget: int(share * 1000)}
		w, _ := NewWeb(cfg)
		var loads []frequency.BucketLoad
		for _, p := range w.pages {
			if p.born == 0 {
				loads = append(loads, frequency.BucketLoad{Pages: 1, Rate: p.rate, Weight: 1})
			}
		}
		f := frequency.AllocateIntervals(loads, float64(cfg.Budget), 1, 365)
		fresh, uni := 0.0, 0.0
		for i, l := range loads {
			fresh += 1 - frequency.Staleness(l.Rate, float64(f[i]), 0)
			uni += 1 - frequency.Staleness(l.Rate, float64(len(loads))/float64(cfg.Budget), 0)
		}
		t.Logf("share %.1f: steady optimum %.3f, uniform %.3f", share, fresh/float64(len(loads)), uni/float64(len(loads)))
	}
}
