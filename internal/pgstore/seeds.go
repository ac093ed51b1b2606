package pgstore

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/strata-crawler/strata/internal/store"
)

// AddSeeds adds the seeds in one transaction, either all or none: store.DB.AddSeeds.
func (db *DB) AddSeeds(ctx context.Context, seeds []store.NewSeed) ([]store.SeedOutcome, error) {
	out := make([]store.SeedOutcome, len(seeds))
	now := formatTime(db.now())
	err := db.write(ctx, func(tx pgx.Tx) error {
		for i, s := range seeds {
			o, err := addSeed(ctx, tx, s, now)
			if err != nil {
				return fmt.Errorf("add seed %s: %w", s.URL, err)
			}
			out[i] = o
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func addSeed(ctx context.Context, tx pgx.Tx, s store.NewSeed, now string) (store.SeedOutcome, error) {
	var id int64
	priority := s.Priority
	if priority <= 0 {
		priority = 1
	}
	snapshot := btoi(s.Snapshot != nil && *s.Snapshot)
	err := tx.QueryRow(ctx, `
		INSERT INTO urls (url, host, level, due_tick, fr_max, is_seed, added_at, priority, snapshot) VALUES ($1, $2, $3, 0, $4, 1, $5, $6, $7)
		ON CONFLICT (url) DO NOTHING RETURNING id`,
		s.URL, s.Host, s.Level, s.FrMax, now, priority, snapshot).Scan(&id)
	if err == nil {
		_, err = tx.Exec(ctx, `UPDATE urls SET root_id = id WHERE id = $1`, id)
		return store.SeedAdded, err
	}
	if !notFound(err) {
		return 0, err
	}
	var isSeed bool
	var state string
	if err := tx.QueryRow(ctx, `SELECT id, is_seed = 1, state FROM urls WHERE url = $1`, s.URL).Scan(&id, &isSeed, &state); err != nil {
		return 0, err
	}
	if s.Priority > 0 {
		if _, err := tx.Exec(ctx, `UPDATE urls SET priority = $1 WHERE id = $2`, s.Priority, id); err != nil {
			return 0, err
		}
	}
	if !isSeed {
		if _, err := tx.Exec(ctx, `DELETE FROM trap_holds WHERE url_id = $1`, id); err != nil {
			return 0, err
		}
	}
	if s.Snapshot != nil {
		if _, err := tx.Exec(ctx, `UPDATE urls SET snapshot = $1 WHERE id = $2`, snapshot, id); err != nil {
			return 0, err
		}
	}
	switch {
	case isSeed:
		return store.SeedExists, nil
	case state == "removed":
		if _, err := tx.Exec(ctx, `UPDATE urls SET is_seed = 1, root_id = id, due_tick = 0, state = 'active',
			level = greatest(level, $1) WHERE id = $2`, s.Level, id); err != nil {
			return 0, err
		}
		_, err := tx.Exec(ctx, `UPDATE urls SET state = 'active' WHERE root_id = $1 AND state = 'removed'`, id)
		return store.SeedReactivated, err
	default:
		_, err := tx.Exec(ctx, `UPDATE urls SET is_seed = 1, root_id = id, level = greatest(level, $1),
			fr_max = greatest(fr_max, $2) WHERE id = $3`, s.Level, s.FrMax, id)
		return store.SeedPromoted, err
	}
}

// SeedHosts lists the hosts of the seeds: the hosts the user vouched for.
func (db *DB) SeedHosts(ctx context.Context) ([]string, error) {
	rows, err := db.pool.Query(ctx, `SELECT DISTINCT host FROM urls WHERE is_seed = 1`)
	if err != nil {
		return nil, fmt.Errorf("seed hosts: %w", err)
	}
	hosts, err := collectStrings(rows)
	if err != nil {
		return nil, fmt.Errorf("seed hosts: %w", err)
	}
	return hosts, nil
}

// BeginRun records the start of a run and returns its id.
func (db *DB) BeginRun(ctx context.Context, started time.Time, offset time.Duration) (int64, error) {
	var id int64
	err := db.write(ctx, func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, `INSERT INTO runs (started_at, start_offset_ms) VALUES ($1, $2) RETURNING id`,
			formatTime(started), offset.Milliseconds()).Scan(&id)
	})
	if err != nil {
		return 0, fmt.Errorf("begin run: %w", err)
	}
	return id, nil
}

// FinishRun stores the end time, final status and counts of run r.ID.
func (db *DB) FinishRun(ctx context.Context, r store.Run) error {
	n, err := db.exec(ctx, `UPDATE runs SET ended_at = $1, status = $2, fetched = $3, new = $4, changed = $5,
		unchanged = $6, not_modified = $7, errors = $8, blocked = $9, skipped_fr = $10, skipped_selective = $11,
		new_urls = $12, bytes = $13, crawl_ms = $14, recalc_ms = $15, links_ms = $16, hubs = $17, hubs_reentered = $18, trap_events = $19,
		budget = $20, new_fetched = $21, known_fetched = $22, estimated = $23, expected_changes = $24, observed_changes = $25,
		not_found = $26, gone = $27
		WHERE id = $28`,
		formatTime(r.EndedAt), r.Status, r.Fetched, r.New, r.Changed, r.Unchanged, r.NotModified, r.Errors, r.Blocked,
		r.SkippedFr, r.SkippedSelective, r.NewURLs, r.Bytes, r.CrawlTime.Milliseconds(),
		r.RecalcTime.Milliseconds(), r.LinksTime.Milliseconds(), r.Hubs, r.HubsReentered, r.TrapEvents,
		r.Budget, r.NewFetched, r.KnownFetched, r.Estimated, r.ExpectedChanges, r.ObservedChanges,
		r.NotFound, r.Gone, r.ID)
	if err != nil {
		return fmt.Errorf("finish run %d: %w", r.ID, err)
	}
	if n == 0 {
		return fmt.Errorf("finish run %d: %w", r.ID, store.ErrNotFound)
	}
	return nil
}

// RecentRuns returns up to n runs, the most recent first.
func (db *DB) RecentRuns(ctx context.Context, n int) ([]store.Run, error) {
	runs, err := db.runs(ctx, `ORDER BY id DESC LIMIT $1`, n)
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	return runs, nil
}

// runs lists the runs that rest, the query after its FROM, selects.
func (db *DB) runs(ctx context.Context, rest string, args ...any) ([]store.Run, error) {
	rows, err := db.pool.Query(ctx, `SELECT `+store.RunColumns+` FROM runs `+rest, args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, scanRun)
}

// scanRun reads a row of store.RunColumns, as pgx.CollectRows wants it.
func scanRun(row pgx.CollectableRow) (store.Run, error) { return store.ScanRun(row) }

// Seeds lists the active seeds in URL order: store.DB.Seeds.
func (db *DB) Seeds(ctx context.Context) ([]store.SeedInfo, error) {
	rows, err := db.pool.Query(ctx, `
		SELECT s.url, s.level, `+frOf("s.due_tick")+`, s.fr_max, s.state, s.date,
		       (SELECT count(*) FROM urls t WHERE t.root_id = s.id), s.snapshot = 1
		FROM urls s WHERE s.is_seed = 1 ORDER BY s.url`)
	if err != nil {
		return nil, fmt.Errorf("list seeds: %w", err)
	}
	var out []store.SeedInfo
	var s store.SeedInfo
	var date *string
	if _, err := pgx.ForEachRow(rows, []any{&s.URL, &s.Level, &s.Fr, &s.FrMax, &s.State, &date, &s.Pages, &s.Snapshot}, func() error {
		s.LastCrawled = parseTime(date)
		out = append(out, s)
		return nil
	}); err != nil {
		return nil, fmt.Errorf("list seeds: %w", err)
	}
	return out, nil
}
