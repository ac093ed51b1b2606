package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// ChildRecords returns, for each active child of hub (the pages first found on it), its last limit
// records, oldest first. Children never fetched are left out.
func (db *DB) ChildRecords(ctx context.Context, hub int64, limit int) ([][]Record, error) {
	st, err := db.prepared(ctx, `WITH kids AS (
			SELECT id FROM urls WHERE parent_id = ?1 AND state = 'active'),
		ranked AS (
			SELECT `+recordFields+`, f.id,
				row_number() OVER (PARTITION BY f.url_id ORDER BY f.id DESC) AS rn
			FROM fetches f JOIN kids k ON k.id = f.url_id)
		SELECT url_id, run_id, changed, failed FROM ranked WHERE rn <= ?2 ORDER BY url_id, id`)
	if err != nil {
		return nil, fmt.Errorf("children of URL %d: %w", hub, err)
	}
	rows, err := st.QueryContext(ctx, hub, limit)
	if err != nil {
		return nil, fmt.Errorf("children of URL %d: %w", hub, err)
	}
	defer rows.Close()
	var out [][]Record
	last := int64(-1)
	for rows.Next() {
		var id int64
		var r Record
		if err := rows.Scan(&id, &r.Run, &r.Changed, &r.Failed); err != nil {
			return nil, fmt.Errorf("children of URL %d: %w", hub, err)
		}
		if id != last {
			out = append(out, nil)
			last = id
		}
		out[len(out)-1] = append(out[len(out)-1], r)
	}
	return out, rows.Err()
}

// HasChildren reports whether hub has active children.
func (db *DB) HasChildren(ctx context.Context, hub int64) (bool, error) {
	st, err := db.prepared(ctx, `SELECT 1 FROM urls WHERE parent_id = ? AND state = 'active' LIMIT 1`)
	if err != nil {
		return false, fmt.Errorf("children of URL %d: %w", hub, err)
	}
	var one int
	err = st.QueryRowContext(ctx, hub).Scan(&one)
	if err == sql.ErrNoRows {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("children of URL %d: %w", hub, err)
	}
	return true, nil
}

// SetHub stores what the selective rule found when a hub came due: its new child-change threshold and
// the share of its children that changed.
func (db *DB) SetHub(ctx context.Context, hub int64, threshold, childRatio float64) error {
	st, err := db.prepared(ctx, `UPDATE urls SET threshold = ?, child_ratio = ? WHERE id = ?`)
	if err != nil {
		return fmt.Errorf("set hub state of URL %d: %w", hub, err)
	}
	if _, err := st.ExecContext(ctx, threshold, childRatio, hub); err != nil {
		return fmt.Errorf("set hub state of URL %d: %w", hub, err)
	}
	return nil
}

// ForceChildren makes hub's active children due now, unless crawled since runStart: the selective
// rule decided to visit the subtree. It returns their hosts, for the scheduler.
func (db *DB) ForceChildren(ctx context.Context, hub int64, runStart time.Time) ([]string, error) {
	rows, err := db.sql.QueryContext(ctx, `UPDATE urls SET due_tick = 0 WHERE parent_id = ? AND state = 'active'
		AND (date IS NULL OR date < ?) RETURNING host`, hub, formatTime(runStart))
	if err != nil {
		return nil, fmt.Errorf("visit children of URL %d: %w", hub, err)
	}
	defer rows.Close()
	seen := map[string]bool{}
	var hosts []string
	for rows.Next() {
		var h string
		if err := rows.Scan(&h); err != nil {
			return nil, err
		}
		if !seen[h] {
			seen[h] = true
			hosts = append(hosts, h)
		}
	}
	return hosts, rows.Err()
}

// SkipSubtree leaves out of run the due pages below hub (its children, theirs, and so on) whose own
// records quiet approves (frequency.Quiet, with the hub's threshold) and that have been skipped
// fewer than maxSkips runs in a row, and counts the skip. A page skipped maxSkips times in a row is
// crawled anyway, so no page's record can freeze for ever; a page quiet does not approve — never
// fetched, fetched once, or changing often — is never skipped, so a skip cannot spread through a
// site that gave no evidence. A page whose last answer was 404 is never skipped: whether it is gone
// is learnt by fetching it (see Countdown); nor is a page below a snapshot seed, which is fetched
// every run. Each skipped page records hub as the page that left it
// out. It returns how many it skipped.
func (db *DB) SkipSubtree(ctx context.Context, hub, run int64, maxSkips int, quiet func([]Record) bool) (int, error) {
	n := 0
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `WITH RECURSIVE below(id) AS (
				SELECT id FROM urls WHERE parent_id = ?1
				UNION SELECT u.id FROM urls u JOIN below b ON u.parent_id = b.id)
			SELECT id, recent FROM urls WHERE id IN (SELECT id FROM below) AND `+isDue+` AND skips < ?3
			AND (skipped_run IS NULL OR skipped_run <> ?2) AND last_status IS NOT 404
			AND root_id NOT IN `+snapshotRoots, hub, run, maxSkips)
		if err != nil {
			return err
		}
		var ids []int64
		for rows.Next() {
			var id int64
			var blob []byte
			if err := rows.Scan(&id, &blob); err != nil {
				rows.Close()
				return err
			}
			recs, err := decodeRecent(blob)
			if err != nil {
				rows.Close()
				return fmt.Errorf("URL %d: %w", id, err)
			}
			if quiet(recs) {
				ids = append(ids, id)
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		skip, err := tx.PrepareContext(ctx, `UPDATE urls SET skipped_run = ?, skips = skips + 1, skipped_by = ? WHERE id = ?`)
		if err != nil {
			return err
		}
		defer skip.Close()
		for _, id := range ids {
			if _, err := skip.ExecContext(ctx, run, hub, id); err != nil {
				return err
			}
		}
		n = len(ids)
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("skip the subtree of URL %d: %w", hub, err)
	}
	return n, nil
}
