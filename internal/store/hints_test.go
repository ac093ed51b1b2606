package store_test

import (
	"path/filepath"
	"testing"

	"github.com/strata-crawler/strata/internal/store"
)

// TestObserveHintKeepsRecentWindows: an origin's hint record follows its recent hints. After a long
// honest past, a sitemap that stops announcing changes has its misses outweigh its announcements
// within a few checks, where cumulative counts would have taken as many misses as it had
// announcements in all.
func TestObserveHintKeepsRecentWindows(t *testing.T) {
	ctx := t.Context()
	db := mustOpen(t, filepath.Join(t.TempDir(), "s.db"), store.Options{})
	const o = "https://a.example"
	observe := func(n int, agreed, changed bool) {
		t.Helper()
		for range n {
			if err := db.ObserveHint(ctx, o, "a.example", agreed, changed); err != nil {
				t.Fatal(err)
			}
		}
	}
	observe(300, true, true)  // a year of announced changes
	observe(300, true, false) // and of pages it rightly called unchanged
	h, err := db.HostHints(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if h.Agreed+h.Disagreed >= store.HintObservations || h.Announced+h.Missed+h.FalseAlarms >= store.HintChecks {
		t.Fatalf("after 600 observations: %+v; want the counts within their windows (%d, %d)", h, store.HintObservations, store.HintChecks)
	}
	if h.Announced == 0 || h.Missed != 0 || h.FalseAlarms != 0 || h.Disagreed != 0 {
		t.Fatalf("an honest past: %+v", h)
	}
	observe(3, false, true) // the sitemap froze: three changes it did not announce
	if h, err = db.HostHints(ctx, o); err != nil {
		t.Fatal(err)
	}
	if h.Missed*5 <= h.Announced {
		t.Errorf("after 3 misses: announced %d, missed %d; the misses should outweigh a fifth of the announcements", h.Announced, h.Missed)
	}
	observe(1, false, false) // and a false alarm: counted as one, not as a miss
	if h2, err := db.HostHints(ctx, o); err != nil {
		t.Fatal(err)
	} else if h2.FalseAlarms < 1 || h2.Missed > h.Missed {
		t.Errorf("a false alarm after %+v gave %+v", h, h2)
	}
}
