package pgstore

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/strata-crawler/strata/internal/store"
)

// OpenBudget returns run's page budget account (fleet_budgets), opening it with total and newCap
// if no worker of the run has: the run's cap is the one its first worker was configured with, so
// that the workers agree on it whatever their own configurations say. It is idempotent, and reads
// the account as it stands.
func (w *Worker) OpenBudget(ctx context.Context, run int64, total, newCap int) (store.Account, error) {
	if _, err := w.db.pool.Exec(ctx, `INSERT INTO fleet_budgets (run_id, total, new_cap) VALUES ($1, $2, $3)
		ON CONFLICT (run_id) DO NOTHING`, run, total, newCap); err != nil {
		return store.Account{}, fmt.Errorf("run %d: open the fleet's budget: %w", run, err)
	}
	var a store.Account
	if err := w.db.pool.QueryRow(ctx, `SELECT total, new_cap, new_taken, known_taken FROM fleet_budgets WHERE run_id = $1`,
		run).Scan(&a.Total, &a.NewCap, &a.NewTaken, &a.KnownTaken); err != nil {
		return store.Account{}, fmt.Errorf("run %d: read the fleet's budget: %w", run, err)
	}
	return a, nil
}

// Spend reserves up to n of run's page fetches for this worker, for URLs of the kind isNew says,
// and returns how many it got (0: the run's budget is spent fleet-wide) and the account after. The
// row is locked for the read and the update, so two workers never reserve the same fetch.
func (w *Worker) Spend(ctx context.Context, run int64, isNew bool, n int) (granted int, a store.Account, err error) {
	err = pgx.BeginFunc(ctx, w.db.pool, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, `SELECT total, new_cap, new_taken, known_taken FROM fleet_budgets WHERE run_id = $1 FOR UPDATE`,
			run).Scan(&a.Total, &a.NewCap, &a.NewTaken, &a.KnownTaken); err != nil {
			return err
		}
		granted = min(max(n, 0), a.Left())
		if granted == 0 {
			return nil
		}
		if isNew {
			a.NewTaken += granted
		} else {
			a.KnownTaken += granted
		}
		_, err := tx.Exec(ctx, `UPDATE fleet_budgets SET new_taken = $2, known_taken = $3 WHERE run_id = $1`, run, a.NewTaken, a.KnownTaken)
		return err
	})
	if err != nil {
		return 0, store.Account{}, fmt.Errorf("run %d: reserve %d fetches of the fleet's budget: %w", run, n, err)
	}
	return granted, a, nil
}

// GiveBack gives back what this worker reserved of run's budget and did not use: newBack of the
// never-fetched URLs' reservations and knownBack of the known ones'. One may be negative when
// fetches reserved for one kind went to the other; their sum is what returns to the fleet.
func (w *Worker) GiveBack(ctx context.Context, run int64, newBack, knownBack int) error {
	if newBack == 0 && knownBack == 0 {
		return nil
	}
	if _, err := w.db.pool.Exec(ctx, `UPDATE fleet_budgets SET new_taken = greatest(new_taken - $2, 0),
		known_taken = greatest(known_taken - $3, 0) WHERE run_id = $1`, run, newBack, knownBack); err != nil {
		return fmt.Errorf("run %d: give back %d fetches of the fleet's budget: %w", run, newBack+knownBack, err)
	}
	return nil
}
