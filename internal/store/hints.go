package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"time"
)

// HostHints is what strata knows of an origin's provider hints.
type HostHints struct {
	ReadAt            time.Time // when its sitemaps and feeds were last read; zero if never
	Feeds             []string  // feeds its pages link
	Agreed, Disagreed int       // hinted fetches whose outcome the hint foretold, and not
	Announced, Missed int       // of the changes seen on hinted pages, those the hints announced, and not
	FalseAlarms       int       // fetches of pages the hints called changed that had not changed
}

// maxFeeds is how many feeds strata keeps per origin: sites link one or two; more is noise.
const maxFeeds = 8

// HostHints returns origin's hint state; an origin strata never contacted has the zero value.
func (db *DB) HostHints(ctx context.Context, origin string) (HostHints, error) {
	var h HostHints
	var read, feeds sql.NullString
	err := db.sql.QueryRowContext(ctx, `SELECT hints_read_at, feeds, hints_agreed, hints_disagreed, hints_announced, hints_missed,
		hints_false_alarms FROM hosts WHERE origin = ?`, origin).Scan(&read, &feeds, &h.Agreed, &h.Disagreed, &h.Announced, &h.Missed,
		&h.FalseAlarms)
	if errors.Is(err, sql.ErrNoRows) {
		return h, nil
	}
	if err != nil {
		return h, fmt.Errorf("hints of %s: %w", origin, err)
	}
	h.ReadAt = parseTime(read)
	if feeds.Valid {
		if err := json.Unmarshal([]byte(feeds.String), &h.Feeds); err != nil {
			h.Feeds = nil // a damaged list is rediscovered from the pages
		}
	}
	return h, nil
}

// HintsRead records that origin's sitemaps and feeds were read at t.
func (db *DB) HintsRead(ctx context.Context, origin, domain string, t time.Time) error {
	_, err := db.sql.ExecContext(ctx, `INSERT INTO hosts (origin, domain, hints_read_at) VALUES (?, ?, ?)
		ON CONFLICT (origin) DO UPDATE SET hints_read_at = excluded.hints_read_at`, origin, domain, formatTime(t))
	if err != nil {
		return fmt.Errorf("record hints read of %s: %w", origin, err)
	}
	return nil
}

// AddFeeds adds feeds found on origin's pages to its list (at most 8 are kept, the first found).
func (db *DB) AddFeeds(ctx context.Context, origin, domain string, feeds []string) error {
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		var cur sql.NullString
		err := tx.QueryRowContext(ctx, `SELECT feeds FROM hosts WHERE origin = ?`, origin).Scan(&cur)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		var list []string
		if cur.Valid {
			_ = json.Unmarshal([]byte(cur.String), &list)
		}
		n := len(list)
		for _, f := range feeds {
			if len(list) < maxFeeds && !slices.Contains(list, f) {
				list = append(list, f)
			}
		}
		if len(list) == n && cur.Valid {
			return nil
		}
		b, _ := json.Marshal(list)
		_, err = tx.ExecContext(ctx, `INSERT INTO hosts (origin, domain, feeds) VALUES (?, ?, ?)
			ON CONFLICT (origin) DO UPDATE SET feeds = excluded.feeds`, origin, domain, string(b))
		return err
	})
	if err != nil {
		return fmt.Errorf("record feeds of %s: %w", origin, err)
	}
	return nil
}

// The windows of an origin's hint record: when the counts of a window reach it, the stored ones are
// halved before the new observation is added, so the record follows the origin's recent hints and a site
// whose sitemap stops telling the truth loses the trust it had within weeks, not years.
const (
	// HintObservations is the window of agreed and disagreed (hints.MaxObservations).
	HintObservations = 64
	// HintChecks is the window of announced, missed and false alarms: the changes strata saw on
	// hinted pages and the "changed" hints it checked. It is short because these are what trust
	// turns on: a sitemap that stops announcing changes is caught by a few misses.
	HintChecks = 16
)

// ObserveHint counts one hinted fetch of origin's: the hint foretold its outcome (agreed) or not, and
// the content changed or not. A changed page the hint announced counts as announced, one it did not
// as missed, and an unchanged page it called changed as a false alarm. The counts are kept in the
// windows above.
func (db *DB) ObserveHint(ctx context.Context, origin, domain string, agreed, changed bool) error {
	b := func(v bool) int {
		if v {
			return 1
		}
		return 0
	}
	_, err := db.sql.ExecContext(ctx, `INSERT INTO hosts (origin, domain, hints_agreed, hints_disagreed, hints_announced, hints_missed,
			hints_false_alarms)
		VALUES (?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (origin) DO UPDATE SET
		hints_agreed = `+decay("hints_agreed", observations, HintObservations)+` + excluded.hints_agreed,
		hints_disagreed = `+decay("hints_disagreed", observations, HintObservations)+` + excluded.hints_disagreed,
		hints_announced = `+decay("hints_announced", checks, HintChecks)+` + excluded.hints_announced,
		hints_missed = `+decay("hints_missed", checks, HintChecks)+` + excluded.hints_missed,
		hints_false_alarms = `+decay("hints_false_alarms", checks, HintChecks)+` + excluded.hints_false_alarms`,
		origin, domain, b(agreed), b(!agreed), b(changed && agreed), b(changed && !agreed), b(!changed && !agreed))
	if err != nil {
		return fmt.Errorf("record a hint observation of %s: %w", origin, err)
	}
	return nil
}

