package store

import (
	"context"
	"fmt"
)

// Reach counts, for a run's summary, the distinct URLs the run fetched (a record of their own in
// the run, whatever the outcome) and the URLs still due that it did not fetch — among only, when
// the run was an immediate fetch of those URLs. Both count URLs, not events: a URL fetched twice in
// one run (a Retry-After, a redirect loop) or made due twice counts once, so that the two numbers
// never exceed the URLs there are.
func (db *DB) Reach(ctx context.Context, run int64, only []int64) (fetched, left int, err error) {
	leftQuery := `SELECT count(*) FROM due d WHERE NOT EXISTS (SELECT 1 FROM fetches f WHERE f.url_id = d.id AND f.run_id = ?1)`
	args := []any{run}
	if len(only) > 0 {
		leftQuery = `SELECT count(*) FROM urls WHERE urls.id IN (` + placeholders(len(only)) + `) AND ` + isDue + `
			AND NOT EXISTS (SELECT 1 FROM fetches f WHERE f.url_id = urls.id AND f.run_id = ?1)`
		for _, id := range only {
			args = append(args, id)
		}
	}
	err = db.sql.QueryRowContext(ctx, `SELECT (SELECT count(DISTINCT url_id) FROM fetches WHERE run_id = ?1), (`+leftQuery+`)`, args...).
		Scan(&fetched, &left)
	if err != nil {
		return 0, 0, fmt.Errorf("run %d: count the URLs fetched and still due: %w", run, err)
	}
	return fetched, left, nil
}
