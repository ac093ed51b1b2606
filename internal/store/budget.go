package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// Prioritize gives every due URL the cost of leaving it stale, after Xu et al. (paper 002), so that
// NextDue hands out the most costly first when a run cannot crawl everything due. With the page's
// weight w (urls.weight, 1 = ordinary) and c > 0, in days:
//
//   - without a usable hint: S = ½ (now − last crawl) (w + c), the expected staleness cost of a page
//     whose update time is unknown (a never-fetched page counts from when it was found);
//   - with a hint that the page changed after our last fetch: S = (now − u) (w + c), where u is the
//     update time: it has certainly been stale since then.
//
// updated decides the second case for a due page that carries a hint: given the hint as stored, the
// site's clock at our last fetch and our last fetch, it returns how long ago the page changed, on
// our clock, or false to keep the first form. A nil updated keeps the first form for every page.
func (db *DB) Prioritize(ctx context.Context, now time.Time, c float64, updated Updated) (int, error) {
	n := 0
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE urls SET prio =
			(CASE WHEN date IS NULL THEN 0.5 * max(julianday(?1) - julianday(added_at), 0)
			      ELSE 0.5 * max(julianday(?1) - julianday(date), 0) END) * (weight + ?2)
			WHERE id IN (SELECT id FROM due)`, formatTime(now), c)
		if err != nil {
			return err
		}
		m, _ := res.RowsAffected()
		n = int(m)
		if updated == nil {
			return nil
		}
		rows, err := tx.QueryContext(ctx, `SELECT urls.id, url, hint_lastmod, site_date, date, weight
			FROM due d CROSS JOIN urls ON urls.id = d.id WHERE date IS NOT NULL AND hint_lastmod IS NOT NULL`)
		if err != nil {
			return err
		}
		type upd struct {
			id   int64
			prio float64
		}
		var ups []upd
		for rows.Next() {
			var id int64
			var u, hint string
			var siteDate, last sql.NullString
			var w float64
			if err := rows.Scan(&id, &u, &hint, &siteDate, &last, &w); err != nil {
				rows.Close()
				return err
			}
			if ago, ok := updated(u, hint, parseTime(siteDate), parseTime(last)); ok {
				ups = append(ups, upd{id, max(ago.Hours()/24, 0) * (w + c)})
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, u := range ups {
			if _, err := tx.ExecContext(ctx, `UPDATE urls SET prio = ? WHERE id = ?`, u.prio, u.id); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("prioritize due URLs: %w", err)
	}
	return n, nil
}

// Updated tells [DB.Prioritize] how long ago a hinted page changed, on strata's clock, or false when
// its hint says nothing usable.
type Updated func(pageURL, hint string, siteDate, lastFetch time.Time) (ago time.Duration, ok bool)

// RunDomain is the fetch budget one politeness domain used in a run.
type RunDomain struct {
	Domain   string
	Fetched  int
	Changed  int
	Expected float64 // changes the rate estimates expected among its fetched pages
}

// SaveRunDomains records the per-domain use of run's budget, replacing what was recorded before.
func (db *DB) SaveRunDomains(ctx context.Context, run int64, ds []RunDomain) error {
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM run_domains WHERE run_id = ?`, run); err != nil {
			return err
		}
		for _, d := range ds {
			if _, err := tx.ExecContext(ctx, `INSERT INTO run_domains (run_id, domain, fetched, changed, expected) VALUES (?, ?, ?, ?, ?)`,
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

// RunDomains returns the per-domain use of run's budget, the most fetched first.
func (db *DB) RunDomains(ctx context.Context, run int64) ([]RunDomain, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT domain, fetched, changed, expected FROM run_domains WHERE run_id = ?
		ORDER BY fetched DESC, domain`, run)
	if err != nil {
		return nil, fmt.Errorf("domains of run %d: %w", run, err)
	}
	defer rows.Close()
	var out []RunDomain
	for rows.Next() {
		var d RunDomain
		if err := rows.Scan(&d.Domain, &d.Fetched, &d.Changed, &d.Expected); err != nil {
			return nil, fmt.Errorf("domains of run %d: %w", run, err)
		}
		out = append(out, d)
	}
	return out, rows.Err()
}
