package pgstore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/strata-crawler/strata/internal/store"
)

// Worker is one strata process of a fleet: several processes, on one machine or many, crawling one
// PostgreSQL frontier. Each politeness domain is leased to one worker at a time (fleet_leases), and
// the domain's next allowed request time is checked and advanced in the transaction that takes or
// renews the lease, so the per-domain gap and Crawl-delay hold across the fleet. A worker that dies
// stops renewing; its leases expire and another worker takes its domains over.
type Worker struct {
	db   *DB
	name string
	ttl  time.Duration
	now  func() time.Time
}

// MinLease is the shortest lease a worker may hold: renewals run every third of it.
const MinLease = 2 * time.Second

// Worker returns the fleet worker name on db, whose leases last ttl unless renewed (Keep).
func (db *DB) Worker(name string, ttl time.Duration) (*Worker, error) {
	if name == "" {
		return nil, errors.New("fleet worker: empty name")
	}
	if ttl < MinLease {
		return nil, fmt.Errorf("fleet worker %s: lease %v is shorter than %v", name, ttl, MinLease)
	}
	db.worker = name
	return &Worker{db: db, name: name, ttl: ttl, now: time.Now}, nil
}

// Home says which worker recorded the version archivePath of run and in which archive root it
// lives there; ok is false for a version no fleet worker recorded (a single process's).
func (db *DB) Home(ctx context.Context, run int64, archivePath string) (worker, root string, ok bool, err error) {
	err = db.pool.QueryRow(ctx, `SELECT v.worker, w.archive_root FROM fetches f
		JOIN fleet_versions v ON v.fetch_id = f.id
		JOIN fleet_workers w ON w.run_id = f.run_id AND w.worker = v.worker
		WHERE f.run_id = $1 AND f.archive_path = $2 ORDER BY f.id DESC LIMIT 1`, run, archivePath).Scan(&worker, &root)
	if notFound(err) {
		return "", "", false, nil
	}
	if err != nil {
		return "", "", false, fmt.Errorf("home of version %s: %w", archivePath, err)
	}
	return worker, root, true, nil
}

// RunRoots returns the archive roots of the fleet workers that joined run, sorted; none for a run
// that no worker crawled.
func (db *DB) RunRoots(ctx context.Context, run int64) ([]string, error) {
	rows, err := db.pool.Query(ctx, `SELECT DISTINCT archive_root FROM fleet_workers WHERE run_id = $1 ORDER BY archive_root`, run)
	if err != nil {
		return nil, fmt.Errorf("archive roots of run %d: %w", run, err)
	}
	roots, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("archive roots of run %d: %w", run, err)
	}
	return roots, nil
}

// Name is the worker's name in the fleet tables.
func (w *Worker) Name() string { return w.name }

