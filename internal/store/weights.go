package store

import (
	"context"
	"fmt"
)

// weightClassSQL puts a weight into half-octave classes: weights within a factor of √2 share one,
// so the planner gets a handful of classes per bucket instead of one per distinct weight.
const weightClassSQL = `CAST(round(log2(weight) * 2) AS INTEGER)`

// UpdateWeights sets every active page's weight from what an archive knows of its importance, in
// the spirit of Wolf et al.'s embarrassment weights and Xu et al.'s access weights:
//
//	weight = priority of its seed × (1 + log2(1 + pages linking to it))
//
// A page nobody links to weighs its seed's priority; one with 1,000 in-links about 11 times that.
// Only rows whose weight changes are written. It returns how many were.
func (db *DB) UpdateWeights(ctx context.Context) (int, error) {
	res, err := db.sql.ExecContext(ctx, `WITH inlinks AS (
			SELECT to_id AS id, count(DISTINCT from_id) AS n FROM links WHERE to_id IS NOT NULL GROUP BY to_id),
		w AS (
			SELECT u.id, coalesce(r.priority, u.priority) * (1 + log2(1 + coalesce(i.n, 0))) AS weight
			FROM urls u LEFT JOIN urls r ON r.id = u.root_id LEFT JOIN inlinks i ON i.id = u.id
			WHERE u.state = 'active')
		UPDATE urls SET weight = w.weight FROM w WHERE w.id = urls.id AND abs(urls.weight - w.weight) > 1e-9`)
	if err != nil {
		return 0, fmt.Errorf("update page weights: %w", err)
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}
