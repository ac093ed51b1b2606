package pgstore

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/strata-crawler/strata/internal/outcome"
	"github.com/strata-crawler/strata/internal/store"
)

// What a command that runs the cycle (strata run, crawl, fetch, recalc, links) does around it, as
// the SQLite store does: the runs a killed process left, the seal of a run's archive directory,
// the prune journal, the run's counts and summary.

// Active counts the active seeds and the active URLs (seeds included).
func (db *DB) Active(ctx context.Context) (seeds, urls int, err error) {
	err = db.pool.QueryRow(ctx, `SELECT
		(SELECT count(*) FROM urls WHERE is_seed = 1 AND state = 'active'),
		(SELECT count(*) FROM urls WHERE state = 'active')`).Scan(&seeds, &urls)
	if err != nil {
		return 0, 0, fmt.Errorf("count the active seeds and URLs: %w", err)
	}
	return seeds, urls, nil
}

// Immediate makes urls due now for an out-of-schedule fetch and returns their ids:
// store.DB.Immediate.
func (db *DB) Immediate(ctx context.Context, urls []store.NewURL) ([]int64, error) {
	ids := make([]int64, 0, len(urls))
	now := formatTime(db.now())
	err := db.write(ctx, func(tx pgx.Tx) error {
		ids = ids[:0]
		for _, u := range urls {
			var id int64
			err := tx.QueryRow(ctx, `INSERT INTO urls (url, host, level, due_tick, fr_max, added_at) VALUES ($1, $2, 0, 0, $3, $4)
				ON CONFLICT (url) DO UPDATE SET due_tick = 0,
				state = CASE WHEN urls.state IN ('gone', 'removed') THEN 'active' ELSE urls.state END
				RETURNING id`, u.URL, u.Host, max(u.FrMax, 1), now).Scan(&id)
			if err != nil {
				return fmt.Errorf("%s: %w", u.URL, err)
			}
			if _, err := tx.Exec(ctx, `DELETE FROM trap_holds WHERE url_id = $1`, id); err != nil {
				return fmt.Errorf("%s: %w", u.URL, err)
			}
			ids = append(ids, id)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("queue for an immediate fetch: %w", err)
	}
	return ids, nil
}

// SetStageTimes records how long a run's recalculation and links stages took (zero leaves one as
// it is).
func (db *DB) SetStageTimes(ctx context.Context, run int64, recalc, links time.Duration) error {
	_, err := db.exec(ctx, `UPDATE runs SET
		recalc_ms = CASE WHEN $1::bigint > 0 THEN $1::bigint ELSE recalc_ms END,
		links_ms = CASE WHEN $2::bigint > 0 THEN $2::bigint ELSE links_ms END WHERE id = $3`,
		recalc.Milliseconds(), links.Milliseconds(), run)
	if err != nil {
		return fmt.Errorf("record stage times of run %d: %w", run, err)
	}
	return nil
}

// firstOf is the SQL for "the fetch (table alias a) stored its page's first version".
func firstOf(a string) string {
	return `(` + a + `.archive_path IS NOT NULL AND NOT EXISTS (SELECT 1 FROM fetches g
		WHERE g.url_id = ` + a + `.url_id AND g.id < ` + a + `.id AND g.archive_path IS NOT NULL))`
}

// factsOf is the SQL for the columns outcome.Fetch is made of, of the fetch with table alias a.
func factsOf(a string) string {
	return a + `.status, ` + a + `.changed = 1, ` + a + `.not_modified = 1, ` + a + `.error IS NOT NULL, ` +
		a + `.archive_path IS NOT NULL, ` + firstOf(a)
}

func factDests(f *outcome.Fetch) []any {
	return []any{&f.Status, &f.Changed, &f.NotModified, &f.Failed, &f.Stored, &f.First}
}

// RunOutcomes counts the kinds of run's fetches (package outcome).
func (db *DB) RunOutcomes(ctx context.Context, run int64) (outcome.Counts, error) {
	var c outcome.Counts
	rows, err := db.pool.Query(ctx, `SELECT `+factsOf("f")+` FROM fetches f WHERE f.run_id = $1`, run)
	if err != nil {
		return c, fmt.Errorf("count the outcomes of run %d: %w", run, err)
	}
	var f outcome.Fetch
	if _, err := pgx.ForEachRow(rows, factDests(&f), func() error {
		c.Add(f)
		return nil
	}); err != nil {
		return c, fmt.Errorf("count the outcomes of run %d: %w", run, err)
	}
	return c, nil
}

// Reach counts the distinct URLs run fetched and the URLs still due that it did not fetch (among
// only, when given): store.DB.Reach.
func (db *DB) Reach(ctx context.Context, run int64, only []int64) (fetched, left int, err error) {
	leftQuery := `SELECT count(*) FROM due d WHERE NOT EXISTS (SELECT 1 FROM fetches f WHERE f.url_id = d.id AND f.run_id = $1)`
	args := []any{run}
	if len(only) > 0 {
		leftQuery = `SELECT count(*) FROM urls WHERE urls.id = ANY($2::bigint[]) AND ` + isDue + `
			AND NOT EXISTS (SELECT 1 FROM fetches f WHERE f.url_id = urls.id AND f.run_id = $1)`
		args = append(args, only)
	}
	err = db.pool.QueryRow(ctx, `SELECT (SELECT count(DISTINCT url_id) FROM fetches WHERE run_id = $1), (`+leftQuery+`)`, args...).
		Scan(&fetched, &left)
	if err != nil {
		return 0, 0, fmt.Errorf("run %d: count the URLs fetched and still due: %w", run, err)
	}
	return fetched, left, nil
}

// CloseStaleRuns marks runs left 'running' by a process that died as 'interrupted', with the
// counts rebuilt from their fetches, and returns them: store.DB.CloseStaleRuns.
func (db *DB) CloseStaleRuns(ctx context.Context) ([]store.Run, error) {
	var out []store.Run
	err := db.write(ctx, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `UPDATE runs SET status = 'interrupted',
			ended_at = coalesce((SELECT max(fetched_at) FROM fetches WHERE run_id = runs.id), started_at),
			gone = (SELECT count(*) FROM fetches f JOIN urls u ON u.id = f.url_id WHERE f.run_id = runs.id
				AND f.status IN (404, 410) AND u.state = 'gone' AND f.id = (SELECT max(g.id) FROM fetches g WHERE g.url_id = f.url_id))
			WHERE status = 'running' RETURNING `+store.RunColumns)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, scanRun)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("close stale runs: %w", err)
	}
	for i := range out {
		r := &out[i]
		c, err := db.RunOutcomes(ctx, r.ID)
		if err != nil {
			return nil, err
		}
		r.SetOutcomes(c)
		if _, err := db.exec(ctx, `UPDATE runs SET fetched = $1, new = $2, changed = $3, unchanged = $4,
			not_modified = $5, errors = $6, not_found = $7 WHERE id = $8`,
			r.Fetched, r.New, r.Changed, r.Unchanged, r.NotModified, r.Errors, r.NotFound, r.ID); err != nil {
			return nil, fmt.Errorf("close stale run %d: %w", r.ID, err)
		}
	}
	return out, nil
}

