package pgstore

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/strata-crawler/strata/internal/store"
)

// RecordFetch stores one fetch and updates its URL in one transaction: store.DB.RecordFetch.
func (db *DB) RecordFetch(ctx context.Context, r store.FetchRecord) error {
	recs := []store.FetchRecord{r}
	if err := db.rows(ctx, db.recordTx(ctx, recs)); err != nil {
		clearFound(recs)
		return fmt.Errorf("record fetch of URL %d: %w", r.URLID, err)
	}
	return nil
}

// RecordFetches stores many fetches in one transaction; if one fails, none is stored.
func (db *DB) RecordFetches(ctx context.Context, recs []store.FetchRecord) error {
	if err := db.rows(ctx, db.recordTx(ctx, recs)); err != nil {
		clearFound(recs)
		return fmt.Errorf("record %d fetches: %w", len(recs), err)
	}
	return nil
}

// recordTx is the transaction that stores recs: the URLs they found, then the fetches.
func (db *DB) recordTx(ctx context.Context, recs []store.FetchRecord) func(pgx.Tx) error {
	now := formatTime(db.now())
	return func(tx pgx.Tx) error {
		if err := recordFound(ctx, tx, recs, now); err != nil {
			return err
		}
		return record(ctx, tx, recs, db.worker)
	}
}

// decay is the SQL for a stored count of table's before the new observation is added to it:
// halved when the window's total, the new observation included, reaches window (integer
// division, as in SQLite).
func decay(table, count, total string, window int) string {
	return fmt.Sprintf("(CASE WHEN %s >= %d THEN %s.%s / 2 ELSE %s.%s END)", total, window, table, count, table, count)
}

// hostAccess records a fetch of an origin: its last access, and whether its Last-Modified agreed
// with what strata saw.
var hostAccess = `INSERT INTO hosts (origin, domain, last_access_at, dates_agreed, dates_contradicted) VALUES ($1, $2, $3, $4, $5)
	ON CONFLICT (origin) DO UPDATE SET last_access_at = greatest(coalesce(hosts.last_access_at, ''), excluded.last_access_at),
	dates_agreed = ` + decay("hosts", "dates_agreed", datesTotal, store.DateObservations) + ` + excluded.dates_agreed,
	dates_contradicted = ` + decay("hosts", "dates_contradicted", datesTotal, store.DateObservations) + ` + excluded.dates_contradicted`

// datesTotal is the SQL for an origin's date counts, the new fetch's included.
const datesTotal = `hosts.dates_agreed + hosts.dates_contradicted + excluded.dates_agreed + excluded.dates_contradicted`

// record stores recs within tx, as the SQLite store's fetchStmts.record does one by one. Other
// writers run alongside (rows), so it locks before it writes: the URL rows first, all of them in
// id order, since each record reads its row's recent records and writes them back, and two batches
// holding the same pages in different orders would otherwise deadlock; then the origins' rows of
// hosts, in origin order, at the end.
func record(ctx context.Context, tx pgx.Tx, recs []store.FetchRecord, worker string) error {
	var tick int64
	if len(recs) > 1 {
		ids := make([]int64, len(recs))
		for i, r := range recs {
			ids[i] = r.URLID
		}
		if _, err := tx.Exec(ctx, `SELECT id FROM urls WHERE id = ANY($1::bigint[]) ORDER BY id FOR UPDATE`, ids); err != nil {
			return err
		}
	}
	if err := tx.QueryRow(ctx, `SELECT tick FROM countdown`).Scan(&tick); err != nil {
		return err
	}
	for _, r := range recs {
		if err := recordOne(ctx, tx, tick, r, worker); err != nil {
			return fmt.Errorf("URL %d: %w", r.URLID, err)
		}
	}
	// An origin's counts depend on the order of its own fetches only: sorted stably, each origin
	// sees its records in the batch's order.
	byOrigin := slices.Clone(recs)
	slices.SortStableFunc(byOrigin, func(a, b store.FetchRecord) int { return strings.Compare(a.Origin, b.Origin) })
	for _, r := range byOrigin {
		if r.Origin == "" {
			continue
		}
		if _, err := tx.Exec(ctx, hostAccess, r.Origin, r.Domain, formatTime(r.FetchedAt.Add(r.Duration)),
			btoi(r.DateCheck > 0), btoi(r.DateCheck < 0)); err != nil {
			return fmt.Errorf("URL %d: %w", r.URLID, err)
		}
	}
	return nil
}

