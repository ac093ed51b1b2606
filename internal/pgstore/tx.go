package pgstore

import (
	"context"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"

	"github.com/strata-crawler/strata/internal/store"
)

// writeLock is the advisory lock every write transaction takes first ('strata w' in ASCII). SQLite
// lets one writer at a time into the database, and the store's methods are written for that: a
// read-then-write (Enqueue, AddFeeds, HoldURLs) and the due table's triggers assume no other writer
// between their statements. Taking one lock keeps those semantics without SERIALIZABLE's retries,
// and two writers that would update the same rows in different orders wait instead of deadlocking.
// Readers do not take it. Workers sharing the frontier on many machines (issue 22, item 3) replace
// it with leases on domains.
const writeLock = 0x7374726174612077

// write runs fn in one transaction holding writeLock, committing if it returns nil.
func (db *DB) write(ctx context.Context, fn func(pgx.Tx) error) error {
	tx, err := db.pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", int64(writeLock)); err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// exec runs one writing statement under writeLock and returns how many rows it touched.
func (db *DB) exec(ctx context.Context, query string, args ...any) (int64, error) {
	var n int64
	err := db.write(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, query, args...)
		n = tag.RowsAffected()
		return err
	})
	return n, err
}

// notFound reports whether err is a query's "no rows".
func notFound(err error) bool { return errors.Is(err, pgx.ErrNoRows) }

func formatTime(t time.Time) string { return t.UTC().Format(store.TimeFormat) }

// parseTime reads a stored time; NULL or a malformed one is the zero time, as in the SQLite store.
func parseTime(s *string) time.Time {
	if s == nil {
		return time.Time{}
	}
	t, err := time.Parse(store.TimeFormat, *s)
	if err != nil {
		return time.Time{}
	}
	return t
}

// timeOrNull is t formatted, or NULL for the zero time.
func timeOrNull(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return formatTime(t)
}

// textOrNull is s, or NULL for "".
func textOrNull(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// idOrNull is id, or NULL for 0.
func idOrNull(id int64) any {
	if id == 0 {
		return nil
	}
	return id
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// hostCounts runs a query of (host, count) rows into a map.
func (db *DB) hostCounts(ctx context.Context, op, query string, args ...any) (map[string]int, error) {
	rows, err := db.pool.Query(ctx, query, args...)
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

// strings collects a query's single text column.
func collectStrings(rows pgx.Rows) ([]string, error) {
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// prefixEnd returns the first valid UTF-8 string after every string that starts with p, if there
// is one. The SQLite store increments p's last byte, which can make invalid UTF-8, and PostgreSQL
// refuses such text; with COLLATE "C" text compares as bytes, which for UTF-8 is code point order,
// so incrementing the last code point gives the same bound.
func prefixEnd(p string) (string, bool) {
	rs := []rune(p)
	for i := len(rs) - 1; i >= 0; i-- {
		r := rs[i] + 1
		if r >= 0xd800 && r <= 0xdfff {
			r = 0xe000
		}
		if r <= utf8.MaxRune {
			rs[i] = r
			return string(rs[:i+1]), true
		}
	}
	return "", false
}
