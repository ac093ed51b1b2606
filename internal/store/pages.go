package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// URLInfo is one URL's row with its recent fetch history, for explain and for tests.
type URLInfo struct {
	ID          int64
	URL         string
	State       string
	Level       int
	Fr, FrMax   int
	Threshold   float64
	IsSeed      bool
	LastCrawled time.Time
	Statuses    []int  // of the last 10 fetches, newest first
	LastError   string // of the newest fetch
	Skips       int    // runs in a row the selective rule skipped it
	// SkippedRun is the last run the selective rule left it out of (0: never), and SkippedBy the hub
	// whose rule did — its parent, or a page further up such as its seed.
	SkippedRun  int64
	SkippedBy   string
	ParentID    int64 // the page it was first found on, 0 for a seed
	ParentURL   string
	ChangeRate  float64 // estimated changes per run; -1 when not estimated yet
	RateBucket  int
	ReleaseDays uint8   // weekdays its changes come on (bit d: time.Weekday d); 0 if none
	Weight      float64 // importance: its seed's priority and its in-links
	Priority    float64 // the user's priority, for a seed
	// Provider hints: the site's clock at the last fetch, the newest lastmod a sitemap or feed gave
	// for the page on that clock, and where it came from ("sitemap", "feed"; "" if none).
	SiteDate    time.Time
	HintLastMod string
	HintSource  string
	Origin      string // scheme://host[:port]
	// Snapshot says the page's seed asks for every page every run (strata seed add --snapshot).
	Snapshot bool
}

// URLInfo returns the row of url (normalised), or an error wrapping ErrNotFound.
func (db *DB) URLInfo(ctx context.Context, url string) (*URLInfo, error) {
	var in URLInfo
	var date, siteDate, hint sql.NullString
	var parent, skipper sql.NullString
	var parentID, skippedRun sql.NullInt64
	err := db.sql.QueryRowContext(ctx, `SELECT u.id, u.url, u.state, u.level, `+frOf("u.due_tick")+`, u.fr_max, u.threshold, u.is_seed, u.date,
		u.skips, u.skipped_run, s.url, u.parent_id, p.url, coalesce(u.change_rate, -1), u.rate_bucket,
		u.release_days, u.weight, u.priority, u.site_date, u.hint_lastmod, coalesce(u.hint_source, ''),
		u.root_id IN `+snapshotRoots+`
		FROM urls u LEFT JOIN urls p ON p.id = u.parent_id LEFT JOIN urls s ON s.id = u.skipped_by WHERE u.url = ?`, url).
		Scan(&in.ID, &in.URL, &in.State, &in.Level, &in.Fr, &in.FrMax, &in.Threshold, &in.IsSeed, &date, &in.Skips,
			&skippedRun, &skipper, &parentID, &parent, &in.ChangeRate, &in.RateBucket,
			&in.ReleaseDays, &in.Weight, &in.Priority, &siteDate, &hint, &in.HintSource, &in.Snapshot)
	in.ParentID, in.ParentURL = parentID.Int64, parent.String
	in.SkippedRun, in.SkippedBy = skippedRun.Int64, skipper.String
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("URL %s: %w", url, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("URL %s: %w", url, err)
	}
	in.LastCrawled, in.SiteDate, in.HintLastMod = parseTime(date), parseTime(siteDate), hint.String
	in.Origin = originOf(in.URL)
	if in.Statuses, err = db.RecentStatuses(ctx, in.ID, 10); err != nil {
		return nil, err
	}
	var lastErr sql.NullString
	err = db.sql.QueryRowContext(ctx, `SELECT error FROM fetches WHERE url_id = ? ORDER BY id DESC LIMIT 1`, in.ID).Scan(&lastErr)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("URL %s: %w", url, err)
	}
	in.LastError = lastErr.String
	return &in, nil
}

// Records returns a page's last limit records, oldest first.
func (db *DB) Records(ctx context.Context, urlID int64, limit int) ([]Record, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT * FROM (SELECT `+recordFields+`, f.id FROM fetches f
		WHERE f.url_id = ? ORDER BY f.id DESC LIMIT ?) ORDER BY id`, urlID, limit)
	if err != nil {
		return nil, fmt.Errorf("records of URL %d: %w", urlID, err)
	}
	defer rows.Close()
	var out []Record
	for rows.Next() {
		var id, fid int64
		var r Record
		if err := rows.Scan(&id, &r.Run, &r.Changed, &r.Failed, &fid); err != nil {
			return nil, fmt.Errorf("records of URL %d: %w", urlID, err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// SeedReport is one row of the paper's table 2: how a seed and the pages below it change.
type SeedReport struct {
	URLID         int64
	URL           string
	FrMax         int
	Threshold     float64
	Crawls        int     // of the last limit crawls, the ones with a usable answer
	Changes       int     // changes among them
	InternalLinks float64 // internal links per crawl, averaged over the runs the seed was crawled in
}

// SeedReports returns a row per active seed, over each seed's last limit crawls.
func (db *DB) SeedReports(ctx context.Context, limit int) ([]SeedReport, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT id, url, fr_max, threshold FROM urls WHERE is_seed = 1 AND state = 'active' ORDER BY url`)
	if err != nil {
		return nil, fmt.Errorf("seed report: %w", err)
	}
	var out []SeedReport
	for rows.Next() {
		var r SeedReport
		if err := rows.Scan(&r.URLID, &r.URL, &r.FrMax, &r.Threshold); err != nil {
			rows.Close()
			return nil, fmt.Errorf("seed report: %w", err)
		}
		out = append(out, r)
	}
	rows.Close()
	for i := range out {
		recs, err := db.Records(ctx, out[i].URLID, limit)
		if err != nil {
			return nil, err
		}
		for _, rec := range recs {
			if !rec.Failed {
				out[i].Crawls++
				if rec.Changed {
					out[i].Changes++
				}
			}
		}
		// Links seen on the page in each run it was crawled in, averaged.
		err = db.sql.QueryRowContext(ctx, `SELECT coalesce(avg(n), 0) FROM (
				SELECT f.run_id, (SELECT count(*) FROM links l WHERE l.from_id = f.url_id AND l.internal
					AND l.first_run <= f.run_id AND l.last_run >= f.run_id) AS n
				FROM fetches f WHERE f.url_id = ? AND f.status = 200 ORDER BY f.id DESC LIMIT ?)`,
			out[i].URLID, limit).Scan(&out[i].InternalLinks)
		if err != nil {
			return nil, fmt.Errorf("seed report: %w", err)
		}
	}
	return out, nil
}
