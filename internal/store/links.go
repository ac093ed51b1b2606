package store

import (
	"context"
	"database/sql"
	"fmt"
)

// RunPage is a page fetched in a run, for the links and recalculation stages.
type RunPage struct {
	URLID  int64
	URL    string
	Level  int
	RootID int64
	Stored string // the version this run stored for it, "" if none (unchanged, 304, error)
}

// RunPages lists the pages that got a response in a run, once each.
func (db *DB) RunPages(ctx context.Context, runID int64) ([]RunPage, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT u.id, u.url, u.level, coalesce(u.root_id, 0),
		coalesce(max(f.archive_path), '') FROM fetches f JOIN urls u ON u.id = f.url_id
		WHERE f.run_id = ? AND f.status > 0 GROUP BY u.id ORDER BY u.id`, runID)
	if err != nil {
		return nil, fmt.Errorf("pages of run %d: %w", runID, err)
	}
	defer rows.Close()
	var out []RunPage
	for rows.Next() {
		var p RunPage
		if err := rows.Scan(&p.URLID, &p.URL, &p.Level, &p.RootID, &p.Stored); err != nil {
			return nil, fmt.Errorf("pages of run %d: %w", runID, err)
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// Link is one link on a page.
type Link struct {
	ToURL    string
	Internal bool
}

// SaveLinks records the links found on a page's new version in run: new links get first_run = run,
// every link on the page gets last_run = run. Links that are no longer on the page keep their older
// last_run: the graph is a history too.
func (db *DB) SaveLinks(ctx context.Context, fromID, run int64, links []Link) error {
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		st, err := db.txPrepared(ctx, tx, `INSERT INTO links (from_id, to_url, to_id, internal, first_run, last_run)
			VALUES (?1, ?2, (SELECT id FROM urls WHERE url = ?2), ?3, ?4, ?4)
			ON CONFLICT (from_id, to_url) DO UPDATE SET last_run = excluded.last_run,
			to_id = coalesce(links.to_id, excluded.to_id)`)
		if err != nil {
			return err
		}
		defer st.Close()
		for _, l := range links {
			if _, err := st.ExecContext(ctx, fromID, l.ToURL, l.Internal, run); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("save %d links of URL %d: %w", len(links), fromID, err)
	}
	return nil
}

// CarryLinks marks the links of a page's current version as seen again in run: for a page that was
// fetched but did not change.
func (db *DB) CarryLinks(ctx context.Context, fromID, run int64) error {
	_, err := db.sql.ExecContext(ctx, `UPDATE links SET last_run = ?1 WHERE from_id = ?2
		AND last_run = (SELECT max(last_run) FROM links WHERE from_id = ?2)`, run, fromID)
	if err != nil {
		return fmt.Errorf("carry links of URL %d: %w", fromID, err)
	}
	return nil
}

// AddURLs inserts URLs that are new with the given state ('active' to be crawled, 'blocked' when
// robots.txt forbids them), leaving known ones alone, and returns how many it inserted.
func (db *DB) AddURLs(ctx context.Context, urls []NewURL, state string) (int, error) {
	n := 0
	now := formatTime(db.now())
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		st, err := db.txPrepared(ctx, tx, `INSERT INTO urls (url, host, level, due_tick, fr_max, parent_id, root_id, state, added_at)
			VALUES (?, ?, ?, 0, ?, ?, ?, ?, ?) ON CONFLICT (url) DO NOTHING`)
		if err != nil {
			return err
		}
		defer st.Close()
		for _, u := range urls {
			ctx, err := rowCtx(ctx)
			if err != nil {
				return err
			}
			res, err := st.ExecContext(ctx, u.URL, u.Host, u.Level, u.FrMax, nullInt(u.ParentID), nullInt(u.RootID), state, now)
			if err != nil {
				return err
			}
			k, _ := res.RowsAffected()
			n += int(k)
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("add %d URLs: %w", len(urls), err)
	}
	return n, nil
}

// LinkCounts returns how many links a page has in the graph, and how many of them are internal.
func (db *DB) LinkCounts(ctx context.Context, fromID int64) (all, internal int, err error) {
	err = db.sql.QueryRowContext(ctx, `SELECT count(*), coalesce(sum(internal), 0) FROM links WHERE from_id = ?
		AND last_run = (SELECT max(last_run) FROM links WHERE from_id = ?)`, fromID, fromID).Scan(&all, &internal)
	if err != nil {
		return 0, 0, fmt.Errorf("link counts of URL %d: %w", fromID, err)
	}
	return all, internal, nil
}
