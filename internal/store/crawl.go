package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/strata-crawler/strata/internal/outcome"
)

// Countdown starts a run the paper's way: every active URL with fr > 0 moves one run closer to being
// due. It returns how many URLs are due afterwards, and how many still wait (skipped by fr).
//
// fr is stored as the tick it counts down to (urls.due_tick, see migrations/0013_due_tick.sql), so
// the countdown advances the tick and adds the URLs whose tick has come to the due table, reading
// them from an index: it writes no url row, and nothing for the URLs still waiting. A URL whose
// tick passed while it was not active is due as soon as it is active again.
//
// An active page whose last answer was 404 is due at every countdown, whatever its interval and
// whatever recalculation, the optimal plan or a hint did to its countdown since: three 404s in a
// row mark a page gone, and this makes them three runs in a row rather than three revisit
// intervals. The urls_not_found index holds just those pages.
func (db *DB) Countdown(ctx context.Context) (due, waiting int, err error) {
	err = db.inBulkTx(ctx, func(tx *sql.Tx) error {
		// filled is the tick due was last filled up to: the last countdown's, unless someone
		// moved the clock by hand since. "due_tick > 0" lets SQLite use urls_waiting, whose
		// condition a query must repeat.
		var tick, filled int64
		if err := takeBackProbes(ctx, tx); err != nil {
			return err
		}
		if err := tx.QueryRowContext(ctx, `UPDATE countdown SET tick = tick + 1 RETURNING tick, filled`).Scan(&tick, &filled); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE urls SET due_tick = ? WHERE state = 'active' AND last_status = 404 AND due_tick > ?`,
			tick, tick); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE urls SET due_tick = ?1 WHERE `+snapshotDue+` AND due_tick > ?1`, tick); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO due (host, prio, level, id)
			SELECT host, prio, level, id FROM urls WHERE state = 'active' AND due_tick > 0 AND due_tick > ?1 AND due_tick <= ?2
			AND NOT EXISTS (SELECT 1 FROM trap_holds h WHERE h.url_id = urls.id AND h.released = 0)`, min(filled, tick-1), tick); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE countdown SET filled = ?`, tick); err != nil {
			return err
		}
		if err := releaseProbes(ctx, tx, tick); err != nil {
			return err
		}
		// Two counts, over the due table and the waiting index, so neither reads a row.
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM due`).Scan(&due); err != nil {
			return err
		}
		return tx.QueryRowContext(ctx, `SELECT count(*) FROM urls WHERE state = 'active' AND due_tick > 0 AND due_tick > ?`, tick).Scan(&waiting)
	})
	if err != nil {
		return 0, 0, fmt.Errorf("countdown: %w", err)
	}
	return due, waiting, nil
}

// takeBackProbes runs before a countdown moves the tick: a URL a trap rule released as a probe and
// that the last run fetched (it is no longer due) goes back under its rule, as a known page of a
// throttled unit; a held URL that is not active any more leaves the holds, and so does every URL of
// a rule that no longer throttles (a crash between storing a cleared rule and releasing its URLs
// would otherwise hold them for ever). A probe not fetched yet stays out, and keeps its rule from
// releasing another.
func takeBackProbes(ctx context.Context, tx *sql.Tx) error {
	// The statements read trap_holds and trap_rules, which are small, and look each URL up: never
	// the whole of urls.
	if _, err := tx.ExecContext(ctx, `DELETE FROM trap_holds WHERE rule_id IN (SELECT id FROM trap_rules WHERE state <> 'throttled')`); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM trap_holds WHERE (SELECT state FROM urls WHERE id = trap_holds.url_id) <> 'active'`); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, `UPDATE trap_holds SET released = 0 WHERE released > 0
		AND (SELECT due_tick FROM urls WHERE id = trap_holds.url_id) > `+tickNow)
	return err
}

