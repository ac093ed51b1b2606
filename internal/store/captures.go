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
	_, err := st.stmt[4].ExecContext(ctx, c.Request, c.Response, nullString(c.IP), nullString(c.PayloadDigest),
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
	err := db.sql.QueryRowContext(ctx, `SELECT u.url, f.fetched_at, c.payload_digest, c.warc_id
		FROM fetches f JOIN captures c ON c.fetch_id = f.id JOIN urls u ON u.id = f.url_id
		WHERE f.url_id = ? AND c.warc_type = 'response' ORDER BY f.id DESC LIMIT 1`, urlID).Scan(&p.URL, &at, &digest, &p.WARCID)
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
