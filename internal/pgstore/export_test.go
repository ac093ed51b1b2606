package pgstore

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// SetWorkerClock replaces w's clock, for tests of lease expiry without waiting.
func SetWorkerClock(w *Worker, now func() time.Time) { w.now = now }

// Rows runs fn as the per-page writes run (rows: the write lock shared, retried on a deadlock).
func Rows(ctx context.Context, db *DB, fn func(pgx.Tx) error) error { return db.rows(ctx, fn) }

// Retries is how many transactions rows has run again on db.
func Retries(db *DB) int64 { return db.retries.Load() }
