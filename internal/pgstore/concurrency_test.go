package pgstore_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/strata-crawler/strata/internal/store"
)

// TestConcurrentWriters: writers that touch the same rows in opposite orders — two committers'
// batches of fetch records, discoveries of the same links — all succeed, as they do on SQLite,
// which admits one writer at a time. PostgreSQL would lock the rows one by one and abort one of two
// such transactions as a deadlock; pgstore's writers take one lock first and wait instead.
func TestConcurrentWriters(t *testing.T) {
	db := open(t)
	ctx := t.Context()
	var seeds []store.NewSeed
	for i := range 20 {
		seeds = append(seeds, store.NewSeed{URL: fmt.Sprintf("http://a.test/%d", i), Host: "a.test", FrMax: 1})
	}
	if _, err := db.AddSeeds(ctx, seeds); err != nil {
		t.Fatal(err)
	}
	run, err := db.BeginRun(ctx, time.Date(2026, 3, 2, 4, 0, 0, 0, time.UTC), 0)
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for {
		u, err := db.NextDue(ctx, store.DueQuery{Hosts: []string{"a.test"}, Run: run})
		if errors.Is(err, store.ErrNotFound) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, u.ID)
		if err := db.SetState(ctx, u.ID, "filtered"); err != nil {
			t.Fatal(err)
		}
	}
	if len(ids) != 20 {
		t.Fatalf("%d seeds handed out, want 20", len(ids))
	}
	const writers, rounds = 6, 5
	var wg sync.WaitGroup
	errs := make(chan error, writers*rounds*2)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range rounds {
				recs := make([]store.FetchRecord, len(ids))
				for i, id := range ids {
					if w%2 == 1 {
						id = ids[len(ids)-1-i] // the opposite order
					}
					recs[i] = store.FetchRecord{URLID: id, RunID: run, FetchedAt: time.Date(2026, 3, 2, 5, w, r, 0, time.UTC),
						Status: 200, Magnitude: -1, NextFr: 1, Origin: "http://a.test", Domain: "a.test"}
				}
				if err := db.RecordFetches(ctx, recs); err != nil {
					errs <- err
				}
				var found []store.NewURL
				for i := range 10 {
					n := i
					if w%2 == 1 {
						n = 9 - i
					}
					found = append(found, store.NewURL{URL: fmt.Sprintf("http://b.test/%d/%d", r, n), Host: "b.test", Level: 1 + w%3, FrMax: 1})
				}
				if _, err := db.Discover(ctx, found); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	per, err := db.URLsPerHost(ctx)
	if err != nil || per["b.test"] != 10*rounds {
		t.Errorf("URLsPerHost = %v, %v; want b.test: %d", per, err, 10*rounds)
	}
	statuses, err := db.RecentStatuses(ctx, ids[0], 1000)
	if err != nil || len(statuses) != writers*rounds {
		t.Errorf("%d fetches of URL %d, %v; want %d", len(statuses), ids[0], err, writers*rounds)
	}
}
