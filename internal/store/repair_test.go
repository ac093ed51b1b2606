package store_test

import (
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/strata-crawler/strata/internal/store"
)

// The prune journal: MarkPruned marks the versions and journals them in one step; they stay in
// PendingPrunes until Pruned, and no longer count as stored meanwhile.
func TestPruneJournal(t *testing.T) {
	ctx := t.Context()
	db := mustOpen(t, filepath.Join(t.TempDir(), "strata.db"), store.Options{})
	ids, err := db.Immediate(ctx, []store.NewURL{{URL: "https://a.example/", Host: "a.example"}})
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)
	for i, p := range []string{"r1/a.example/_index", "r2/a.example/_index", "r3/a.example/_index"} {
		run, _ := db.BeginRun(ctx, at.Add(time.Duration(i)*time.Hour), 0)
		if err := db.RecordFetch(ctx, store.FetchRecord{URLID: ids[0], RunID: run, FetchedAt: at.Add(time.Duration(i) * time.Hour),
			Status: 200, ContentHash: p, ArchivePath: p, NextFr: 1}); err != nil {
			t.Fatal(err)
		}
	}
	vs, err := db.Prunable(ctx, at.Add(24*time.Hour))
	if err != nil || len(vs) != 2 {
		t.Fatalf("Prunable = %+v, %v; want the two older versions", vs, err)
	}
	if err := db.MarkPruned(ctx, vs, at.Add(25*time.Hour)); err != nil {
		t.Fatal(err)
	}
	pending, err := db.PendingPrunes(ctx)
	if err != nil || !slices.Equal(pending, []string{"r1/a.example/_index", "r2/a.example/_index"}) {
		t.Errorf("PendingPrunes = %v, %v", pending, err)
	}
	if left, _ := db.Prunable(ctx, at.Add(24*time.Hour)); len(left) != 0 {
		t.Errorf("versions marked pruned are still prunable: %+v", left)
	}
	if paths, _ := db.ArchivePaths(ctx, "https://a.example/"); len(paths) != 3 {
		t.Errorf("the fetches lost their archive paths: %v", paths)
	}
	if err := db.Pruned(ctx, pending); err != nil {
		t.Fatal(err)
	}
	if pending, err := db.PendingPrunes(ctx); err != nil || len(pending) != 0 {
		t.Errorf("PendingPrunes after Pruned = %v, %v", pending, err)
	}
}
