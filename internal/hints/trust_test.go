package hints_test

import (
	"math"
	"testing"

	"github.com/strata-crawler/strata/internal/hints"
)

func TestTrustObserve(t *testing.T) {
	tests := []struct {
		name               string
		hintNewer, changed bool
		agreed, disagreed  int
	}{
		{"said changed, changed", true, true, 1, 0},
		{"said unchanged, unchanged", false, false, 1, 0},
		{"said changed, unchanged", true, false, 0, 1},
		{"said unchanged, changed", false, true, 0, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := hints.Trust{}.Observe(tt.hintNewer, tt.changed)
			if got.Agreed != tt.agreed || got.Disagreed != tt.disagreed {
				t.Errorf("Observe = %+v, want {%d %d}", got, tt.agreed, tt.disagreed)
			}
		})
	}
}

func TestTrustRules(t *testing.T) {
	tests := []struct {
		name                   string
		trust                  hints.Trust
		score                  float64
		trusted, distrusted    bool
		actNewer, actUnchanged bool
	}{
		{"new host", hints.Trust{}, 0.5, false, false, true, false},
		{"four right", hints.Trust{Agreed: 4}, 5.0 / 6, false, false, true, false},
		{"five right", hints.Trust{Agreed: 5}, 6.0 / 7, true, false, true, true},
		{"four right one wrong", hints.Trust{Agreed: 4, Disagreed: 1}, 5.0 / 7, false, false, true, false},
		{"nine right one wrong", hints.Trust{Agreed: 9, Disagreed: 1}, 10.0 / 12, true, false, true, true},
		{"eight right two wrong", hints.Trust{Agreed: 8, Disagreed: 2}, 9.0 / 12, false, false, true, false},
		{"five wrong", hints.Trust{Disagreed: 5}, 1.0 / 7, false, true, false, false},
		{"four wrong", hints.Trust{Disagreed: 4}, 1.0 / 6, false, false, true, false},
		{"half right", hints.Trust{Agreed: 3, Disagreed: 3}, 0.5, false, false, true, false},
		{"two right four wrong", hints.Trust{Agreed: 2, Disagreed: 4}, 3.0 / 8, false, true, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := tt.trust
			if got := tr.Score(); math.Abs(got-tt.score) > 1e-12 {
				t.Errorf("Score = %v, want %v", got, tt.score)
			}
			if tr.Trusted() != tt.trusted || tr.Distrusted() != tt.distrusted {
				t.Errorf("Trusted %v Distrusted %v, want %v %v", tr.Trusted(), tr.Distrusted(), tt.trusted, tt.distrusted)
			}
			if tr.Act(true) != tt.actNewer || tr.Act(false) != tt.actUnchanged {
				t.Errorf("Act(newer) %v Act(unchanged) %v, want %v %v", tr.Act(true), tr.Act(false), tt.actNewer, tt.actUnchanged)
			}
		})
	}
}

// TestTrustHistory runs hosts through sequences of observations: an honest host earns trust, a host
// whose sitemap stamps every page with the time it was generated loses it, and a host that changes
// behaviour is judged by its recent record.
func TestTrustHistory(t *testing.T) {
	var honest, stamper hints.Trust
	for i := range 20 {
		changed := i%3 == 0
		honest = honest.Observe(changed, changed) // its lastmod moves exactly when the page changes
		stamper = stamper.Observe(true, changed)  // lastmod is always "now"
	}
	if !honest.Trusted() || honest.Score() < 0.95 {
		t.Errorf("honest host after 20 observations: %v, want trusted", honest)
	}
	if !stamper.Distrusted() {
		t.Errorf("always-new host after 20 observations: %v, want distrusted", stamper)
	}

	// A host trusted for a long time that starts lying loses trust within a few dozen fetches.
	tr := hints.Trust{}
	for range 1000 {
		tr = tr.Observe(false, false)
	}
	if tr.Observations() >= hints.MaxObservations {
		t.Fatalf("%d observations kept, want fewer than %d", tr.Observations(), hints.MaxObservations)
	}
	lies := 0
	for tr.Trusted() {
		tr = tr.Observe(false, true)
		lies++
	}
	if lies > hints.MaxObservations/2 {
		t.Errorf("trust lost after %d wrong hints, want at most %d", lies, hints.MaxObservations/2)
	}
}

func TestTrustString(t *testing.T) {
	for _, tt := range []struct {
		trust hints.Trust
		want  string
	}{
		{hints.Trust{}, "0.50 (0 of 0 hints right, learning)"},
		{hints.Trust{Agreed: 9, Disagreed: 1}, "0.83 (9 of 10 hints right, trusted)"},
		{hints.Trust{Agreed: 1, Disagreed: 9}, "0.17 (1 of 10 hints right, distrusted)"},
		{hints.Trust{Agreed: 7, Disagreed: 3}, "0.67 (7 of 10 hints right, undecided)"},
	} {
		if got := tt.trust.String(); got != tt.want {
			t.Errorf("%+v.String() = %q, want %q", tt.trust, got, tt.want)
		}
	}
}
