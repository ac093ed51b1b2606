package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"time"

	"modernc.org/sqlite"
)

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

	// Found, when set, holds URLs found on the page, written in the fetch's transaction as Discover
	// writes them: the page costs no transaction of its own, and its links are in the table
	// exactly when its fetch is. RecordFetch and RecordFetches set Found.Added.
	Found *Found

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
		if err := st.record(ctx, r); err != nil {
			return err
		}
		return db.recordFound(ctx, tx, []FetchRecord{r})
	})
	db.foundRecorded([]FetchRecord{r}, err)
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
		return db.recordFound(ctx, tx, recs)
	})
	db.foundRecorded(recs, err)
	if err != nil {
		return fmt.Errorf("record %d fetches: %w", len(recs), err)
	}
	return nil
}

// recentAppend is the SQL function that appends one record to a urls.recent blob
// (appendRecent): recentAppend(recent, run, changed, failed, dated, age in ns). urlUpdate computes
// the row's new recent records in place with it, so a page costs no SELECT of the old ones, and
// the copy cannot drift from the table's: it is appended in the UPDATE that stores the fetch.
const recentAppend = "strata_recent_append"

func init() {
	sqlite.MustRegisterDeterministicScalarFunction(recentAppend, 6, func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
		var blob []byte
		switch v := args[0].(type) {
		case nil:
		case []byte:
			blob = v
		default:
			return nil, fmt.Errorf("%w: recent records of type %T", errRecent, v)
		}
		var n [5]int64
		for i, a := range args[1:] {
			v, ok := a.(int64)
			if !ok {
				return nil, fmt.Errorf("%s: argument %d is %T, not an integer", recentAppend, i+2, a)
			}
			n[i] = v
		}
		out, err := appendRecent(blob, Record{Run: n[0], Changed: n[1] != 0, Failed: n[2] != 0, Dated: n[3] != 0, Age: time.Duration(n[4])})
		if err != nil {
			return nil, fmt.Errorf("recent records: %w", err)
		}
		return out, nil
	})
}

// The statements of recordFetch, prepared once and bound to each transaction.
const (
	fetchInsert = `INSERT INTO fetches (url_id, run_id, fetched_at, status, size, content_hash,
			changed, not_modified, archive_path, error, duration_ms, magnitude, distance, text_mode, lm_age)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	urlUpdate = `UPDATE urls SET due_tick = ?, date = ?, last_status = ?, skips = 0, prio = 0, hint_deferred = 0,
			site_date = coalesce(?, site_date),
			size = CASE WHEN ? THEN ? ELSE size END,
			content_type = coalesce(?, content_type),
			content_hash = coalesce(?, content_hash),
			digest = coalesce(?, digest),
			text_mode = CASE WHEN ? THEN ? ELSE text_mode END,
			etag = ?, last_modified = ?,
			state = coalesce(?, state),
			recent = ` + recentAppend + `(recent, ?, ?, ?, ?, ?),
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
	stmt [4]*sql.Stmt
	tick int64
}

// fetchStmts returns the statements, prepared on the database once, bound to tx.
func (db *DB) fetchStmts(ctx context.Context, tx *sql.Tx) (*fetchStmts, error) {
	var st fetchStmts
	for i, q := range []string{fetchInsert, urlUpdate, hostAccess, captureInsert} {
		p, err := db.prepared(ctx, q)
		if err != nil {
			return nil, err
		}
		st.stmt[i] = tx.StmtContext(ctx, p)
	}
	// Prepared like the rest: parsing the query cost more than running it, once per batch.
	tick, err := db.txPrepared(ctx, tx, `SELECT tick FROM countdown`)
	if err != nil {
		return nil, err
	}
	if err := tick.QueryRowContext(ctx).Scan(&st.tick); err != nil {
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
	usable := r.Status == 200 || r.NotModified
	dated := r.Dated && usable
	var magnitude, distance, age any
	if r.ContentHash != "" && r.Magnitude >= 0 {
		magnitude, distance = r.Magnitude, r.Distance
	}
	if dated {
		age = int64(min(max(r.DatedAge, 0), maxRecentAge) / time.Second)
	}
	if _, err := st.stmt[0].ExecContext(ctx,
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
	res, err := st.stmt[1].ExecContext(ctx,
		due, formatTime(r.FetchedAt), r.Status, siteDate,
		r.ContentHash != "", r.Size,
		nullString(r.ContentType), nullString(r.ContentHash), r.Digest,
		r.ContentHash != "", nullString(r.TextMode),
		nullString(r.ETag), nullString(r.LastModified),
		nullString(r.State), r.RunID, r.Changed, !usable, dated, int64(r.DatedAge), r.DateCheck < 0, r.URLID)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrNotFound
	}
	if r.Origin == "" {
		return nil
	}
	_, err = st.stmt[2].ExecContext(ctx, r.Origin, r.Domain, formatTime(r.FetchedAt.Add(r.Duration)),
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
