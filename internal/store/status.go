package store

import (
	"context"
	"fmt"
)

// States lists the URL states in the order reports show them.
var States = []string{"active", "gone", "blocked", "filtered", "removed"}

// Status summarises the store for `strata status`.
type Status struct {
	URLs           map[string]int // by state
	Seeds          int
	DueNextRun     int // active URLs that the next run's countdown makes due
	Hosts          int
	LastRunFetches int
	Runs           []Run // the most recent first
}

// Status reads the summary; recent bounds how many runs it lists.
func (db *DB) Status(ctx context.Context, recent int) (*Status, error) {
	st := &Status{URLs: map[string]int{}}
	for _, s := range States {
		st.URLs[s] = 0
	}
	rows, err := db.sql.QueryContext(ctx, `SELECT state, count(*) FROM urls GROUP BY state`)
	if err != nil {
		return nil, fmt.Errorf("status: %w", err)
	}
	for rows.Next() {
		var s string
		var n int
		if err := rows.Scan(&s, &n); err != nil {
			rows.Close()
			return nil, fmt.Errorf("status: %w", err)
		}
		st.URLs[s] = n
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("status: %w", err)
	}
	// The next run first decrements every fr > 0, so pages with fr <= 1 are due then, and so is
	// every page whose last answer was 404 or whose seed asks for a snapshot (see Countdown).
	err = db.sql.QueryRowContext(ctx, `SELECT
		(SELECT count(*) FROM urls WHERE state = 'active' AND due_tick <= `+tickNow+` + 1 AND `+notHeld+`) +
		(SELECT count(*) FROM urls WHERE state = 'active' AND due_tick > `+tickNow+` + 1
			AND (last_status IS 404 OR `+snapshotDue+`) AND `+notHeld+`),
		(SELECT count(DISTINCT host) FROM urls WHERE state = 'active'),
		(SELECT count(*) FROM urls WHERE is_seed = 1),
		(SELECT count(*) FROM fetches WHERE run_id = (SELECT max(id) FROM runs))`).
		Scan(&st.DueNextRun, &st.Hosts, &st.Seeds, &st.LastRunFetches)
	if err != nil {
		return nil, fmt.Errorf("status: %w", err)
	}
	if st.Runs, err = db.RecentRuns(ctx, recent); err != nil {
		return nil, err
	}
	return st, nil
}
