package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// States lists the URL states in the order reports show them.
var States = []string{"active", "gone", "blocked", "filtered", "removed"}

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

// Status summarises the store for `strata status`.
type Status struct {
	URLs           map[string]int // by state
	Seeds          int
	DueNextRun     int // active URLs that the next run's countdown makes due
	Hosts          int
	LastRunFetches int
	Runs           []Run // the most recent first
}

// Status reads the summary; recent bounds how many runs it lists.
func (db *DB) Status(ctx context.Context, recent int) (*Status, error) {
	st := &Status{URLs: map[string]int{}}
	for _, s := range States {
		st.URLs[s] = 0
	}
	rows, err := db.sql.QueryContext(ctx, `SELECT state, count(*) FROM urls GROUP BY state`)
	if err != nil {
		return nil, fmt.Errorf("status: %w", err)
	}
	for rows.Next() {
		var s string
		var n int
		if err := rows.Scan(&s, &n); err != nil {
			rows.Close()
			return nil, fmt.Errorf("status: %w", err)
		}
		st.URLs[s] = n
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("status: %w", err)
	}
	// The next run first decrements every fr > 0, so pages with fr <= 1 are due then, and so is
	// every page whose last answer was 404 or whose seed asks for a snapshot (see Countdown).
	err = db.sql.QueryRowContext(ctx, `SELECT
		(SELECT count(*) FROM urls WHERE state = 'active' AND due_tick <= `+tickNow+` + 1 AND `+notHeld+`) +
		(SELECT count(*) FROM urls WHERE state = 'active' AND due_tick > `+tickNow+` + 1
			AND (last_status IS 404 OR `+snapshotDue+`) AND `+notHeld+`),
		(SELECT count(DISTINCT host) FROM urls WHERE state = 'active'),
		(SELECT count(*) FROM urls WHERE is_seed = 1),
		(SELECT count(*) FROM fetches WHERE run_id = (SELECT max(id) FROM runs))`).
		Scan(&st.DueNextRun, &st.Hosts, &st.Seeds, &st.LastRunFetches)
	if err != nil {
		return nil, fmt.Errorf("status: %w", err)
	}
	if st.Runs, err = db.RecentRuns(ctx, recent); err != nil {
		return nil, err
	}
	return st, nil
}

const runColumns = `id, started_at, ended_at, start_offset_ms, status, fetched, new, changed, unchanged,
	not_modified, errors, blocked, skipped_fr, skipped_selective, new_urls, bytes, crawl_ms, recalc_ms, links_ms,
	hubs, hubs_reentered, trap_events, budget, new_fetched, known_fetched, estimated, expected_changes, observed_changes,
	not_found, gone`

// RecentRuns returns up to n runs, the most recent first.
func (db *DB) RecentRuns(ctx context.Context, n int) ([]Run, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT `+runColumns+` FROM runs ORDER BY id DESC LIMIT ?`, n)
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	defer rows.Close()
	var out []Run
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return nil, fmt.Errorf("list runs: %w", err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

func scanRun(row interface{ Scan(...any) error }) (Run, error) {
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
