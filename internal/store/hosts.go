package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Robots is the cached robots.txt of one origin.
type Robots struct {
	Origin     string // scheme://host[:port]
	Domain     string // politeness key
	Status     int    // HTTP status of the robots.txt fetch; 0 = unreachable
	Body       []byte
	FetchedAt  time.Time
	ExpiresAt  time.Time // the cache is not used after this; zero = do not reuse
	CrawlDelay time.Duration
	// Request and Response are the exchange's heads, as sent and as received; nil when none.
	Request, Response []byte
}

// RobotsCache returns the cached robots.txt of origin, or an error wrapping ErrNotFound.
func (db *DB) RobotsCache(ctx context.Context, origin string) (*Robots, error) {
	r := Robots{Origin: origin}
	var status sql.NullInt64
	var fetched, expires sql.NullString
	var delay sql.NullInt64
	err := db.sql.QueryRowContext(ctx, `SELECT domain, robots_status, robots_body, robots_fetched_at, robots_expires_at,
		crawl_delay_ms FROM hosts WHERE origin = ?`, origin).Scan(&r.Domain, &status, &r.Body, &fetched, &expires, &delay)
	if errors.Is(err, sql.ErrNoRows) || (err == nil && !status.Valid) {
		return nil, fmt.Errorf("robots.txt of %s: %w", origin, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("robots.txt of %s: %w", origin, err)
	}
	r.Status = int(status.Int64)
	r.FetchedAt, r.ExpiresAt = parseTime(fetched), parseTime(expires)
	r.CrawlDelay = time.Duration(delay.Int64) * time.Millisecond
	return &r, nil
}

// SaveRobots stores the robots.txt of an origin.
func (db *DB) SaveRobots(ctx context.Context, r Robots) error {
	var expires sql.NullString
	if !r.ExpiresAt.IsZero() {
		expires = sql.NullString{String: formatTime(r.ExpiresAt), Valid: true}
	}
	_, err := db.sql.ExecContext(ctx, `INSERT INTO hosts (origin, domain, robots_status, robots_body, robots_fetched_at,
		robots_expires_at, crawl_delay_ms, robots_request, robots_response) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (origin) DO UPDATE SET domain = excluded.domain, robots_status = excluded.robots_status,
		robots_body = excluded.robots_body, robots_fetched_at = excluded.robots_fetched_at,
		robots_expires_at = excluded.robots_expires_at, crawl_delay_ms = excluded.crawl_delay_ms,
		robots_request = excluded.robots_request, robots_response = excluded.robots_response`,
		r.Origin, r.Domain, r.Status, r.Body, formatTime(r.FetchedAt), expires, r.CrawlDelay.Milliseconds(), r.Request, r.Response)
	if err != nil {
		return fmt.Errorf("save robots.txt of %s: %w", r.Origin, err)
	}
	return nil
}

// TouchHost records the last time strata sent a request to origin.
func (db *DB) TouchHost(ctx context.Context, origin, domain string, at time.Time) error {
	_, err := db.sql.ExecContext(ctx, `INSERT INTO hosts (origin, domain, last_access_at) VALUES (?, ?, ?)
		ON CONFLICT (origin) DO UPDATE SET last_access_at = excluded.last_access_at`, origin, domain, formatTime(at))
	if err != nil {
		return fmt.Errorf("touch host %s: %w", origin, err)
	}
	return nil
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
