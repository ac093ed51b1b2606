package pgstore

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/strata-crawler/strata/internal/store"
)

// historyChunk is how many pages RunHistories reads per query from the rows (store's).
const historyChunk = 1000

// RunHistories calls fn for every page that got a response in run, with its last limit records,
// oldest first, in URL id order: store.DB.RunHistories. As there, the rows are read a chunk at a
// time and fn sees a chunk's pages after its query ended, so what fn writes to pages not given yet
// shows in them; for a limit above store.RecentCap the records come from the fetch history.
func (db *DB) RunHistories(ctx context.Context, run int64, limit int, fn func(store.PageHistory) error) error {
	if limit < 1 || limit > store.RecentCap {
		return db.runHistoriesFromFetches(ctx, run, limit, fn)
	}
	rows, err := db.pool.Query(ctx, `SELECT url_id FROM fetches WHERE run_id = $1 AND status > 0`, run)
	if err != nil {
		return fmt.Errorf("histories of run %d: %w", run, err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return fmt.Errorf("histories of run %d: %w", run, err)
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	for len(ids) > 0 {
		chunk := ids[:min(historyChunk, len(ids))]
		ids = ids[len(chunk):]
		hs, err := db.recentHistories(ctx, chunk, limit)
		if err != nil {
			return fmt.Errorf("histories of run %d: %w", run, err)
		}
		for _, h := range hs {
			if err := fn(h); err != nil {
				return err
			}
		}
	}
	return nil
}

// recentHistories reads the pages with the given ids (ascending) and their last limit records from
// their rows.
func (db *DB) recentHistories(ctx context.Context, ids []int64, limit int) ([]store.PageHistory, error) {
	rows, err := db.pool.Query(ctx, `SELECT id, url, fr_max, level, threshold, coalesce(child_ratio, -1), dates_wrong = 1, recent
		FROM urls WHERE id = ANY($1::bigint[]) ORDER BY id`, ids)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (store.PageHistory, error) {
		var h store.PageHistory
		var blob []byte
		if err := row.Scan(&h.URLID, &h.URL, &h.FrMax, &h.Level, &h.Threshold, &h.ChildRatio, &h.DatesWrong, &blob); err != nil {
			return h, err
		}
		recs, err := store.DecodeRecent(blob)
		if err != nil {
			return h, fmt.Errorf("URL %d: %w", h.URLID, err)
		}
		h.Records = recs[max(0, len(recs)-limit):]
		return h, nil
	})
}

// runHistoriesFromFetches is RunHistories read from the fetch history, for limits above RecentCap.
func (db *DB) runHistoriesFromFetches(ctx context.Context, run int64, limit int, fn func(store.PageHistory) error) error {
	rows, err := db.pool.Query(ctx, `WITH pages AS (
			SELECT DISTINCT url_id FROM fetches WHERE run_id = $1 AND status > 0),
		ranked AS (
			SELECT `+recordFields+`, f.lm_age, f.id,
				row_number() OVER (PARTITION BY f.url_id ORDER BY f.id DESC) AS rn
			FROM fetches f JOIN pages p ON p.url_id = f.url_id)
		SELECT r.url_id, u.url, u.fr_max, u.level, u.threshold, coalesce(u.child_ratio, -1), u.dates_wrong = 1,
			r.run_id, r.changed, r.failed, r.lm_age
		FROM ranked r JOIN urls u ON u.id = r.url_id
		WHERE r.rn <= $2 ORDER BY r.url_id, r.id`, run, limit)
	if err != nil {
		return fmt.Errorf("histories of run %d: %w", run, err)
	}
	// Read whole before fn sees a page: fn writes (recalc), and the query holds a connection.
	var hs []store.PageHistory
	var id int64
	var h store.PageHistory
	var r store.Record
	var age *int64
	if _, err := pgx.ForEachRow(rows, []any{&id, &h.URL, &h.FrMax, &h.Level, &h.Threshold, &h.ChildRatio, &h.DatesWrong,
		&r.Run, &r.Changed, &r.Failed, &age}, func() error {
		r.Dated, r.Age = age != nil, time.Duration(deref(age))*time.Second
		if len(hs) == 0 || hs[len(hs)-1].URLID != id {
			h.URLID, h.Records = id, nil
			hs = append(hs, h)
		}
		cur := &hs[len(hs)-1]
		cur.Records = append(cur.Records, r)
		return nil
	}); err != nil {
		return fmt.Errorf("histories of run %d: %w", run, err)
	}
	for _, h := range hs {
		if err := fn(h); err != nil {
			return err
		}
	}
	return nil
}

// SetFrMax stores recalculated intervals in one transaction; the pages' countdowns restart from
// them: store.DB.SetFrMax. There a page that keeps its interval and whose countdown is at it is
// spared the write of due_tick, which costs SQLite an index move and its triggers; the value
// written is the same either way, so here one statement writes every update.
func (db *DB) SetFrMax(ctx context.Context, updates []store.FrMaxUpdate) error {
	for _, u := range updates {
		if u.FrMax < 1 {
			return fmt.Errorf("store revisit interval of URL %d: %d runs, want at least 1", u.URLID, u.FrMax)
		}
	}
	// The last update of a URL wins, as it does when they are written one after the other.
	last := make(map[int64]int, len(updates))
	for i, u := range updates {
		last[u.URLID] = i
	}
	ids := make([]int64, 0, len(last))
	frs := make([]int64, 0, len(last))
	rates := make([]float64, 0, len(last))
	buckets := make([]int64, 0, len(last))
	for i, u := range updates {
		if last[u.URLID] != i {
			continue
		}
		ids, frs, rates, buckets = append(ids, u.URLID), append(frs, int64(u.FrMax)), append(rates, u.Rate), append(buckets, int64(u.Bucket))
	}
	err := db.write(ctx, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `UPDATE urls SET fr_max = p.fr_max, due_tick = `+tickNow+` + p.fr_max,
			change_rate = CASE WHEN p.rate >= 0 THEN p.rate ELSE urls.change_rate END,
			rate_bucket = CASE WHEN p.rate >= 0 THEN p.bucket ELSE urls.rate_bucket END
			FROM unnest($1::bigint[], $2::bigint[], $3::double precision[], $4::bigint[]) AS p (id, fr_max, rate, bucket)
			WHERE urls.id = p.id`, ids, frs, rates, buckets)
		return err
	})
	if err != nil {
		return fmt.Errorf("store %d revisit intervals: %w", len(updates), err)
	}
	return nil
}
