package pgstore

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/strata-crawler/strata/internal/store"
)

// Model returns the body of the model stored under name, or an error wrapping store.ErrNotFound.
func (db *DB) Model(ctx context.Context, name string) ([]byte, error) {
	var body string
	err := db.pool.QueryRow(ctx, `SELECT body FROM models WHERE name = $1`, name).Scan(&body)
	if notFound(err) {
		return nil, fmt.Errorf("model %s: %w", name, store.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("model %s: %w", name, err)
	}
	return []byte(body), nil
}

// SaveModel stores a model's body under name, replacing the previous one.
func (db *DB) SaveModel(ctx context.Context, name string, body []byte) error {
	_, err := db.exec(ctx, `INSERT INTO models (name, body, updated_at) VALUES ($1, $2, $3)
		ON CONFLICT (name) DO UPDATE SET body = excluded.body, updated_at = excluded.updated_at`,
		name, string(body), formatTime(db.now()))
	if err != nil {
		return fmt.Errorf("save model %s: %w", name, err)
	}
	return nil
}

// OriginDates returns the dates' record of every origin that dated anything, by
// scheme://host[:port].
func (db *DB) OriginDates(ctx context.Context) (map[string]store.Dates, error) {
	rows, err := db.pool.Query(ctx, `SELECT origin, dates_agreed, dates_contradicted FROM hosts
		WHERE dates_agreed > 0 OR dates_contradicted > 0`)
	if err != nil {
		return nil, fmt.Errorf("origins' dates: %w", err)
	}
	out := map[string]store.Dates{}
	var o string
	var d store.Dates
	if _, err := pgx.ForEachRow(rows, []any{&o, &d.Agreed, &d.Contradicted}, func() error {
		out[o] = d
		return nil
	}); err != nil {
		return nil, fmt.Errorf("origins' dates: %w", err)
	}
	return out, nil
}
