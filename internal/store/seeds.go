package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// NewSeed is a URL the user asks strata to crawl. URL must already be normalised.
type NewSeed struct {
	URL   string
	Host  string
	Level int
	FrMax int
	// Priority weighs the seed's pages in the weighted objective and in the order of a short run
	// (1 = ordinary); 0 means 1 for a new seed and leaves an existing seed's as it is.
	Priority float64
	// Snapshot, when set, turns the seed's snapshot-every-run on or off (see snapshotRoots): every
	// page below it is fetched in every run, whatever its revisit interval and the selective rule
	// say. nil leaves an existing seed's as it is, and is off for a new one.
	Snapshot *bool
}

// SeedOutcome says what AddSeeds did with one seed.
type SeedOutcome int

const (
	SeedAdded       SeedOutcome = iota // a new URL row, due on the next run
	SeedExists                         // already a seed; left unchanged
	SeedPromoted                       // a URL found by crawling, now a seed (level and fr_max kept at the larger)
	SeedReactivated                    // a removed seed, active again with its tree
)

func (o SeedOutcome) String() string {
	switch o {
	case SeedAdded:
		return "added"
	case SeedExists:
		return "already a seed, unchanged"
	case SeedPromoted:
		return "already known from crawling, now a seed"
	case SeedReactivated:
		return "removed earlier, active again"
	}
	return fmt.Sprintf("SeedOutcome(%d)", int(o))
}

