package pgstore

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/strata-crawler/strata/internal/store"
)

// writeLock is the advisory lock ('strata w' in ASCII) that keeps the database's few whole-table
// invariants, in two modes. The per-page writes (recording a fetch, discovering links, the robots
// cache, politeness, the selective rule's hub state, hints, a trap rule and its holds) take it
// shared (rows): they do not wait for each other, only for the row locks they actually contend on.
// The operations that rewrite the frontier as a whole take it exclusive (write): the countdown
// advances the tick that every due computation and the due table's triggers read, recalc rewrites
// every page's interval, a run's start and end, the budget's ordering and the optimal plan read and
// write many hosts' rows at once, and the trap rules' pruning and release delete holds across
// domains. The links stage, once per run after the crawl, takes it exclusive too: nothing else
// writes then. With the exclusive holder alone in the database, those keep SQLite's one-writer
// semantics without SERIALIZABLE's retries. Fleet leases take neither: they lock their own rows
// (fleet.go).
const writeLock = 0x7374726174612077

// write runs fn in one transaction holding writeLock exclusively, committing if it returns nil:
// for an operation that needs no other writer in the database while it runs (see writeLock).
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

// exec runs one writing statement under write and returns how many rows it touched.
func (db *DB) exec(ctx context.Context, query string, args ...any) (int64, error) {
	var n int64
	err := db.write(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, query, args...)
		n = tag.RowsAffected()
		return err
	})
	return n, err
}

// rowAttempts bounds how often rows runs a transaction that PostgreSQL aborted as a deadlock or a
// serialization failure. The per-page writes lock their rows in a fixed order (URL rows by id or
// by URL, hosts by origin), so two of the same kind do not deadlock; two of different kinds can
// (a page's record and a hub's children made due, say), and one of them is then aborted whole and
// runs again against the winner's committed rows.
const rowAttempts = 5

// rows runs fn in one transaction holding writeLock shared, committing if it returns nil, and runs
// it again, up to rowAttempts times in all, if the server aborts it as a deadlock or serialization
// failure. fn must lock what it reads before it writes from it (FOR UPDATE, INSERT … ON CONFLICT,
// UPDATE … RETURNING): other per-page writers run alongside. fn may run more than once, so it must
// reset whatever it collects.
func (db *DB) rows(ctx context.Context, fn func(pgx.Tx) error) error {
	for attempt := 1; ; attempt++ {
		err := db.rowsOnce(ctx, fn)
		if err == nil || !retryable(err) || attempt == rowAttempts {
			return err
		}
		db.retries.Add(1)
		// A short, random wait, growing with each attempt, lets the winner commit first.
		wait := time.Duration(1+rand.IntN(4*attempt)) * time.Millisecond
		select {
		case <-ctx.Done():
			return errors.Join(err, ctx.Err())
		case <-time.After(wait):
		}
	}
}

func (db *DB) rowsOnce(ctx context.Context, fn func(pgx.Tx) error) error {
	tx, err := db.pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock_shared($1)", int64(writeLock)); err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// execRows runs one writing statement under rows and returns how many rows it touched.
func (db *DB) execRows(ctx context.Context, query string, args ...any) (int64, error) {
	var n int64
	err := db.rows(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, query, args...)
		n = tag.RowsAffected()
		return err
	})
	return n, err
}

// retryable reports whether err is the server's abort of a transaction that may succeed if run
// again: a serialization failure (40001) or a deadlock (40P01).
func retryable(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (pgErr.Code == "40001" || pgErr.Code == "40P01")
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

// forEachRow is pgx.ForEachRow for a walk that calls its caller's fn on each row: fn's error
// comes back as it is, for that caller to recognise, and the driver's errors wrapped with what.
func forEachRow(rows pgx.Rows, dest []any, what string, fn func() error) error {
	var fnErr error
	_, err := pgx.ForEachRow(rows, dest, func() error {
		fnErr = fn()
		return fnErr
	})
	switch {
	case fnErr != nil:
		return fnErr
	case err != nil:
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}