// Take asks for domain (a politeness key) on behalf of host, merging mine, what this worker's gate
// knows of the domain, into the fleet's state. gap is the gap that follows a request to host. The
// row is locked with SKIP LOCKED: a domain another worker is taking at this moment is busy for a
// second rather than waited for. When the lease is held and the domain is ready, its next request
// time moves on by gap in the same transaction: the request is reserved fleet-wide.
func (w *Worker) Take(ctx context.Context, domain, host string, mine store.HostGap, gap time.Duration) (store.Lease, error) {
	now := w.now()
	var l store.Lease
	err := pgx.BeginFunc(ctx, w.db.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO fleet_leases (domain, host) VALUES ($1, $2) ON CONFLICT DO NOTHING`, domain, host); err != nil {
			return err
		}
		var holder *string
		var expires, lastEnd, next *time.Time
		var delayMS int64
		err := tx.QueryRow(ctx, `SELECT worker, expires_at, last_end_at, next_at, crawl_delay_ms FROM fleet_leases
			WHERE domain = $1 FOR UPDATE SKIP LOCKED`, domain).Scan(&holder, &expires, &lastEnd, &next, &delayMS)
		if notFound(err) {
			l.Until = now.Add(time.Second) // another worker is in the middle of taking it
			return nil
		}
		if err != nil {
			return err
		}
		if holder != nil && *holder != w.name && expires != nil && expires.After(now) {
			l.Until = *expires
			return nil
		}
		g := store.HostGap{Host: host, LastEnd: deref(lastEnd), Next: deref(next), CrawlDelay: time.Duration(delayMS) * time.Millisecond}
		if holder != nil && *holder != w.name {
			// The holder stopped renewing: whatever it had in flight ended by now at the latest.
			l.TookOver = *holder
			g.LastEnd = later(g.LastEnd, now)
		}
		g.LastEnd, g.Next = later(g.LastEnd, mine.LastEnd), later(g.Next, mine.Next)
		g.CrawlDelay = max(g.CrawlDelay, mine.CrawlDelay)
		l.Held, l.Gap = true, g
		l.Ready = later(g.Next, g.LastEnd.Add(max(gap, g.CrawlDelay)))
		next2 := g.Next
		if !l.Ready.After(now) {
			l.Ready = now
			next2 = now.Add(max(gap, g.CrawlDelay))
		}
		_, err = tx.Exec(ctx, `UPDATE fleet_leases SET worker = $2, expires_at = $3, host = $4, last_end_at = $5, next_at = $6,
			crawl_delay_ms = $7, requests = requests + $8 WHERE domain = $1`,
			domain, w.name, now.Add(w.ttl), host, timeOrNil(g.LastEnd), timeOrNil(next2), g.CrawlDelay.Milliseconds(), boolInt(l.Ready.Equal(now)))
		return err
	})
	if err != nil {
		return store.Lease{}, fmt.Errorf("lease domain %s: %w", domain, err)
	}
	return l, nil
}

// Release gives domain back, with this worker's gate's state of it, if this worker holds it.
func (w *Worker) Release(ctx context.Context, domain string, mine store.HostGap) error {
	_, err := w.db.pool.Exec(ctx, `UPDATE fleet_leases SET worker = NULL, expires_at = NULL,
		last_end_at = greatest(last_end_at, $3), next_at = greatest(next_at, $4), crawl_delay_ms = greatest(crawl_delay_ms, $5)
		WHERE domain = $1 AND worker = $2`, domain, w.name, timeOrNil(mine.LastEnd), timeOrNil(mine.Next), mine.CrawlDelay.Milliseconds())
	if err != nil {
		return fmt.Errorf("release domain %s: %w", domain, err)
	}
	return nil
}

// Renew extends every lease the worker holds, and its heartbeat in the runs it works on.
func (w *Worker) Renew(ctx context.Context) error {
	now := w.now()
	if _, err := w.db.pool.Exec(ctx, `UPDATE fleet_leases SET expires_at = $2 WHERE worker = $1`, w.name, now.Add(w.ttl)); err != nil {
		return fmt.Errorf("renew the leases of %s: %w", w.name, err)
	}
	if _, err := w.db.pool.Exec(ctx, `UPDATE fleet_workers SET heartbeat_at = $2 WHERE worker = $1 AND done_at IS NULL`, w.name, now); err != nil {
		return fmt.Errorf("renew the heartbeat of %s: %w", w.name, err)
	}
	return nil
}

// Keep renews the worker's leases every third of a lease until stop is called. A renewal that
// fails is tried again at the next tick: a worker that cannot reach the database loses its leases,
// which is what a dead worker does too.
func (w *Worker) Keep(ctx context.Context, log func(error)) (stop func()) {
	quit := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(w.ttl / 3)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				if err := w.Renew(ctx); err != nil && log != nil {
					log(err)
				}
			}
		}
	})
	var once sync.Once
	return func() { once.Do(func() { close(quit); wg.Wait() }) }
}

// fleetJoinLock orders workers joining or starting a run ('strata j' in ASCII); fleetAfterLock,
// plus the run's id, elects the worker that runs recalc and links.
const (
	fleetJoinLock  = 0x737472617461206a
	fleetAfterLock = 0x7374726174612000
)

// Joined is the run a worker works on.
type Joined struct {
	Run     int64
	Start   time.Time
	Joined  bool        // another worker began the run and counted the frontier down
	Crashed []store.Run // runs no live worker was left on, marked interrupted by this worker
}

// JoinRun puts the worker on the fleet's current run: the running run that has a live worker (not
// done, heartbeat within a lease), or else a new one begun at start, after marking runs left
// running by dead workers interrupted. It returns with the join lock held: the worker that began
// the run must count the frontier down before anyone joins it, and calls unlock after. A joiner
// calls it at once.
func (w *Worker) JoinRun(ctx context.Context, start time.Time, offset time.Duration, archiveRoot string) (j Joined, unlock func(), err error) {
	conn, err := w.db.pool.Acquire(ctx)
	if err != nil {
		return Joined{}, nil, fmt.Errorf("join a run: %w", err)
	}
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, int64(fleetJoinLock)); err != nil {
		conn.Release()
		return Joined{}, nil, fmt.Errorf("join a run: %w", err)
	}
	var once sync.Once
	unlock = func() {
		once.Do(func() {
			if _, err := conn.Exec(context.Background(), `SELECT pg_advisory_unlock($1)`, int64(fleetJoinLock)); err != nil {
				conn.Conn().Close(context.Background())
			}
			conn.Release()
		})
	}
	j, err = w.join(ctx, conn, start, offset, archiveRoot)
	if err != nil {
		unlock()
		return Joined{}, nil, fmt.Errorf("join a run: %w", err)
	}
	w.db.root = archiveRoot
	return j, unlock, nil
}

func (w *Worker) join(ctx context.Context, conn *pgxpool.Conn, start time.Time, offset time.Duration, root string) (Joined, error) {
	now := w.now()
	var j Joined
	var started *string
	err := conn.QueryRow(ctx, `SELECT r.id, r.started_at FROM runs r WHERE r.status = 'running' AND EXISTS (
		SELECT 1 FROM fleet_workers f WHERE f.run_id = r.id AND f.done_at IS NULL AND f.heartbeat_at > $1)
		ORDER BY r.id DESC LIMIT 1`, now.Add(-w.ttl)).Scan(&j.Run, &started)
	switch {
	case err == nil:
		j.Joined, j.Start = true, parseTime(started)
	case notFound(err):
		if j.Crashed, err = w.db.CloseStaleRuns(ctx); err != nil {
			return Joined{}, err
		}
		if j.Run, err = w.db.BeginRun(ctx, start, offset); err != nil {
			return Joined{}, err
		}
		j.Start = start
	default:
		return Joined{}, err
	}
	if _, err := conn.Exec(ctx, `INSERT INTO fleet_workers (run_id, worker, archive_root, joined_at, heartbeat_at)
		VALUES ($1, $2, $3, $4, $4) ON CONFLICT (run_id, worker) DO UPDATE SET heartbeat_at = $4, done_at = NULL`,
		j.Run, w.name, root, now); err != nil {
		return Joined{}, err
	}
	return j, nil
}

// Done records that the worker's crawl stage of run has ended.
func (w *Worker) Done(ctx context.Context, run int64) error {
	if _, err := w.db.pool.Exec(ctx, `UPDATE fleet_workers SET done_at = $3 WHERE run_id = $1 AND worker = $2`, run, w.name, w.now()); err != nil {
		return fmt.Errorf("run %d: worker %s done: %w", run, w.name, err)
	}
	return nil
}

// Working counts the workers of run whose crawl stage has not ended and that were heard from
// within a lease: 0 means the crawl stage has finished fleet-wide.
func (w *Worker) Working(ctx context.Context, run int64) (int, error) {
	var n int
	if err := w.db.pool.QueryRow(ctx, `SELECT count(*) FROM fleet_workers WHERE run_id = $1 AND done_at IS NULL AND heartbeat_at > $2`,
		run, w.now().Add(-w.ttl)).Scan(&n); err != nil {
		return 0, fmt.Errorf("run %d: count its workers: %w", run, err)
	}
	return n, nil
}

// After elects the worker that runs recalc and links for run: the one that wins the run's advisory
// lock while the run is still running. ok is false for every other worker. unlock is called once
// the winner has recorded the run's end.
func (w *Worker) After(ctx context.Context, run int64) (unlock func(), ok bool, err error) {
	conn, err := w.db.pool.Acquire(ctx)
	if err != nil {
		return nil, false, fmt.Errorf("run %d: elect recalc: %w", run, err)
	}
	key := int64(fleetAfterLock) + run
	var status string
	err = conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1)`, key).Scan(&ok)
	if err == nil && ok {
		err = conn.QueryRow(ctx, `SELECT status FROM runs WHERE id = $1`, run).Scan(&status)
	}
	if err != nil || !ok || status != "running" {
		if ok {
			conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, key)
		}
		conn.Release()
		if err != nil {
			return nil, false, fmt.Errorf("run %d: elect recalc: %w", run, err)
		}
		return nil, false, nil
	}
	return func() {
		if _, err := conn.Exec(context.Background(), `SELECT pg_advisory_unlock($1)`, key); err != nil {
			conn.Conn().Close(context.Background())
		}
		conn.Release()
	}, true, nil
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

