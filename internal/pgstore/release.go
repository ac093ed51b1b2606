package pgstore

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/strata-crawler/strata/internal/store"
)

// Timelines calls fn with the last n successful fetches of every page that changed in run or has
// release days and was fetched in run.
func (db *DB) Timelines(ctx context.Context, run int64, n int, fn func(store.Timeline) error) error {
	rows, err := db.pool.Query(ctx, `WITH pages AS (
			SELECT DISTINCT f.url_id FROM fetches f JOIN urls u ON u.id = f.url_id
			WHERE f.run_id = $1 AND (f.changed = 1 OR u.release_days <> 0)),
		ranked AS (
			SELECT f.url_id, f.id, f.fetched_at, f.changed, row_number() OVER (PARTITION BY f.url_id ORDER BY f.id DESC) AS rn
			FROM fetches f JOIN pages p ON p.url_id = f.url_id WHERE f.status = 200 OR f.not_modified = 1)
		SELECT r.url_id, u.release_days, r.fetched_at, r.changed = 1 FROM ranked r JOIN urls u ON u.id = r.url_id
		WHERE r.rn <= $2 ORDER BY r.url_id, r.id`, run, n)
	if err != nil {
		return fmt.Errorf("fetch timelines of run %d: %w", run, err)
	}
	// Read whole before fn sees a timeline, as a pgx connection serves one query at a time.
	var ts []store.Timeline
	var id, mask int64
	var at *string
	var changed bool
	if _, err := pgx.ForEachRow(rows, []any{&id, &mask, &at, &changed}, func() error {
		if len(ts) == 0 || ts[len(ts)-1].URLID != id {
			ts = append(ts, store.Timeline{URLID: id, ReleaseDays: uint8(mask)})
		}
		cur := &ts[len(ts)-1]
		cur.At = append(cur.At, parseTime(at))
		cur.Changed = append(cur.Changed, changed)
		return nil
	}); err != nil {
		return fmt.Errorf("fetch timelines of run %d: %w", run, err)
	}
	for _, t := range ts {
		if err := fn(t); err != nil {
			return err
		}
	}
	return nil
}

// SetReleaseDays stores the release-day masks of pages (0: not quasi-deterministic).
func (db *DB) SetReleaseDays(ctx context.Context, masks map[int64]uint8) error {
	ids := make([]int64, 0, len(masks))
	ms := make([]int64, 0, len(masks))
	for id, m := range masks {
		ids, ms = append(ids, id), append(ms, int64(m))
	}
	_, err := db.exec(ctx, `UPDATE urls SET release_days = p.mask FROM unnest($1::bigint[], $2::bigint[]) AS p (id, mask)
		WHERE urls.id = p.id AND urls.release_days <> p.mask`, ids, ms)
	if err != nil {
		return fmt.Errorf("store release days: %w", err)
	}
	return nil
}