// AddSeeds adds the seeds in one transaction: either all are recorded or none.
func (db *DB) AddSeeds(ctx context.Context, seeds []NewSeed) ([]SeedOutcome, error) {
	out := make([]SeedOutcome, len(seeds))
	now := formatTime(db.now())
	err := db.inTx(ctx, func(tx *sql.Tx) error {
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

func addSeed(ctx context.Context, tx *sql.Tx, s NewSeed, now string) (SeedOutcome, error) {
	// Insert-if-new is one statement, never check-then-act.
	var id int64
	priority := s.Priority
	if priority <= 0 {
		priority = 1
	}
	snapshot := s.Snapshot != nil && *s.Snapshot
	err := tx.QueryRowContext(ctx, `
		INSERT INTO urls (url, host, level, due_tick, fr_max, is_seed, added_at, priority, snapshot) VALUES (?, ?, ?, 0, ?, 1, ?, ?, ?)
		ON CONFLICT (url) DO NOTHING RETURNING id`,
		s.URL, s.Host, s.Level, s.FrMax, now, priority, snapshot).Scan(&id)
	if err == nil {
		_, err = tx.ExecContext(ctx, `UPDATE urls SET root_id = id WHERE id = ?`, id)
		return SeedAdded, err
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return 0, err
	}
	var isSeed bool
	var state string
	if err := tx.QueryRowContext(ctx, `SELECT id, is_seed, state FROM urls WHERE url = ?`, s.URL).
		Scan(&id, &isSeed, &state); err != nil {
		return 0, err
	}
	if s.Priority > 0 {
		if _, err := tx.ExecContext(ctx, `UPDATE urls SET priority = ? WHERE id = ?`, s.Priority, id); err != nil {
			return 0, err
		}
	}
	if !isSeed {
		// The user vouches for it: no trap rule holds a seed back.
		if _, err := tx.ExecContext(ctx, `DELETE FROM trap_holds WHERE url_id = ?`, id); err != nil {
			return 0, err
		}
	}
	if s.Snapshot != nil {
		if _, err := tx.ExecContext(ctx, `UPDATE urls SET snapshot = ? WHERE id = ?`, snapshot, id); err != nil {
			return 0, err
		}
	}
	switch {
	case isSeed:
		return SeedExists, nil
	case state == "removed":
		// A removed seed keeps is_seed = 0 and state 'removed' on its whole tree; adding it again
		// brings the tree back.
		if _, err := tx.ExecContext(ctx, `UPDATE urls SET is_seed = 1, root_id = id, due_tick = 0, state = 'active',
			level = max(level, ?) WHERE id = ?`, s.Level, id); err != nil {
			return 0, err
		}
		_, err := tx.ExecContext(ctx, `UPDATE urls SET state = 'active' WHERE root_id = ? AND state = 'removed'`, id)
		return SeedReactivated, err
	default:
		_, err := tx.ExecContext(ctx, `UPDATE urls SET is_seed = 1, root_id = id, level = max(level, ?),
			fr_max = max(fr_max, ?) WHERE id = ?`, s.Level, s.FrMax, id)
		return SeedPromoted, err
	}
}

// SeedInfo describes one seed for `strata seed list`.
type SeedInfo struct {
	URL         string
	Level       int
	Fr, FrMax   int
	State       string
	LastCrawled time.Time // zero if never
	Pages       int       // URLs in its tree, itself included
	Snapshot    bool      // every page of its tree is fetched every run
}

// Seeds lists the active seeds in URL order.
func (db *DB) Seeds(ctx context.Context) ([]SeedInfo, error) {
	rows, err := db.sql.QueryContext(ctx, `
		SELECT s.url, s.level, `+frOf("s.due_tick")+`, s.fr_max, s.state, s.date,
		       (SELECT count(*) FROM urls t WHERE t.root_id = s.id), s.snapshot
		FROM urls s WHERE s.is_seed = 1 ORDER BY s.url`)
	if err != nil {
		return nil, fmt.Errorf("list seeds: %w", err)
	}
	defer rows.Close()
	var out []SeedInfo
	for rows.Next() {
		var s SeedInfo
		var date sql.NullString
		if err := rows.Scan(&s.URL, &s.Level, &s.Fr, &s.FrMax, &s.State, &date, &s.Pages, &s.Snapshot); err != nil {
			return nil, fmt.Errorf("list seeds: %w", err)
		}
		s.LastCrawled = parseTime(date)
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list seeds: %w", err)
	}
	return out, nil
}

// RemoveSeed stops crawling a seed and the pages found below it, keeping their history: the rows stay,
// marked 'removed'. It returns how many URLs were marked, or an error wrapping ErrNotFound if url is
// not a seed.
func (db *DB) RemoveSeed(ctx context.Context, url string) (int, error) {
	var n int
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		var id int64
		err := tx.QueryRowContext(ctx, `UPDATE urls SET is_seed = 0 WHERE url = ? AND is_seed = 1 RETURNING id`, url).Scan(&id)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("remove seed %s: %w (see strata seed list)", url, ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("remove seed %s: %w", url, err)
		}
		// Pages shared with another seed's tree belong to whichever seed found them first (root_id);
		// only this seed's tree is marked.
		res, err := tx.ExecContext(ctx, `UPDATE urls SET state = 'removed' WHERE root_id = ? AND state = 'active'`, id)
		if err != nil {
			return fmt.Errorf("remove seed %s: %w", url, err)
		}
		m, _ := res.RowsAffected()
		n = int(m)
		return nil
	})
	return n, err
}

// Active counts the active seeds and the active URLs (seeds included): what a crawl can reach.
func (db *DB) Active(ctx context.Context) (seeds, urls int, err error) {
	err = db.sql.QueryRowContext(ctx, `SELECT
		(SELECT count(*) FROM urls WHERE is_seed = 1 AND state = 'active'),
		(SELECT count(*) FROM urls WHERE state = 'active')`).Scan(&seeds, &urls)
	if err != nil {
		return 0, 0, fmt.Errorf("count the active seeds and URLs: %w", err)
	}
	return seeds, urls, nil
}

// SeedHosts lists the hosts of the seeds: the hosts the user vouched for.
func (db *DB) SeedHosts(ctx context.Context) ([]string, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT DISTINCT host FROM urls WHERE is_seed = 1`)
	if err != nil {
		return nil, fmt.Errorf("seed hosts: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var h string
		if err := rows.Scan(&h); err != nil {
			return nil, fmt.Errorf("seed hosts: %w", err)
		}
		out = append(out, h)
	}
	return out, rows.Err()
}
