package store

import (
	"context"
	"database/sql"
	"fmt"
)

// BucketLoad is how many active pages share a change-rate bucket.
type BucketLoad struct {
	Bucket int // 0..255; -1 for pages whose rate is not estimated yet
	Pages  int
	Rate   float64 // mean estimated change rate of the pages in it; 0 for the unestimated
}

// BucketLoads counts the active pages per change-rate bucket; pages without an estimate yet form a
// bucket of their own, -1.
func (db *DB) BucketLoads(ctx context.Context) ([]BucketLoad, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT CASE WHEN change_rate IS NULL THEN -1 ELSE rate_bucket END AS b,
		count(*), coalesce(avg(change_rate), 0) FROM urls WHERE state = 'active' GROUP BY b ORDER BY b`)
	if err != nil {
		return nil, fmt.Errorf("bucket loads: %w", err)
	}
	defer rows.Close()
	var out []BucketLoad
	for rows.Next() {
		var l BucketLoad
		if err := rows.Scan(&l.Bucket, &l.Pages, &l.Rate); err != nil {
			return nil, fmt.Errorf("bucket loads: %w", err)
		}
		out = append(out, l)
	}
	return out, rows.Err()
}

// ApplyPlan gives every active page of each bucket its fr_max (bucket -1: pages without an
// estimate), and a fixed phase: a page is due in the runs where (run + id) mod fr_max = 0, so each run
// carries about 1/fr_max of every bucket and no run gets a thundering herd. Countdowns already
// running are kept when they fall inside the new interval; pages crawled in run (or whose countdown
// is longer than the new interval) are put on their phase after run.
func (db *DB) ApplyPlan(ctx context.Context, run int64, frMax map[int]int) error {
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		for b, f := range frMax {
			var res sql.Result
			var err error
			if b < 0 {
				res, err = tx.ExecContext(ctx, `UPDATE urls SET fr_max = ? WHERE state = 'active' AND change_rate IS NULL`, f)
			} else {
				res, err = tx.ExecContext(ctx, `UPDATE urls SET fr_max = ? WHERE state = 'active' AND change_rate IS NOT NULL
					AND rate_bucket = ?`, f, b)
			}
			if err != nil {
				return err
			}
			_ = res
		}
		// Runs ahead of the next are counted down at their start: a page due in run r' = run + k
		// needs fr = k now, k in [1, fr_max], with (run + k + id) mod fr_max = 0.
		_, err := tx.ExecContext(ctx, `UPDATE urls SET fr = CASE
				WHEN (fr_max - ((?1 + id) % fr_max)) % fr_max = 0 THEN fr_max
				ELSE (fr_max - ((?1 + id) % fr_max)) % fr_max END
			WHERE state = 'active' AND (fr > fr_max OR id IN (SELECT url_id FROM fetches WHERE run_id = ?1))`, run)
		return err
	})
	if err != nil {
		return fmt.Errorf("apply the crawl plan after run %d: %w", run, err)
	}
	return nil
}
