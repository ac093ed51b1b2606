package store

import (
	"context"
	"fmt"
	"time"
)

// BeginRun records the start of a run and returns its id. offset is the rotating start offset that
// was waited before it.
func (db *DB) BeginRun(ctx context.Context, started time.Time, offset time.Duration) (int64, error) {
	var id int64
	err := db.sql.QueryRowContext(ctx, `INSERT INTO runs (started_at, start_offset_ms) VALUES (?, ?) RETURNING id`,
		formatTime(started), offset.Milliseconds()).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("begin run: %w", err)
	}
	return id, nil
}

// FinishRun stores the end time, final status and counts of run r.ID.
func (db *DB) FinishRun(ctx context.Context, r Run) error {
	res, err := db.sql.ExecContext(ctx, `UPDATE runs SET ended_at = ?, status = ?, fetched = ?, changed = ?,
		unchanged = ?, not_modified = ?, errors = ?, blocked = ?, skipped_fr = ?, skipped_selective = ?,
		new_urls = ?, bytes = ?, crawl_ms = ?, recalc_ms = ?, links_ms = ? WHERE id = ?`,
		formatTime(r.EndedAt), r.Status, r.Fetched, r.Changed, r.Unchanged, r.NotModified, r.Errors, r.Blocked,
		r.SkippedFr, r.SkippedSelective, r.NewURLs, r.Bytes, r.CrawlTime.Milliseconds(),
		r.RecalcTime.Milliseconds(), r.LinksTime.Milliseconds(), r.ID)
	if err != nil {
		return fmt.Errorf("finish run %d: %w", r.ID, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("finish run %d: %w", r.ID, ErrNotFound)
	}
	return nil
}