// observations and checks are the SQL for an origin's counts in each window, the new observation's
// included.
const (
	observations = `hints_agreed + hints_disagreed + 1`
	checks       = `hints_announced + hints_missed + hints_false_alarms + excluded.hints_announced + excluded.hints_missed + excluded.hints_false_alarms`
)

// decay is the SQL for a stored count before the new observation is added to it: halved when the
// window's total, the new observation included, reaches window. The new observation is never
// halved away.
func decay(count, total string, window int) string {
	return fmt.Sprintf("(CASE WHEN %s >= %d THEN %s / 2 ELSE %s END)", total, window, count, count)
}

// Hint is one page's date from a sitemap or feed, on the site's clock, as the site wrote it.
type Hint struct {
	URL     string
	LastMod string // the stamp as text (hints.Stamp.String); "" when the document gave none
}

// HintedURL is a known URL a hint named, with what deciding on the hint needs.
type HintedURL struct {
	ID       int64
	URL      string
	Host     string
	State    string
	Fr       int
	SiteDate time.Time // the site's clock at our last fetch; zero if never fetched or no Date
	Fetched  bool      // fetched at least once
	NotFound bool      // its last answer was 404: due every run until it answers or is gone
	Snapshot bool      // its seed asks for every page every run: no hint spares a fetch
}

// ApplyHints stores each hint's date on its URL (source "sitemap" or "feed") and returns the known
// URLs it named; the URLs strata does not know are returned in unknown, in hint order.
func (db *DB) ApplyHints(ctx context.Context, source string, hints []Hint) (known []HintedURL, unknown []string, err error) {
	err = db.inTx(ctx, func(tx *sql.Tx) error {
		st, err := tx.PrepareContext(ctx, `UPDATE urls SET hint_lastmod = coalesce(?1, hint_lastmod), hint_source = ?2
			WHERE url = ?3 RETURNING id, host, state, `+frOf("due_tick")+`, site_date, date IS NOT NULL, last_status IS 404,
			root_id IN `+snapshotRoots+``)
		if err != nil {
			return err
		}
		defer st.Close()
		known, unknown = known[:0], unknown[:0]
		for _, h := range hints {
			var u HintedURL
			var siteDate sql.NullString
			err := st.QueryRowContext(ctx, nullString(h.LastMod), source, h.URL).
				Scan(&u.ID, &u.Host, &u.State, &u.Fr, &siteDate, &u.Fetched, &u.NotFound, &u.Snapshot)
			if errors.Is(err, sql.ErrNoRows) {
				unknown = append(unknown, h.URL)
				continue
			}
			if err != nil {
				return err
			}
			u.URL, u.SiteDate = h.URL, parseTime(siteDate)
			known = append(known, u)
		}
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("apply %d %s hints: %w", len(hints), source, err)
	}
	return known, unknown, nil
}

// DeferByHint puts due pages back on their schedule without a fetch, because their site's trusted
// hints say they have not changed since the last fetch: fr becomes the longer of fr_max and runs.
// The site's sitemap is read every run and makes a page due again the run its lastmod moves, so a
// page it vouches for need not come due on its own schedule in between.
func (db *DB) DeferByHint(ctx context.Context, ids []int64, runs int) error {
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		for _, id := range ids {
			if _, err := tx.ExecContext(ctx, `UPDATE urls SET due_tick = `+dueIn("max(fr_max, ?)")+`, hint_deferred = 1 WHERE id = ? AND `+isDue, runs, runs, id); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("defer %d pages on their hints: %w", len(ids), err)
	}
	return nil
}

// ResumeDeferred puts the active pages of origin (scheme://host[:port]) that its hints deferred
// (urls.hint_deferred) back on their own schedule. It is for an origin whose "unchanged" hints no longer
// spare fetches, so that a sitemap that stopped moving cannot keep pages waiting the longest
// interval. It returns how many pages it moved.
func (db *DB) ResumeDeferred(ctx context.Context, origin, host string) (int, error) {
	res, err := db.sql.ExecContext(ctx, `UPDATE urls SET due_tick = `+dueIn("fr_max")+`, hint_deferred = 0
		WHERE host = ? AND substr(url, 1, length(?) + 1) = ? || '/' AND state = 'active' AND hint_deferred = 1`, host, origin, origin)
	if err != nil {
		return 0, fmt.Errorf("resume the deferred pages of %s: %w", origin, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("resume the deferred pages of %s: %w", origin, err)
	}
	return int(n), nil
}

// originOf returns scheme://host[:port] of a stored (normalised) URL, "" if it does not parse.
func originOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return u.Scheme + "://" + u.Host
}

// StaleHints lists the origins strata has contacted, that still have active URLs, and whose
// sitemaps and feeds were last read before before (or never).
func (db *DB) StaleHints(ctx context.Context, before time.Time) ([]string, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT h.origin FROM hosts h
		WHERE (h.hints_read_at IS NULL OR h.hints_read_at < ?) AND h.robots_fetched_at IS NOT NULL
		AND EXISTS (SELECT 1 FROM urls u WHERE u.host = substr(h.origin, instr(h.origin, '://') + 3) AND u.state = 'active')
		ORDER BY h.origin`, formatTime(before))
	if err != nil {
		return nil, fmt.Errorf("origins with stale hints: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var o string
		if err := rows.Scan(&o); err != nil {
			return nil, fmt.Errorf("origins with stale hints: %w", err)
		}
		out = append(out, o)
	}
	return out, rows.Err()
}
