package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// TrapEvent is one trap defence that fired.
type TrapEvent struct {
	RunID   int64
	At      time.Time
	Domain  string
	Kind    string // max_new_per_domain, max_urls_per_domain, pattern, duplicates
	Pattern string
	Detail  string
}

// RecordTrap stores a trap event.
func (db *DB) RecordTrap(ctx context.Context, e TrapEvent) error {
	_, err := db.sql.ExecContext(ctx, `INSERT INTO trap_events (run_id, at, domain, kind, pattern, detail) VALUES (?, ?, ?, ?, ?, ?)`,
		nullInt(e.RunID), formatTime(e.At), e.Domain, e.Kind, e.Pattern, e.Detail)
	if err != nil {
		return fmt.Errorf("record trap event for %s: %w", e.Domain, err)
	}
	return nil
}

// TrapEvents returns the trap events of the last runs runs, newest first.
func (db *DB) TrapEvents(ctx context.Context, runs int) ([]TrapEvent, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT coalesce(run_id, 0), at, domain, kind, pattern, detail FROM trap_events
		WHERE run_id IS NULL OR run_id > coalesce((SELECT max(id) FROM runs), 0) - ? ORDER BY id DESC`, runs)
	if err != nil {
		return nil, fmt.Errorf("trap events: %w", err)
	}
	defer rows.Close()
	var out []TrapEvent
	for rows.Next() {
		var e TrapEvent
		var at sql.NullString
		if err := rows.Scan(&e.RunID, &at, &e.Domain, &e.Kind, &e.Pattern, &e.Detail); err != nil {
			return nil, fmt.Errorf("trap events: %w", err)
		}
		e.At = parseTime(at)
		out = append(out, e)
	}
	return out, rows.Err()
}

// URLsPerHost counts the URLs in the table per host[:port], every state included.
func (db *DB) URLsPerHost(ctx context.Context) (map[string]int, error) {
	return db.hostCounts(ctx, "URLs per host", `SELECT host, count(*) FROM urls GROUP BY host`)
}

// URLRow is one URL for the trap report.
type URLRow struct {
	URL         string
	Host        string
	ContentHash string
	Added       time.Time
}

// EachURL calls fn for every URL in the table, streaming.
func (db *DB) EachURL(ctx context.Context, fn func(URLRow) error) error {
	rows, err := db.sql.QueryContext(ctx, `SELECT url, host, coalesce(content_hash, ''), added_at FROM urls`)
	if err != nil {
		return fmt.Errorf("list URLs: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var r URLRow
		var added sql.NullString
		if err := rows.Scan(&r.URL, &r.Host, &r.ContentHash, &added); err != nil {
			return fmt.Errorf("list URLs: %w", err)
		}
		r.Added = parseTime(added)
		if err := fn(r); err != nil {
			return err
		}
	}
	return rows.Err()
}
