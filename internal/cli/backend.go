package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/strata-crawler/strata/internal/pgstore"
	"github.com/strata-crawler/strata/internal/runcycle"
	"github.com/strata-crawler/strata/internal/runlock"
	"github.com/strata-crawler/strata/internal/store"
)

// runStore is the database a session writes through: what a run writes, and the seeds. The SQLite
// store (database.path) and the PostgreSQL one (database.url) are both.
type runStore interface {
	runcycle.Store
	AddSeeds(ctx context.Context, seeds []store.NewSeed) ([]store.SeedOutcome, error)
}

var (
	_ runStore = (*store.DB)(nil)
	_ runStore = (*pgstore.DB)(nil)
)

// postgres reports whether database.url puts the history in PostgreSQL.
func (a *app) postgres() bool { return a.cfg != nil && a.cfg.Database.URL != "" }

// databaseName names the database in messages: the SQLite file, or the URL without its password.
func (a *app) databaseName() string {
	if a.postgres() {
		return pgstore.Redact(a.cfg.Database.URL)
	}
	return a.cfg.Database.Path
}

// errSQLiteOnly is the error of a command that reads or writes the SQLite file directly when
// database.url is set: working on the file would show or change a history that is not the one the
// runs write.
func (a *app) errSQLiteOnly() error {
	return usagef("database.url is set (%s), and this command works with the SQLite database.path only", a.databaseName())
}

// openPostgres opens database.url for a command that writes it.
func (a *app) openPostgres(ctx context.Context) (*pgstore.DB, error) {
	db, err := pgstore.Open(ctx, a.cfg.Database.URL)
	if urlErr := (*pgstore.URLError)(nil); errors.As(err, &urlErr) || errors.Is(err, pgstore.ErrNewerSchema) {
		return nil, usageError{err}
	}
	return db, err
}

// lockPostgres takes db's run lock, as runlock does for a SQLite file.
func lockPostgres(ctx context.Context, db *pgstore.DB) (func(), error) {
	unlock, ok, err := db.LockRuns(ctx)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("another strata is already crawling with database %s: %w", db.Name(), runlock.ErrLocked)
	}
	return unlock, nil
}
