package store_test

// Benchmarks of the store at the scale of a large installation: 1 M URLs on 1,000 hosts, each
// with 10 fetch records. Nothing here runs without -bench. The fixture takes minutes to build, so
// run each benchmark once:
//
//	go test ./internal/store/ -run '^$' -bench 'BenchmarkStore$' -benchtime 1x -timeout 60m -v
//	go test ./internal/store/ -run '^$' -bench 'BenchmarkStore/RecordFetch' -benchtime 100000x -timeout 60m -v
//
// STRATA_BENCH_URLS=100000 scales everything down (default 1000000); STRATA_BENCH_FIXTURE=/some/file
// keeps the fixture between runs. See docs/performance.md.

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/strata-crawler/strata/crawler"
	"github.com/strata-crawler/strata/frequency"
	"github.com/strata-crawler/strata/internal/store"
)

const (
	recentSchema = 12   // migrations/0012_recent.sql: adds and backfills urls.recent
	benchHosts   = 1000 // hosts the URLs are spread over
	benchRuns    = 10   // fetch records per page (frequency.limit's default)
	benchHubs    = 10   // level-1 hubs per host, below a level-2 seed
)

func benchN(b *testing.B) int {
	n := 1_000_000
	if s := os.Getenv("STRATA_BENCH_URLS"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 10*benchHosts {
			b.Fatalf("STRATA_BENCH_URLS=%q: want an integer >= %d", s, 10*benchHosts)
		}
		n = v
	}
	return n
}

// benchURL is the i-th URL (0-based) of the fixture: host i%benchHosts, so ids interleave hosts the
// way a crawl of many sites at once does.
func benchURL(i int) (u, host string) {
	host = fmt.Sprintf("h%04d.example.org", i%benchHosts)
	return fmt.Sprintf("https://%s/section/%d/page-%d.html", host, (i/benchHosts)%50, i), host
}

// buildFixture writes n URLs and benchRuns runs of fetches (one per URL per run) with plain SQL —
// far faster than the store's own per-row paths, which the sub-benchmarks measure. Row i+1 is
// benchURL(i). Per host: the first URL is a level-2 seed, the next benchHubs are level-1 hubs below
// it, the rest level-0 pages spread over the hubs. fr_max is 1..7 and fr 0..4, so a fifth of each host's
// URLs are due and Countdown makes another fifth due. Each page changed in a share of runs that depends on its
// id; every fetch is a 200. The fetches are written into a database of the schema before
// urls.recent, which the store then migrates, as an existing installation would be: the migration
// builds every page's recent records from its fetches, and its time is logged.
func buildFixture(b *testing.B, path string, n int) {
	ctx := context.Background()
	db, err := store.Open(ctx, path, store.Options{MaxVersion: recentSchema - 1})
	if err != nil {
		b.Fatal(err)
	}
	db.Close()
	raw, err := sql.Open("sqlite", path+"?_pragma=synchronous(OFF)&_pragma=journal_mode(WAL)")
	if err != nil {
		b.Fatal(err)
	}
	defer raw.Close()
	raw.SetMaxOpenConns(1)
	exec := func(q string, args ...any) {
		b.Helper()
		if _, err := raw.ExecContext(ctx, q, args...); err != nil {
			b.Fatalf("%v\n%s", err, q)
		}
	}
	exec(`BEGIN`)
	// i is 0-based, id = i+1; j is the page's index within its host.
	exec(`WITH RECURSIVE s(i) AS (SELECT 0 UNION ALL SELECT i+1 FROM s WHERE i+1 < ?1),
		p AS (SELECT i, i % ?2 AS h, i / ?2 AS j FROM s)
		INSERT INTO urls (id, url, host, level, fr, fr_max, size, content_type, date, content_hash, last_status,
			is_seed, root_id, parent_id, added_at, digest)
		SELECT i+1,
			'https://h' || printf('%04d', h) || '.example.org/section/' || (j % 50) || '/page-' || i || '.html',
			'h' || printf('%04d', h) || '.example.org',
			CASE WHEN j = 0 THEN 2 WHEN j <= ?3 THEN 1 ELSE 0 END,
			j % 5, 1 + i % 7, 20000, 'text/html; charset=utf-8', '2025-01-10T02:00:00.000Z',
			lower(hex(randomblob(16))), 200,
			j = 0, h+1,
			CASE WHEN j = 0 THEN NULL WHEN j <= ?3 THEN h+1 ELSE (1 + (j % ?3)) * ?2 + h + 1 END,
			'2025-01-01T02:00:00.000Z', randomblob(166)
		FROM p`, n, benchHosts, benchHubs)
	for r := 1; r <= benchRuns; r++ {
		at := fmt.Sprintf("2025-01-%02dT02:00:00.000Z", r)
		exec(`INSERT INTO runs (id, started_at, ended_at, status, fetched) VALUES (?1, ?2, ?2, 'completed', ?3)`, r, at, n)
		exec(`INSERT INTO fetches (url_id, run_id, fetched_at, status, size, content_hash, changed, not_modified, duration_ms, magnitude, distance)
			SELECT id, ?1, ?2, 200, 20000, content_hash, ((id * 7 + ?1) % (1 + id % 6)) = 0, 0, 40, 0.1, 3 FROM urls`, r, at)
	}
	exec(`COMMIT`)
	exec(`PRAGMA wal_checkpoint(TRUNCATE)`)
	start := time.Now()
	if db, err = store.Open(ctx, path, store.Options{}); err != nil {
		b.Fatal(err)
	}
	if err := db.Close(); err != nil {
		b.Fatal(err)
	}
	b.Logf("migration to schema %d (urls.recent from %d fetches): %v", store.SchemaVersion(), n*benchRuns, time.Since(start).Round(time.Millisecond))
	exec(`PRAGMA wal_checkpoint(TRUNCATE)`)
}

