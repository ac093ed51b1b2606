package pgstore

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/strata-crawler/strata/internal/store"
)

// maxFeeds is how many feeds strata keeps per origin (store's maxFeeds).
const maxFeeds = 8

// HostHints returns origin's hint state; an origin strata never contacted has the zero value.
func (db *DB) HostHints(ctx context.Context, origin string) (store.HostHints, error) {
	var h store.HostHints
	var read, feeds *string
	err := db.pool.QueryRow(ctx, `SELECT hints_read_at, feeds, hints_agreed, hints_disagreed, hints_announced, hints_missed,
		hints_false_alarms FROM hosts WHERE origin = $1`, origin).Scan(&read, &feeds, &h.Agreed, &h.Disagreed, &h.Announced, &h.Missed,
		&h.FalseAlarms)
	if notFound(err) {
		return h, nil
	}
	if err != nil {
		return h, fmt.Errorf("hints of %s: %w", origin, err)
	}
	h.ReadAt = parseTime(read)
	if feeds != nil {
		if err := json.Unmarshal([]byte(*feeds), &h.Feeds); err != nil {
			h.Feeds = nil // a damaged list is rediscovered from the pages
		}
	}
	return h, nil
}

// HintsRead records that origin's sitemaps and feeds were read at t.
func (db *DB) HintsRead(ctx context.Context, origin, domain string, t time.Time) error {
	_, err := db.execRows(ctx, `INSERT INTO hosts (origin, domain, hints_read_at) VALUES ($1, $2, $3)
		ON CONFLICT (origin) DO UPDATE SET hints_read_at = excluded.hints_read_at`, origin, domain, formatTime(t))
	if err != nil {
		return fmt.Errorf("record hints read of %s: %w", origin, err)
	}
	return nil
}

