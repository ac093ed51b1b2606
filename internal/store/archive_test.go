package store_test

import (
	"testing"
	"time"

	"github.com/strata-crawler/strata/internal/store"
)

func TestRunManifest(t *testing.T) {
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
	db.Countdown(ctx) // the next run
	run2, _ := db.BeginRun(ctx, now.Add(time.Hour), 0)
	outcomes := []store.FetchRecord{
		{Status: 200, ContentHash: "h2", Changed: true, ArchivePath: "r2/a.example/1"},
		{Status: 304, NotModified: true},
		{Status: 301},
	}
	for _, rec := range outcomes {
		d, _ := db.NextDue(ctx, store.DueQuery{Hosts: []string{"a.example"}, Run: 0})
		rec.URLID, rec.RunID, rec.FetchedAt, rec.NextFr = d.ID, run2, now, 1
		db.RecordFetch(ctx, rec)
	}
	var m []store.ManifestEntry
	err := db.RunManifest(ctx, run2, func(e store.ManifestEntry) error { m = append(m, e); return nil })
	if err != nil {
		t.Fatal(err)
	}
	want := []store.ManifestEntry{
		{URL: "https://a.example/1", Outcome: "changed", Current: "r2/a.example/1"},
		{URL: "https://a.example/2", Outcome: "not_modified", Current: "r1/a.example/2"},
		{URL: "https://a.example/3", Outcome: "redirect"},
	}
	if len(m) != len(want) {
		t.Fatalf("manifest %+v", m)
	}
	for i := range want {
		if m[i] != want[i] {
			t.Errorf("entry %d = %+v, want %+v", i, m[i], want[i])
		}
	}
	if ok, _ := db.HasArchivePath(ctx, "r1/a.example/2"); !ok {
		t.Error("HasArchivePath missed a recorded version")
	}
	if ok, _ := db.HasArchivePath(ctx, "r9/x"); ok {
		t.Error("HasArchivePath found an unrecorded version")
	}
}
