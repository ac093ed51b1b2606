package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// The write side of the read-side index (schema 14): the full text of stored versions, page
// titles, and the page events of finished runs. Only the index step that follows a run and
// strata index write it; the crawl never does.

// IndexState is how far the index step has gone.
type IndexState struct {
	FetchUpto int64 // versions with fetch ids up to this one are indexed
	RunUpto   int64 // finished runs up to this one have their page events
}

// TextIndexState returns how far the index step has gone.
func (db *DB) TextIndexState(ctx context.Context) (IndexState, error) {
	var s IndexState
	err := db.sql.QueryRowContext(ctx, `SELECT fetch_upto, run_upto FROM text_index WHERE one = 1`).Scan(&s.FetchUpto, &s.RunUpto)
	if err != nil {
		return s, fmt.Errorf("text index state: %w", err)
	}
	return s, nil
}

// PendingVersion is a stored version the index step has not read yet.
type PendingVersion struct {
	FetchID int64
	URLID   int64
	Path    string
}

// PendingVersions returns up to limit stored, unpruned versions with fetch ids above after, in id
// order, and the highest fetch id it examined (after, when there is none). The fetch ids between
// the versions are fetches that stored nothing: the caller may move its mark past them.
func (db *DB) PendingVersions(ctx context.Context, after int64, limit int) ([]PendingVersion, int64, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT id, url_id, archive_path FROM fetches
		WHERE id > ? AND archive_path IS NOT NULL AND pruned_at IS NULL ORDER BY id LIMIT ?`, after, limit)
	if err != nil {
		return nil, after, fmt.Errorf("versions to index after fetch %d: %w", after, err)
	}
	defer rows.Close()
	var out []PendingVersion
	for rows.Next() {
		var v PendingVersion
		if err := rows.Scan(&v.FetchID, &v.URLID, &v.Path); err != nil {
			return nil, after, fmt.Errorf("versions to index after fetch %d: %w", after, err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, after, fmt.Errorf("versions to index after fetch %d: %w", after, err)
	}
	upto := after
	if len(out) == limit {
		upto = out[len(out)-1].FetchID
	} else if err := db.sql.QueryRowContext(ctx, `SELECT coalesce(max(id), ?) FROM fetches`, after).Scan(&upto); err != nil {
		return nil, after, fmt.Errorf("versions to index after fetch %d: %w", after, err)
	}
	return out, upto, nil
}

// IndexedText is the text of one version for the index.
type IndexedText struct {
	FetchID int64
	URLID   int64
	Title   string
	Text    string
}

// IndexTexts adds docs to the full-text index, keeps each page's title from its newest version, and
// moves the mark to upto, in one transaction: a crash leaves either all of it or none, so the next
// step neither skips nor repeats a version.
func (db *DB) IndexTexts(ctx context.Context, docs []IndexedText, upto int64) error {
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		ins, err := tx.PrepareContext(ctx, `INSERT INTO version_text (rowid, title, text, url_id) VALUES (?, ?, ?, ?)`)
		if err != nil {
			return err
		}
		defer ins.Close()
		title, err := tx.PrepareContext(ctx, `INSERT INTO page_titles (url_id, fetch_id, title) VALUES (?, ?, ?)
			ON CONFLICT (url_id) DO UPDATE SET fetch_id = excluded.fetch_id, title = excluded.title
			WHERE excluded.fetch_id > page_titles.fetch_id`)
		if err != nil {
			return err
		}
		defer title.Close()
		for _, d := range docs {
			if _, err := ins.ExecContext(ctx, d.FetchID, d.Title, d.Text, d.URLID); err != nil {
				return err
			}
			if _, err := title.ExecContext(ctx, d.URLID, d.FetchID, d.Title); err != nil {
				return err
			}
		}
		res, err := tx.ExecContext(ctx, `UPDATE text_index SET fetch_upto = ? WHERE one = 1 AND fetch_upto < ?`, upto, upto)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 && (len(docs) > 0) {
			return errors.New("another index step moved the mark")
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("index %d versions up to fetch %d: %w", len(docs), upto, err)
	}
	return nil
}

// RunsToSummarize returns the finished runs above the mark whose page events are not recorded yet,
// in order.
func (db *DB) RunsToSummarize(ctx context.Context) ([]int64, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT id FROM runs WHERE id > (SELECT run_upto FROM text_index WHERE one = 1)
		AND status <> 'running' ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("runs to summarise: %w", err)
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("runs to summarise: %w", err)
		}
		out = append(out, id)
	}
	return out, rows.Err()
}

// notFound are the statuses that say a page is not there.
const notFound = `(404, 410)`

// SummarizeRun records run's page events and their counts, overall and per politeness domain, and
// moves the run mark to run, in one transaction. It reads the run's fetches through fetches_run and
// each page's earlier fetches through fetches_url, so it costs in proportion to the run.
func (db *DB) SummarizeRun(ctx context.Context, run int64) error {
	origin := `(CASE WHEN u.url LIKE 'https:%' THEN 'https://' ELSE 'http://' END) || u.host`
	stmts := []string{
		`DELETE FROM page_events WHERE run_id = ?1`,
		`DELETE FROM run_domain_pages WHERE run_id = ?1`,
		// The first stored version of a page.
		`INSERT INTO page_events (run_id, kind, url_id, fetch_id)
		SELECT ?1, 'new', f.url_id, min(f.id) FROM fetches f WHERE f.run_id = ?1 AND f.archive_path IS NOT NULL
		AND NOT EXISTS (SELECT 1 FROM fetches g WHERE g.url_id = f.url_id AND g.id < f.id AND g.archive_path IS NOT NULL)
		GROUP BY f.url_id`,
		// The pages the run marked gone (a 410, or the third 404 in a row): the 404 or 410 that is
		// the page's last fetch, of a page still gone. This is runs.gone's definition, so the run's
		// summary, status, serve's runs table and its Changes view count the same pages; a single
		// 404 is counted in not_found, and its page is not gone.
		`INSERT INTO page_events (run_id, kind, url_id, fetch_id)
		SELECT ?1, 'gone', f.url_id, f.id FROM fetches f JOIN urls u ON u.id = f.url_id
		WHERE f.run_id = ?1 AND f.status IN ` + notFound + ` AND u.state = 'gone'
		AND f.id = (SELECT max(g.id) FROM fetches g WHERE g.url_id = f.url_id)`,
		// Links on the previous version of a page that got a new version in the run and are not on
		// it, to pages that no page links to any more: no current version of any page (its links
		// with the page's latest last_run, whether it was read in this run or before) has them.
		`INSERT OR IGNORE INTO page_events (run_id, kind, url_id)
		SELECT DISTINCT ?1, 'unlinked', l.to_id FROM fetches f JOIN links l ON l.from_id = f.url_id
		WHERE f.run_id = ?1 AND f.archive_path IS NOT NULL AND l.to_id IS NOT NULL AND l.internal = 1
		AND l.last_run < ?1
		AND l.last_run = (SELECT max(m.last_run) FROM links m WHERE m.from_id = f.url_id AND m.last_run < ?1)
		AND NOT EXISTS (SELECT 1 FROM links k WHERE k.to_id = l.to_id
			AND k.last_run = (SELECT max(m.last_run) FROM links m WHERE m.from_id = k.from_id))`,
		`INSERT INTO run_pages (run_id, new, gone, unlinked, not_found) VALUES (?1,
			(SELECT count(*) FROM page_events WHERE run_id = ?1 AND kind = 'new'),
			(SELECT count(*) FROM page_events WHERE run_id = ?1 AND kind = 'gone'),
			(SELECT count(*) FROM page_events WHERE run_id = ?1 AND kind = 'unlinked'),
			(SELECT count(*) FROM fetches WHERE run_id = ?1 AND status IN ` + notFound + `))
		ON CONFLICT (run_id) DO UPDATE SET new = excluded.new, gone = excluded.gone, unlinked = excluded.unlinked,
			not_found = excluded.not_found`,
		`INSERT INTO run_domain_pages (run_id, domain, new, gone, not_found)
		SELECT ?1, h.domain, sum(e.kind = 'new'), sum(e.kind = 'gone'), sum(e.kind = 'nf')
		FROM (SELECT kind, url_id FROM page_events WHERE run_id = ?1 AND kind IN ('new', 'gone')
			UNION ALL SELECT 'nf', url_id FROM fetches WHERE run_id = ?1 AND status IN ` + notFound + `) e
		JOIN urls u ON u.id = e.url_id JOIN hosts h ON h.origin = ` + origin + `
		GROUP BY h.domain`,
		`UPDATE text_index SET run_upto = ?1 WHERE one = 1 AND run_upto < ?1`,
	}
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		for _, s := range stmts {
			if _, err := tx.ExecContext(ctx, s, run); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("summarise the pages of run %d: %w", run, err)
	}
	return nil
}

// ResetTextIndex empties the read-side index, for strata index --rebuild.
func (db *DB) ResetTextIndex(ctx context.Context) error {
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		for _, s := range []string{`DELETE FROM version_text`, `DELETE FROM page_titles`, `DELETE FROM page_events`,
			`DELETE FROM run_pages`, `DELETE FROM run_domain_pages`, `UPDATE text_index SET fetch_upto = 0, run_upto = 0`} {
			if _, err := tx.ExecContext(ctx, s); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("reset the text index: %w", err)
	}
	return nil
}