// UnsealedRuns lists the runs that have ended but whose archive directory was never sealed,
// oldest first.
func (db *DB) UnsealedRuns(ctx context.Context) ([]store.Run, error) {
	rows, err := db.pool.Query(ctx, `SELECT `+store.RunColumns+` FROM runs WHERE sealed_at IS NULL AND status <> 'running' ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("unsealed runs: %w", err)
	}
	out, err := pgx.CollectRows(rows, scanRun)
	if err != nil {
		return nil, fmt.Errorf("unsealed runs: %w", err)
	}
	return out, nil
}

// SealRun records that the archive directory of run is final.
func (db *DB) SealRun(ctx context.Context, run int64, at time.Time) error {
	if _, err := db.exec(ctx, `UPDATE runs SET sealed_at = $1 WHERE id = $2`, formatTime(at), run); err != nil {
		return fmt.Errorf("seal run %d: %w", run, err)
	}
	return nil
}

// RunFiles calls fn for every fetch of run that may have put something in the run's archive
// directory: store.DB.RunFiles. fn must not use the database.
func (db *DB) RunFiles(ctx context.Context, run int64, fn func(version, unchangedURL string)) error {
	rows, err := db.pool.Query(ctx, `SELECT f.archive_path, u.url FROM fetches f JOIN urls u ON u.id = f.url_id
		WHERE f.run_id = $1 AND (f.archive_path IS NOT NULL OR f.status = 200)`, run)
	if err != nil {
		return fmt.Errorf("archive files of run %d: %w", run, err)
	}
	var path *string
	var u string
	if _, err := pgx.ForEachRow(rows, []any{&path, &u}, func() error {
		if path != nil {
			fn(*path, "")
		} else {
			fn("", u)
		}
		return nil
	}); err != nil {
		return fmt.Errorf("archive files of run %d: %w", run, err)
	}
	return nil
}

// RunManifest calls fn with each page crawled in a run, in the order they were crawled, one row
// at a time. An error from fn stops it.
func (db *DB) RunManifest(ctx context.Context, runID int64, fn func(store.ManifestEntry) error) error {
	rows, err := db.pool.Query(ctx, `SELECT u.url, `+factsOf("f")+`,
		(SELECT g.archive_path FROM fetches g WHERE g.url_id = f.url_id AND g.archive_path IS NOT NULL AND g.id <= f.id
		 ORDER BY g.id DESC LIMIT 1)
		FROM fetches f JOIN urls u ON u.id = f.url_id WHERE f.run_id = $1 ORDER BY f.id`, runID)
	if err != nil {
		return fmt.Errorf("manifest of run %d: %w", runID, err)
	}
	defer rows.Close()
	for rows.Next() {
		var e store.ManifestEntry
		var f outcome.Fetch
		var current *string
		if err := rows.Scan(append(append([]any{&e.URL}, factDests(&f)...), &current)...); err != nil {
			return fmt.Errorf("manifest of run %d: %w", runID, err)
		}
		e.Current = deref(current)
		e.Outcome = store.ManifestOutcome(f)
		if err := fn(e); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("manifest of run %d: %w", runID, err)
	}
	return nil
}

// PendingPrunes lists the versions marked pruned whose files may not have been removed yet.
func (db *DB) PendingPrunes(ctx context.Context) ([]string, error) {
	rows, err := db.pool.Query(ctx, `SELECT archive_path FROM prune_pending ORDER BY archive_path`)
	if err != nil {
		return nil, fmt.Errorf("pending prunes: %w", err)
	}
	out, err := collectStrings(rows)
	if err != nil {
		return nil, fmt.Errorf("pending prunes: %w", err)
	}
	return out, nil
}

// Pruned takes versions whose files are removed out of the prune journal.
func (db *DB) Pruned(ctx context.Context, paths []string) error {
	if len(paths) == 0 {
		return nil
	}
	if _, err := db.exec(ctx, `DELETE FROM prune_pending WHERE archive_path = ANY($1::text[])`, paths); err != nil {
		return fmt.Errorf("close the prune journal of %d versions: %w", len(paths), err)
	}
	return nil
}

// runLock is the session-level advisory lock of LockRuns ('strata r' in ASCII).
const runLock = 0x7374726174612072

// LockRuns takes the database's run lock, which SQLite keeps in a file beside the database: one
// command that writes the history at a time. It holds one connection of the pool until unlock is
// called; a process that dies loses its connection and with it the lock. ok is false, and nothing
// held, when another session has it.
func (db *DB) LockRuns(ctx context.Context) (unlock func(), ok bool, err error) {
	conn, err := db.pool.Acquire(ctx)
	if err != nil {
		return nil, false, fmt.Errorf("database %s: run lock: %w", db.name, err)
	}
	if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1)`, int64(runLock)).Scan(&ok); err != nil || !ok {
		conn.Release()
		if err != nil {
			return nil, false, fmt.Errorf("database %s: run lock: %w", db.name, err)
		}
		return nil, false, nil
	}
	return func() {
		// A connection that cannot say unlock is closed instead, which unlocks too.
		if _, err := conn.Exec(context.Background(), `SELECT pg_advisory_unlock($1)`, int64(runLock)); err != nil {
			conn.Conn().Close(context.Background())
		}
		conn.Release()
	}, true, nil
}
