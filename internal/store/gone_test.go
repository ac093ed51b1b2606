package store_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/strata-crawler/strata/internal/store"
)

// A page whose last answer was 404 is due at the next countdown although recalculation gave it a
// long interval, the selective rule does not skip it with its hub, and the status counts it due
// next run; once it is gone, nothing makes it due: not its hub's visit, not the countdown.
func TestNotFoundPageIsDueUntilGone(t *testing.T) {
	ctx := t.Context()
	db := mustOpen(t, filepath.Join(t.TempDir(), "strata.db"), store.Options{})
	ids, err := db.Immediate(ctx, []store.NewURL{{URL: "https://a.example/", Host: "a.example"}})
	if err != nil {
		t.Fatal(err)
	}
	hub := ids[0]
	kids, err := db.Discover(ctx, []store.NewURL{
		{URL: "https://a.example/missing", Host: "a.example", FrMax: 1, ParentID: hub},
		{URL: "https://a.example/fine", Host: "a.example", FrMax: 1, ParentID: hub},
	})
	if err != nil || len(kids) != 2 {
		t.Fatalf("Discover = %v, %v", kids, err)
	}
	missing, _ := db.URLInfo(ctx, "https://a.example/missing")
	fine, _ := db.URLInfo(ctx, "https://a.example/fine")
	at := time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)
	run, _ := db.BeginRun(ctx, at, 0)
	if _, _, err := db.Countdown(ctx); err != nil {
		t.Fatal(err)
	}
	record := func(id int64, status int, state string) {
		t.Helper()
		if err := db.RecordFetch(ctx, store.FetchRecord{URLID: id, RunID: run, FetchedAt: at, Status: status, NextFr: 1, State: state}); err != nil {
			t.Fatal(err)
		}
	}
	record(missing.ID, 404, "")
	record(fine.ID, 200, "")
	// Recalculation gives both a long interval.
	if err := db.SetFrMax(ctx, []store.FrMaxUpdate{{URLID: missing.ID, FrMax: 6, Was: 1, Rate: -1}, {URLID: fine.ID, FrMax: 6, Was: 1, Rate: -1}}); err != nil {
		t.Fatal(err)
	}
	if st, err := db.Status(ctx, 1); err != nil || st.DueNextRun != 2 { // the hub, never fetched, and the 404 page
		t.Errorf("due next run: %+v, %v; want the hub and the page that answered 404", st, err)
	}
	if due, _, err := db.Countdown(ctx); err != nil || due != 2 {
		t.Errorf("countdown: %d due, %v; want the hub and the page that answered 404", due, err)
	}
	if n, err := db.SkipSubtree(ctx, hub, run+1, 3, func([]store.Record) bool { return true }); err != nil || n != 0 {
		t.Errorf("SkipSubtree skipped %d, %v; a page that answered 404 is not skipped", n, err)
	}
	if info, _ := db.URLInfo(ctx, missing.URL); info.Fr != 0 {
		t.Errorf("the 404 page's fr is %d, want 0 (due)", info.Fr)
	}

	record(missing.ID, 404, "gone")
	for range 7 {
		if _, _, err := db.Countdown(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.ForceChildren(ctx, hub, at.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	hosts, err := db.DueHosts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := db.NextDue(ctx, store.DueQuery{Hosts: []string{"a.example"}, Run: run + 9, Only: []int64{missing.ID}}); err == nil {
		t.Errorf("the gone page is due: %+v (due hosts %v)", got, hosts)
	}
}
