package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
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

	// ChildRatio is the share of a hub's children that changed as SetHub last stored it, -1 when
	// none. HubStored says the store reported it (and Threshold) as stored: a store that does not
	// leaves the selective rule writing its state every time, changed or not.
	ChildRatio float64
	HubStored  bool

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
		site_date, hint_lastmod, text_mode, coalesce(child_ratio, -1)`

// scanDue reads a row of dueColumns.
func scanDue(row interface{ Scan(...any) error }) (*DueURL, error) {
	var d DueURL
	var etag, lm, hash, archived, siteDate, hint, textMode sql.NullString
	var root, lastRun sql.NullInt64
	var rate sql.NullFloat64
	err := row.Scan(&d.ID, &d.URL, &d.Host, &d.Level, &d.FrMax, &etag, &lm, &hash, &root, &d.IsSeed, &d.Threshold, &d.Digest, &archived,
		&d.New, &rate, &lastRun, &siteDate, &hint, &textMode, &d.ChildRatio)
	if err != nil {
		return nil, err
	}
	d.HubStored = true
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
	if what != EnqueuedKnown {
		db.known.note(u.URL, u.Level) // inserted at u.Level, or raised to it
	}
	return id, what, nil
}

// Found is what a page found that the table does not hold yet, recorded with the page's fetch
// (FetchRecord.Found) rather than in a transaction of its own.
type Found struct {
	URLs []NewURL // as ToDiscover returned them: known URLs never reach the write
	// Added is set by RecordFetch and RecordFetches once the fetch is recorded: the URLs they
	// inserted, as Discover returns them. Nil when none was, or when the record failed.
	Added []NewURL
}

// Discover records URLs found on a page in one transaction: new ones are inserted due now, or held
// by their NewURL.Hold rule; a known one is left as it is, except that its level is raised when it
// is now reached from a higher page. It returns the URLs it inserted.
func (db *DB) Discover(ctx context.Context, found []NewURL) ([]NewURL, error) {
	found, err := db.ToDiscover(ctx, found)
	if err != nil || len(found) == 0 {
		return nil, err
	}
	var added []NewURL
	err = db.inTx(ctx, func(tx *sql.Tx) error {
		w, err := db.discoverer(ctx, tx)
		if err != nil {
			return err
		}
		defer w.close()
		added, err = w.write(ctx, found)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("record %d discovered URLs: %w", len(found), err)
	}
	// Committed: each URL is in the table now, inserted at its level or raised to it.
	db.known.noteAll(found)
	return added, nil
}

// recordFound writes the URLs the records found (FetchRecord.Found) within their fetches'
// transaction tx, and sets each one's Added.
func (db *DB) recordFound(ctx context.Context, tx *sql.Tx, recs []FetchRecord) error {
	var w *discoverer
	for _, r := range recs {
		if r.Found == nil {
			continue
		}
		r.Found.Added = nil
		if len(r.Found.URLs) == 0 {
			continue
		}
		if w == nil {
			var err error
			if w, err = db.discoverer(ctx, tx); err != nil {
				return err
			}
			defer w.close()
		}
		added, err := w.write(ctx, r.Found.URLs)
		if err != nil {
			return fmt.Errorf("record %d URLs found on URL %d's page: %w", len(r.Found.URLs), r.URLID, err)
		}
		r.Found.Added = added
	}
	return nil
}

// foundRecorded follows recordFound's transaction: committed, its URLs are in the table at their
// level; rolled back, none was added.
func (db *DB) foundRecorded(recs []FetchRecord, err error) {
	for _, r := range recs {
		switch {
		case r.Found == nil:
		case err != nil:
			r.Found.Added = nil
		default:
			db.known.noteAll(r.Found.URLs)
		}
	}
}

// discoverer writes discovered URLs within one transaction, Discover's or a fetch's.
type discoverer struct {
	tx         *sql.Tx
	ins, raise *sql.Stmt
	now        string
}

func (db *DB) discoverer(ctx context.Context, tx *sql.Tx) (*discoverer, error) {
	ins, err := db.txPrepared(ctx, tx, `INSERT INTO urls (url, host, level, due_tick, fr_max, parent_id, root_id, added_at)
			VALUES (?, ?, ?, 0, ?, ?, ?, ?) ON CONFLICT (url) DO NOTHING`)
	if err != nil {
		return nil, err
	}
	raise, err := db.txPrepared(ctx, tx, `UPDATE urls SET level = ? WHERE url = ? AND level < ?`)
	if err != nil {
		ins.Close()
		return nil, err
	}
	return &discoverer{tx: tx, ins: ins, raise: raise, now: formatTime(db.now())}, nil
}

func (w *discoverer) close() {
	w.ins.Close()
	w.raise.Close()
}

// write inserts the URLs of found that are new (held by their Hold rule, if any) and raises the
// level of the known ones found at a higher level; it returns those it inserted.
func (w *discoverer) write(ctx context.Context, found []NewURL) ([]NewURL, error) {
	var added []NewURL
	for _, u := range found {
		ctx, err := rowCtx(ctx)
		if err != nil {
			return nil, err
		}
		res, err := w.ins.ExecContext(ctx, u.URL, u.Host, u.Level, u.FrMax, nullInt(u.ParentID), nullInt(u.RootID), w.now)
		if err != nil {
			return nil, err
		}
		if n, _ := res.RowsAffected(); n == 1 {
			if u.Hold != 0 {
				id, err := res.LastInsertId()
				if err != nil {
					return nil, err
				}
				if _, err := w.tx.ExecContext(ctx, `INSERT INTO trap_holds (url_id, rule_id) VALUES (?, ?)`, id, u.Hold); err != nil {
					return nil, err
				}
			}
			added = append(added, u)
			continue
		}
		if _, err := w.raise.ExecContext(ctx, u.Level, u.URL, u.Level); err != nil {
			return nil, err
		}
	}
	return added, nil
}

// ToDiscover returns the URLs of found that Discover has to write: those not in the table, and
// those whose level it would raise. Most links of a page are known already (a site's navigation is
// on every page), and without this read every page took SQLite's one write lock to change
// nothing, queueing behind the group commit with a connection held. Nothing takes a URL out of the
// table or lowers its level, so a URL known here at its level needs no write. The URLs this
// handle has seen at their level (db.known) are not even looked up.
func (db *DB) ToDiscover(ctx context.Context, found []NewURL) ([]NewURL, error) {
	found = db.known.unknown(found)
	if len(found) == 0 {
		return nil, nil
	}
	// One short read: the driver's watch over a cancellable context (a goroutine per statement)
	// would cost more than the query (see rowCtx).
	ctx, err := rowCtx(ctx)
	if err != nil {
		return nil, err
	}
	if len(found) == 1 {
		// Most pages of a known site bring one link or none that this handle has not seen: a
		// lookup by the URL index costs a third of building and reading a JSON list.
		return db.toDiscoverOne(ctx, found[0])
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
		db.known.note(u, level)
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

// toDiscoverOne is ToDiscover for one URL.
func (db *DB) toDiscoverOne(ctx context.Context, u NewURL) ([]NewURL, error) {
	st, err := db.prepared(ctx, `SELECT level FROM urls WHERE url = ?`)
	if err != nil {
		return nil, fmt.Errorf("look up discovered URL %s: %w", u.URL, err)
	}
	var level int
	switch err := st.QueryRowContext(ctx, u.URL).Scan(&level); {
	case errors.Is(err, sql.ErrNoRows):
		return []NewURL{u}, nil
	case err != nil:
		return nil, fmt.Errorf("look up discovered URL %s: %w", u.URL, err)
	}
	db.known.note(u.URL, level)
	if level < u.Level {
		return []NewURL{u}, nil
	}
	return nil, nil
}

// SetDue makes the pages in due due now (fr = 0) and those in notDue wait one more run (fr = 1),
// overriding the countdown for pages scheduled by release days.
func (db *DB) SetDue(ctx context.Context, due, notDue []int64) error {
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		for _, set := range []struct {
			ids []int64
			fr  int
		}{{due, 0}, {notDue, 1}} {
			st, err := tx.PrepareContext(ctx, `UPDATE urls SET due_tick = `+dueIn("?1")+`, hint_deferred = 0 WHERE id = ?2 AND `+frOf("due_tick")+` <> ?1`)
			if err != nil {
				return err
			}
			for _, id := range set.ids {
				if _, err := st.ExecContext(ctx, set.fr, id); err != nil {
					st.Close()
					return err
				}
			}
			st.Close()
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("set pages due by release day: %w", err)
	}
	return nil
}

// DueSplit counts the due URLs that were never fetched and those fetched before.
func (db *DB) DueSplit(ctx context.Context) (newDue, known int, err error) {
	err = db.sql.QueryRowContext(ctx, `SELECT count(*) FILTER (WHERE date IS NULL), count(*) FILTER (WHERE date IS NOT NULL)
		FROM due d CROSS JOIN urls ON urls.id = d.id`).Scan(&newDue, &known)
	if err != nil {
		return 0, 0, fmt.Errorf("count due new and known URLs: %w", err)
	}
	return newDue, known, nil
}
