package pgstore_test

import (
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/strata-crawler/strata/internal/pgstore"
	"github.com/strata-crawler/strata/internal/store"
)

// TestPrunableLeavesFleetVersions: a version a fleet worker archived lives under that worker's
// archive root, so Prunable never offers it; the other old versions it does.
func TestPrunableLeavesFleetVersions(t *testing.T) {
	db := open(t)
	ctx := t.Context()
	pages := []string{"http://a.test/fleet", "http://a.test/alone"}
	var seeds []store.NewSeed
	for _, u := range pages {
		seeds = append(seeds, store.NewSeed{URL: u, Host: "a.test", FrMax: 1})
	}
	if _, err := db.AddSeeds(ctx, seeds); err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 3, 2, 4, 0, 0, 0, time.UTC)
	for n := range 2 {
		if _, _, err := db.Countdown(ctx); err != nil {
			t.Fatal(err)
		}
		start := t0.AddDate(0, 0, n)
		run, err := db.BeginRun(ctx, start, 0)
		if err != nil {
			t.Fatal(err)
		}
		for i := range pages {
			u, err := db.NextDue(ctx, store.DueQuery{Hosts: []string{"a.test"}, Run: run})
			if err != nil {
				t.Fatal(err)
			}
			if err := db.RecordFetch(ctx, store.FetchRecord{URLID: u.ID, RunID: run, FetchedAt: start.Add(time.Duration(i+1) * time.Minute),
				Status: 200, ContentType: "text/html", ContentHash: u.URL + start.String(), Changed: true, Magnitude: -1,
				ArchivePath: u.URL + "/" + start.Format("2006-01-02"), NextFr: 1}); err != nil {
				t.Fatal(err)
			}
		}
	}
	id, err := db.URLID(ctx, pages[0])
	if err != nil {
		t.Fatal(err)
	}
	fs, err := db.Fetches(ctx, id, 0, 10)
	if err != nil || len(fs) != 2 {
		t.Fatalf("fetches of %s = %v, %v", pages[0], fs, err)
	}
	older := slices.MinFunc(fs, func(a, b store.Fetch) int { return int(a.ID - b.ID) })
	if err := pgstore.Rows(ctx, db, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO fleet_versions (fetch_id, worker) VALUES ($1, 'w1')`, older.ID)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	vs, err := db.Prunable(ctx, t0.AddDate(1, 0, 0))
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != 1 || vs[0].URL != pages[1] {
		t.Errorf("Prunable = %+v; want only the older version of %s, not the fleet worker's", vs, pages[1])
	}
}
