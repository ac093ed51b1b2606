package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// Model returns the body of the model stored under name, or an error wrapping ErrNotFound.
func (db *DB) Model(ctx context.Context, name string) ([]byte, error) {
	var body string
	err := db.sql.QueryRowContext(ctx, `SELECT body FROM models WHERE name = ?`, name).Scan(&body)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("model %s: %w", name, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("model %s: %w", name, err)
	}
	return []byte(body), nil
}

// SaveModel stores a model's body under name, replacing the previous one.
func (db *DB) SaveModel(ctx context.Context, name string, body []byte) error {
	_, err := db.sql.ExecContext(ctx, `INSERT INTO models (name, body, updated_at) VALUES (?, ?, ?)
		ON CONFLICT (name) DO UPDATE SET body = excluded.body, updated_at = excluded.updated_at`,
		name, string(body), formatTime(db.now()))
	if err != nil {
		return fmt.Errorf("save model %s: %w", name, err)
	}
	return nil
}
