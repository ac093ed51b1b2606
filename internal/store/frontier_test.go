package store_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/strata-crawler/strata/internal/store"
)

func seedDB(t *testing.T, now *time.Time, seeds ...store.NewSeed) *store.DB {
	t.Helper()
	db := mustOpen(t, filepath.Join(t.TempDir(), "s.db"), store.Options{Now: func() time.Time { return *now }})
	if _, err := db.AddSeeds(t.Context(), seeds); err != nil {
		t.Fatal(err)
	}
	return db
}

func TestCountdownAndNextDue(t *testing.T) {
	ctx := t.Context()
	now := time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)
	db := seedDB(t, &now,
		store.NewSeed{URL: "https://a.example/low", Host: "a.example", Level: 0, FrMax: 3},
		store.NewSeed{URL: "https://a.example/high", Host: "a.example", Level: 2, FrMax: 2},
		store.NewSeed{URL: "https://b.example/", Host: "b.example", Level: 1, FrMax: 1},
	)
	due, waiting, err := db.Countdown(ctx)
	if err != nil || due != 3 || waiting != 0 {
		t.Fatalf("Countdown = %d, %d, %v; want 3 new seeds due, none waiting", due, waiting, err)
	}
	hosts, err := db.DueHosts(ctx)
	if err != nil || hosts["a.example"] != 2 || hosts["b.example"] != 1 {
		t.Fatalf("DueHosts = %v, %v", hosts, err)
	}
	// Level by level: the higher level first.
	d, err := db.NextDue(ctx, store.DueQuery{Hosts: []string{"a.example"}, Run: 0})
	if err != nil || d.URL != "https://a.example/high" {
		t.Fatalf("NextDue = %+v, %v; want the level-2 page", d, err)
	}
	crawl := func(d *store.DueURL) {
		t.Helper()
		if err := db.RecordFetch(ctx, store.FetchRecord{URLID: d.ID, FetchedAt: now, Status: 200, Size: 10,
			ContentHash: "h1", NextFr: d.FrMax, ETag: `"e1"`}); err != nil {
			t.Fatal(err)
		}
	}
	crawl(d)
	d, _ = db.NextDue(ctx, store.DueQuery{Hosts: []string{"a.example"}, Run: 0})
	crawl(d)
	if _, err := db.NextDue(ctx, store.DueQuery{Hosts: []string{"a.example"}, Run: 0}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("NextDue after both were crawled: %v, want ErrNotFound", err)
	}
	// The paper's countdown: fr_max 2 is due every other run, fr_max 3 every third.
	var dueRuns [2][]int
	for run := 1; run <= 6; run++ {
		if _, _, err := db.Countdown(ctx); err != nil {
			t.Fatal(err)
		}
		for {
			d, err := db.NextDue(ctx, store.DueQuery{Hosts: []string{"a.example"}, Run: 0})
			if errors.Is(err, store.ErrNotFound) {
				break
			}
			if d.URL == "https://a.example/high" {
				dueRuns[0] = append(dueRuns[0], run)
			} else {
				dueRuns[1] = append(dueRuns[1], run)
			}
			if d.ETag != `"e1"` || d.ContentHash != "h1" {
				t.Errorf("validators not kept: %+v", d)
			}
			crawl(d)
		}
	}
	if want := []int{2, 4, 6}; !equal(dueRuns[0], want) {
		t.Errorf("fr_max 2 page due in runs %v, want %v", dueRuns[0], want)
	}
	if want := []int{3, 6}; !equal(dueRuns[1], want) {
		t.Errorf("fr_max 3 page due in runs %v, want %v", dueRuns[1], want)
	}
}