// releaseProbes lets each throttled trap rule whose probe is due (probe_every runs since the last,
// none out) release its probes: the never-fetched URLs it has held longest — their first fetch is
// the evidence a probe is for — and once there are none, the known page fetched longest ago; each
// due by its own tick. They join the due set through trap_holds' trigger. Rules are few; each
// one's choice reads its own holds through trap_holds_rule.
func releaseProbes(ctx context.Context, tx *sql.Tx, tick int64) error {
	rows, err := tx.QueryContext(ctx, `SELECT id, probes FROM trap_rules r WHERE state = 'throttled' AND ?1 >= probed_tick + probe_every
		AND NOT EXISTS (SELECT 1 FROM trap_holds o WHERE o.rule_id = r.id AND o.released > 0)`, tick)
	if err != nil {
		return err
	}
	type ready struct{ id, probes int64 }
	var rules []ready
	for rows.Next() {
		var r ready
		if err := rows.Scan(&r.id, &r.probes); err != nil {
			rows.Close()
			return err
		}
		rules = append(rules, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, r := range rules {
		res, err := tx.ExecContext(ctx, `UPDATE trap_holds SET released = ?1 WHERE url_id IN (
			SELECT h.url_id FROM trap_holds h JOIN urls u ON u.id = h.url_id
			WHERE h.rule_id = ?2 AND h.released = 0 AND u.state = 'active' AND u.due_tick <= ?1
			ORDER BY u.date IS NOT NULL, coalesce(u.date, u.added_at), h.url_id LIMIT ?3)`, tick, r.id, r.probes)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n > 0 {
			if _, err := tx.ExecContext(ctx, `UPDATE trap_rules SET probed_tick = ? WHERE id = ?`, tick, r.id); err != nil {
				return err
			}
		}
	}
	return nil
}

// tickNow is the countdown's current tick, in SQL.
const tickNow = `(SELECT tick FROM countdown)`

// dueIn is the SQL for the due_tick of a page that comes due in runs runs (0: due now): the store's
// callers speak the paper's fr, the table keeps the tick.
func dueIn(runs string) string {
	return `(CASE WHEN ` + runs + ` > 0 THEN ` + tickNow + ` + ` + runs + ` ELSE 0 END)`
}

// frOf is the SQL for the fr of a row whose due_tick column is dueTick.
func frOf(dueTick string) string {
	return `max(` + dueTick + ` - ` + tickNow + `, 0)`
}

// isDue is the SQL condition for a due row of urls: it has a row in the due table.
const isDue = `state = 'active' AND due_tick <= ` + tickNow + ` AND ` + notHeld

// notHeld is the SQL condition for a row of urls that no trap rule holds.
const notHeld = `NOT EXISTS (SELECT 1 FROM trap_holds h WHERE h.url_id = urls.id AND h.released = 0)`

// DueHosts lists the hosts that have due URLs, with how many each has.
func (db *DB) DueHosts(ctx context.Context) (map[string]int, error) {
	return db.hostCounts(ctx, "due hosts", `SELECT host, count(*) FROM due GROUP BY host`)
}

// hostCounts runs a query of (host, count) rows into a map.
func (db *DB) hostCounts(ctx context.Context, op, query string, args ...any) (map[string]int, error) {
	rows, err := db.sql.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var h string
		var n int
		if err := rows.Scan(&h, &n); err != nil {
			return nil, fmt.Errorf("%s: %w", op, err)
		}
		out[h] = n
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	return out, nil
}

// Immediate makes urls (normalised) due now for an out-of-schedule fetch: unknown ones are added at
// level 0, known ones get fr 0 and, if removed or gone, become active again; a trap rule that held
// one lets it go. It returns their ids.
func (db *DB) Immediate(ctx context.Context, urls []NewURL) ([]int64, error) {
	ids := make([]int64, 0, len(urls))
	now := formatTime(db.now())
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		for _, u := range urls {
			var id int64
			err := tx.QueryRowContext(ctx, `INSERT INTO urls (url, host, level, due_tick, fr_max, added_at) VALUES (?, ?, 0, 0, ?, ?)
				ON CONFLICT (url) DO UPDATE SET due_tick = 0,
				state = CASE WHEN state IN ('gone', 'removed') THEN 'active' ELSE state END
				RETURNING id`, u.URL, u.Host, max(u.FrMax, 1), now).Scan(&id)
			if err != nil {
				return fmt.Errorf("%s: %w", u.URL, err)
			}
			// A person asked for it: no trap rule holds it back.
			if _, err := tx.ExecContext(ctx, `DELETE FROM trap_holds WHERE url_id = ?`, id); err != nil {
				return fmt.Errorf("%s: %w", u.URL, err)
			}
			ids = append(ids, id)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("queue for an immediate fetch: %w", err)
	}
	return ids, nil
}

// DueAmong returns, per host, how many of the URLs with the given ids are due.
func (db *DB) DueAmong(ctx context.Context, ids []int64) (map[string]int, error) {
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	return db.hostCounts(ctx, "due hosts", `SELECT host, count(*) FROM urls WHERE id IN (`+placeholders(len(ids))+`)
		AND `+isDue+` GROUP BY host`, args...)
}

// SeedHosts lists the hosts of the seeds: the hosts the user vouched for.
func (db *DB) SeedHosts(ctx context.Context) ([]string, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT DISTINCT host FROM urls WHERE is_seed = 1`)
	if err != nil {
		return nil, fmt.Errorf("seed hosts: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var h string
		if err := rows.Scan(&h); err != nil {
			return nil, fmt.Errorf("seed hosts: %w", err)
		}
		out = append(out, h)
	}
	return out, rows.Err()
}

// DueURL is a URL to crawl now, with what the crawl needs from its row.
type DueURL struct {
	ID           int64
	URL          string
	Host         string
	Level        int
	FrMax        int
	ETag         string
	LastModified string
	ContentHash  string
	RootID       int64
	IsSeed       bool
	Threshold    float64 // the child-change threshold, for hubs
	ArchivePath  string  // of the current stored version, "" if none
	Digest       []byte  // of the current version's text (package change), nil if none
	TextMode     string  // how the current version's text was extracted (FetchRecord.TextMode)

	New        bool    // never fetched before
	ChangeRate float64 // estimated changes per run; 0 when not estimated yet
	LastRun    int64   // run of the last fetch with a usable answer; 0 if none
	// SiteDate is the site's own clock (its Date header) at the last fetch, zero when unknown, and
	// HintLastMod the date a sitemap or feed last gave for the page, on the same clock, as the site
	// wrote it (package hints reads it); "" when none.
	SiteDate    time.Time
	HintLastMod string
	// Sampled reports that the hybrid policy's sampler chose the page (DueQuery.Sample SampleOnly).
	Sampled bool
}

// DueKind selects never-fetched or known URLs.
type DueKind int

const (
	DueAny   DueKind = iota
	DueNew           // never fetched
	DueKnown         // fetched before
)

// DueSample selects, for the hybrid policy, pages still sampled (fetched, but fewer than
// DueQuery.History times successfully) or the others.
type DueSample int

const (
	SampleAny   DueSample = iota
	SampleQueue           // not sampled: never fetched, or with History successful fetches
	SampleOnly            // still sampled
)

// DueQuery says which due URL [DB.NextDue] should return.
type DueQuery struct {
	Hosts []string // the hosts to look in (at least one)
	Run   int64    // URLs the selective rule skipped for this run are not due in it
	Kind  DueKind
	// Sample and History split the due pages for the hybrid policy; see DueSample.
	Sample  DueSample
	History int
	// Only, when set, restricts the query to these URLs: an immediate fetch outside the schedule.
	Only []int64
}

// NextDue returns the due URL among q.Hosts to crawl next — the highest priority first (see
// [DB.Prioritize]; all 0 unless a run is short of budget or time), then the highest level, then the
// oldest row — or an error wrapping ErrNotFound when they have none left. Every outcome the crawler
// records takes the URL out of the due set, so calling NextDue again moves on.
func (db *DB) NextDue(ctx context.Context, q DueQuery) (*DueURL, error) {
	args := make([]any, 0, len(q.Hosts)+1+len(q.Only))
	for _, h := range q.Hosts {
		args = append(args, h)
	}
	args = append(args, q.Run)
	restrict := ""
	switch q.Kind {
	case DueNew:
		restrict = ` AND date IS NULL`
	case DueKnown:
		restrict = ` AND date IS NOT NULL`
	}
	if q.Sample != SampleAny && q.History > 0 {
		sampled := `(date IS NOT NULL AND (SELECT count(*) FROM (SELECT 1 FROM fetches f WHERE f.url_id = urls.id
			AND (f.status = 200 OR f.not_modified) LIMIT ?)) < ?)`
		if q.Sample == SampleQueue {
			sampled = `NOT ` + sampled
		}
		restrict += ` AND ` + sampled
		args = append(args, q.History, q.History)
	}
	if len(q.Only) > 0 {
		restrict += ` AND urls.id IN (` + placeholders(len(q.Only)) + `)`
		for _, id := range q.Only {
			args = append(args, id)
		}
	}
	// The text depends only on the number of hosts and ids and the kinds asked for: a handful of
	// variants, each prepared once. The due table is read first (CROSS JOIN keeps SQLite to that
	// order), in its key's order: a host's next URL is its first row that passes the filters.
	st, err := db.prepared(ctx, `SELECT `+dueColumns+`
		FROM due d CROSS JOIN urls ON urls.id = d.id WHERE d.host IN (`+placeholders(len(q.Hosts))+`)
		AND (skipped_run IS NULL OR skipped_run <> ?)`+restrict+` ORDER BY d.prio DESC, d.level DESC, d.id LIMIT 1`)
	if err != nil {
		return nil, fmt.Errorf("next due URL of %v: %w", q.Hosts, err)
	}
	d, err := scanDue(st.QueryRowContext(ctx, args...))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("next due URL of %v: %w", q.Hosts, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("next due URL of %v: %w", q.Hosts, err)
	}
	d.Sampled = q.Sample == SampleOnly
	return d, nil
}

// dueColumns are the columns of urls that make a DueURL, in scanDue's order.
const dueColumns = `urls.id, url, urls.host, urls.level, fr_max, etag, last_modified, content_hash, root_id, is_seed,
		threshold, digest, (SELECT archive_path FROM fetches f WHERE f.url_id = urls.id AND f.archive_path IS NOT NULL ORDER BY f.id DESC LIMIT 1),
		date IS NULL, change_rate,
		(SELECT f.run_id FROM fetches f WHERE f.url_id = urls.id AND (f.status = 200 OR f.not_modified) ORDER BY f.id DESC LIMIT 1),
		site_date, hint_lastmod, text_mode`

// scanDue reads a row of dueColumns.
func scanDue(row interface{ Scan(...any) error }) (*DueURL, error) {
	var d DueURL
	var etag, lm, hash, archived, siteDate, hint, textMode sql.NullString
	var root, lastRun sql.NullInt64
	var rate sql.NullFloat64
	err := row.Scan(&d.ID, &d.URL, &d.Host, &d.Level, &d.FrMax, &etag, &lm, &hash, &root, &d.IsSeed, &d.Threshold, &d.Digest, &archived,
		&d.New, &rate, &lastRun, &siteDate, &hint, &textMode)
	if err != nil {
		return nil, err
	}
	d.ETag, d.LastModified, d.ContentHash, d.RootID = etag.String, lm.String, hash.String, root.Int64
	d.ArchivePath, d.ChangeRate, d.LastRun = archived.String, rate.Float64, lastRun.Int64
	d.SiteDate, d.HintLastMod, d.TextMode = parseTime(siteDate), hint.String, textMode.String
	return &d, nil
}

// DueByID returns URL id to crawl now, or an error wrapping ErrNotFound when it is not due any more:
// recorded since it was chosen, skipped for run by the selective rule, or no longer active.
func (db *DB) DueByID(ctx context.Context, id, run int64) (*DueURL, error) {
	st, err := db.prepared(ctx, `SELECT `+dueColumns+` FROM urls WHERE urls.id = ? AND `+isDue+`
		AND (skipped_run IS NULL OR skipped_run <> ?)`)
	if err != nil {
		return nil, fmt.Errorf("due URL %d: %w", id, err)
	}
	d, err := scanDue(st.QueryRowContext(ctx, id, run))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("due URL %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("due URL %d: %w", id, err)
	}
	return d, nil
}

// Candidate is a due URL competing for a place in a budgeted run, with what the choice needs.
type Candidate struct {
	ID     int64
	URL    string
	Host   string
	Level  int
	New    bool    // never fetched
	FrMax  int     // its revisit interval
	Rate   float64 // estimated changes per run; < 0 when not estimated yet
	Weight float64 // seed priority and in-links (1 = ordinary)
	// Records are its last records, oldest first (urls.recent: up to RecentCap); empty when new.
	Records []Record
	// HintLastMod, SiteDate and LastFetch serve the provider hint's verdict: the lastmod a sitemap
	// or feed gave, the site's clock at our last fetch, and our last fetch.
	HintLastMod         string
	SiteDate, LastFetch time.Time
	// Snapshot says its seed asks for every page every run (strata seed add --snapshot).
	Snapshot bool
}

// NextCandidates calls fn for at most n known, active URLs that are not due yet — those whose turn
// comes soonest first — and were not fetched since runStart: the pages a budgeted run may bring
// forward when it has budget left and nothing due.
func (db *DB) NextCandidates(ctx context.Context, runStart time.Time, n int, fn func(Candidate) error) error {
	rows, err := db.sql.QueryContext(ctx, `SELECT urls.id, url, urls.host, urls.level, date IS NULL, fr_max, coalesce(change_rate, -1),
		weight, recent, hint_lastmod, site_date, date, root_id IN `+snapshotRoots+`
		FROM urls WHERE state = 'active' AND due_tick > 0 AND due_tick > `+tickNow+` AND date IS NOT NULL AND date < ?
		ORDER BY due_tick, id LIMIT ?`, formatTime(runStart), n)
	if err != nil {
		return fmt.Errorf("next candidates: %w", err)
	}
	return scanCandidates(rows, fn)
}

// DueCandidates calls fn for every URL that is due in run — not skipped for it by the selective
// rule — in id order.
func (db *DB) DueCandidates(ctx context.Context, run int64, fn func(Candidate) error) error {
	rows, err := db.sql.QueryContext(ctx, `SELECT urls.id, url, urls.host, urls.level, date IS NULL, fr_max, coalesce(change_rate, -1),
		weight, recent, hint_lastmod, site_date, date, root_id IN `+snapshotRoots+`
		FROM due d CROSS JOIN urls ON urls.id = d.id WHERE skipped_run IS NULL OR skipped_run <> ? ORDER BY urls.id`, run)
	if err != nil {
		return fmt.Errorf("due candidates: %w", err)
	}
	return scanCandidates(rows, fn)
}

// scanCandidates reads the rows of DueCandidates' and NextCandidates' queries.
func scanCandidates(rows *sql.Rows, fn func(Candidate) error) error {
	defer rows.Close()
	for rows.Next() {
		var c Candidate
		var blob []byte
		var hint, siteDate, date sql.NullString
		if err := rows.Scan(&c.ID, &c.URL, &c.Host, &c.Level, &c.New, &c.FrMax, &c.Rate, &c.Weight, &blob, &hint, &siteDate, &date, &c.Snapshot); err != nil {
			return fmt.Errorf("due candidates: %w", err)
		}
		recs, err := decodeRecent(blob)
		if err != nil {
			return fmt.Errorf("due candidates: URL %d: %w", c.ID, err)
		}
		c.Records = recs
		c.HintLastMod, c.SiteDate, c.LastFetch = hint.String, parseTime(siteDate), parseTime(date)
		if err := fn(c); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("due candidates: %w", err)
	}
	return nil
}

// FetchRecord is the outcome of one crawl of a URL: a fetches row and the changes to the URL's row.
type FetchRecord struct {
	URLID       int64
	RunID       int64
	FetchedAt   time.Time
	Status      int // HTTP status; 0 = no response
	Size        int64
	ContentType string
	ContentHash string // "" when no content was read
	Digest      []byte // summary of the text, for the next comparison; nil when no content was read
	// TextMode is how the text was extracted from HTML: "main", "full" (archive.text = "full") or
	// "fallback" (Main found no main content to trust: the whole text); "" when no text was
	// extracted from HTML. It is the mode of Digest, which the next fetch compares with.
	TextMode    string
	Changed     bool
	Magnitude   float64 // share of the text that changed, 0..1; -1 when unknown
	Distance    int     // simhash distance from the previous version
	NotModified bool
	ArchivePath string
	Error       string
	Duration    time.Duration
	SiteDate    time.Time // the response's Date header, on the site's clock; zero keeps the last one
	// Dated: the response's Last-Modified dated the page's last change, DatedAge before its Date.
	// DateCheck is what that date said against what strata saw of the page since its last fetch:
	// +1 agreed, -1 contradicted (the page's dates are not used again), 0 nothing to check.
	Dated     bool
	DatedAge  time.Duration
	DateCheck int

	// For the hosts table: the origin (scheme://host[:port]) and politeness domain contacted, whose
	// last access becomes FetchedAt+Duration, so a later process keeps the gap. "" when no request
	// was sent.
	Origin, Domain string

	// Capture is the exchange's head and WARC facts, kept in table captures; nil when no response
	// was received.
	Capture *Capture

	// For the URL row:
	NextFr       int    // fr after this crawl: fr_max for a crawled page
	ETag         string // validators to send next time ("" keeps none)
	LastModified string
	State        string // new state, "" to keep the current one
}

// RecordFetch stores one fetch and updates its URL in one transaction. The URL's row keeps its last
// records (urls.recent) as well, so that recalc needs no fetch history.
func (db *DB) RecordFetch(ctx context.Context, r FetchRecord) error {
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		st, err := db.fetchStmts(ctx, tx)
		if err != nil {
			return err
		}
		return st.record(ctx, r)
	})
	if err != nil {
		return fmt.Errorf("record fetch of URL %d: %w", r.URLID, err)
	}
	return nil
}

// RecordFetches stores many fetches in one transaction, as RecordFetch stores one: a crawler that
// records its workers' pages together (group commit) pays for one commit instead of one per page,
// and its workers do not queue for SQLite's write lock. If one record fails, none is stored.
func (db *DB) RecordFetches(ctx context.Context, recs []FetchRecord) error {
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		st, err := db.fetchStmts(ctx, tx)
		if err != nil {
			return err
		}
		for _, r := range recs {
			if err := st.record(ctx, r); err != nil {
				return fmt.Errorf("URL %d: %w", r.URLID, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("record %d fetches: %w", len(recs), err)
	}
	return nil
}

// The statements of recordFetch, prepared once and bound to each transaction.
const (
	recentQuery = `SELECT recent FROM urls WHERE id = ?`
	fetchInsert = `INSERT INTO fetches (url_id, run_id, fetched_at, status, size, content_hash,
			changed, not_modified, archive_path, error, duration_ms, magnitude, distance, text_mode, lm_age)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	urlUpdate = `UPDATE urls SET due_tick = ?, date = ?, last_status = ?, skips = 0, prio = 0,
			site_date = coalesce(?, site_date),
			size = CASE WHEN ? THEN ? ELSE size END,
			content_type = coalesce(?, content_type),
			content_hash = coalesce(?, content_hash),
			digest = coalesce(?, digest),
			text_mode = CASE WHEN ? THEN ? ELSE text_mode END,
			etag = ?, last_modified = ?,
			state = coalesce(?, state),
			recent = ?,
			dates_wrong = max(dates_wrong, ?)
			WHERE id = ?`
	captureInsert = `INSERT INTO captures (fetch_id, request, response, ip, payload_digest, warc_id, warc_type)
			VALUES (last_insert_rowid(), ?, ?, ?, ?, ?, ?)`
)

// hostAccess records a fetch of an origin: its last access, and whether its Last-Modified agreed
// with what strata saw (Dates, counted in their window).
var hostAccess = `INSERT INTO hosts (origin, domain, last_access_at, dates_agreed, dates_contradicted) VALUES (?, ?, ?, ?, ?)
	ON CONFLICT (origin) DO UPDATE SET last_access_at = max(coalesce(last_access_at, ''), excluded.last_access_at),
	dates_agreed = ` + decay("dates_agreed", datesTotal, DateObservations) + ` + excluded.dates_agreed,
	dates_contradicted = ` + decay("dates_contradicted", datesTotal, DateObservations) + ` + excluded.dates_contradicted`

// fetchStmts are recordFetch's statements bound to one transaction, with the countdown's tick.
type fetchStmts struct {
	stmt [5]*sql.Stmt
	tick int64
}

// fetchStmts returns the statements, prepared on the database once, bound to tx.
func (db *DB) fetchStmts(ctx context.Context, tx *sql.Tx) (*fetchStmts, error) {
	var st fetchStmts
	for i, q := range []string{recentQuery, fetchInsert, urlUpdate, hostAccess, captureInsert} {
		p, err := db.prepared(ctx, q)
		if err != nil {
			return nil, err
		}
		st.stmt[i] = tx.StmtContext(ctx, p)
	}
	if err := tx.QueryRowContext(ctx, `SELECT tick FROM countdown`).Scan(&st.tick); err != nil {
		return nil, err
	}
	return &st, nil
}

// record stores one fetch within the statements' transaction.
func (st *fetchStmts) record(ctx context.Context, r FetchRecord) error {
	ctx, err := rowCtx(ctx)
	if err != nil {
		return err
	}
	// The record as RunHistories reads it from fetches, appended in the same transaction, so
	// the row's copy cannot drift from the table's.
	var recent []byte
	if err := st.stmt[0].QueryRowContext(ctx, r.URLID).Scan(&recent); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	usable := r.Status == 200 || r.NotModified
	dated := r.Dated && usable
	recent, err = appendRecent(recent, Record{Run: r.RunID, Changed: r.Changed, Failed: !usable, Dated: dated, Age: r.DatedAge})
	if err != nil {
		return fmt.Errorf("recent records: %w", err)
	}
	var magnitude, distance, age any
	if r.ContentHash != "" && r.Magnitude >= 0 {
		magnitude, distance = r.Magnitude, r.Distance
	}
	if dated {
		age = int64(min(max(r.DatedAge, 0), maxRecentAge) / time.Second)
	}
	if _, err := st.stmt[1].ExecContext(ctx,
		r.URLID, nullInt(r.RunID), formatTime(r.FetchedAt), r.Status, r.Size, nullString(r.ContentHash),
		r.Changed, r.NotModified, nullString(r.ArchivePath), nullString(r.Error), r.Duration.Milliseconds(),
		magnitude, distance, nullString(r.TextMode), age); err != nil {
		return err
	}
	if err := st.capture(ctx, r.Capture); err != nil {
		return err
	}
	var siteDate any
	if !r.SiteDate.IsZero() {
		siteDate = formatTime(r.SiteDate)
	}
	var due int64 // fr 0: due now
	if r.NextFr > 0 {
		due = st.tick + int64(r.NextFr)
	}
	res, err := st.stmt[2].ExecContext(ctx,
		due, formatTime(r.FetchedAt), r.Status, siteDate,
		r.ContentHash != "", r.Size,
		nullString(r.ContentType), nullString(r.ContentHash), r.Digest,
		r.ContentHash != "", nullString(r.TextMode),
		nullString(r.ETag), nullString(r.LastModified),
		nullString(r.State), recent, r.DateCheck < 0, r.URLID)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrNotFound
	}
	if r.Origin == "" {
		return nil
	}
	_, err = st.stmt[3].ExecContext(ctx, r.Origin, r.Domain, formatTime(r.FetchedAt.Add(r.Duration)),
		btoi(r.DateCheck > 0), btoi(r.DateCheck < 0))
	return err
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Dates are how often an origin's Last-Modified dates agreed with what strata saw of its pages,
// and how often they contradicted it, over its recent fetches: when the two reach
// DateObservations, the stored counts are halved before the new one is added, so a server that
// starts stamping its pages with the wrong dates loses strata's belief within weeks.
type Dates struct{ Agreed, Contradicted int }

// DateObservations is the window of an origin's date counts.
const DateObservations = 64

// datesTotal is the SQL for an origin's date counts, the new fetch's included.
const datesTotal = `dates_agreed + dates_contradicted + excluded.dates_agreed + excluded.dates_contradicted`

// OriginDates returns the dates' record of every origin that dated anything, by
// scheme://host[:port].
func (db *DB) OriginDates(ctx context.Context) (map[string]Dates, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT origin, dates_agreed, dates_contradicted FROM hosts
		WHERE dates_agreed > 0 OR dates_contradicted > 0`)
	if err != nil {
		return nil, fmt.Errorf("origins' dates: %w", err)
	}
	defer rows.Close()
	out := map[string]Dates{}
	for rows.Next() {
		var o string
		var d Dates
		if err := rows.Scan(&o, &d.Agreed, &d.Contradicted); err != nil {
			return nil, fmt.Errorf("origins' dates: %w", err)
		}
		out[o] = d
	}
	return out, rows.Err()
}

// LastAccess returns, per host[:port], the end of the last request strata sent to it after since.
func (db *DB) LastAccess(ctx context.Context, since time.Time) (map[string]time.Time, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT origin, max(coalesce(last_access_at, ''), coalesce(robots_fetched_at, ''))
		FROM hosts WHERE last_access_at > ?1 OR robots_fetched_at > ?1`, formatTime(since))
	if err != nil {
		return nil, fmt.Errorf("last access: %w", err)
	}
	defer rows.Close()
	out := map[string]time.Time{}
	for rows.Next() {
		var origin string
		var at sql.NullString
		if err := rows.Scan(&origin, &at); err != nil {
			return nil, fmt.Errorf("last access: %w", err)
		}
		_, host, _ := strings.Cut(origin, "://")
		if t := parseTime(at); t.After(out[host]) {
			out[host] = t
		}
	}
	return out, rows.Err()
}

// RecentStatuses returns the HTTP statuses of a URL's last n fetches, newest first.
func (db *DB) RecentStatuses(ctx context.Context, urlID int64, n int) ([]int, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT status FROM fetches WHERE url_id = ? ORDER BY id DESC LIMIT ?`, urlID, n)
	if err != nil {
		return nil, fmt.Errorf("recent statuses of URL %d: %w", urlID, err)
	}
	defer rows.Close()
	var out []int
	for rows.Next() {
		var s int
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// SetState changes a URL's state without a fetch (robots.txt forbids it, a filter rejects it).
func (db *DB) SetState(ctx context.Context, urlID int64, state string) error {
	if _, err := db.sql.ExecContext(ctx, `UPDATE urls SET state = ? WHERE id = ?`, state, urlID); err != nil {
		return fmt.Errorf("set state of URL %d to %s: %w", urlID, state, err)
	}
	return nil
}

// NewURL is a URL found while crawling: a redirect target or a link.
type NewURL struct {
	URL      string
	Host     string
	Level    int
	FrMax    int
	ParentID int64
	RootID   int64
	// Hold, when set, is the trap rule (TrapRule.ID) that holds the URL if Discover inserts it: it
	// joins the table but not the due set.
	Hold int64
}

// Enqueued says what Enqueue did.
type Enqueued int

const (
	EnqueuedNew   Enqueued = iota // a new row, due now
	EnqueuedDue                   // a known URL, made due now
	EnqueuedKnown                 // a known URL left as it was: crawled already in this run, or not active
)

// Enqueue makes u due in the current run: a new URL is inserted with fr 0; a known active URL not yet
// crawled since runStart is made due now. It returns the URL's id and what it did.
func (db *DB) Enqueue(ctx context.Context, u NewURL, runStart time.Time) (id int64, what Enqueued, err error) {
	err = db.inTx(ctx, func(tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx, `INSERT INTO urls (url, host, level, due_tick, fr_max, parent_id, root_id, added_at)
			VALUES (?, ?, ?, 0, ?, ?, ?, ?) ON CONFLICT (url) DO NOTHING RETURNING id`,
			u.URL, u.Host, u.Level, u.FrMax, nullInt(u.ParentID), nullInt(u.RootID), formatTime(db.now())).Scan(&id)
		if err == nil {
			what = EnqueuedNew
			return nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		err = tx.QueryRowContext(ctx, `UPDATE urls SET due_tick = 0, level = max(level, ?)
			WHERE url = ? AND state = 'active' AND (date IS NULL OR date < ?) RETURNING id`,
			u.Level, u.URL, formatTime(runStart)).Scan(&id)
		if err == nil {
			what = EnqueuedDue
			return nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		what = EnqueuedKnown
		return tx.QueryRowContext(ctx, `SELECT id FROM urls WHERE url = ?`, u.URL).Scan(&id)
	})
	if err != nil {
		return 0, 0, fmt.Errorf("enqueue %s: %w", u.URL, err)
	}
	return id, what, nil
}

// CloseStaleRuns marks runs left 'running' by a process that died as 'interrupted', filling in the
// counts that can be rebuilt from their fetches (the outcomes, as RunOutcomes counts them for a run
// that ends), and returns them. The caller holds the run lock, so no run is live.
func (db *DB) CloseStaleRuns(ctx context.Context) ([]Run, error) {
	rows, err := db.sql.QueryContext(ctx, `UPDATE runs SET status = 'interrupted',
		ended_at = coalesce((SELECT max(fetched_at) FROM fetches WHERE run_id = runs.id), started_at),
		gone = (SELECT count(*) FROM fetches f JOIN urls u ON u.id = f.url_id WHERE f.run_id = runs.id
			AND f.status IN (404, 410) AND u.state = 'gone' AND f.id = (SELECT max(g.id) FROM fetches g WHERE g.url_id = f.url_id))
		WHERE status = 'running' RETURNING `+runColumns)
	if err != nil {
		return nil, fmt.Errorf("close stale runs: %w", err)
	}
	var out []Run
	for rows.Next() {
		r, err := scanRun(rows)
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

// HasArchivePath reports whether a fetch records the version at rel.
func (db *DB) HasArchivePath(ctx context.Context, rel string) (bool, error) {
	var one int
	err := db.sql.QueryRowContext(ctx, `SELECT 1 FROM fetches WHERE archive_path = ? LIMIT 1`, rel).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("look up archive path %s: %w", rel, err)
	}
	return true, nil
}

// ManifestEntry is one page crawled in a run, for the run's manifest.
type ManifestEntry struct {
	URL     string
	Outcome string // the fetch's outcome.Kind (new, changed, unchanged, not_modified, not_found, redirect, error), or http_<status> for another status
	Current string // archive path of the page's current version, "" if none
}

// RunManifest lists the pages crawled in a run, in the order they were crawled.
func (db *DB) RunManifest(ctx context.Context, runID int64) ([]ManifestEntry, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT u.url, `+factsOf("f")+`,
		(SELECT g.archive_path FROM fetches g WHERE g.url_id = f.url_id AND g.archive_path IS NOT NULL AND g.id <= f.id
		 ORDER BY g.id DESC LIMIT 1)
		FROM fetches f JOIN urls u ON u.id = f.url_id WHERE f.run_id = ? ORDER BY f.id`, runID)
	if err != nil {
		return nil, fmt.Errorf("manifest of run %d: %w", runID, err)
	}
	defer rows.Close()
	var out []ManifestEntry
	for rows.Next() {
		var e ManifestEntry
		var f outcome.Fetch
		var current sql.NullString
		if err := rows.Scan(append(append([]any{&e.URL}, factDests(&f)...), &current)...); err != nil {
			return nil, fmt.Errorf("manifest of run %d: %w", runID, err)
		}
		e.Current = current.String
		e.Outcome = string(outcome.Of(f))
		if outcome.Of(f) == outcome.Other {
			e.Outcome = fmt.Sprintf("http_%d", f.Status)
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}

func nullString(s string) sql.NullString { return sql.NullString{String: s, Valid: s != ""} }
func nullInt(n int64) sql.NullInt64      { return sql.NullInt64{Int64: n, Valid: n != 0} }

// BlockedURL is a URL robots.txt has blocked.
type BlockedURL struct {
	ID  int64
	URL string
}

// BlockedURLs lists host's URLs in state 'blocked'.
func (db *DB) BlockedURLs(ctx context.Context, host string) ([]BlockedURL, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT id, url FROM urls WHERE host = ? AND state = 'blocked'`, host)
	if err != nil {
		return nil, fmt.Errorf("blocked URLs of %s: %w", host, err)
	}
	defer rows.Close()
	var out []BlockedURL
	for rows.Next() {
		var b BlockedURL
		if err := rows.Scan(&b.ID, &b.URL); err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, rows.Err()
}

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

// ArchivePaths returns the archive paths of a URL's stored versions, oldest first.
func (db *DB) ArchivePaths(ctx context.Context, url string) ([]string, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT f.archive_path FROM fetches f JOIN urls u ON u.id = f.url_id
		WHERE u.url = ? AND f.archive_path IS NOT NULL ORDER BY f.id`, url)
	if err != nil {
		return nil, fmt.Errorf("archive paths of %s: %w", url, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var p string
		if err := rows.Scan(&p); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// Discover records URLs found on a page in one transaction: new ones are inserted due now, or held
// by their NewURL.Hold rule; a known one is left as it is, except that its level is raised when it
// is now reached from a higher page. It returns the URLs it inserted.
func (db *DB) Discover(ctx context.Context, found []NewURL) ([]NewURL, error) {
	found, err := db.toDiscover(ctx, found)
	if err != nil || len(found) == 0 {
		return nil, err
	}
	var added []NewURL
	now := formatTime(db.now())
	err = db.inTx(ctx, func(tx *sql.Tx) error {
		ins, err := db.txPrepared(ctx, tx, `INSERT INTO urls (url, host, level, due_tick, fr_max, parent_id, root_id, added_at)
			VALUES (?, ?, ?, 0, ?, ?, ?, ?) ON CONFLICT (url) DO NOTHING`)
		if err != nil {
			return err
		}
		defer ins.Close()
		raise, err := db.txPrepared(ctx, tx, `UPDATE urls SET level = ? WHERE url = ? AND level < ?`)
		if err != nil {
			return err
		}
		defer raise.Close()
		added = added[:0]
		for _, u := range found {
			ctx, err := rowCtx(ctx)
			if err != nil {
				return err
			}
			res, err := ins.ExecContext(ctx, u.URL, u.Host, u.Level, u.FrMax, nullInt(u.ParentID), nullInt(u.RootID), now)
			if err != nil {
				return err
			}
			if n, _ := res.RowsAffected(); n == 1 {
				if u.Hold != 0 {
					id, err := res.LastInsertId()
					if err != nil {
						return err
					}
					if _, err := tx.ExecContext(ctx, `INSERT INTO trap_holds (url_id, rule_id) VALUES (?, ?)`, id, u.Hold); err != nil {
						return err
					}
				}
				added = append(added, u)
				continue
			}
			if _, err := raise.ExecContext(ctx, u.Level, u.URL, u.Level); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("record %d discovered URLs: %w", len(found), err)
	}
	return added, nil
}

// toDiscover returns the URLs of found that Discover has to write: those not in the table, and
// those whose level it would raise. Most links of a page are known already (a site's navigation is
// on every page), and without this read every page took SQLite's one write lock to change
// nothing, queueing behind the group commit with a connection held. Nothing takes a URL out of the
// table or lowers its level during a crawl, so a URL known here at its level needs no write.
func (db *DB) toDiscover(ctx context.Context, found []NewURL) ([]NewURL, error) {
	if len(found) == 0 {
		return nil, nil
	}
	urls := make([]string, len(found))
	for i, u := range found {
		urls[i] = u.URL
	}
	list, err := json.Marshal(urls)
	if err != nil {
		return nil, fmt.Errorf("look up %d discovered URLs: %w", len(found), err)
	}
	st, err := db.prepared(ctx, `SELECT url, level FROM urls WHERE url IN (SELECT value FROM json_each(?))`)
	if err != nil {
		return nil, fmt.Errorf("look up %d discovered URLs: %w", len(found), err)
	}
	rows, err := st.QueryContext(ctx, string(list))
	if err != nil {
		return nil, fmt.Errorf("look up %d discovered URLs: %w", len(found), err)
	}
	defer rows.Close()
	known := make(map[string]int, len(found))
	for rows.Next() {
		var u string
		var level int
		if err := rows.Scan(&u, &level); err != nil {
			return nil, fmt.Errorf("look up %d discovered URLs: %w", len(found), err)
		}
		known[u] = level
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("look up %d discovered URLs: %w", len(found), err)
	}
	var write []NewURL
	for _, u := range found {
		if level, ok := known[u.URL]; !ok || level < u.Level {
			write = append(write, u)
		}
	}
	return write, nil
}
