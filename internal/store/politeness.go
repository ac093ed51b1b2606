package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"
)

// HostGap is what politeness remembers of one host[:port] from one process to the next (table
// politeness).
type HostGap struct {
	Host        string
	LastEnd     time.Time     // end of the last response of the host's domain
	Next        time.Time     // earliest start of the domain's next request
	CrawlDelay  time.Duration // the domain's robots.txt Crawl-delay
	Unreachable int           // runs in a row in which the host could not be reached
}

// HostGaps returns what politeness remembers of the hosts contacted after since, those whose next
// request may not start before since, and those that could not be reached lately. Databases
// written before the politeness table still know, per origin, the end of the last page fetch, the
// last robots.txt fetch and its Crawl-delay: those are merged in, the latest of each kept.
func (db *DB) HostGaps(ctx context.Context, since time.Time) ([]HostGap, error) {
	out := map[string]*HostGap{}
	get := func(host string) *HostGap {
		g, ok := out[host]
		if !ok {
			g = &HostGap{Host: host}
			out[host] = g
		}
		return g
	}
	s := formatTime(since)
	rows, err := db.sql.QueryContext(ctx, `SELECT host, last_end_at, next_at, crawl_delay_ms, unreachable FROM politeness
		WHERE last_end_at > ?1 OR next_at > ?1 OR unreachable > 0`, s)
	if err != nil {
		return nil, fmt.Errorf("host gaps: %w", err)
	}
	for rows.Next() {
		var host string
		var end, next sql.NullString
		var delay int64
		var unreachable int
		if err := rows.Scan(&host, &end, &next, &delay, &unreachable); err != nil {
			rows.Close()
			return nil, fmt.Errorf("host gaps: %w", err)
		}
		g := get(host)
		g.LastEnd, g.Next = parseTime(end), parseTime(next)
		g.CrawlDelay, g.Unreachable = time.Duration(delay)*time.Millisecond, unreachable
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("host gaps: %w", err)
	}
	rows, err = db.sql.QueryContext(ctx, `SELECT origin, max(coalesce(last_access_at, ''), coalesce(robots_fetched_at, '')),
		coalesce(crawl_delay_ms, 0) FROM hosts WHERE last_access_at > ?1 OR robots_fetched_at > ?1`, s)
	if err != nil {
		return nil, fmt.Errorf("host gaps: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var origin string
		var at sql.NullString
		var delay int64
		if err := rows.Scan(&origin, &at, &delay); err != nil {
			return nil, fmt.Errorf("host gaps: %w", err)
		}
		_, host, _ := strings.Cut(origin, "://")
		g := get(host)
		if t := parseTime(at); t.After(g.LastEnd) {
			g.LastEnd = t
		}
		g.CrawlDelay = max(g.CrawlDelay, time.Duration(delay)*time.Millisecond)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("host gaps: %w", err)
	}
	list := make([]HostGap, 0, len(out))
	for _, g := range out {
		list = append(list, *g)
	}
	return list, nil
}

// SaveHostGaps stores the hosts' gaps in one transaction. A stored time never moves back (two
// processes' states merge to the later of each), while the Crawl-delay is the one last seen, so that
// a site that lowers its Crawl-delay is believed.
func (db *DB) SaveHostGaps(ctx context.Context, gs []HostGap) error {
	if len(gs) == 0 {
		return nil
	}
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		st, err := tx.PrepareContext(ctx, `INSERT INTO politeness (host, last_end_at, next_at, crawl_delay_ms) VALUES (?, ?, ?, ?)
			ON CONFLICT (host) DO UPDATE SET
				last_end_at = nullif(max(coalesce(last_end_at, ''), coalesce(excluded.last_end_at, '')), ''),
				next_at = nullif(max(coalesce(next_at, ''), coalesce(excluded.next_at, '')), ''),
				crawl_delay_ms = excluded.crawl_delay_ms`)
		if err != nil {
			return err
		}
		defer st.Close()
		for _, g := range gs {
			if _, err := st.ExecContext(ctx, g.Host, nullTime(g.LastEnd), nullTime(g.Next), g.CrawlDelay.Milliseconds()); err != nil {
				return fmt.Errorf("%s: %w", g.Host, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("save the gaps of %d hosts: %w", len(gs), err)
	}
	return nil
}

// Unreachable records that host could not be reached in this run (its robots.txt was unreachable,
// or a connection to it failed): the host's due URLs wait 2^(n−1) runs, at most maxRuns, n being
// the runs in a row it could not be reached — 1, 2, 4, 8… — instead of being tried again every run.
// It returns that wait and how many due URLs it moved.
func (db *DB) Unreachable(ctx context.Context, host string, maxRuns int) (runs, moved int, err error) {
	err = db.inTx(ctx, func(tx *sql.Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, `INSERT INTO politeness (host, unreachable) VALUES (?, 1)
			ON CONFLICT (host) DO UPDATE SET unreachable = unreachable + 1 RETURNING unreachable`, host).Scan(&n); err != nil {
			return err
		}
		runs = max(1, maxRuns)
		if n <= 30 && 1<<(n-1) < runs {
			runs = 1 << (n - 1)
		}
		res, err := tx.ExecContext(ctx, `UPDATE urls SET due_tick = `+tickNow+` + ? WHERE id IN (SELECT id FROM due WHERE host = ?)`, runs, host)
		if err != nil {
			return err
		}
		n64, _ := res.RowsAffected()
		moved = int(n64)
		return nil
	})
	if err != nil {
		return 0, 0, fmt.Errorf("back off unreachable host %s: %w", host, err)
	}
	return runs, moved, nil
}

// Reachable records that host answered: the next failure backs off from one run again.
func (db *DB) Reachable(ctx context.Context, host string) error {
	if _, err := db.sql.ExecContext(ctx, `UPDATE politeness SET unreachable = 0 WHERE host = ? AND unreachable > 0`, host); err != nil {
		return fmt.Errorf("host %s reachable: %w", host, err)
	}
	return nil
}

func nullTime(t time.Time) sql.NullString {
	if t.IsZero() {
		return sql.NullString{}
	}
	return sql.NullString{String: formatTime(t), Valid: true}
}
