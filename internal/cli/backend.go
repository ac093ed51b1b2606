package cli

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/strata-crawler/strata/crawler"
	"github.com/strata-crawler/strata/internal/outcome"
	"github.com/strata-crawler/strata/internal/pgstore"
	"github.com/strata-crawler/strata/internal/runlock"
	"github.com/strata-crawler/strata/internal/store"
)

// runStore is the database a session writes through: the run cycle's roles and what the commands
// do around a run. The SQLite store (database.path) and the PostgreSQL one (database.url) are both.
type runStore interface {
	crawler.CycleStore
	AddSeeds(ctx context.Context, seeds []store.NewSeed) ([]store.SeedOutcome, error)
	BeginRun(ctx context.Context, started time.Time, offset time.Duration) (int64, error)
	FinishRun(ctx context.Context, r store.Run) error
	CloseStaleRuns(ctx context.Context) ([]store.Run, error)
	Active(ctx context.Context) (seeds, urls int, err error)
	RunOutcomes(ctx context.Context, run int64) (outcome.Counts, error)
	Reach(ctx context.Context, run int64, only []int64) (fetched, left int, err error)
	Immediate(ctx context.Context, urls []store.NewURL) ([]int64, error)
	SetStageTimes(ctx context.Context, run int64, recalc, links time.Duration) error
	UnsealedRuns(ctx context.Context) ([]store.Run, error)
	SealRun(ctx context.Context, run int64, at time.Time) error
	RunFiles(ctx context.Context, run int64, fn func(version, unchangedURL string)) error
	RunManifest(ctx context.Context, runID int64) ([]store.ManifestEntry, error)
	PendingPrunes(ctx context.Context) ([]string, error)
	Pruned(ctx context.Context, paths []string) error
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
	return usagef("database.url is set (%s), and this command works with the SQLite database.path only for now; "+
		"strata run, crawl, recalc, links and seed add write PostgreSQL, and status, history, explain and serve read it", a.databaseName())
}

// openPostgres opens database.url for a command that writes it, after refusing the settings the
// PostgreSQL store does not serve yet: pruning (archive.keep) and the notification hooks read the
// SQLite store's serve side.
func (a *app) openPostgres(ctx context.Context) (*pgstore.DB, error) {
	if a.cfg.Archive.Keep > 0 {
		return nil, usagef("database.url: archive.keep works with the SQLite database.path only for now; set archive.keep = \"0s\" to crawl into PostgreSQL")
	}
	if h := a.hooks(); h.Webhook != "" || h.Command != "" {
		return nil, usagef("database.url: the notify hooks work with the SQLite database.path only for now; unset notify.webhook and notify.command to crawl into PostgreSQL")
	}
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
