package crawler

import (
	"testing"

	"github.com/strata-crawler/strata/internal/hints"
)

// TestHintQueueHeeded: an origin's "changed" hints move pages only while at least half of those
// checked were right, whatever its agreement over all hints.
func TestHintQueueHeeded(t *testing.T) {
	tests := []struct {
		name string
		q    hintQueue
		want bool
	}{
		{"new origin: the benefit of the doubt", hintQueue{}, true},
		{"few checks yet", hintQueue{falseAlarms: 4, trust: hints.Trust{Disagreed: 4}}, true},
		{"honest", hintQueue{announced: 20, falseAlarms: 1, trust: hints.Trust{Agreed: 40, Disagreed: 1}}, true},
		{"half right", hintQueue{announced: 5, falseAlarms: 5, trust: hints.Trust{Agreed: 30, Disagreed: 5}}, true},
		// Right about every page that changed, and about unchanged pages never asked: a sitemap that
		// stamps everything with today's date keeps a fair score over all its hints.
		{"stamps everything today", hintQueue{announced: 6, falseAlarms: 14, trust: hints.Trust{Agreed: 16, Disagreed: 14}}, false},
		{"distrusted overall", hintQueue{announced: 3, falseAlarms: 2, trust: hints.Trust{Agreed: 2, Disagreed: 20}}, false},
	}
	for _, tt := range tests {
		if got := tt.q.heeded(); got != tt.want {
			t.Errorf("%s: heeded() = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestAuditRun(t *testing.T) {
	tests := []struct {
		name string
		q    hintQueue
		want int // audit runs among 16 in a row
	}{
		{"new origin", hintQueue{}, 16},
		{"short record", hintQueue{announced: 3}, 16},
		{"4 announced", hintQueue{announced: 4}, 8},
		{"8 announced", hintQueue{announced: 8}, 4},
		{"long clean record", hintQueue{announced: 15}, 4},
		{"a miss: every run again", hintQueue{announced: 15, missed: 1}, 16},
	}
	for _, tt := range tests {
		for _, origin := range []string{"https://a.example", "https://b.example:8443"} {
			got := 0
			for run := int64(101); run <= 116; run++ {
				if tt.q.auditRun(run, origin) {
					got++
				}
			}
			if got != tt.want {
				t.Errorf("%s, %s: audited in %d of 16 runs, want %d", tt.name, origin, got, tt.want)
			}
		}
	}
}