func copyFile(b *testing.B, dst, src string) {
	in, err := os.Open(src)
	if err != nil {
		b.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		b.Fatal(err)
	}
	// On disk before the benchmark starts: otherwise the first checkpoint's fsync writes back the
	// whole copy (1.9 GB at 1 M URLs) and the operation measured pays for it.
	if err := out.Sync(); err != nil {
		b.Fatal(err)
	}
	if err := out.Close(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkStore builds the fixture once and runs the store's large-scale operations over it. Each
// sub-benchmark that writes works on its own copy of the fixture.
func BenchmarkStore(b *testing.B) {
	n := benchN(b)
	ctx := context.Background()
	dir := b.TempDir()

	b.Run(fmt.Sprintf("Discover/%d-in-batches-of-1000", n), func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			db := mustOpen(b, filepath.Join(b.TempDir(), "insert.db"), store.Options{})
			batch := make([]store.NewURL, 0, 1000)
			b.StartTimer()
			start := time.Now()
			for k := 0; k < n; k++ {
				u, h := benchURL(k)
				batch = append(batch, store.NewURL{URL: u, Host: h, Level: 0, FrMax: 1})
				if len(batch) == cap(batch) || k == n-1 {
					added, err := db.Discover(ctx, batch)
					if err != nil {
						b.Fatal(err)
					}
					if len(added) != len(batch) {
						b.Fatalf("added %d of %d", len(added), len(batch))
					}
					batch = batch[:0]
				}
			}
			b.ReportMetric(float64(n)/time.Since(start).Seconds(), "urls/s")
		}
	})

	// STRATA_BENCH_FIXTURE keeps the fixture in a file of that name, reused by later runs of the same
	// size (delete it after a schema change).
	pristine := filepath.Join(dir, "fixture.db")
	if keep := os.Getenv("STRATA_BENCH_FIXTURE"); keep != "" {
		pristine = fmt.Sprintf("%s.%d", keep, n)
	}
	if fi, err := os.Stat(pristine); err == nil {
		b.Logf("fixture: %s (%d MB), kept from an earlier run", pristine, fi.Size()>>20)
	} else {
		start := time.Now()
		tmp := pristine + ".building"
		for _, f := range []string{tmp, tmp + "-wal", tmp + "-shm"} {
			os.Remove(f) // what an interrupted build left
		}
		buildFixture(b, tmp, n)
		if err := os.Rename(tmp, pristine); err != nil {
			b.Fatal(err)
		}
		os.Remove(tmp + "-wal") // checkpointed and empty
		os.Remove(tmp + "-shm")
		fi, _ := os.Stat(pristine)
		b.Logf("fixture: %d URLs, %d fetches, %d MB, built in %v", n, n*benchRuns, fi.Size()>>20, time.Since(start).Round(time.Second))
	}

	// work copies the fixture and opens the copy. The copy's pages may or may not be in the
	// operating system's cache, so a sub-benchmark's first operation can be waiting for the disk:
	// STRATA_BENCH_WARM=1 reads the whole copy first, as a database in daily use on a machine with
	// memory to spare would be cached.
	warm := os.Getenv("STRATA_BENCH_WARM") == "1"
	work := func(b *testing.B) (*store.DB, string) {
		p := filepath.Join(b.TempDir(), "work.db")
		copyFile(b, p, pristine)
		if warm {
			f, err := os.Open(p)
			if err != nil {
				b.Fatal(err)
			}
			_, err = io.Copy(io.Discard, f)
			f.Close()
			if err != nil {
				b.Fatal(err)
			}
		}
		return mustOpen(b, p, store.Options{}), p
	}

	// Plans logs SQLite's query plans for the queries measured below (with -v).
	b.Run("Plans", func(b *testing.B) {
		raw := rawDB(b, pristine)
		for _, q := range []string{
			`INSERT OR IGNORE INTO due (host, prio, level, id)
			SELECT host, prio, level, id FROM urls WHERE state = 'active' AND due_tick > 0 AND due_tick > 1 AND due_tick <= 2`,
			`SELECT count(*) FROM urls WHERE state = 'active' AND due_tick > 0 AND due_tick > 2`,
			`SELECT host, count(*) FROM due GROUP BY host`,
			`SELECT urls.id, url, urls.host, urls.level, fr_max, etag, last_modified, content_hash, root_id, is_seed, threshold, digest,
				(SELECT archive_path FROM fetches f WHERE f.url_id = urls.id AND f.archive_path IS NOT NULL ORDER BY f.id DESC LIMIT 1)
			FROM due d CROSS JOIN urls ON urls.id = d.id WHERE d.host IN ('h0001.example.org')
			AND (skipped_run IS NULL OR skipped_run <> 11) ORDER BY d.prio DESC, d.level DESC, d.id LIMIT 1`,
			`WITH pages AS (SELECT DISTINCT url_id FROM fetches WHERE run_id = 10 AND status > 0),
			ranked AS (SELECT f.url_id, coalesce(f.run_id, 0) AS run_id, f.changed, NOT (f.status = 200 OR f.not_modified) AS failed, f.id,
				row_number() OVER (PARTITION BY f.url_id ORDER BY f.id DESC) AS rn FROM fetches f JOIN pages p ON p.url_id = f.url_id)
			SELECT r.url_id, u.fr_max, u.level, u.threshold, r.run_id, r.changed, r.failed
			FROM ranked r JOIN urls u ON u.id = r.url_id WHERE r.rn <= 10 ORDER BY r.url_id, r.id`,
			`SELECT url_id FROM fetches WHERE run_id = 10 AND status > 0`,
			`SELECT id, fr_max, level, threshold, coalesce(child_ratio, -1), recent FROM urls WHERE id IN (5, 7, 9) ORDER BY id`,
			`WITH kids AS (SELECT id FROM urls WHERE parent_id = 1 AND state = 'active'),
			ranked AS (SELECT f.url_id, coalesce(f.run_id, 0) AS run_id, f.changed, NOT (f.status = 200 OR f.not_modified) AS failed, f.id,
				row_number() OVER (PARTITION BY f.url_id ORDER BY f.id DESC) AS rn FROM fetches f JOIN kids k ON k.id = f.url_id)
			SELECT url_id, run_id, changed, failed FROM ranked WHERE rn <= 10 ORDER BY url_id, id`,
		} {
			rows, err := raw.Query(`EXPLAIN QUERY PLAN ` + q)
			if err != nil {
				b.Fatal(err)
			}
			plan := ""
			for rows.Next() {
				var id, parent, notused int
				var detail string
				if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
					b.Fatal(err)
				}
				plan += fmt.Sprintf("\n  %d<-%d %s", id, parent, detail)
			}
			rows.Close()
			b.Logf("%.60s…%s", q, plan)
		}
	})

	b.Run("Countdown", func(b *testing.B) {
		db, p := work(b)
		b.ResetTimer() // not the fixture's copy
		raw := rawDB(b, p)
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			// Back to the fixture's countdowns (fr = j % 5 for the host's j-th URL), with the WAL
			// checkpointed so that the countdown does not pay for the reset.
			if _, err := raw.Exec(`UPDATE urls SET due_tick = CASE WHEN ((id - 1) / ?1) % 5 = 0 THEN 0
				ELSE (SELECT tick FROM countdown) + ((id - 1) / ?1) % 5 END`, benchHosts); err != nil {
				b.Fatal(err)
			}
			if _, err := raw.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			t0 := time.Now()
			due, waiting, err := db.Countdown(ctx)
			if err != nil {
				b.Fatal(err)
			}
			b.Logf("countdown %d: %v", i+1, time.Since(t0))
			b.ReportMetric(float64(due), "due")
			b.ReportMetric(float64(waiting), "waiting")
		}
	})

	b.Run("DueHosts", func(b *testing.B) {
		db, _ := work(b)
		b.ResetTimer() // not the fixture's copy
		for i := 0; i < b.N; i++ {
			t0 := time.Now()
			hosts, err := db.DueHosts(ctx)
			if err != nil {
				b.Fatal(err)
			}
			b.Logf("due hosts %d: %v", i+1, time.Since(t0))
			if len(hosts) != benchHosts {
				b.Fatalf("%d due hosts", len(hosts))
			}
		}
	})

	// NextDue as the crawler calls it: one host's next URL. The call does not take the URL out of
	// the due set (RecordFetch does); one iteration asks each of the hosts once.
	b.Run("NextDue/each-host", func(b *testing.B) {
		db, _ := work(b)
		b.ResetTimer() // work copies (and may read) the whole fixture: not part of the calls
		for i := 0; i < b.N; i++ {
			for k := 0; k < benchHosts; k++ {
				_, h := benchURL(k)
				if _, err := db.NextDue(ctx, store.DueQuery{Hosts: []string{h}, Run: benchRuns + 1}); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*benchHosts), "ns/call")
	})

	// Draining: NextDue then RecordFetch for every due URL of 100 hosts, as a stage does.
	b.Run("NextDue+RecordFetch/drain-100-hosts", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			db, _ := work(b)
			if _, err := db.BeginRun(ctx, time.Date(2025, 1, 11, 2, 0, 0, 0, time.UTC), 0); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			done := 0
			t0 := time.Now()
			for h := 0; h < 100; h++ {
				_, host := benchURL(h)
				for {
					d, err := db.NextDue(ctx, store.DueQuery{Hosts: []string{host}, Run: benchRuns + 1})
					if err != nil {
						break
					}
					if err := db.RecordFetch(ctx, benchRecord(d.ID, done)); err != nil {
						b.Fatal(err)
					}
					done++
				}
			}
			b.ReportMetric(float64(done), "urls")
			b.ReportMetric(float64(done)/time.Since(t0).Seconds(), "urls/s")
		}
	})

	// RecordFetch: one fetch of a distinct URL per iteration; run with -benchtime 100000x.
	b.Run("RecordFetch", func(b *testing.B) {
		db, _ := work(b)
		if _, err := db.BeginRun(ctx, time.Date(2025, 1, 11, 2, 0, 0, 0, time.UTC), 0); err != nil {
			b.Fatal(err)
		}
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if err := db.RecordFetch(ctx, benchRecord(int64(i%n)+1, i)); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "fetches/s")
	})

	// Recording 100,000 fetches of distinct URLs as the crawl's committer does: in batches, each
	// batch one transaction (crawler.maxCommitBatch bounds a batch at 256; 32 is one page from each
	// of the default workers; 1 is a transaction per page, as RecordFetch).
	for _, size := range []int{1, 32, 256} {
		b.Run(fmt.Sprintf("RecordFetches/100000-in-batches-of-%d", size), func(b *testing.B) {
			const fetches = 100000
			db, _ := work(b)
			if _, err := db.BeginRun(ctx, time.Date(2025, 1, 11, 2, 0, 0, 0, time.UTC), 0); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for it := 0; it < b.N; it++ {
				batch := make([]store.FetchRecord, 0, size)
				for i := 0; i < fetches; i++ {
					k := it*fetches + i
					batch = append(batch, benchRecord(int64(k%n)+1, k))
					if len(batch) == size || i == fetches-1 {
						if err := db.RecordFetches(ctx, batch); err != nil {
							b.Fatal(err)
						}
						batch = batch[:0]
					}
				}
			}
			b.ReportMetric(float64(b.N*fetches)/b.Elapsed().Seconds(), "fetches/s")
		})
	}

	// RunHistories alone: the read half of recalculation, streaming every page of the last run. With
	// limit benchRuns it reads the pages' rows (urls.recent); with a limit above store.RecentCap it
	// ranks the fetches table instead, as every recalc did before schema 12.
	for _, c := range []struct {
		name  string
		limit int
	}{{"RunHistories", benchRuns}, {"RunHistoriesFromFetches", store.RecentCap + 1}} {
		b.Run(c.name, func(b *testing.B) {
			db, _ := work(b)
			b.ResetTimer() // not the fixture's copy
			for i := 0; i < b.N; i++ {
				pages, recs := 0, 0
				err := db.RunHistories(ctx, benchRuns, c.limit, func(h store.PageHistory) error {
					pages++
					recs += len(h.Records)
					return nil
				})
				if err != nil {
					b.Fatal(err)
				}
				if pages != n || recs != n*benchRuns {
					b.Fatalf("%d pages, %d records", pages, recs)
				}
			}
		})
	}

	// Recalc: the whole Frequency Manager over the last run (every page), as strata recalc runs it.
	// write-s is the part of it spent in SetFrMax. STRATA_BENCH_RECALC_BATCH=N writes the intervals
	// N per transaction instead of recalc's own batches, to measure what a larger batch would save.
	//
	// Every page was crawled in the fixture's last run, and a crawl restarts a page's countdown
	// from its interval (fr = fr_max), so Recalc first puts the pages in that state; recalc then
	// rewrites the countdown only where the interval changes. RecalcRestartAll leaves the fixture's
	// countdowns (fr = j % 5) as they are, so every page's countdown is rewritten: the worst case.
	for _, restartAll := range []bool{false, true} {
		name := "Recalc"
		if restartAll {
			name = "RecalcRestartAll"
		}
		b.Run(name, func(b *testing.B) { benchRecalc(b, work, restartAll) })
	}
}

