package pgstore

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/strata-crawler/strata/internal/store"
)

// BucketLoads counts the active pages fetched at least once per change-rate bucket (and weight
// class, when weighted): store.DB.BucketLoads.
func (db *DB) BucketLoads(ctx context.Context, weighted bool) ([]store.BucketLoad, error) {
	class := "0"
	if weighted {
		class = weightClassSQL
	}
	rows, err := db.pool.Query(ctx, `SELECT CASE WHEN change_rate IS NULL THEN -1 ELSE rate_bucket END AS b,
		`+class+` AS c, count(*), coalesce(avg(change_rate), 0), avg(weight), sum(1.0::double precision / fr_max)
		FROM urls WHERE state = 'active' AND date IS NOT NULL GROUP BY b, c ORDER BY b, c`)
	if err != nil {
		return nil, fmt.Errorf("bucket loads: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (store.BucketLoad, error) {
		var l store.BucketLoad
		return l, row.Scan(&l.Bucket, &l.Class, &l.Pages, &l.Rate, &l.Weight, &l.PerRun)
	})
	if err != nil {
		return nil, fmt.Errorf("bucket loads: %w", err)
	}
	return out, nil
}

// ApplyPlan gives every active page of each bucket (and weight class) its fr_max and puts the pages
// crawled in run, or waiting longer than the new interval, on their phase: store.DB.ApplyPlan.
// strata_phase is migration 0002's SQL port of frequency.Phase.
func (db *DB) ApplyPlan(ctx context.Context, run int64, weighted bool, plan []store.PlanEntry) error {
	class := "0"
	if weighted {
		class = weightClassSQL
	}
	err := db.write(ctx, func(tx pgx.Tx) error {
		if len(plan) > 0 {
			bs, cs, frs := make([]int64, len(plan)), make([]int64, len(plan)), make([]int64, len(plan))
			for i, e := range plan {
				bs[i], cs[i], frs[i] = int64(e.Bucket), int64(e.Class), int64(e.FrMax)
			}
			if _, err := tx.Exec(ctx, `UPDATE urls SET fr_max = p.fr_max
				FROM unnest($1::bigint[], $2::bigint[], $3::bigint[]) AS p (b, c, fr_max)
				WHERE urls.state = 'active' AND p.b = (CASE WHEN urls.change_rate IS NULL THEN -1 ELSE urls.rate_bucket END)
				AND p.c = `+strings.ReplaceAll(class, "weight", "urls.weight")+` AND urls.fr_max <> p.fr_max`, bs, cs, frs); err != nil {
				return err
			}
		}
		_, err := tx.Exec(ctx, `UPDATE urls SET due_tick = `+tickNow+` + strata_phase($1, url, fr_max)
			WHERE state = 'active' AND ((due_tick > `+tickNow+` + fr_max AND hint_deferred = 0) OR id IN (SELECT url_id FROM fetches WHERE run_id = $1))`, run)
		return err
	})
	if err != nil {
		return fmt.Errorf("apply the crawl plan after run %d: %w", run, err)
	}
	return nil
}
