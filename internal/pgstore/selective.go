package pgstore

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/strata-crawler/strata/internal/store"
)

// recordFields are the columns of a fetch that make a store.Record.
const recordFields = `f.url_id, coalesce(f.run_id, 0) AS run_id, f.changed = 1 AS changed,
	NOT (f.status = 200 OR f.not_modified = 1) AS failed`

// ChildRecords returns, for each active child of hub, its last limit records, oldest first.
func (db *DB) ChildRecords(ctx context.Context, hub int64, limit int) ([][]store.Record, error) {
	rows, err := db.pool.Query(ctx, `WITH kids AS (
			SELECT id FROM urls WHERE parent_id = $1 AND state = 'active'),
		ranked AS (
			SELECT `+recordFields+`, f.id,
				row_number() OVER (PARTITION BY f.url_id ORDER BY f.id DESC) AS rn
			FROM fetches f JOIN kids k ON k.id = f.url_id)
		SELECT url_id, run_id, changed, failed FROM ranked WHERE rn <= $2 ORDER BY url_id, id`, hub, limit)
	if err != nil {
		return nil, fmt.Errorf("children of URL %d: %w", hub, err)
	}
	var out [][]store.Record
	last := int64(-1)
	var id int64
	var r store.Record
	if _, err := pgx.ForEachRow(rows, []any{&id, &r.Run, &r.Changed, &r.Failed}, func() error {
		if id != last {
			out = append(out, nil)
			last = id
		}
		out[len(out)-1] = append(out[len(out)-1], r)
		return nil
	}); err != nil {
		return nil, fmt.Errorf("children of URL %d: %w", hub, err)
	}
	return out, nil
}

// HasChildren reports whether hub has active children.
func (db *DB) HasChildren(ctx context.Context, hub int64) (bool, error) {
	var ok bool
	if err := db.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM urls WHERE parent_id = $1 AND state = 'active')`, hub).Scan(&ok); err != nil {
		return false, fmt.Errorf("children of URL %d: %w", hub, err)
	}
	return ok, nil
}

// SetHub stores a hub's new child-change threshold and the share of its children that changed.
func (db *DB) SetHub(ctx context.Context, hub int64, threshold, childRatio float64) error {
	if _, err := db.execRows(ctx, `UPDATE urls SET threshold = $1, child_ratio = $2 WHERE id = $3`, threshold, childRatio, hub); err != nil {
		return fmt.Errorf("set hub state of URL %d: %w", hub, err)
	}
	return nil
}

// ForceChildren makes hub's active children due now, unless crawled since runStart, and returns
// their hosts.
func (db *DB) ForceChildren(ctx context.Context, hub int64, runStart time.Time) ([]string, error) {
	var hosts []string
	err := db.rows(ctx, func(tx pgx.Tx) error {
		hosts = hosts[:0]
		rows, err := tx.Query(ctx, `UPDATE urls SET due_tick = 0 WHERE parent_id = $1 AND state = 'active'
			AND (date IS NULL OR date < $2) RETURNING host`, hub, formatTime(runStart))
		if err != nil {
			return err
		}
		all, err := collectStrings(rows)
		seen := map[string]bool{}
		for _, h := range all {
			if !seen[h] {
				seen[h] = true
				hosts = append(hosts, h)
			}
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("visit children of URL %d: %w", hub, err)
	}
	return hosts, nil
}

// SkipSubtree leaves out of run the due pages below hub whose records quiet approves:
// store.DB.SkipSubtree.
func (db *DB) SkipSubtree(ctx context.Context, hub, run int64, maxSkips int, quiet func([]store.Record) bool) (int, error) {
	n := 0
	// The due pages are locked as they are read, in id order, so that a record of one of them in
	// the meantime neither slips between the read of its records and the skip nor deadlocks.
	err := db.rows(ctx, func(tx pgx.Tx) error {
		n = 0
		rows, err := tx.Query(ctx, `WITH RECURSIVE below(id) AS (
				SELECT id FROM urls WHERE parent_id = $1
				UNION SELECT u.id FROM urls u JOIN below b ON u.parent_id = b.id)
			SELECT id, recent FROM urls WHERE id IN (SELECT id FROM below) AND `+isDue+` AND skips < $3
			AND (skipped_run IS NULL OR skipped_run <> $2) AND last_status IS DISTINCT FROM 404
			AND root_id NOT IN `+snapshotRoots+` ORDER BY id FOR UPDATE OF urls`, hub, run, maxSkips)
		if err != nil {
			return err
		}
		var ids []int64
		var id int64
		var blob []byte
		if _, err := pgx.ForEachRow(rows, []any{&id, &blob}, func() error {
			recs, err := store.DecodeRecent(blob)
			if err != nil {
				return fmt.Errorf("URL %d: %w", id, err)
			}
			if quiet(recs) {
				ids = append(ids, id)
			}
			return nil
		}); err != nil {
			return err
		}
		if len(ids) == 0 {
			return nil
		}
		_, err = tx.Exec(ctx, `UPDATE urls SET skipped_run = $1, skips = skips + 1, skipped_by = $2 WHERE id = ANY($3::bigint[])`, run, hub, ids)
		n = len(ids)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("skip the subtree of URL %d: %w", hub, err)
	}
	return n, nil
}
