package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Capture is the head of one HTTP exchange and where its WARC record is (table captures).
type Capture struct {
	Request, Response []byte // heads as sent and as received
	IP                string
	PayloadDigest     string // "sha1:…" of the body as kept; "" when no body was read
	WARCID            string // WARC-Record-ID of the fetch's response or revisit record; "" if none
	WARCType          string // "response" or "revisit"
}

// capture stores c for the fetch just inserted by the statements' transaction.
func (st *fetchStmts) capture(ctx context.Context, c *Capture) error {
	if c == nil {
		return nil
	}
	_, err := st.stmt[3].ExecContext(ctx, c.Request, c.Response, nullString(c.IP), nullString(c.PayloadDigest),
		nullString(c.WARCID), nullString(c.WARCType))
	return err
}

// PriorCapture is the latest WARC response record of a URL, which a revisit refers to.
type PriorCapture struct {
	URL           string
	FetchedAt     time.Time
	PayloadDigest string
	WARCID        string
}

// LastResponse returns the URL's latest fetch whose WARC record is a full response, or an error
// wrapping ErrNotFound when it has none.
func (db *DB) LastResponse(ctx context.Context, urlID int64) (*PriorCapture, error) {
	var p PriorCapture
	var at string
	var digest sql.NullString
	st, err := db.prepared(ctx, `SELECT u.url, f.fetched_at, c.payload_digest, c.warc_id
		FROM fetches f JOIN captures c ON c.fetch_id = f.id JOIN urls u ON u.id = f.url_id
		WHERE f.url_id = ? AND c.warc_type = 'response' ORDER BY f.id DESC LIMIT 1`)
	if err == nil {
		err = st.QueryRowContext(ctx, urlID).Scan(&p.URL, &at, &digest, &p.WARCID)
	}
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("last WARC response of URL %d: %w", urlID, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("last WARC response of URL %d: %w", urlID, err)
	}
	p.FetchedAt = parseTime(sql.NullString{String: at, Valid: true})
	p.PayloadDigest = digest.String
	return &p, nil
}

// RunsSince returns the runs that started at or after since (every run for a zero since), oldest first.
func (db *DB) RunsSince(ctx context.Context, since time.Time) ([]Run, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT `+RunColumns+` FROM runs WHERE started_at >= ? ORDER BY id`, formatTime(since))
	if err != nil {
		return nil, fmt.Errorf("runs since %s: %w", since, err)
	}
	defer rows.Close()
	var out []Run
	for rows.Next() {
		r, err := ScanRun(rows)
		if err != nil {
			return nil, fmt.Errorf("runs since %s: %w", since, err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// StoredVersion is a version stored by a run, with the head of the exchange that brought it when
// strata kept it.
type StoredVersion struct {
	URL       string
	FetchedAt time.Time
	Path      string
	Capture   *Capture // nil for a version stored before strata kept heads
}

// EachStoredVersion calls fn for every unpruned version the run stored, in fetch order.
func (db *DB) EachStoredVersion(ctx context.Context, run int64, fn func(StoredVersion) error) error {
	rows, err := db.sql.QueryContext(ctx, `SELECT u.url, f.fetched_at, f.archive_path, c.fetch_id IS NOT NULL,
		c.request, c.response, coalesce(c.ip, ''), coalesce(c.payload_digest, '')
		FROM fetches f JOIN urls u ON u.id = f.url_id LEFT JOIN captures c ON c.fetch_id = f.id
		WHERE f.run_id = ? AND f.archive_path IS NOT NULL AND f.pruned_at IS NULL ORDER BY f.id`, run)
	if err != nil {
		return fmt.Errorf("versions of run %d: %w", run, err)
	}
	defer rows.Close()
	for rows.Next() {
		var v StoredVersion
		var at string
		var has bool
		var c Capture
		if err := rows.Scan(&v.URL, &at, &v.Path, &has, &c.Request, &c.Response, &c.IP, &c.PayloadDigest); err != nil {
			return fmt.Errorf("versions of run %d: %w", run, err)
		}
		v.FetchedAt = parseTime(sql.NullString{String: at, Valid: true})
		if has && len(c.Response) > 0 {
			v.Capture = &c
		}
		if err := fn(v); err != nil {
			return err
		}
	}
	return rows.Err()
}
