package cli

import (
	"context"
	"errors"
	"time"

	"github.com/strata-crawler/strata/internal/pgstore"
	"github.com/strata-crawler/strata/internal/serve"
	"github.com/strata-crawler/strata/internal/store"
)

// explainStore is what strata explain (and serve's explanation of a page) reads.
type explainStore interface {
	URLInfo(ctx context.Context, url string) (*store.URLInfo, error)
	Records(ctx context.Context, urlID int64, limit int) ([]store.Record, error)
	ChildRecords(ctx context.Context, hub int64, limit int) ([][]store.Record, error)
	HostHints(ctx context.Context, origin string) (store.HostHints, error)
}

// statusStore is what strata status reads.
type statusStore interface {
	Status(ctx context.Context, recent int) (*store.Status, error)
	SeedReports(ctx context.Context, limit int) ([]store.SeedReport, error)
	ChildRecords(ctx context.Context, hub int64, limit int) ([][]store.Record, error)
}

// readStore is the database of the read-only commands that work on either backend: status,
// history, explain, serve, show, diff, export (jsonl, warc, wacz), plan, seed list, traps and
// fetch's check.
type readStore interface {
	serve.Reader
	explainStore
	statusStore
	runLister
	History(ctx context.Context, url string) ([]store.HistoryEntry, error)
	EachVersion(ctx context.Context, f store.VersionFilter, fn func(store.Version) error) error
	BucketLoads(ctx context.Context, weighted bool) ([]store.BucketLoad, error)
	Seeds(ctx context.Context) ([]store.SeedInfo, error)
	SeedHosts(ctx context.Context) ([]string, error)
	trapReader
	RunsSince(ctx context.Context, since time.Time) ([]store.Run, error)
	EachStoredVersion(ctx context.Context, run int64, fn func(store.StoredVersion) error) error
}

var (
	_ readStore = (*store.DB)(nil)
	_ readStore = (*pgstore.DB)(nil)
	// PostgreSQL keeps no full-text index (search says so), and knows where fleet workers archived.
	_ serve.VersionHomes = (*pgstore.DB)(nil)
)

// openReadAny opens the database read-only for a command that works on either backend: the SQLite
// file as openRead does, or database.url in a session whose transactions are all read-only. close
// closes it.
func (a *app) openReadAny(ctx context.Context) (db readStore, close func(), err error) {
	if a.cfg == nil {
		if err := a.setup(); err != nil {
			return nil, nil, err
		}
	}
	if !a.postgres() {
		lite, err := a.openRead(ctx)
		if err != nil {
			return nil, nil, err
		}
		return lite, func() { lite.Close() }, nil
	}
	return a.openPostgresRead(ctx)
}

// openPostgresRead opens database.url read-only; it never migrates, so an older schema is the
// user's to upgrade with a command that writes.
func (a *app) openPostgresRead(ctx context.Context) (readStore, func(), error) {
	pg, err := pgstore.OpenReadOnly(ctx, a.cfg.Database.URL)
	if urlErr := (*pgstore.URLError)(nil); errors.As(err, &urlErr) || errors.Is(err, pgstore.ErrNewerSchema) || errors.Is(err, pgstore.ErrOldSchema) {
		return nil, nil, usageError{err}
	}
	if err != nil {
		return nil, nil, err
	}
	return pg, pg.Close, nil
}
