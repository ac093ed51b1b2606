package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// BucketLoad is how many active pages share a change-rate bucket (and, when weighted, a weight
// class).
type BucketLoad struct {
	Bucket int // 0..255; -1 for pages whose rate is not estimated yet
	Class  int // weight class: round(2·log2(weight)); 0 when not weighted
	Pages  int
	Rate   float64 // mean estimated change rate of the pages in it; 0 for the unestimated
	Weight float64 // mean weight of the pages in it
	PerRun float64 // Σ 1/fr_max over its pages: the crawls per run their current intervals give
}

// BucketLoads counts the active pages fetched at least once per change-rate bucket; those without an
// estimate yet form a bucket of their own, -1. Pages never fetched are not counted: they are the
// budget's new pages, fetched first, not pages to plan revisits of. With weighted, the pages of a
// bucket are split further by weight class.
func (db *DB) BucketLoads(ctx context.Context, weighted bool) ([]BucketLoad, error) {
	class := "0"
	if weighted {
		class = weightClassSQL
	}
	rows, err := db.sql.QueryContext(ctx, `SELECT CASE WHEN change_rate IS NULL THEN -1 ELSE rate_bucket END AS b,
		`+class+` AS c, count(*), coalesce(avg(change_rate), 0), avg(weight), sum(1.0 / fr_max)
		FROM urls WHERE state = 'active' AND date IS NOT NULL GROUP BY b, c ORDER BY b, c`)
	if err != nil {
		return nil, fmt.Errorf("bucket loads: %w", err)
	}
	defer rows.Close()
	var out []BucketLoad
	for rows.Next() {
		var l BucketLoad
		if err := rows.Scan(&l.Bucket, &l.Class, &l.Pages, &l.Rate, &l.Weight, &l.PerRun); err != nil {
			return nil, fmt.Errorf("bucket loads: %w", err)
		}
		out = append(out, l)
	}
	return out, rows.Err()
}

// PlanEntry is the revisit interval the plan gives the pages of one bucket and weight class.
type PlanEntry struct {
	Bucket, Class int
	FrMax         int
}

// ApplyPlan gives every active page of each bucket (and weight class, when weighted) its fr_max
// (bucket -1: pages without an estimate), and a fixed phase, frequency.Phase of its URL's
// frequency.PageKey: each run carries about 1/fr_max of every bucket and no run gets a thundering
// herd. Countdowns already running are kept when they fall inside the new interval; pages crawled
// in run, or whose countdown is longer than the new interval, are put on their phase after run —
// except pages a trusted origin's hints deferred (urls.hint_deferred), which wait for their
// sitemap to move, or for the origin to lose its trust (ResumeDeferred).
func (db *DB) ApplyPlan(ctx context.Context, run int64, weighted bool, plan []PlanEntry) error {
	class := "0"
	if weighted {
		class = weightClassSQL
	}
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		// One pass over the table: the plan joins each page on its bucket and class.
		if len(plan) > 0 {
			values := make([]string, len(plan))
			args := make([]any, 0, 3*len(plan))
			for i, e := range plan {
				values[i] = "(?, ?, ?)"
				args = append(args, e.Bucket, e.Class, e.FrMax)
			}
			if _, err := tx.ExecContext(ctx, `WITH p (b, c, fr_max) AS (VALUES `+strings.Join(values, ", ")+`)
				UPDATE urls SET fr_max = p.fr_max FROM p
				WHERE urls.state = 'active' AND p.b = (CASE WHEN urls.change_rate IS NULL THEN -1 ELSE urls.rate_bucket END)
				AND p.c = `+strings.ReplaceAll(class, "weight", "urls.weight")+` AND urls.fr_max <> p.fr_max`, args...); err != nil {
				return err
			}
		}
		// Runs ahead of the next are counted down at their start: a page due in run r' = run + k
		// needs fr = k now, k in [1, fr_max], with (run + k + key) mod fr_max = 0.
		_, err := tx.ExecContext(ctx, `UPDATE urls SET due_tick = `+tickNow+` + strata_phase(?1, url, fr_max)
			WHERE state = 'active' AND ((due_tick > `+tickNow+` + fr_max AND hint_deferred = 0) OR id IN (SELECT url_id FROM fetches WHERE run_id = ?1))`, run)
		return err
	})
	if err != nil {
		return fmt.Errorf("apply the crawl plan after run %d: %w", run, err)
	}
	return nil
}
