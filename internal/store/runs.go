package store

import (
	"context"
	"database/sql"
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

// CloseStaleRuns marks runs left 'running' by a process that died as 'interrupted', filling in the
// counts that can be rebuilt from their fetches (the outcomes, as RunOutcomes counts them for a run
// that ends), and returns them. The caller holds the run lock, so no run is live.
func (db *DB) CloseStaleRuns(ctx context.Context) ([]Run, error) {
	rows, err := db.sql.QueryContext(ctx, `UPDATE runs SET status = 'interrupted',
		ended_at = coalesce((SELECT max(fetched_at) FROM fetches WHERE run_id = runs.id), started_at),
		gone = (SELECT count(*) FROM fetches f JOIN urls u ON u.id = f.url_id WHERE f.run_id = runs.id
			AND f.status IN (404, 410) AND u.state = 'gone' AND f.id = (SELECT max(g.id) FROM fetches g WHERE g.url_id = f.url_id))
		WHERE status = 'running' RETURNING `+RunColumns)
	if err != nil {
		return nil, fmt.Errorf("close stale runs: %w", err)
	}
	var out []Run
	for rows.Next() {
		r, err := ScanRun(rows)
		if err != nil {
			rows.Close()
			return nil, fmt.Errorf("close stale runs: %w", err)
		}
		out = append(out, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("close stale runs: %w", err)
	}
	for i := range out {
		r := &out[i]
		c, err := db.RunOutcomes(ctx, r.ID)
		if err != nil {
			return nil, err
		}
		r.SetOutcomes(c)
		if _, err := db.sql.ExecContext(ctx, `UPDATE runs SET fetched = ?, new = ?, changed = ?, unchanged = ?,
			not_modified = ?, errors = ?, not_found = ? WHERE id = ?`,
			r.Fetched, r.New, r.Changed, r.Unchanged, r.NotModified, r.Errors, r.NotFound, r.ID); err != nil {
			return nil, fmt.Errorf("close stale run %d: %w", r.ID, err)
		}
	}
	return out, nil
}

// Run is one row of the runs table.
type Run struct {
	ID                 int64
	StartedAt, EndedAt time.Time // EndedAt is zero while the run is going on
	StartOffset        time.Duration
	Status             string
	// The counts of the run's fetches by outcome (package outcome): Fetched got a response; New
	// stored a page's first version, Changed a changed one; Unchanged (new bytes with the same words
	// included) and NotModified found no change; Errors got no usable answer.
	Fetched, New, Changed, Unchanged int
	NotModified, Errors, Blocked     int
	// NotFound counts the 404 and 410 answers, Gone the pages the run marked gone (a 410, or the
	// third 404 in a row).
	NotFound, Gone              int
	SkippedFr, SkippedSelective int
	NewURLs                     int
	Hubs, HubsReentered         int // hubs judged by the selective rule; of them, subtrees visited though unchanged
	TrapEvents                  int
	// Budget is the run's fetch budget (0: none); NewFetched and KnownFetched split its fetches
	// between never-fetched and known pages (WebFountain's two queues).
	Budget, NewFetched, KnownFetched int
	// Accountability of the change model: of the Estimated fetches of pages with a rate estimate, the
	// estimates expected ExpectedChanges to find a change and ObservedChanges did.
	Estimated, ObservedChanges int
	ExpectedChanges            float64
	Bytes                      int64
	CrawlTime, RecalcTime      time.Duration
	LinksTime                  time.Duration
}

// Duration is how long the run took, or has taken so far when it has not ended.
func (r Run) Duration(now time.Time) time.Duration {
	if r.EndedAt.IsZero() {
		return now.Sub(r.StartedAt)
	}
	return r.EndedAt.Sub(r.StartedAt)
}

// RunColumns are the columns of runs that make a Run, in ScanRun's order.
const RunColumns = `id, started_at, ended_at, start_offset_ms, status, fetched, new, changed, unchanged,
	not_modified, errors, blocked, skipped_fr, skipped_selective, new_urls, bytes, crawl_ms, recalc_ms, links_ms,
	hubs, hubs_reentered, trap_events, budget, new_fetched, known_fetched, estimated, expected_changes, observed_changes,
	not_found, gone`

// RecentRuns returns up to n runs, the most recent first.
func (db *DB) RecentRuns(ctx context.Context, n int) ([]Run, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT `+RunColumns+` FROM runs ORDER BY id DESC LIMIT ?`, n)
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	defer rows.Close()
	var out []Run
	for rows.Next() {
		r, err := ScanRun(rows)
		if err != nil {
			return nil, fmt.Errorf("list runs: %w", err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// ScanRun reads a row of RunColumns into a Run, for either store: database/sql's rows and pgx's.
func ScanRun(row interface{ Scan(...any) error }) (Run, error) {
	var r Run
	var started, ended sql.NullString
	var offset, crawl, recalc, links int64
	err := row.Scan(&r.ID, &started, &ended, &offset, &r.Status, &r.Fetched, &r.New, &r.Changed, &r.Unchanged,
		&r.NotModified, &r.Errors, &r.Blocked, &r.SkippedFr, &r.SkippedSelective, &r.NewURLs, &r.Bytes,
		&crawl, &recalc, &links, &r.Hubs, &r.HubsReentered, &r.TrapEvents,
		&r.Budget, &r.NewFetched, &r.KnownFetched, &r.Estimated, &r.ExpectedChanges, &r.ObservedChanges,
		&r.NotFound, &r.Gone)
	r.StartedAt, r.EndedAt = parseTime(started), parseTime(ended)
	r.StartOffset = time.Duration(offset) * time.Millisecond
	r.CrawlTime = time.Duration(crawl) * time.Millisecond
	r.RecalcTime = time.Duration(recalc) * time.Millisecond
	r.LinksTime = time.Duration(links) * time.Millisecond
	return r, err
}
