package crawler_test

import (
	"testing"

	"github.com/strata-crawler/strata/crawler"
)

func TestStatsProgress(t *testing.T) {
	tests := []struct {
		name        string
		st          crawler.Stats
		done, total int
	}{
		{"under way", crawler.Stats{Due: 100, Done: 40, KnownFetched: 40}, 40, 100},
		{"pages skipped with their hub", crawler.Stats{Due: 100, Done: 70, KnownFetched: 70, SkippedSelective: 30}, 70, 70},
		{"the budget ends the run", crawler.Stats{Due: 500, Done: 50, Budget: 50, NewFetched: 10, KnownFetched: 40}, 50, 50},
		{"a budget, and URLs blocked that spend none of it", crawler.Stats{Due: 500, Done: 55, Budget: 50, KnownFetched: 50, Blocked: 5}, 55, 55},
		{"a budget larger than the due URLs", crawler.Stats{Due: 20, Done: 5, Budget: 50, KnownFetched: 5}, 5, 20},
		{"more done than due", crawler.Stats{Due: 10, Done: 12, KnownFetched: 12}, 12, 12},
		{"nothing due", crawler.Stats{}, 0, 0},
	}
	for _, tt := range tests {
		if done, total := tt.st.Progress(); done != tt.done || total != tt.total {
			t.Errorf("%s: Progress() = %d of %d, want %d of %d", tt.name, done, total, tt.done, tt.total)
		}
	}
}
