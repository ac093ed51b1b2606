package pgstore

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/strata-crawler/strata/internal/store"
)

// RunPages lists the pages that got a response in a run, once each.
func (db *DB) RunPages(ctx context.Context, runID int64) ([]store.RunPage, error) {
	rows, err := db.pool.Query(ctx, `SELECT u.id, u.url, u.level, coalesce(u.root_id, 0),
		coalesce(max(f.archive_path), '') FROM fetches f JOIN urls u ON u.id = f.url_id
		WHERE f.run_id = $1 AND f.status > 0 GROUP BY u.id ORDER BY u.id`, runID)
	if err != nil {
		return nil, fmt.Errorf("pages of run %d: %w", runID, err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (store.RunPage, error) {
		var p store.RunPage
		return p, row.Scan(&p.URLID, &p.URL, &p.Level, &p.RootID, &p.Stored)
	})
	if err != nil {
		return nil, fmt.Errorf("pages of run %d: %w", runID, err)
	}
	return out, nil
}

// SaveLinks records the links found on a page's new version in run: new links get first_run =
// run, every link on the page gets last_run = run.
func (db *DB) SaveLinks(ctx context.Context, fromID, run int64, links []store.Link) error {
	err := db.write(ctx, func(tx pgx.Tx) error {
		// One round trip for the page's links, run in order as SQLite's loop runs them.
		var b pgx.Batch
		for _, l := range links {
			b.Queue(`INSERT INTO links (from_id, to_url, to_id, internal, first_run, last_run)
				VALUES ($1, $2, (SELECT id FROM urls WHERE url = $2), $3, $4, $4)
				ON CONFLICT (from_id, to_url) DO UPDATE SET last_run = excluded.last_run,
				to_id = coalesce(links.to_id, excluded.to_id)`, fromID, l.ToURL, btoi(l.Internal), run)
		}
		return tx.SendBatch(ctx, &b).Close()
	})
	if err != nil {
		return fmt.Errorf("save %d links of URL %d: %w", len(links), fromID, err)
	}
	return nil
}

// CarryLinks marks the links of a page's current version as seen again in run.
func (db *DB) CarryLinks(ctx context.Context, fromID, run int64) error {
	_, err := db.execRows(ctx, `UPDATE links SET last_run = $1 WHERE from_id = $2
		AND last_run = (SELECT max(last_run) FROM links WHERE from_id = $2)`, run, fromID)
	if err != nil {
		return fmt.Errorf("carry links of URL %d: %w", fromID, err)
	}
	return nil
}

// AddURLs inserts URLs that are new with the given state, leaving known ones alone, and returns
// how many it inserted.
func (db *DB) AddURLs(ctx context.Context, urls []store.NewURL, state string) (int, error) {
	n := 0
	now := formatTime(db.now())
	err := db.write(ctx, func(tx pgx.Tx) error {
		n = 0
		var b pgx.Batch
		for _, u := range urls {
			b.Queue(`INSERT INTO urls (url, host, level, due_tick, fr_max, parent_id, root_id, state, added_at)
				VALUES ($1, $2, $3, 0, $4, $5, $6, $7, $8) ON CONFLICT (url) DO NOTHING`,
				u.URL, u.Host, u.Level, u.FrMax, idOrNull(u.ParentID), idOrNull(u.RootID), state, now)
		}
		res := tx.SendBatch(ctx, &b)
		for range urls {
			tag, err := res.Exec()
			if err != nil {
				res.Close()
				return err
			}
			n += int(tag.RowsAffected())
		}
		return res.Close()
	})
	if err != nil {
		return 0, fmt.Errorf("add %d URLs: %w", len(urls), err)
	}
	return n, nil
}
