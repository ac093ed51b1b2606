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
