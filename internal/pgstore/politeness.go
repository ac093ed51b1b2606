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

// HostGaps returns what politeness remembers of the hosts contacted after since: store.DB.HostGaps.
func (db *DB) HostGaps(ctx context.Context, since time.Time) ([]store.HostGap, error) {
	out := map[string]*store.HostGap{}
	get := func(host string) *store.HostGap {
		g, ok := out[host]
		if !ok {
			g = &store.HostGap{Host: host}
			out[host] = g
		}
		return g
	}
	s := formatTime(since)
	rows, err := db.pool.Query(ctx, `SELECT host, last_end_at, next_at, crawl_delay_ms, unreachable FROM politeness
		WHERE last_end_at > $1 OR next_at > $1 OR unreachable > 0`, s)
	if err != nil {
		return nil, fmt.Errorf("host gaps: %w", err)
	}
	var host string
	var end, next *string
	var delay int64
	var unreachable int
	if _, err := pgx.ForEachRow(rows, []any{&host, &end, &next, &delay, &unreachable}, func() error {
		g := get(host)
		g.LastEnd, g.Next = parseTime(end), parseTime(next)
		g.CrawlDelay, g.Unreachable = time.Duration(delay)*time.Millisecond, unreachable
		return nil
	}); err != nil {
		return nil, fmt.Errorf("host gaps: %w", err)
	}
	rows, err = db.pool.Query(ctx, `SELECT origin, greatest(coalesce(last_access_at, ''), coalesce(robots_fetched_at, '')),
		coalesce(crawl_delay_ms, 0) FROM hosts WHERE last_access_at > $1 OR robots_fetched_at > $1`, s)
	if err != nil {
		return nil, fmt.Errorf("host gaps: %w", err)
	}
	var origin string
	var at *string
	if _, err := pgx.ForEachRow(rows, []any{&origin, &at, &delay}, func() error {
		_, host, _ := strings.Cut(origin, "://")
		g := get(host)
		if t := parseTime(at); t.After(g.LastEnd) {
			g.LastEnd = t
		}
		g.CrawlDelay = max(g.CrawlDelay, time.Duration(delay)*time.Millisecond)
		return nil
	}); err != nil {
		return nil, fmt.Errorf("host gaps: %w", err)
	}
	list := make([]store.HostGap, 0, len(out))
	for _, g := range out {
		list = append(list, *g)
	}
	return list, nil
}

// SaveHostGaps stores the hosts' gaps in one transaction; a stored time never moves back, while the
// Crawl-delay is the one last seen.
func (db *DB) SaveHostGaps(ctx context.Context, gs []store.HostGap) error {
	if len(gs) == 0 {
		return nil
	}
	// In host order, so that two workers saving overlapping sets do not deadlock; the stored times
	// only move forward, so the order changes nothing else.
	gs = slices.Clone(gs)
	slices.SortStableFunc(gs, func(a, b store.HostGap) int { return strings.Compare(a.Host, b.Host) })
	err := db.rows(ctx, func(tx pgx.Tx) error {
		for _, g := range gs {
			if _, err := tx.Exec(ctx, `INSERT INTO politeness (host, last_end_at, next_at, crawl_delay_ms) VALUES ($1, $2, $3, $4)
			ON CONFLICT (host) DO UPDATE SET
				last_end_at = nullif(greatest(coalesce(politeness.last_end_at, ''), coalesce(excluded.last_end_at, '')), ''),
				next_at = nullif(greatest(coalesce(politeness.next_at, ''), coalesce(excluded.next_at, '')), ''),
				crawl_delay_ms = excluded.crawl_delay_ms`,
				g.Host, timeOrNull(g.LastEnd), timeOrNull(g.Next), g.CrawlDelay.Milliseconds()); err != nil {
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

// Unreachable records that host could not be reached in this run and backs its due URLs off:
// store.DB.Unreachable.
func (db *DB) Unreachable(ctx context.Context, host string, maxRuns int) (runs, moved int, err error) {
	// The count is incremented in the statement that reads it back, and the host's due rows are
	// locked by the UPDATE that moves them.
	err = db.rows(ctx, func(tx pgx.Tx) error {
		var n int
		if err := tx.QueryRow(ctx, `INSERT INTO politeness (host, unreachable) VALUES ($1, 1)
			ON CONFLICT (host) DO UPDATE SET unreachable = politeness.unreachable + 1 RETURNING unreachable`, host).Scan(&n); err != nil {
			return err
		}
		runs = max(1, maxRuns)
		if n <= 30 && 1<<(n-1) < runs {
			runs = 1 << (n - 1)
		}
		tag, err := tx.Exec(ctx, `UPDATE urls SET due_tick = `+tickNow+` + $1 WHERE id IN (SELECT id FROM due WHERE host = $2)`, runs, host)
		moved = int(tag.RowsAffected())
		return err
	})
	if err != nil {
		return 0, 0, fmt.Errorf("back off unreachable host %s: %w", host, err)
	}
	return runs, moved, nil
}

// Reachable records that host answered: the next failure backs off from one run again.
func (db *DB) Reachable(ctx context.Context, host string) error {
	if _, err := db.execRows(ctx, `UPDATE politeness SET unreachable = 0 WHERE host = $1 AND unreachable > 0`, host); err != nil {
		return fmt.Errorf("host %s reachable: %w", host, err)
	}
	return nil
}
