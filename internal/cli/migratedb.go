package cli

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/strata-crawler/strata/internal/pgimport"
	"github.com/strata-crawler/strata/internal/pgstore"
	"github.com/strata-crawler/strata/internal/runlock"
	"github.com/strata-crawler/strata/internal/store"
)

func newMigrateDBCmd(a *app) *cobra.Command {
	var to string
	cmd := &cobra.Command{
		Use:   "migrate-db --to postgres://USER@HOST/DB",
		Short: "Copy this database's whole history into an empty PostgreSQL database, verified table by table",
		Long: `Copy every table of the SQLite database (database.path) into the PostgreSQL database --to
names, ids included, creating strata's schema there first. The database must be empty: one that
holds any row is refused and left as it is. The copy is one transaction: it is committed only
when every table has the same number of rows and the same checksum of their contents on both
sides, so a copy that is interrupted, killed or finds a difference leaves the target empty, and
running it again starts over. One line per table reports the rows and the checksum.

SQLite's full-text index of the archive's text (version_text) is not copied: it is a cache that
the index step rebuilds from the archive. The SQLite database is only read, under the run lock,
so no crawl changes it meanwhile.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runMigrateDB(cmd.Context(), a, to)
		},
	}
	cmd.Flags().StringVar(&to, "to", "", "the PostgreSQL database to copy into: postgres://user[:password]@host[:port]/database")
	return cmd
}

func runMigrateDB(ctx context.Context, a *app, to string) error {
	if to == "" {
		return usagef("migrate-db: --to is required: the PostgreSQL database to copy into, postgres://user@host/database")
	}
	if u, err := url.Parse(to); err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") || u.Host == "" {
		return usagef("migrate-db: --to %s: not a PostgreSQL URL (postgres://user@host/database)", pgstore.Redact(to))
	}
	if err := a.setup(); err != nil {
		return err
	}
	if err := a.requireDatabase(); err != nil {
		return err
	}
	path := a.cfg.Database.Path
	lock, err := runlock.Acquire(path)
	if err != nil {
		return err
	}
	defer lock.Release()
	// Bring the SQLite database to this strata's schema, which the PostgreSQL one mirrors.
	sdb, err := store.Open(ctx, path, store.Options{})
	if err != nil {
		return err
	}
	if err := sdb.Close(); err != nil {
		return err
	}
	src, err := pgimport.OpenSQLite(path)
	if err != nil {
		return err
	}
	defer src.Close()

	dst, err := pgstore.Connect(ctx, to)
	if urlErr := (*pgstore.URLError)(nil); errors.As(err, &urlErr) {
		return usageError{oneLine{fmt.Errorf("migrate-db: --to: %w", err)}}
	}
	if err != nil {
		return oneLine{fmt.Errorf("migrate-db: %w", err)}
	}
	defer dst.Close()
	// Look before the schema is created: a database with another application's tables, or with
	// strata rows, is refused as it is.
	var sum pgimport.Summary
	err = pgimport.CheckTarget(ctx, dst)
	if err == nil {
		err = dst.Migrate(ctx)
	}
	if err == nil {
		sum, err = pgimport.Copy(ctx, src, dst, func(t pgimport.Table) {
			fmt.Fprintf(a.stdout, "%-17s %10d rows  checksum %016x  verified  %v\n", t.Name, t.Rows, t.Checksum, t.Elapsed.Round(time.Millisecond))
		})
	}
	if errors.Is(err, pgimport.ErrNotEmpty) || errors.Is(err, pgimport.ErrBusy) {
		return usageError{oneLine{err}}
	}
	if err != nil {
		return oneLine{err}
	}
	rate := float64(sum.Rows) / max(sum.Elapsed.Seconds(), 1e-9)
	_, err = fmt.Fprintf(a.stdout, "migrate-db: %d rows in %d tables copied from %s into %s in %v (%.0f rows/s), verified and committed.\n",
		sum.Rows, len(sum.Tables), path, dst.Name(), sum.Elapsed.Round(time.Millisecond), rate)
	return err
}

// oneLine keeps an error to one line: a server's message can span several (a detail, a hint, one
// line per address tried), and strata reports every error on one.
type oneLine struct{ err error }

func (e oneLine) Error() string {
	return strings.Join(strings.Fields(strings.ReplaceAll(e.err.Error(), "\n", "; ")), " ")
}
func (e oneLine) Unwrap() error { return e.err }