func timeOrNil(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Abandoned lists the runs in which a worker archiving to root stopped without ending its crawl
// stage and has been silent for longer than a lease: killed, most likely. Their directories in
// root may hold what it was writing; the next worker on root seals them (Settle after).
func (w *Worker) Abandoned(ctx context.Context, root string) ([]store.Run, error) {
	rows, err := w.db.pool.Query(ctx, `SELECT DISTINCT r.id, r.started_at FROM fleet_workers f JOIN runs r ON r.id = f.run_id
		WHERE f.archive_root = $1 AND f.done_at IS NULL AND f.heartbeat_at <= $2 ORDER BY r.id`, root, w.now().Add(-w.ttl))
	if err != nil {
		return nil, fmt.Errorf("abandoned runs in %s: %w", root, err)
	}
	var out []store.Run
	var id int64
	var started *string
	if _, err := pgx.ForEachRow(rows, []any{&id, &started}, func() error {
		out = append(out, store.Run{ID: id, StartedAt: parseTime(started)})
		return nil
	}); err != nil {
		return nil, fmt.Errorf("abandoned runs in %s: %w", root, err)
	}
	return out, nil
}

// Settle records that the silent workers of run that archived to root are done: their directory
// there has been sealed.
func (w *Worker) Settle(ctx context.Context, run int64, root string) error {
	now := w.now()
	if _, err := w.db.pool.Exec(ctx, `UPDATE fleet_workers SET done_at = $3 WHERE run_id = $1 AND archive_root = $2
		AND done_at IS NULL AND heartbeat_at <= $4`, run, root, now, now.Add(-w.ttl)); err != nil {
		return fmt.Errorf("run %d: settle the workers of %s: %w", run, root, err)
	}
	return nil
}
