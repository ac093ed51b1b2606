package pgstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/strata-crawler/strata/internal/store"
)

// The index step's writes (internal/textindex), each the SQLite store's of the same name
// (internal/store/textindex.go) ported clause for clause. One difference: a fleet. Each worker can
// read only its own archive root, so a worker (db.root set, by JoinRun) indexes the versions
// archived to its root (fleet_versions, fleet_workers) with the root's mark (fleet_text_marks); a
// single process indexes the versions no worker archived, with text_index's mark. The runs' page events have one mark, and
// SummarizeRun holds writeLock exclusively, so two workers catching up on the same run queue.

// TextIndexState returns how far the index step has gone: for a worker, its own mark.
func (db *DB) TextIndexState(ctx context.Context) (store.IndexState, error) {
	var s store.IndexState
	err := db.pool.QueryRow(ctx, `SELECT CASE WHEN $1::text = '' THEN fetch_upto
			ELSE coalesce((SELECT m.fetch_upto FROM fleet_text_marks m WHERE m.archive_root = $1), 0) END,
		run_upto FROM text_index WHERE one = 1`, db.root).Scan(&s.FetchUpto, &s.RunUpto)
	if err != nil {
		return s, fmt.Errorf("text index state: %w", err)
	}
	return s, nil
}

// PendingVersions returns up to limit stored, unpruned versions with fetch ids above after, in id
// order, archived where this process can read them (see above), and the highest fetch id it examined. A worker
// calls it after its crawl stage, when every fetch it recorded is committed; fetch ids recorded
// later are taken from the sequence after max(id) is read, so the mark never passes one of its own.
func (db *DB) PendingVersions(ctx context.Context, after int64, limit int) ([]store.PendingVersion, int64, error) {
	query := `SELECT f.id, f.url_id, f.archive_path FROM fetches f
		WHERE f.id > $1 AND f.archive_path IS NOT NULL AND f.pruned_at IS NULL
		AND NOT EXISTS (SELECT 1 FROM fleet_versions v WHERE v.fetch_id = f.id) ORDER BY f.id LIMIT $2`
	args := []any{after, limit}
	if db.root != "" {
		query = `SELECT f.id, f.url_id, f.archive_path FROM fleet_versions v JOIN fetches f ON f.id = v.fetch_id
			JOIN fleet_workers w ON w.run_id = f.run_id AND w.worker = v.worker
			WHERE w.archive_root = $3 AND v.fetch_id > $1 AND f.archive_path IS NOT NULL AND f.pruned_at IS NULL
			ORDER BY v.fetch_id LIMIT $2`
		args = append(args, db.root)
	}
	op := fmt.Sprintf("versions to index after fetch %d", after)
	rows, err := db.pool.Query(ctx, query, args...)
	if err != nil {
		return nil, after, fmt.Errorf("%s: %w", op, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.PendingVersion, error) {
		var v store.PendingVersion
		return v, r.Scan(&v.FetchID, &v.URLID, &v.Path)
	})
	if err != nil {
		return nil, after, fmt.Errorf("%s: %w", op, err)
	}
	upto := after
	if len(out) == limit {
		upto = out[len(out)-1].FetchID
	} else if err := db.pool.QueryRow(ctx, `SELECT coalesce(max(id), $1) FROM fetches`, after).Scan(&upto); err != nil {
		return nil, after, fmt.Errorf("%s: %w", op, err)
	}
	return out, upto, nil
}

