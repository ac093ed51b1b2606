package store_test

import (
	"testing"
	"time"

	"github.com/strata-crawler/strata/internal/store"
)

// HasArchivePath knows the versions fetches recorded, and only those. (storetest checks the
// manifest of the same fetches on both backends.)
func TestHasArchivePath(t *testing.T) {
	ctx := t.Context()
	now := time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)
	db := seedDB(t, &now,
		store.NewSeed{URL: "https://a.example/1", Host: "a.example", Level: 0, FrMax: 1},
		store.NewSeed{URL: "https://a.example/2", Host: "a.example", Level: 0, FrMax: 1},
		store.NewSeed{URL: "https://a.example/3", Host: "a.example", Level: 0, FrMax: 1})
	run1, _ := db.BeginRun(ctx, now, 0)
	for i := 0; i < 3; i++ {
		d, _ := db.NextDue(ctx, store.DueQuery{Hosts: []string{"a.example"}, Run: 0})
		rec := store.FetchRecord{URLID: d.ID, RunID: run1, FetchedAt: now, Status: 200, ContentHash: "h", NextFr: 1,
			ArchivePath: "r1/a.example/" + d.URL[len(d.URL)-1:]}
		if i == 2 {
			rec = store.FetchRecord{URLID: d.ID, RunID: run1, FetchedAt: now, Status: 503, Error: "HTTP 503", NextFr: 1}
		}
		db.RecordFetch(ctx, rec)
	}
	if ok, _ := db.HasArchivePath(ctx, "r1/a.example/2"); !ok {
		t.Error("HasArchivePath missed a recorded version")
	}
	if ok, _ := db.HasArchivePath(ctx, "r9/x"); ok {
		t.Error("HasArchivePath found an unrecorded version")
	}
}
