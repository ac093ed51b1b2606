package pgstore

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/strata-crawler/strata/internal/store"
)

// RobotsCache returns the cached robots.txt of origin, or an error wrapping store.ErrNotFound.
func (db *DB) RobotsCache(ctx context.Context, origin string) (*store.Robots, error) {
	r := store.Robots{Origin: origin}
	var status, delay *int64
	var fetched, expires *string
	err := db.pool.QueryRow(ctx, `SELECT domain, robots_status, robots_body, robots_fetched_at, robots_expires_at,
		crawl_delay_ms FROM hosts WHERE origin = $1`, origin).Scan(&r.Domain, &status, &r.Body, &fetched, &expires, &delay)
	if notFound(err) || (err == nil && status == nil) {
		return nil, fmt.Errorf("robots.txt of %s: %w", origin, store.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("robots.txt of %s: %w", origin, err)
	}
	r.Status = int(*status)
	r.FetchedAt, r.ExpiresAt = parseTime(fetched), parseTime(expires)
	r.CrawlDelay = time.Duration(deref(delay)) * time.Millisecond
	return &r, nil
}

// SaveRobots stores the robots.txt of an origin.
func (db *DB) SaveRobots(ctx context.Context, r store.Robots) error {
	_, err := db.execRows(ctx, `INSERT INTO hosts (origin, domain, robots_status, robots_body, robots_fetched_at,
		robots_expires_at, crawl_delay_ms, robots_request, robots_response) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
		ON CONFLICT (origin) DO UPDATE SET domain = excluded.domain, robots_status = excluded.robots_status,
		robots_body = excluded.robots_body, robots_fetched_at = excluded.robots_fetched_at,
		robots_expires_at = excluded.robots_expires_at, crawl_delay_ms = excluded.crawl_delay_ms,
		robots_request = excluded.robots_request, robots_response = excluded.robots_response`,
		r.Origin, r.Domain, r.Status, r.Body, formatTime(r.FetchedAt), timeOrNull(r.ExpiresAt), r.CrawlDelay.Milliseconds(),
		r.Request, r.Response)
	if err != nil {
		return fmt.Errorf("save robots.txt of %s: %w", r.Origin, err)
	}
	return nil
}

// BlockedURLs lists host's URLs in state 'blocked'.
func (db *DB) BlockedURLs(ctx context.Context, host string) ([]store.BlockedURL, error) {
	rows, err := db.pool.Query(ctx, `SELECT id, url FROM urls WHERE host = $1 AND state = 'blocked'`, host)
	if err != nil {
		return nil, fmt.Errorf("blocked URLs of %s: %w", host, err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (store.BlockedURL, error) {
		var b store.BlockedURL
		return b, row.Scan(&b.ID, &b.URL)
	})
	if err != nil {
		return nil, fmt.Errorf("blocked URLs of %s: %w", host, err)
	}
	return out, nil
}
