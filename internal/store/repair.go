package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// UnsealedRuns lists the runs that have ended (or were marked interrupted) but whose archive
// directory was never sealed, oldest first: killed runs, runs whose seal failed, and the runs from
// before schema version 14.
func (db *DB) UnsealedRuns(ctx context.Context) ([]Run, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT `+RunColumns+` FROM runs WHERE sealed_at IS NULL AND status <> 'running' ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("unsealed runs: %w", err)
	}
	defer rows.Close()
	var out []Run
	for rows.Next() {
		r, err := ScanRun(rows)
		if err != nil {
			return nil, fmt.Errorf("unsealed runs: %w", err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// SealRun records that the archive directory of run is final: no orphans, manifest written.
func (db *DB) SealRun(ctx context.Context, run int64, at time.Time) error {
	if _, err := db.sql.ExecContext(ctx, `UPDATE runs SET sealed_at = ? WHERE id = ?`, formatTime(at), run); err != nil {
		return fmt.Errorf("seal run %d: %w", run, err)
	}
	return nil
}

// RunFiles calls fn for every fetch of run that may have put something in the run's archive
// directory: with the version it recorded, or with the URL of a page it fetched with a 200 and
// stored nothing for — unchanged, whose snapshot link the directory holds when archive.snapshot is
// on (a truncated page's fetch notes an error and is linked all the same). Anything else in the
// directory is an orphan. fn must not use the database.
func (db *DB) RunFiles(ctx context.Context, run int64, fn func(version, unchangedURL string)) error {
	rows, err := db.sql.QueryContext(ctx, `SELECT f.archive_path, u.url FROM fetches f JOIN urls u ON u.id = f.url_id
		WHERE f.run_id = ? AND (f.archive_path IS NOT NULL OR f.status = 200)`, run)
	if err != nil {
		return fmt.Errorf("archive files of run %d: %w", run, err)
	}
	defer rows.Close()
	for rows.Next() {
		var path sql.NullString
		var url string
		if err := rows.Scan(&path, &url); err != nil {
			return fmt.Errorf("archive files of run %d: %w", run, err)
		}
		if path.Valid {
			fn(path.String, "")
		} else {
			fn("", url)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("archive files of run %d: %w", run, err)
	}
	return nil
}

// MarkPruned records, in one transaction, that the files of the versions vs are about to be
// removed: each is marked pruned and entered in the prune journal. The caller then removes their
// files and calls Pruned. A crash in between leaves journal entries whose files may remain, which
// PendingPrunes gives to the next session; never a fetch that says a version is stored while its
// files are gone.
func (db *DB) MarkPruned(ctx context.Context, vs []Version, at time.Time) error {
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		mark, err := tx.PrepareContext(ctx, `UPDATE fetches SET pruned_at = ? WHERE id = ? AND archive_path = ?`)
		if err != nil {
			return err
		}
		defer mark.Close()
		journal, err := tx.PrepareContext(ctx, `INSERT OR IGNORE INTO prune_pending (archive_path) VALUES (?)`)
		if err != nil {
			return err
		}
		defer journal.Close()
		// Search finds only versions that can be shown: a pruned one leaves the full-text index.
		unindex, err := tx.PrepareContext(ctx, `DELETE FROM version_text WHERE rowid = ?`)
		if err != nil {
			return err
		}
		defer unindex.Close()
		for _, v := range vs {
			if _, err := mark.ExecContext(ctx, formatTime(at), v.FetchID, v.Path); err != nil {
				return err
			}
			if _, err := unindex.ExecContext(ctx, v.FetchID); err != nil {
				return err
			}
			if _, err := journal.ExecContext(ctx, v.Path); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("mark %d versions pruned: %w", len(vs), err)
	}
	return nil
}

// PendingPrunes lists the versions marked pruned whose files may not have been removed yet.
func (db *DB) PendingPrunes(ctx context.Context) ([]string, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT archive_path FROM prune_pending ORDER BY archive_path`)
	if err != nil {
		return nil, fmt.Errorf("pending prunes: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var p string
		if err := rows.Scan(&p); err != nil {
			return nil, fmt.Errorf("pending prunes: %w", err)
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// Pruned takes versions whose files are removed out of the prune journal.
func (db *DB) Pruned(ctx context.Context, paths []string) error {
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		st, err := tx.PrepareContext(ctx, `DELETE FROM prune_pending WHERE archive_path = ?`)
		if err != nil {
			return err
		}
		defer st.Close()
		for _, p := range paths {
			if _, err := st.ExecContext(ctx, p); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("close the prune journal of %d versions: %w", len(paths), err)
	}
	return nil
}
