package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// Timeline is a page's last successful fetches, oldest first, for finding the weekdays its changes
// come on.
type Timeline struct {
	URLID       int64
	ReleaseDays uint8 // the mask found so far
	At          []time.Time
	Changed     []bool
}

// Timelines calls fn with the last n successful fetches of every page that changed in run or has
// release days and was fetched in run: the pages whose release days the run can have changed.
func (db *DB) Timelines(ctx context.Context, run int64, n int, fn func(Timeline) error) error {
	rows, err := db.sql.QueryContext(ctx, `WITH pages AS (
			SELECT DISTINCT f.url_id FROM fetches f JOIN urls u ON u.id = f.url_id
			WHERE f.run_id = ?1 AND (f.changed = 1 OR u.release_days <> 0)),
		ranked AS (
			SELECT f.url_id, f.id, f.fetched_at, f.changed, row_number() OVER (PARTITION BY f.url_id ORDER BY f.id DESC) AS rn
			FROM fetches f JOIN pages p ON p.url_id = f.url_id WHERE f.status = 200 OR f.not_modified)
		SELECT r.url_id, u.release_days, r.fetched_at, r.changed FROM ranked r JOIN urls u ON u.id = r.url_id
		WHERE r.rn <= ?2 ORDER BY r.url_id, r.id`, run, n)
	if err != nil {
		return fmt.Errorf("fetch timelines of run %d: %w", run, err)
	}
	defer rows.Close()
	var cur *Timeline
	for rows.Next() {
		var id int64
		var mask uint8
		var at sql.NullString
		var changed bool
		if err := rows.Scan(&id, &mask, &at, &changed); err != nil {
			return fmt.Errorf("fetch timelines of run %d: %w", run, err)
		}
		if cur != nil && cur.URLID != id {
			if err := fn(*cur); err != nil {
				return err
			}
			cur = nil
		}
		if cur == nil {
			cur = &Timeline{URLID: id, ReleaseDays: mask}
		}
		cur.At = append(cur.At, parseTime(at))
		cur.Changed = append(cur.Changed, changed)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("fetch timelines of run %d: %w", run, err)
	}
	if cur != nil {
		return fn(*cur)
	}
	return nil
}

// SetReleaseDays stores the release-day masks of pages (0: not quasi-deterministic).
func (db *DB) SetReleaseDays(ctx context.Context, masks map[int64]uint8) error {
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		st, err := tx.PrepareContext(ctx, `UPDATE urls SET release_days = ? WHERE id = ? AND release_days <> ?1`)
		if err != nil {
			return err
		}
		defer st.Close()
		for id, m := range masks {
			if _, err := st.ExecContext(ctx, m, id); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store release days: %w", err)
	}
	return nil
}

// ReleasePage is an active page with release days.
type ReleasePage struct {
	ID          int64
	ReleaseDays uint8
	LastFetch   time.Time // zero if never fetched
}

// ReleasePages lists the active pages that have release days.
func (db *DB) ReleasePages(ctx context.Context) ([]ReleasePage, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT id, release_days, date FROM urls WHERE release_days <> 0 AND state = 'active'
		AND root_id NOT IN `+snapshotRoots)
	if err != nil {
		return nil, fmt.Errorf("list pages with release days: %w", err)
	}
	defer rows.Close()
	var out []ReleasePage
	for rows.Next() {
		var p ReleasePage
		var last sql.NullString
		if err := rows.Scan(&p.ID, &p.ReleaseDays, &last); err != nil {
			return nil, fmt.Errorf("list pages with release days: %w", err)
		}
		p.LastFetch = parseTime(last)
		out = append(out, p)
	}
	return out, rows.Err()
}
