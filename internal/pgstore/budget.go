package pgstore

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/strata-crawler/strata/internal/store"
)

// daysSince is the SQL for the days from the stored time column to the time $1, as SQLite's
// julianday($1) - julianday(column).
func daysSince(column string) string {
	return `(extract(epoch FROM $1::timestamptz - ` + column + `::timestamptz)::double precision / 86400)`
}

// Prioritize gives every due URL the cost of leaving it stale: store.DB.Prioritize.
func (db *DB) Prioritize(ctx context.Context, now time.Time, c float64, updated store.Updated) (int, error) {
	n := 0
	err := db.write(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE urls SET prio =
			(CASE WHEN date IS NULL THEN 0.5 * greatest(`+daysSince("added_at")+`, 0)
			      ELSE 0.5 * greatest(`+daysSince("date")+`, 0) END) * (weight + $2)
			WHERE id IN (SELECT id FROM due)`, formatTime(now), c)
		if err != nil {
			return err
		}
		n = int(tag.RowsAffected())
		if updated == nil {
			return nil
		}
		rows, err := tx.Query(ctx, `SELECT urls.id, url, hint_lastmod, site_date, date, weight
			FROM due d JOIN urls ON urls.id = d.id WHERE date IS NOT NULL AND hint_lastmod IS NOT NULL`)
		if err != nil {
			return err
		}
		var ids []int64
		var prios []float64
		var id int64
		var u, hint string
		var siteDate, last *string
		var w float64
		if _, err := pgx.ForEachRow(rows, []any{&id, &u, &hint, &siteDate, &last, &w}, func() error {
			if ago, ok := updated(u, hint, parseTime(siteDate), parseTime(last)); ok {
				ids = append(ids, id)
				prios = append(prios, max(ago.Hours()/24, 0)*(w+c))
			}
			return nil
		}); err != nil {
			return err
		}
		if len(ids) == 0 {
			return nil
		}
		_, err = tx.Exec(ctx, `UPDATE urls SET prio = p.prio FROM unnest($1::bigint[], $2::double precision[]) AS p (id, prio)
			WHERE urls.id = p.id`, ids, prios)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("prioritize due URLs: %w", err)
	}
	return n, nil
}

// SaveRunDomains records the per-domain use of run's budget, replacing what was recorded before.
func (db *DB) SaveRunDomains(ctx context.Context, run int64, ds []store.RunDomain) error {
	err := db.write(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `DELETE FROM run_domains WHERE run_id = $1`, run); err != nil {
			return err
		}
		for _, d := range ds {
			if _, err := tx.Exec(ctx, `INSERT INTO run_domains (run_id, domain, fetched, changed, expected) VALUES ($1, $2, $3, $4, $5)`,
				run, d.Domain, d.Fetched, d.Changed, d.Expected); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("record the domains of run %d: %w", run, err)
	}
	return nil
}

// log2 is the SQL for the base-2 logarithm of a double precision expression.
func log2(x string) string { return `(ln(` + x + `) / ln(2))` }

// weightClassSQL puts a weight into half-octave classes (store's weightClassSQL). round is taken on
// numeric, which rounds halves away from zero as SQLite's round does; on double precision
// PostgreSQL rounds them to even.
var weightClassSQL = `round((` + log2("weight") + ` * 2)::numeric)::bigint`

// UpdateWeights sets every active page's weight from its seed's priority and its in-links and
// returns how many rows changed: store.DB.UpdateWeights.
func (db *DB) UpdateWeights(ctx context.Context) (int, error) {
	n, err := db.exec(ctx, `WITH inlinks AS (
			SELECT to_id AS id, count(DISTINCT from_id) AS n FROM links WHERE to_id IS NOT NULL GROUP BY to_id),
		w AS (
			SELECT u.id, coalesce(r.priority, u.priority) * (1 + `+log2("1 + coalesce(i.n, 0)")+`) AS weight
			FROM urls u LEFT JOIN urls r ON r.id = u.root_id LEFT JOIN inlinks i ON i.id = u.id
			WHERE u.state = 'active')
		UPDATE urls SET weight = w.weight FROM w WHERE w.id = urls.id AND abs(urls.weight - w.weight) > 1e-9`)
	if err != nil {
		return 0, fmt.Errorf("update page weights: %w", err)
	}
	return int(n), nil
}

// ReleasePages lists the active pages that have release days.
func (db *DB) ReleasePages(ctx context.Context) ([]store.ReleasePage, error) {
	rows, err := db.pool.Query(ctx, `SELECT id, release_days, date FROM urls WHERE release_days <> 0 AND state = 'active'
		AND root_id NOT IN `+snapshotRoots)
	if err != nil {
		return nil, fmt.Errorf("list pages with release days: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (store.ReleasePage, error) {
		var p store.ReleasePage
		var mask int64
		var last *string
		err := row.Scan(&p.ID, &mask, &last)
		p.ReleaseDays, p.LastFetch = uint8(mask), parseTime(last)
		return p, err
	})
	if err != nil {
		return nil, fmt.Errorf("list pages with release days: %w", err)
	}
	return out, nil
}