// AddFeeds adds feeds found on origin's pages to its list (at most 8 are kept, the first found).
func (db *DB) AddFeeds(ctx context.Context, origin, domain string, feeds []string) error {
	// The origin's row is made if need be and locked before its list is read, so that two pages'
	// feeds both land. (The list is written whenever the row had none, so making it first changes
	// nothing else.)
	err := db.rows(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO hosts (origin, domain) VALUES ($1, $2) ON CONFLICT DO NOTHING`, origin, domain); err != nil {
			return err
		}
		var cur *string
		err := tx.QueryRow(ctx, `SELECT feeds FROM hosts WHERE origin = $1 FOR UPDATE`, origin).Scan(&cur)
		if err != nil && !notFound(err) {
			return err
		}
		var list []string
		if cur != nil {
			_ = json.Unmarshal([]byte(*cur), &list)
		}
		n := len(list)
		for _, f := range feeds {
			if len(list) < maxFeeds && !slices.Contains(list, f) {
				list = append(list, f)
			}
		}
		if len(list) == n && cur != nil {
			return nil
		}
		b, _ := json.Marshal(list)
		_, err = tx.Exec(ctx, `INSERT INTO hosts (origin, domain, feeds) VALUES ($1, $2, $3)
			ON CONFLICT (origin) DO UPDATE SET feeds = excluded.feeds`, origin, domain, string(b))
		return err
	})
	if err != nil {
		return fmt.Errorf("record feeds of %s: %w", origin, err)
	}
	return nil
}

// observations and checks are the SQL for an origin's counts in each window, the new observation's
// included (store's ObserveHint).
const (
	observations = `hosts.hints_agreed + hosts.hints_disagreed + 1`
	checks       = `hosts.hints_announced + hosts.hints_missed + hosts.hints_false_alarms + excluded.hints_announced + excluded.hints_missed + excluded.hints_false_alarms`
)

// ObserveHint counts one hinted fetch of origin's: store.DB.ObserveHint.
func (db *DB) ObserveHint(ctx context.Context, origin, domain string, agreed, changed bool) error {
	_, err := db.execRows(ctx, `INSERT INTO hosts (origin, domain, hints_agreed, hints_disagreed, hints_announced, hints_missed,
			hints_false_alarms)
		VALUES ($1, $2, $3, $4, $5, $6, $7)
		ON CONFLICT (origin) DO UPDATE SET
		hints_agreed = `+decay("hosts", "hints_agreed", observations, store.HintObservations)+` + excluded.hints_agreed,
		hints_disagreed = `+decay("hosts", "hints_disagreed", observations, store.HintObservations)+` + excluded.hints_disagreed,
		hints_announced = `+decay("hosts", "hints_announced", checks, store.HintChecks)+` + excluded.hints_announced,
		hints_missed = `+decay("hosts", "hints_missed", checks, store.HintChecks)+` + excluded.hints_missed,
		hints_false_alarms = `+decay("hosts", "hints_false_alarms", checks, store.HintChecks)+` + excluded.hints_false_alarms`,
		origin, domain, btoi(agreed), btoi(!agreed), btoi(changed && agreed), btoi(changed && !agreed), btoi(!changed && !agreed))
	if err != nil {
		return fmt.Errorf("record a hint observation of %s: %w", origin, err)
	}
	return nil
}

// ApplyHints stores each hint's date on its URL and returns the known URLs it named and, in hint
// order, the unknown ones.
func (db *DB) ApplyHints(ctx context.Context, source string, hints []store.Hint) (known []store.HintedURL, unknown []string, err error) {
	err = db.rows(ctx, func(tx pgx.Tx) error {
		known, unknown = known[:0], unknown[:0]
		for _, h := range hints {
			var u store.HintedURL
			var siteDate *string
			err := tx.QueryRow(ctx, `UPDATE urls SET hint_lastmod = coalesce($1, hint_lastmod), hint_source = $2
				WHERE url = $3 RETURNING id, host, state, `+frOf("due_tick")+`, site_date, date IS NOT NULL,
				last_status IS NOT DISTINCT FROM 404, `+inSnapshot, textOrNull(h.LastMod), source, h.URL).
				Scan(&u.ID, &u.Host, &u.State, &u.Fr, &siteDate, &u.Fetched, &u.NotFound, &u.Snapshot)
			if notFound(err) {
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

// DeferByHint puts due pages back on their schedule without a fetch: fr becomes the longer of
// fr_max and runs.
func (db *DB) DeferByHint(ctx context.Context, ids []int64, runs int) error {
	if len(ids) == 0 {
		return nil
	}
	_, err := db.execRows(ctx, `UPDATE urls SET due_tick = `+dueIn("greatest(fr_max, $1)")+`, hint_deferred = 1 WHERE id = ANY($2::bigint[]) AND `+isDue, runs, ids)
	if err != nil {
		return fmt.Errorf("defer %d pages on their hints: %w", len(ids), err)
	}
	return nil
}

// ResumeDeferred puts origin's active pages that its hints deferred back on their own schedule
// and returns how many it moved: store.DB.ResumeDeferred.
func (db *DB) ResumeDeferred(ctx context.Context, origin, host string) (int, error) {
	n, err := db.execRows(ctx, `UPDATE urls SET due_tick = `+dueIn("fr_max")+`, hint_deferred = 0
		WHERE host = $1 AND substr(url, 1, length($2::text) + 1) = $2::text || '/' AND state = 'active' AND hint_deferred = 1`, host, origin)
	if err != nil {
		return 0, fmt.Errorf("resume the deferred pages of %s: %w", origin, err)
	}
	return int(n), nil
}

// StaleHints lists the origins strata has contacted, that still have active URLs, and whose
// sitemaps and feeds were last read before before (or never).
func (db *DB) StaleHints(ctx context.Context, before time.Time) ([]string, error) {
	rows, err := db.pool.Query(ctx, `SELECT h.origin FROM hosts h
		WHERE (h.hints_read_at IS NULL OR h.hints_read_at < $1) AND h.robots_fetched_at IS NOT NULL
		AND EXISTS (SELECT 1 FROM urls u WHERE u.host = substr(h.origin, strpos(h.origin, '://') + 3) AND u.state = 'active')
		ORDER BY h.origin`, formatTime(before))
	if err != nil {
		return nil, fmt.Errorf("origins with stale hints: %w", err)
	}
	out, err := collectStrings(rows)
	if err != nil {
		return nil, fmt.Errorf("origins with stale hints: %w", err)
	}
	return out, nil
}
