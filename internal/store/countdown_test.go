package store_test

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/strata-crawler/strata/internal/store"
)

// dueTickSchema is migrations/0013_due_tick.sql: fr stored as the tick it counts down to.
const dueTickSchema = 13

// TestDueTickMigration writes countdowns the way schema 12 kept them (fr, decremented every run),
// migrates, and checks that every page reports the same fr and comes due in the same run as the
// paper's countdown would have made it, including pages crawled in between.
func TestDueTickMigration(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "strata.db")
	mustOpen(t, path, store.Options{MaxVersion: dueTickSchema - 1}).Close()
	raw := rawDB(t, path)
	frs := []int{0, 1, 2, 3, 5}
	for i, fr := range frs {
		if _, err := raw.Exec(`INSERT INTO urls (id, url, host, level, fr, fr_max, added_at)
			VALUES (?, ?, 'a.example', 0, ?, 2, '2025-01-01T00:00:00.000Z')`, i+1, fmt.Sprintf("https://a.example/%d", fr), fr); err != nil {
			t.Fatal(err)
		}
	}
	raw.Close()

	db := mustOpen(t, path, store.Options{})
	for _, fr := range frs {
		info, err := db.URLInfo(ctx, fmt.Sprintf("https://a.example/%d", fr))
		if err != nil || info.Fr != fr {
			t.Fatalf("after the migration, fr %d reads as %+v, %v", fr, info, err)
		}
	}
	// The paper's countdown, page by page: fr k comes due in run max(k, 1), and a crawl sets
	// fr = fr_max = 2, so each is due again every other run.
	want := map[int][]int{0: {1, 3, 5}, 1: {1, 3, 5}, 2: {2, 4, 6}, 3: {3, 5}, 5: {5}}
	got := map[int][]int{}
	for run := 1; run <= 6; run++ {
		due, waiting, err := db.Countdown(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if due+waiting != len(frs) {
			t.Fatalf("run %d: %d due + %d waiting, want %d pages", run, due, waiting, len(frs))
		}
		for {
			d, err := db.NextDue(ctx, store.DueQuery{Hosts: []string{"a.example"}, Run: int64(run)})
			if err != nil {
				break
			}
			var fr int
			fmt.Sscanf(d.URL, "https://a.example/%d", &fr)
			got[fr] = append(got[fr], run)
			if err := db.RecordFetch(ctx, store.FetchRecord{URLID: d.ID, Status: 200, NextFr: 2}); err != nil {
				t.Fatal(err)
			}
		}
	}
	for fr, runs := range want {
		if !equal(got[fr], runs) {
			t.Errorf("page with fr %d before the migration: due in runs %v, want %v", fr, got[fr], runs)
		}
	}
}

// TestCountdownReports checks what the store says about fr between runs: URLInfo's fr counts down
// run by run, a page kept out of the crawl (not active) while its tick passes comes due at the first
// countdown after it is active again, and the status's "due next run" counts the pages with fr <= 1.
func TestCountdownReports(t *testing.T) {
	ctx := t.Context()
	db := mustOpen(t, filepath.Join(t.TempDir(), "s.db"), store.Options{})
	if _, err := db.AddSeeds(ctx, []store.NewSeed{
		{URL: "https://a.example/", Host: "a.example", FrMax: 3},
		{URL: "https://b.example/", Host: "b.example", FrMax: 4},
	}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := db.Countdown(ctx); err != nil {
		t.Fatal(err)
	}
	ids := map[string]int64{}
	for _, host := range []string{"a.example", "b.example"} {
		d, err := db.NextDue(ctx, store.DueQuery{Hosts: []string{host}, Run: 1})
		if err != nil {
			t.Fatal(err)
		}
		ids[host] = d.ID
		if err := db.RecordFetch(ctx, store.FetchRecord{URLID: d.ID, Status: 200, NextFr: d.FrMax}); err != nil {
			t.Fatal(err)
		}
	}
	fr := func(url string) int {
		t.Helper()
		info, err := db.URLInfo(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		return info.Fr
	}
	if a, b := fr("https://a.example/"), fr("https://b.example/"); a != 3 || b != 4 {
		t.Fatalf("after the crawl: fr %d and %d, want fr_max 3 and 4", a, b)
	}
	// b is set aside for its whole interval and more.
	if err := db.SetState(ctx, ids["b.example"], "blocked"); err != nil {
		t.Fatal(err)
	}
	for run, wantA := range []int{2, 1} {
		if _, _, err := db.Countdown(ctx); err != nil {
			t.Fatal(err)
		}
		if got := fr("https://a.example/"); got != wantA {
			t.Errorf("after %d countdowns: fr %d, want %d", run+1, got, wantA)
		}
	}
	st, err := db.Status(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if st.DueNextRun != 1 {
		t.Errorf("due next run: %d, want 1 (a, fr 1)", st.DueNextRun)
	}
	for range 4 {
		if _, _, err := db.Countdown(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.SetState(ctx, ids["b.example"], "active"); err != nil {
		t.Fatal(err)
	}
	hosts, err := db.DueHosts(ctx)
	if err != nil || hosts["b.example"] != 0 {
		t.Fatalf("before the next countdown: due hosts %v, %v; b is not due yet", hosts, err)
	}
	if _, _, err := db.Countdown(ctx); err != nil {
		t.Fatal(err)
	}
	if hosts, err = db.DueHosts(ctx); err != nil || hosts["b.example"] != 1 {
		t.Fatalf("after it: due hosts %v, %v; want b due", hosts, err)
	}
}
