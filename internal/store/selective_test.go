package store_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/strata-crawler/strata/internal/store"
)

// TestDueURLReportsTheHubState: a due URL carries its hub state as SetHub stored it, and says so
// (HubStored), so that the selective rule can leave a state that did not change unwritten. A URL
// no rule has judged reports the defaults: threshold 0.40, no child ratio (-1).
func TestDueURLReportsTheHubState(t *testing.T) {
	ctx := t.Context()
	db := mustOpen(t, filepath.Join(t.TempDir(), "s.db"), store.Options{})
	urls := []string{"https://a.example/judged", "https://a.example/never"}
	var ids []int64
	for _, u := range urls {
		if _, err := db.AddSeeds(ctx, []store.NewSeed{{URL: u, Host: "a.example", Level: 2, FrMax: 1}}); err != nil {
			t.Fatal(err)
		}
		info, err := db.URLInfo(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, info.ID)
	}
	if err := db.SetHub(ctx, ids[0], 0.3, 0.25); err != nil {
		t.Fatal(err)
	}
	run, err := db.BeginRun(ctx, time.Date(2026, 11, 26, 3, 0, 0, 0, time.UTC), 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := db.Countdown(ctx); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		id               int64
		threshold, ratio float64
	}{
		{ids[0], 0.3, 0.25},
		{ids[1], 0.40, -1},
	} {
		u, err := db.DueByID(ctx, tt.id, run)
		if err != nil {
			t.Fatal(err)
		}
		if !u.HubStored || u.Threshold != tt.threshold || u.ChildRatio != tt.ratio {
			t.Errorf("URL %d: HubStored %v, threshold %v, child ratio %v; want true, %v, %v", tt.id, u.HubStored, u.Threshold,
				u.ChildRatio, tt.threshold, tt.ratio)
		}
	}
}