// benchRecalc is the Recalc sub-benchmarks.
func benchRecalc(b *testing.B, work func(*testing.B) (*store.DB, string), restartAll bool) {
	ctx := context.Background()
	n := benchN(b)
	policy, err := frequency.New("")
	if err != nil {
		b.Fatal(err)
	}
	batch := 0
	if s := os.Getenv("STRATA_BENCH_RECALC_BATCH"); s != "" {
		if batch, err = strconv.Atoi(s); err != nil || batch < 1 {
			b.Fatalf("STRATA_BENCH_RECALC_BATCH=%q: want a positive integer", s)
		}
	}
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		db, p := work(b)
		if !restartAll {
			raw := rawDB(b, p)
			for _, q := range []string{`UPDATE urls SET due_tick = (SELECT tick FROM countdown) + fr_max`, `PRAGMA wal_checkpoint(TRUNCATE)`} {
				if _, err := raw.Exec(q); err != nil {
					b.Fatal(err)
				}
			}
			raw.Close()
		}
		c := crawler.New(db, nil, nil, nil, crawler.Config{})
		st := &timedRecalcStore{DB: db, batch: batch}
		runtime.GC()
		b.StartTimer()
		stats, err := c.Recalc(ctx, st, crawler.Run{ID: benchRuns}, policy, benchRuns, nil)
		if err == nil {
			err = st.flush(ctx)
		}
		if err != nil {
			b.Fatal(err)
		}
		if stats.Pages != n {
			b.Fatalf("recalculated %d pages", stats.Pages)
		}
		b.ReportMetric(float64(stats.Pages), "pages")
		b.ReportMetric(float64(stats.Adjusted), "hubs-adjusted")
		b.ReportMetric(float64(stats.Faster+stats.Slower), "intervals-changed")
		b.ReportMetric(st.writing.Seconds(), "write-s")
	}
}