func equal(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestEnqueue(t *testing.T) {
	ctx := t.Context()
	now := time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)
	db := seedDB(t, &now, store.NewSeed{URL: "https://a.example/", Host: "a.example", Level: 2, FrMax: 4})
	runStart := now
	seed, _ := db.NextDue(ctx, store.DueQuery{Hosts: []string{"a.example"}, Run: 0})

	id, what, err := db.Enqueue(ctx, store.NewURL{URL: "https://a.example/new", Host: "a.example", Level: 2, FrMax: 1,
		ParentID: seed.ID, RootID: seed.ID}, runStart)
	if err != nil || what != store.EnqueuedNew || id == 0 {
		t.Fatalf("Enqueue new = %d, %v, %v", id, what, err)
	}
	if _, what, _ := db.Enqueue(ctx, store.NewURL{URL: "https://a.example/new", Host: "a.example", Level: 1, FrMax: 1}, runStart); what != store.EnqueuedDue {
		t.Errorf("enqueueing a due URL again: %v, want EnqueuedDue", what)
	}
	// Crawl the seed in this run; enqueueing it again must not make it due a second time.
	now = now.Add(time.Minute)
	db.RecordFetch(ctx, store.FetchRecord{URLID: seed.ID, FetchedAt: now, Status: 200, NextFr: 4})
	if _, what, err := db.Enqueue(ctx, store.NewURL{URL: seed.URL, Host: "a.example", Level: 2, FrMax: 1}, runStart); err != nil || what != store.EnqueuedKnown {
		t.Fatalf("re-enqueue crawled seed: %v, %v; want EnqueuedKnown", what, err)
	}
	hosts, _ := db.DueHosts(ctx)
	if hosts["a.example"] != 1 {
		t.Errorf("due URLs of a.example = %d, want only /new", hosts["a.example"])
	}
	// In the next run, a known URL that is not due is made due by Enqueue (a redirect points at it).
	if _, what, err := db.Enqueue(ctx, store.NewURL{URL: seed.URL, Host: "a.example", Level: 2, FrMax: 1}, now.Add(time.Hour)); err != nil || what != store.EnqueuedDue {
		t.Fatalf("Enqueue in a later run: %v, %v; want EnqueuedDue", what, err)
	}
	if hosts, _ := db.DueHosts(ctx); hosts["a.example"] != 2 {
		t.Errorf("Enqueue in a later run did not make the seed due: %v", hosts)
	}
}

func TestDiscover(t *testing.T) {
	ctx := t.Context()
	now := time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)
	db := seedDB(t, &now, store.NewSeed{URL: "https://a.example/", Host: "a.example", Level: 2, FrMax: 1})
	hub, _ := db.NextDue(ctx, store.DueQuery{Hosts: []string{"a.example"}, Run: 0})
	db.RecordFetch(ctx, store.FetchRecord{URLID: hub.ID, FetchedAt: now, Status: 200, NextFr: 1})
	found := []store.NewURL{
		{URL: "https://a.example/x", Host: "a.example", Level: 1, FrMax: 1, ParentID: hub.ID, RootID: hub.ID},
		{URL: "https://a.example/y", Host: "a.example", Level: 1, FrMax: 1, ParentID: hub.ID, RootID: hub.ID},
		{URL: "https://a.example/", Host: "a.example", Level: 1, FrMax: 1, ParentID: hub.ID, RootID: hub.ID},
	}
	added, err := db.Discover(ctx, found)
	if err != nil || len(added) != 2 {
		t.Fatalf("Discover = %v, %v; want the two new URLs", added, err)
	}
	if again, _ := db.Discover(ctx, found); len(again) != 0 {
		t.Errorf("known URLs were added again: %v", again)
	}
	// Reached from a higher page, a known URL gets the higher level but is not made due.
	db.RecordFetch(ctx, store.FetchRecord{URLID: mustID(t, db, "https://a.example/x"), FetchedAt: now, Status: 200, NextFr: 3})
	db.Discover(ctx, []store.NewURL{{URL: "https://a.example/x", Host: "a.example", Level: 5, FrMax: 1}})
	info, _ := db.URLInfo(ctx, "https://a.example/x")
	if info.Level != 5 || info.Fr != 3 {
		t.Errorf("after rediscovery from a higher page: level %d fr %d; want level 5, fr unchanged 3", info.Level, info.Fr)
	}
}

