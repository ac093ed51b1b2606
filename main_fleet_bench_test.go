package main

// Benchmarks of the fleet (docs/performance.md, section 12). Each builds its own loopback web and
// PostgreSQL database (STRATA_TEST_POSTGRES_URL):
//
//	go test -run '^$' -bench 'Fleet|FrontierOps' -benchtime 1x .

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

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
				server := watchServer(b, dbURL)
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
				server.report(b, fetched, elapsed)
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
	// Four connections at once, each on its own five hosts, as four workers' frontier work: one op
	// is still one page, so ns/op is the wall time per page of the four together.
	b.Run("postgres-4conns", func(b *testing.B) {
		dbURL := pgtest.URL(b)
		db, err := pgstore.Open(context.Background(), dbURL)
		if err != nil {
			b.Fatal(err)
		}
		defer db.Close()
		run, hs := setup(b, db)
		const conns = 4
		ctx := context.Background()
		var next atomic.Int64
		next.Store(-1)
		var wg sync.WaitGroup
		server := watchServer(b, dbURL)
		start := time.Now()
		b.ResetTimer()
		defer func() { server.report(b, int64(b.N), time.Since(start)) }()
		for c := range conns {
			wg.Add(1)
			go func() {
				defer wg.Done()
				mine := hs[c*hosts/conns : (c+1)*hosts/conns]
				for i := 0; next.Add(1) < int64(b.N); i++ {
					u, err := db.NextDue(ctx, store.DueQuery{Hosts: []string{mine[i%len(mine)]}, Run: run})
					if err != nil {
						b.Error(err)
						return
					}
					if err := db.RecordFetch(ctx, store.FetchRecord{URLID: u.ID, RunID: run, FetchedAt: time.Now(), Status: 200, NextFr: 1}); err != nil {
						b.Error(err)
						return
					}
				}
			}()
		}
		wg.Wait()
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

// serverWatch is what the PostgreSQL server itself says of a fleet benchmark's run, which the
// load of a shared machine moves less than the wall clock: how many of its sessions waited for a
// lock (pg_stat_activity, sampled every 20 ms), its transactions per second (pg_stat_database),
// the CPU time its processes for the database used per page (sampled from /proc with the same
// period, so a connection's last 20 ms may be missed) and, where pg_stat_statements is loaded, the statements' execution time per page, and the part
// of it spent taking pgstore's advisory write lock.
type serverWatch struct {
	dbURL           string
	commits         int64
	statements      bool
	stop            chan struct{}
	done            sync.WaitGroup
	samples, waits  atomic.Int64 // samples taken; sessions waiting for a lock, summed over them
	advisory, anyOf atomic.Int64 // of those, waiting for an advisory lock; samples with any wait
	// The CPU time of the database's server processes (Linux, /proc/PID/stat), in clock ticks:
	// the first and last seen of each. A process not there at the start counts from 0.
	mu         sync.Mutex
	cpuFirst   map[int]int64
	cpuLast    map[int]int64
	cpuSampled bool
}

// cpuTicks is the user and system CPU time of process pid in clock ticks, or false if it cannot
// be read (gone, or not Linux).
func cpuTicks(pid int) (int64, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, false
	}
	// The fields after the command's closing parenthesis; utime and stime are the 14th and 15th
	// of the whole line, the 12th and 13th here.
	_, rest, ok := strings.Cut(string(b), ") ")
	f := strings.Fields(rest)
	if !ok || len(f) < 13 {
		return 0, false
	}
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	s, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return u + s, true
}

// sampleCPU notes the CPU time of the database's server processes now.
func (w *serverWatch) sampleCPU(ctx context.Context, conn *pgx.Conn, first bool) {
	rows, err := conn.Query(ctx, `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`)
	if err != nil {
		return
	}
	pids, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, pid := range pids {
		t, ok := cpuTicks(int(pid))
		if !ok {
			continue
		}
		w.cpuSampled = true
		if _, seen := w.cpuFirst[int(pid)]; !seen {
			w.cpuFirst[int(pid)] = 0
			if first {
				w.cpuFirst[int(pid)] = t
			}
		}
		w.cpuLast[int(pid)] = t
	}
}

func watchServer(b *testing.B, dbURL string) *serverWatch {
	b.Helper()
	w := &serverWatch{dbURL: dbURL, stop: make(chan struct{}), cpuFirst: map[int]int64{}, cpuLast: map[int]int64{}}
	w.commits = queryInt(b, dbURL, `SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()`)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		b.Fatal(err)
	}
	// Counted from here on, where the server loads the module (shared_preload_libraries).
	if _, err := conn.Exec(ctx, `CREATE EXTENSION IF NOT EXISTS pg_stat_statements`); err == nil {
		if _, err := conn.Exec(ctx, `SELECT pg_stat_statements_reset()`); err == nil {
			w.statements = true
		}
	}
	w.sampleCPU(ctx, conn, true)
	w.done.Add(1)
	go func() {
		defer w.done.Done()
		defer conn.Close(ctx)
		defer w.sampleCPU(ctx, conn, false)
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-w.stop:
				return
			case <-t.C:
			}
			var waiting, advisory int64
			if err := conn.QueryRow(ctx, `SELECT count(*) FILTER (WHERE wait_event_type = 'Lock'),
				count(*) FILTER (WHERE wait_event_type = 'Lock' AND wait_event = 'advisory')
				FROM pg_stat_activity WHERE datname = current_database()`).Scan(&waiting, &advisory); err != nil {
				return
			}
			w.sampleCPU(ctx, conn, false)
			w.samples.Add(1)
			w.waits.Add(waiting)
			w.advisory.Add(advisory)
			if waiting > 0 {
				w.anyOf.Add(1)
			}
		}
	}()
	return w
}

func (w *serverWatch) report(b *testing.B, pages int64, elapsed time.Duration) {
	b.Helper()
	close(w.stop)
	w.done.Wait()
	if n := w.samples.Load(); n > 0 {
		b.ReportMetric(float64(w.waits.Load())/float64(n), "lockwaiters")
		b.ReportMetric(float64(w.advisory.Load())/float64(n), "advisorywaiters")
		b.ReportMetric(float64(w.anyOf.Load())/float64(n), "waitshare")
	}
	// A backend's counts reach pg_stat_database when it goes idle or exits; the workers have exited.
	commits := queryInt(b, w.dbURL, `SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()`)
	b.ReportMetric(float64(commits-w.commits)/elapsed.Seconds(), "xact/s")
	if w.cpuSampled {
		var ticks int64
		for pid, last := range w.cpuLast {
			ticks += last - w.cpuFirst[pid]
		}
		// Linux's USER_HZ is 100 on every architecture Go supports: a tick is 10 ms.
		b.ReportMetric(float64(ticks)*10/float64(pages), "pgcpu-ms/page")
	}
	if !w.statements {
		return
	}
	ms := func(filter string) float64 {
		var total float64
		ctx := context.Background()
		conn, err := pgx.Connect(ctx, w.dbURL)
		if err != nil {
			b.Fatal(err)
		}
		defer conn.Close(ctx)
		if err := conn.QueryRow(ctx, `SELECT coalesce(sum(total_exec_time), 0) FROM pg_stat_statements
			WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) AND `+filter).Scan(&total); err != nil {
			b.Fatal(err)
		}
		return total
	}
	b.ReportMetric(ms(`true`)/float64(pages), "db-ms/page")
	b.ReportMetric(ms(`query LIKE '%pg_advisory_xact_lock%'`)/float64(pages), "lock-ms/page")
}