// timedRecalcStore is the store as recalc sees it, timing SetFrMax and, with batch > 0, regrouping
// its writes batch intervals per call.
type timedRecalcStore struct {
	*store.DB
	batch   int
	pending []store.FrMaxUpdate
	writing time.Duration
}

func (s *timedRecalcStore) SetFrMax(ctx context.Context, updates []store.FrMaxUpdate) error {
	if s.batch == 0 {
		defer func(t time.Time) { s.writing += time.Since(t) }(time.Now())
		return s.DB.SetFrMax(ctx, updates)
	}
	s.pending = append(s.pending, updates...)
	if len(s.pending) < s.batch {
		return nil
	}
	return s.flush(ctx)
}

// flush writes what a regrouping SetFrMax holds back; recalc's last call may leave some.
func (s *timedRecalcStore) flush(ctx context.Context) error {
	if len(s.pending) == 0 {
		return nil
	}
	defer func(t time.Time) { s.writing += time.Since(t) }(time.Now())
	err := s.DB.SetFrMax(ctx, s.pending)
	s.pending = s.pending[:0]
	return err
}

func benchRecord(id int64, i int) store.FetchRecord {
	return store.FetchRecord{URLID: id, RunID: benchRuns + 1, FetchedAt: time.Date(2025, 1, 11, 2, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Millisecond),
		Status: 200, Size: 20000, ContentType: "text/html; charset=utf-8", ContentHash: fmt.Sprintf("%032x", i),
		Digest: make([]byte, 166), Changed: i%3 == 0, Magnitude: 0.1, Distance: 3, Duration: 40 * time.Millisecond,
		Origin: "https://h0000.example.org", Domain: "example.org", NextFr: 1 + i%7}
}
