package pgstore

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/strata-crawler/strata/internal/store"
)

// Prunable lists the stored versions fetched before cutoff that are not their page's current
// version and not pruned already, oldest first: store.DB.Prunable. A version a fleet worker
// archived is left out. It lives under that worker's archive root, which the process pruning
// cannot reach, and one prune journal for the whole database could not say which root an entry
// belongs to; fleet runs keep every version.
func (db *DB) Prunable(ctx context.Context, cutoff time.Time) ([]store.Version, error) {
	rows, err := db.pool.Query(ctx, `SELECT f.id, u.url, coalesce(f.run_id, 0), f.fetched_at, coalesce(f.content_hash, ''),
		f.changed = 1, f.archive_path
		FROM fetches f JOIN urls u ON u.id = f.url_id
		WHERE f.archive_path IS NOT NULL AND f.pruned_at IS NULL AND f.fetched_at < $1
		  AND f.id <> (SELECT max(g.id) FROM fetches g WHERE g.url_id = f.url_id AND g.archive_path IS NOT NULL)
		  AND NOT EXISTS (SELECT 1 FROM fleet_versions v WHERE v.fetch_id = f.id)
		ORDER BY f.id`, formatTime(cutoff))
	if err != nil {
		return nil, fmt.Errorf("list prunable versions: %w", err)
	}
	var out []store.Version
	var v store.Version
	var at *string
	if err := forEachRow(rows, []any{&v.FetchID, &v.URL, &v.RunID, &at, &v.ContentHash, &v.Changed, &v.Path}, "list prunable versions", func() error {
		v.FetchedAt = parseTime(at)
		out = append(out, v)
		return nil
	}); err != nil {
		return nil, err
	}
	return out, nil
}

// MarkPruned records, in one transaction, that the files of the versions vs are about to be
// removed: each is marked pruned, leaves the text index, and enters the prune journal. The caller
// then removes their files and calls Pruned: store.DB.MarkPruned.
func (db *DB) MarkPruned(ctx context.Context, vs []store.Version, at time.Time) error {
	err := db.write(ctx, func(tx pgx.Tx) error {
		for _, v := range vs {
			if _, err := tx.Exec(ctx, `UPDATE fetches SET pruned_at = $1 WHERE id = $2 AND archive_path = $3`,
				formatTime(at), v.FetchID, v.Path); err != nil {
				return err
			}
			// Search finds only versions that can be shown.
			if _, err := tx.Exec(ctx, `DELETE FROM version_text WHERE fetch_id = $1`, v.FetchID); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `INSERT INTO prune_pending (archive_path) VALUES ($1) ON CONFLICT DO NOTHING`, v.Path); err != nil {
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