func recordOne(ctx context.Context, tx pgx.Tx, tick int64, r store.FetchRecord, worker string) error {
	// The record as RunHistories reads it from fetches, appended in the same transaction.
	var recent []byte
	if err := tx.QueryRow(ctx, `SELECT recent FROM urls WHERE id = $1 FOR UPDATE`, r.URLID).Scan(&recent); err != nil && !notFound(err) {
		return err
	}
	usable := r.Status == 200 || r.NotModified
	dated := r.Dated && usable
	recent, err := store.AppendRecent(recent, store.Record{Run: r.RunID, Changed: r.Changed, Failed: !usable, Dated: dated, Age: r.DatedAge})
	if err != nil {
		return fmt.Errorf("recent records: %w", err)
	}
	var magnitude, distance, age any
	if r.ContentHash != "" && r.Magnitude >= 0 {
		magnitude, distance = r.Magnitude, r.Distance
	}
	if dated {
		age = int64(min(max(r.DatedAge, 0), store.MaxRecentAge) / time.Second)
	}
	var fetchID int64
	if err := tx.QueryRow(ctx, `INSERT INTO fetches (url_id, run_id, fetched_at, status, size, content_hash,
			changed, not_modified, archive_path, error, duration_ms, magnitude, distance, text_mode, lm_age)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15) RETURNING id`,
		r.URLID, idOrNull(r.RunID), formatTime(r.FetchedAt), r.Status, r.Size, textOrNull(r.ContentHash),
		btoi(r.Changed), btoi(r.NotModified), textOrNull(r.ArchivePath), textOrNull(r.Error), r.Duration.Milliseconds(),
		magnitude, distance, textOrNull(r.TextMode), age).Scan(&fetchID); err != nil {
		return err
	}
	if worker != "" && r.ArchivePath != "" {
		if _, err := tx.Exec(ctx, `INSERT INTO fleet_versions (fetch_id, worker) VALUES ($1, $2)`, fetchID, worker); err != nil {
			return err
		}
	}
	if c := r.Capture; c != nil {
		if _, err := tx.Exec(ctx, `INSERT INTO captures (fetch_id, request, response, ip, payload_digest, warc_id, warc_type)
			VALUES ($1, $2, $3, $4, $5, $6, $7)`, fetchID, c.Request, c.Response, textOrNull(c.IP), textOrNull(c.PayloadDigest),
			textOrNull(c.WARCID), textOrNull(c.WARCType)); err != nil {
			return err
		}
	}
	var due int64 // fr 0: due now
	if r.NextFr > 0 {
		due = tick + int64(r.NextFr)
	}
	tag, err := tx.Exec(ctx, `UPDATE urls SET due_tick = $1, date = $2, last_status = $3, skips = 0, prio = 0, hint_deferred = 0,
			site_date = coalesce($4, site_date),
			size = CASE WHEN $5::boolean THEN $6 ELSE size END,
			content_type = coalesce($7, content_type),
			content_hash = coalesce($8, content_hash),
			digest = coalesce($9, digest),
			text_mode = CASE WHEN $5::boolean THEN $10 ELSE text_mode END,
			etag = $11, last_modified = $12,
			state = coalesce($13, state),
			recent = $14,
			dates_wrong = greatest(dates_wrong, $15)
			WHERE id = $16`,
		due, formatTime(r.FetchedAt), r.Status, timeOrNull(r.SiteDate),
		r.ContentHash != "", r.Size,
		textOrNull(r.ContentType), textOrNull(r.ContentHash), r.Digest,
		textOrNull(r.TextMode),
		textOrNull(r.ETag), textOrNull(r.LastModified),
		textOrNull(r.State), recent, btoi(r.DateCheck < 0), r.URLID)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return store.ErrNotFound
	}
	return nil
}

// RecentStatuses returns the HTTP statuses of a URL's last n fetches, newest first.
func (db *DB) RecentStatuses(ctx context.Context, urlID int64, n int) ([]int, error) {
	rows, err := db.pool.Query(ctx, `SELECT status FROM fetches WHERE url_id = $1 ORDER BY id DESC LIMIT $2`, urlID, n)
	if err != nil {
		return nil, fmt.Errorf("recent statuses of URL %d: %w", urlID, err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[int])
	if err != nil {
		return nil, fmt.Errorf("recent statuses of URL %d: %w", urlID, err)
	}
	return out, nil
}

// SetState changes a URL's state without a fetch (robots.txt forbids it, a filter rejects it).
func (db *DB) SetState(ctx context.Context, urlID int64, state string) error {
	if _, err := db.execRows(ctx, `UPDATE urls SET state = $1 WHERE id = $2`, state, urlID); err != nil {
		return fmt.Errorf("set state of URL %d to %s: %w", urlID, state, err)
	}
	return nil
}
