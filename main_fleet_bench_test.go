package main

// Benchmarks of the fleet (docs/performance.md, section 12). Each builds its own loopback web and
// PostgreSQL database (STRATA_TEST_POSTGRES_URL):
//
//	go test -run '^$' -bench 'Fleet|FrontierOps' -benchtime 1x .

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/strata-crawler/strata/internal/pgstore"
	"github.com/strata-crawler/strata/internal/pgtest"
	"github.com/strata-crawler/strata/internal/store"
)

// BenchmarkFleet crawls 48 loopback sites of 20 pages with 1, 2 and 4 workers on one PostgreSQL
// frontier, a 20 ms gap per site, and reports the fleet's pages per second from the first
// worker's start to the last one's exit (recalc and links included).
func BenchmarkFleet(b *testing.B) {
	const sites, pages = 48, 20
	for _, n := range []int{1, 2, 4} {
		b.Run(fmt.Sprintf("workers=%d", n), func(b *testing.B) {
			for range b.N {
				b.StopTimer()
				dbURL := pgtest.URL(b)
				_, seeds := fleetWeb(b, sites, pages)
				dir, cfgs := fleetDirGap(b, dbURL, seeds, n, 20*time.Millisecond)
				b.StartTimer()
				start := time.Now()
				for i, cmd := range startWorkers(b, dir, cfgs) {
					if err := waitWorker(b, cmd); err != nil {
						b.Fatalf("worker %d: %v\n%s", i, err, workerOutput(b, dir, i))
					}
				}
				elapsed := time.Since(start)
				fetched := queryInt(b, dbURL, `SELECT count(*) FROM fetches WHERE status = 200`)
				if fetched != sites*pages {
					b.Fatalf("fetched %d pages, want %d", fetched, sites*pages)
				}
				b.ReportMetric(float64(fetched)/elapsed.Seconds(), "pages/s")
			}
		})
	}
}

// frontier is what BenchmarkFrontierOps does with either store.
type frontier interface {
	AddSeeds(ctx context.Context, seeds []store.NewSeed) ([]store.SeedOutcome, error)
	BeginRun(ctx context.Context, started time.Time, offset time.Duration) (int64, error)
	Countdown(ctx context.Context) (due, waiting int, err error)
	NextDue(ctx context.Context, q store.DueQuery) (*store.DueURL, error)
	RecordFetch(ctx context.Context, r store.FetchRecord) error
}

// BenchmarkFrontierOps measures the frontier's work per page — the next due URL of a host, then
// its fetch recorded, which takes it out of the due set — on SQLite and on PostgreSQL, and on
// PostgreSQL a worker's lease taken and given back. One op is one page (or one lease).
func BenchmarkFrontierOps(b *testing.B) {
	const hosts, perHost = 20, 500
	setup := func(b *testing.B, db frontier) (int64, []string) {
		ctx := context.Background()
		var seeds []store.NewSeed
		var hs []string
		for h := range hosts {
			host := fmt.Sprintf("h%d.test", h)
			hs = append(hs, host)
			for p := range perHost {
				seeds = append(seeds, store.NewSeed{URL: fmt.Sprintf("http://%s/%d", host, p), Host: host, FrMax: 1})
			}
		}
		if _, err := db.AddSeeds(ctx, seeds); err != nil {
			b.Fatal(err)
		}
		run, err := db.BeginRun(ctx, time.Now(), 0)
		if err != nil {
			b.Fatal(err)
		}
		if _, _, err := db.Countdown(ctx); err != nil {
			b.Fatal(err)
		}
		return run, hs
	}
	pages := func(b *testing.B, db frontier) {
		run, hs := setup(b, db)
		ctx := context.Background()
		b.ResetTimer()
		for i := range b.N {
			u, err := db.NextDue(ctx, store.DueQuery{Hosts: []string{hs[i%hosts]}, Run: run})
			if err != nil {
				b.Fatal(err)
			}
			if err := db.RecordFetch(ctx, store.FetchRecord{URLID: u.ID, RunID: run, FetchedAt: time.Now(), Status: 200, NextFr: 1}); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("sqlite", func(b *testing.B) {
		db, err := store.Open(context.Background(), filepath.Join(b.TempDir(), "strata.db"), store.Options{})
		if err != nil {
			b.Fatal(err)
		}
		defer db.Close()
		pages(b, db)
	})
	b.Run("postgres", func(b *testing.B) {
		db, err := pgstore.Open(context.Background(), pgtest.URL(b))
		if err != nil {
			b.Fatal(err)
		}
		defer db.Close()
		pages(b, db)
	})
	b.Run("postgres-lease", func(b *testing.B) {
		db, err := pgstore.Open(context.Background(), pgtest.URL(b))
		if err != nil {
			b.Fatal(err)
		}
		defer db.Close()
		w, err := db.Worker("bench", time.Minute)
		if err != nil {
			b.Fatal(err)
		}
		ctx := context.Background()
		b.ResetTimer()
		for i := range b.N {
			d := fmt.Sprintf("h%d.test", i%hosts)
			if _, err := w.Take(ctx, d, d, store.HostGap{}, 0); err != nil {
				b.Fatal(err)
			}
			if err := w.Release(ctx, d, store.HostGap{}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
