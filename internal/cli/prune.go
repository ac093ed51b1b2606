package cli

import (
	"context"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/strata-crawler/strata/archive"
	"github.com/strata-crawler/strata/internal/runcycle"
	"github.com/strata-crawler/strata/internal/runlock"
)

func newPruneCmd(a *app) *cobra.Command {
	var dryRun bool
	cmd := &cobra.Command{
		Use:   "prune [--dry-run]",
		Short: "Remove stored versions older than archive.keep (never a page's current version)",
		Long: `Remove the files of stored versions fetched longer ago than archive.keep, except each page's
current version. Their fetch records stay, marked pruned, so every page's history stays complete.
A completed crawl does this by itself when archive.keep is set; --dry-run lists what would go.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := a.setup(); err != nil {
				return err
			}
			if a.cfg.Archive.Keep <= 0 {
				return usagef("prune: archive.keep is not set (0s keeps everything); set it, e.g. keep = \"8760h\"")
			}
			db, release, err := a.openPruneStore(cmd.Context())
			if err != nil {
				return err
			}
			defer release()
			arch, err := archive.Open(a.cfg.Archive.Root)
			if err != nil {
				return err
			}
			var n int
			verb := "removed"
			if dryRun {
				verb = "would remove"
				n, err = listPrunable(cmd.Context(), a, db, a.cfg.Archive.Keep)
			} else {
				if err := runcycle.FinishPrunes(cmd.Context(), db, arch, a.log); err != nil {
					return err
				}
				n, err = runcycle.Prune(cmd.Context(), db, arch, a.cfg.Archive.Keep)
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "%s %d versions older than %s\n", verb, n, runcycle.FormatKeep(a.cfg.Archive.Keep))
			return nil
		},
	}
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "list the versions that would be removed, and remove nothing")
	return cmd
}

// pruneStore is what prune needs of the database, SQLite's or PostgreSQL's.
type pruneStore interface {
	runcycle.Store
	runcycle.Pruner
}

// openPruneStore opens the database for prune under its run lock: the lock file of a SQLite
// database, PostgreSQL's advisory lock with database.url. release closes both.
func (a *app) openPruneStore(ctx context.Context) (db pruneStore, release func(), err error) {
	if a.postgres() {
		pg, err := a.openPostgres(ctx)
		if err != nil {
			return nil, nil, err
		}
		unlock, err := lockPostgres(ctx, pg)
		if err != nil {
			pg.Close()
			return nil, nil, err
		}
		return pg, func() { unlock(); pg.Close() }, nil
	}
	if err := a.requireDatabase(); err != nil {
		return nil, nil, err
	}
	lock, err := runlock.Acquire(a.cfg.Database.Path)
	if err != nil {
		return nil, nil, err
	}
	lite, err := a.openStore(ctx)
	if err != nil {
		lock.Release()
		return nil, nil, err
	}
	return lite, func() { lite.Close(); lock.Release() }, nil
}

// listPrunable writes the versions older than keep that prune would remove, and counts them.
func listPrunable(ctx context.Context, a *app, db runcycle.Pruner, keep time.Duration) (int, error) {
	vs, err := db.Prunable(ctx, time.Now().Add(-keep))
	if err != nil || len(vs) == 0 {
		return 0, err
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "FETCHED (UTC)\tURL\tVERSION")
	for _, v := range vs {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", v.FetchedAt.UTC().Format("2006-01-02 15:04:05"), v.URL, v.Path)
	}
	return len(vs), tw.Flush()
}