// IndexTexts adds docs to the full-text index, keeps each page's title from its newest version, and
// moves the mark to upto, in one transaction. Workers index at the same time, each its own
// versions: their title upserts may meet on a page, hence rows (shared lock, retried on deadlock).
// A version already indexed is left as it is.
func (db *DB) IndexTexts(ctx context.Context, docs []store.IndexedText, upto int64) error {
	err := db.rows(ctx, func(tx pgx.Tx) error {
		b := &pgx.Batch{}
		for _, d := range docs {
			b.Queue(`INSERT INTO version_text (fetch_id, title, text, url_id) VALUES ($1, $2, $3, $4)
				ON CONFLICT (fetch_id) DO NOTHING`, d.FetchID, d.Title, d.Text, d.URLID)
			b.Queue(`INSERT INTO page_titles (url_id, fetch_id, title) VALUES ($1, $2, $3)
				ON CONFLICT (url_id) DO UPDATE SET fetch_id = excluded.fetch_id, title = excluded.title
				WHERE excluded.fetch_id > page_titles.fetch_id`, d.URLID, d.FetchID, d.Title)
		}
		if err := tx.SendBatch(ctx, b).Close(); err != nil {
			return err
		}
		mark := `UPDATE text_index SET fetch_upto = $1 WHERE one = 1 AND fetch_upto < $1`
		args := []any{upto}
		if db.root != "" {
			mark = `INSERT INTO fleet_text_marks (archive_root, fetch_upto) VALUES ($2, $1)
				ON CONFLICT (archive_root) DO UPDATE SET fetch_upto = excluded.fetch_upto
				WHERE fleet_text_marks.fetch_upto < excluded.fetch_upto`
			args = append(args, db.root)
		}
		tag, err := tx.Exec(ctx, mark, args...)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 && len(docs) > 0 {
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
	rows, err := db.pool.Query(ctx, `SELECT id FROM runs WHERE id > (SELECT run_upto FROM text_index WHERE one = 1)
		AND status <> 'running' ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("runs to summarise: %w", err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return nil, fmt.Errorf("runs to summarise: %w", err)
	}
	return out, nil
}

// notFoundStatus are the statuses that say a page is not there.
const notFoundStatus = `(404, 410)`

// SummarizeRun records run's page events and their counts, overall and per politeness domain, and
// moves the run mark to run, in one transaction. sum(e.kind = 'new') is SQLite's count of a
// boolean; here it is a count with FILTER.
func (db *DB) SummarizeRun(ctx context.Context, run int64) error {
	origin := `(CASE WHEN u.url LIKE 'https:%' THEN 'https://' ELSE 'http://' END) || u.host`
	stmts := []string{
		`DELETE FROM page_events WHERE run_id = $1`,
		`DELETE FROM run_domain_pages WHERE run_id = $1`,
		`INSERT INTO page_events (run_id, kind, url_id, fetch_id)
		SELECT $1::bigint, 'new', f.url_id, min(f.id) FROM fetches f WHERE f.run_id = $1 AND f.archive_path IS NOT NULL
		AND NOT EXISTS (SELECT 1 FROM fetches g WHERE g.url_id = f.url_id AND g.id < f.id AND g.archive_path IS NOT NULL)
		GROUP BY f.url_id`,
		`INSERT INTO page_events (run_id, kind, url_id, fetch_id)
		SELECT $1::bigint, 'gone', f.url_id, f.id FROM fetches f JOIN urls u ON u.id = f.url_id
		WHERE f.run_id = $1 AND f.status IN ` + notFoundStatus + ` AND u.state = 'gone'
		AND f.id = (SELECT max(g.id) FROM fetches g WHERE g.url_id = f.url_id)`,
		`INSERT INTO page_events (run_id, kind, url_id)
		SELECT DISTINCT $1::bigint, 'unlinked', l.to_id FROM fetches f JOIN links l ON l.from_id = f.url_id
		WHERE f.run_id = $1 AND f.archive_path IS NOT NULL AND l.to_id IS NOT NULL AND l.internal = 1
		AND l.last_run < $1
		AND l.last_run = (SELECT max(m.last_run) FROM links m WHERE m.from_id = f.url_id AND m.last_run < $1)
		AND NOT EXISTS (SELECT 1 FROM links k WHERE k.to_id = l.to_id
			AND k.last_run = (SELECT max(m.last_run) FROM links m WHERE m.from_id = k.from_id))
		ON CONFLICT DO NOTHING`,
		`INSERT INTO run_pages (run_id, new, gone, unlinked, not_found) VALUES ($1,
			(SELECT count(*) FROM page_events WHERE run_id = $1 AND kind = 'new'),
			(SELECT count(*) FROM page_events WHERE run_id = $1 AND kind = 'gone'),
			(SELECT count(*) FROM page_events WHERE run_id = $1 AND kind = 'unlinked'),
			(SELECT count(*) FROM fetches WHERE run_id = $1 AND status IN ` + notFoundStatus + `))
		ON CONFLICT (run_id) DO UPDATE SET new = excluded.new, gone = excluded.gone, unlinked = excluded.unlinked,
			not_found = excluded.not_found`,
		`INSERT INTO run_domain_pages (run_id, domain, new, gone, not_found)
		SELECT $1::bigint, h.domain, count(*) FILTER (WHERE e.kind = 'new'), count(*) FILTER (WHERE e.kind = 'gone'),
			count(*) FILTER (WHERE e.kind = 'nf')
		FROM (SELECT kind, url_id FROM page_events WHERE run_id = $1 AND kind IN ('new', 'gone')
			UNION ALL SELECT 'nf', url_id FROM fetches WHERE run_id = $1 AND status IN ` + notFoundStatus + `) e
		JOIN urls u ON u.id = e.url_id JOIN hosts h ON h.origin = ` + origin + `
		GROUP BY h.domain`,
		`UPDATE text_index SET run_upto = $1 WHERE one = 1 AND run_upto < $1`,
	}
	err := db.write(ctx, func(tx pgx.Tx) error {
		for _, s := range stmts {
			if _, err := tx.Exec(ctx, s, run); err != nil {
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

// ResetTextIndex empties the read-side index, for strata index --rebuild: every worker's mark too.
func (db *DB) ResetTextIndex(ctx context.Context) error {
	err := db.write(ctx, func(tx pgx.Tx) error {
		for _, s := range []string{`DELETE FROM version_text`, `DELETE FROM page_titles`, `DELETE FROM page_events`,
			`DELETE FROM run_pages`, `DELETE FROM run_domain_pages`, `DELETE FROM fleet_text_marks`,
			`UPDATE text_index SET fetch_upto = 0, run_upto = 0`} {
			if _, err := tx.Exec(ctx, s); err != nil {
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

// IndexRoot makes the index step (strata index) index the versions fleet workers archived to root,
// the archive root of this machine, instead of those no worker archived. It reports whether any
// worker archived there; if none did it changes nothing.
func (db *DB) IndexRoot(ctx context.Context, root string) (bool, error) {
	var any bool
	if err := db.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM fleet_workers WHERE archive_root = $1)`, root).Scan(&any); err != nil {
		return false, fmt.Errorf("fleet workers on archive root %s: %w", root, err)
	}
	if any {
		db.root = root
	}
	return any, nil
}
