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
	res, err := db.sql.ExecContext(ctx, `UPDATE runs SET ended_at = ?, status = ?, fetched = ?, new = ?, changed = ?,
		unchanged = ?, not_modified = ?, errors = ?, blocked = ?, skipped_fr = ?, skipped_selective = ?,
		new_urls = ?, bytes = ?, crawl_ms = ?, recalc_ms = ?, links_ms = ?, hubs = ?, hubs_reentered = ?, trap_events = ?,
		budget = ?, new_fetched = ?, known_fetched = ?, estimated = ?, expected_changes = ?, observed_changes = ?,
		not_found = ?, gone = ?
		WHERE id = ?`,
		formatTime(r.EndedAt), r.Status, r.Fetched, r.New, r.Changed, r.Unchanged, r.NotModified, r.Errors, r.Blocked,
		r.SkippedFr, r.SkippedSelective, r.NewURLs, r.Bytes, r.CrawlTime.Milliseconds(),
		r.RecalcTime.Milliseconds(), r.LinksTime.Milliseconds(), r.Hubs, r.HubsReentered, r.TrapEvents,
		r.Budget, r.NewFetched, r.KnownFetched, r.Estimated, r.ExpectedChanges, r.ObservedChanges,
		r.NotFound, r.Gone, r.ID)
	if err != nil {
		return fmt.Errorf("finish run %d: %w", r.ID, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("finish run %d: %w", r.ID, ErrNotFound)
	}
	return nil
}

// SetStageTimes records how long a run's recalculation and links stages took (zero leaves a time as
// it is): the stages may also be run on their own, after the crawl.
func (db *DB) SetStageTimes(ctx context.Context, run int64, recalc, links time.Duration) error {
	_, err := db.sql.ExecContext(ctx, `UPDATE runs SET
		recalc_ms = CASE WHEN ?1 > 0 THEN ?1 ELSE recalc_ms END,
		links_ms = CASE WHEN ?2 > 0 THEN ?2 ELSE links_ms END WHERE id = ?3`,
		recalc.Milliseconds(), links.Milliseconds(), run)
	if err != nil {
		return fmt.Errorf("record stage times of run %d: %w", run, err)
	}
	return nil
}
