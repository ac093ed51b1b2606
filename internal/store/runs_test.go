package store_test

import (
	"testing"
	"time"

	"github.com/strata-crawler/strata/internal/store"
)

func TestCloseStaleRuns(t *testing.T) {
	ctx := t.Context()
	now := time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)
	db := seedDB(t, &now, store.NewSeed{URL: "https://a.example/", Host: "a.example", Level: 0, FrMax: 1})
	run, _ := db.BeginRun(ctx, now, 0)
	d, _ := db.NextDue(ctx, store.DueQuery{Hosts: []string{"a.example"}, Run: 0})
	db.RecordFetch(ctx, store.FetchRecord{URLID: d.ID, RunID: run, FetchedAt: now.Add(time.Minute), Status: 200,
		ContentHash: "h", ArchivePath: "2026-11-22T030000Z/a.example/_index", NextFr: 1})
	closed, err := db.CloseStaleRuns(ctx)
	if err != nil || len(closed) != 1 || closed[0].ID != run || !closed[0].StartedAt.Equal(now) {
		t.Fatalf("CloseStaleRuns = %+v, %v", closed, err)
	}
	runs, _ := db.RecentRuns(ctx, 1)
	if r := runs[0]; r.Status != "interrupted" || r.Fetched != 1 || r.New != 1 || r.Unchanged != 0 || r.EndedAt != now.Add(time.Minute) {
		t.Errorf("stale run closed as %+v", r)
	}
}
