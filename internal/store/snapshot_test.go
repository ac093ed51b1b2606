package store_test

import (
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/strata-crawler/strata/internal/store"
)

// TestSnapshotSeed: the pages below a snapshot seed come due at every countdown whatever their fr,
// the selective rule never skips them, release days do not hold them back, and the other seed's
// pages keep their intervals; a host backed off as unreachable keeps its wait.
func TestSnapshotSeed(t *testing.T) {
	ctx := t.Context()
	now := time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)
	on := true
	db := seedDB(t, &now,
		store.NewSeed{URL: "https://snap.example/", Host: "snap.example", Level: 1, FrMax: 4, Snapshot: &on},
		store.NewSeed{URL: "https://plain.example/", Host: "plain.example", Level: 1, FrMax: 4},
		store.NewSeed{URL: "https://down.example/", Host: "down.example", Level: 1, FrMax: 4, Snapshot: &on},
	)
	ids := map[string]int64{}
	for _, s := range []string{"https://snap.example/", "https://plain.example/", "https://down.example/"} {
		info, err := db.URLInfo(ctx, s)
		if err != nil {
			t.Fatal(err)
		}
		ids[s] = info.ID
		if want := s != "https://plain.example/"; info.Snapshot != want {
			t.Errorf("%s: Snapshot %v, want %v", s, info.Snapshot, want)
		}
	}
	var kids []store.NewURL
	for _, k := range []struct{ url, host, root string }{
		{"https://snap.example/a", "snap.example", "https://snap.example/"},
		{"https://plain.example/a", "plain.example", "https://plain.example/"},
		{"https://down.example/a", "down.example", "https://down.example/"},
	} {
		kids = append(kids, store.NewURL{URL: k.url, Host: k.host, FrMax: 4, ParentID: ids[k.root], RootID: ids[k.root]})
	}
	if _, err := db.Discover(ctx, kids); err != nil {
		t.Fatal(err)
	}
	// crawlAll runs a crawl of everything due; run 1 crawls every page, which then waits fr_max =
	// 4 runs.
	crawlAll := func() []string {
		run, err := db.BeginRun(ctx, now, 0)
		if err != nil {
			t.Fatal(err)
		}
		hosts, _ := db.DueHosts(ctx)
		var got []string
		for h := range hosts {
			for {
				d, err := db.NextDue(ctx, store.DueQuery{Hosts: []string{h}, Run: run})
				if err != nil {
					break
				}
				got = append(got, d.URL)
				if err := db.RecordFetch(ctx, store.FetchRecord{URLID: d.ID, RunID: run, FetchedAt: now, Status: 200, NextFr: 4}); err != nil {
					t.Fatal(err)
				}
			}
		}
		sort.Strings(got)
		return got
	}
	db.Countdown(ctx)
	if got := crawlAll(); len(got) != 6 {
		t.Fatalf("run 1 crawled %v", got)
	}
	if err := db.SaveHostGaps(ctx, []store.HostGap{{Host: "down.example", LastEnd: now}}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := db.Unreachable(ctx, "down.example", 30); err != nil {
		t.Fatal(err)
	}
	st, _ := db.Status(ctx, 1)
	if st.DueNextRun != 2 {
		t.Errorf("status: %d due next run, want the 2 pages of the snapshot seed", st.DueNextRun)
	}
	db.Countdown(ctx)
	// The hubs' rule would skip every quiet page below them.
	for _, hub := range []string{"https://snap.example/", "https://plain.example/"} {
		n, err := db.SkipSubtree(ctx, ids[hub], 2, 3, func([]store.Record) bool { return true })
		if err != nil || n != 0 {
			t.Errorf("SkipSubtree(%s) = %d, %v; nothing below it is due but the snapshot's, which it must not skip", hub, n, err)
		}
	}
	if got, want := crawlAll(), []string{"https://snap.example/", "https://snap.example/a"}; !slices.Equal(got, want) {
		t.Errorf("run 2 crawled %v, want %v (the snapshot seed's pages; plain's wait for fr, down's for its host)", got, want)
	}
	// Turned off, the seed's pages go back to their intervals.
	off := false
	if _, err := db.AddSeeds(ctx, []store.NewSeed{{URL: "https://snap.example/", Host: "snap.example", Level: 1, FrMax: 4, Snapshot: &off}}); err != nil {
		t.Fatal(err)
	}
	db.Countdown(ctx)
	if got := crawlAll(); len(got) != 0 {
		t.Errorf("run 3 crawled %v after the snapshot was turned off", got)
	}
	seeds, _ := db.Seeds(ctx)
	for _, s := range seeds {
		if s.Snapshot != (s.URL == "https://down.example/") {
			t.Errorf("seed list: %s snapshot %v", s.URL, s.Snapshot)
		}
	}
}