// TestDiscoverKnownWritesNothing: links to URLs the table has at their level or higher change
// nothing, so Discover does not take the write lock for them: it succeeds while another connection
// holds it (a group commit in a crawl).
func TestDiscoverKnownWritesNothing(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "s.db")
	db := mustOpen(t, path, store.Options{})
	if _, err := db.AddSeeds(ctx, []store.NewSeed{{URL: "https://a.example/", Host: "a.example", Level: 2, FrMax: 1}}); err != nil {
		t.Fatal(err)
	}
	known := []store.NewURL{
		{URL: "https://a.example/x", Host: "a.example", Level: 1, FrMax: 1},
		{URL: "https://a.example/", Host: "a.example", Level: 1, FrMax: 1},
	}
	if added, err := db.Discover(ctx, known); err != nil || len(added) != 1 {
		t.Fatalf("Discover = %v, %v; want /x added", added, err)
	}
	conn, err := rawDB(t, path).Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `BEGIN IMMEDIATE`); err != nil {
		t.Fatal(err)
	}
	lower := append([]store.NewURL(nil), known...)
	lower[0].Level = 0
	for _, found := range [][]store.NewURL{known, lower} {
		if added, err := db.Discover(ctx, found); err != nil || len(added) != 0 {
			t.Errorf("Discover of known URLs beside a writer = %v, %v; want nothing added, no error", added, err)
		}
	}
	if _, err := conn.ExecContext(ctx, `ROLLBACK`); err != nil {
		t.Fatal(err)
	}
	// A level to raise is still written.
	if _, err := db.Discover(ctx, []store.NewURL{{URL: "https://a.example/x", Host: "a.example", Level: 3, FrMax: 1}}); err != nil {
		t.Fatal(err)
	}
	if info, _ := db.URLInfo(ctx, "https://a.example/x"); info.Level != 3 {
		t.Errorf("level %d after rediscovery from a higher page, want 3", info.Level)
	}
}

func mustID(t *testing.T, db *store.DB, u string) int64 {
	t.Helper()
	info, err := db.URLInfo(t.Context(), u)
	if err != nil {
		t.Fatal(err)
	}
	return info.ID
}

// TestDiscoverConcurrent: workers discovering overlapping links at different levels at once leave
// every URL in the table once, at the highest level any of them found it, and between them report
// each URL added exactly once — whatever each handle's memory of the URLs it has seen.
func TestDiscoverConcurrent(t *testing.T) {
	ctx := t.Context()
	db := mustOpen(t, filepath.Join(t.TempDir(), "s.db"), store.Options{})
	const workers, urls, rounds = 6, 60, 8
	want := map[string]int{}
	found := make([][][]store.NewURL, workers)
	for w := range workers {
		for r := range rounds {
			var page []store.NewURL
			for i := range urls / 3 {
				n := (w*7 + r*13 + i*5) % urls
				u := fmt.Sprintf("https://a.example/%d", n)
				level := (w + r + i) % 4
				page = append(page, store.NewURL{URL: u, Host: "a.example", Level: level, FrMax: 1})
				want[u] = max(want[u], level)
			}
			found[w] = append(found[w], page)
		}
	}
	added := make([]map[string]int, workers)
	var wg sync.WaitGroup
	for w := range workers {
		added[w] = map[string]int{}
		wg.Go(func() {
			for _, page := range found[w] {
				got, err := db.Discover(ctx, page)
				if err != nil {
					t.Error(err)
					return
				}
				for _, a := range got {
					added[w][a.URL]++
				}
			}
		})
	}
	wg.Wait()
	total := map[string]int{}
	for _, a := range added {
		for u, n := range a {
			total[u] += n
		}
	}
	for u, level := range want {
		if total[u] != 1 {
			t.Errorf("%s reported added %d times, want once", u, total[u])
		}
		info, err := db.URLInfo(ctx, u)
		if err != nil {
			t.Fatalf("%s: %v", u, err)
		}
		if info.Level != level {
			t.Errorf("%s at level %d, want %d (the highest found)", u, info.Level, level)
		}
	}
}
