package cli

import (
	"context"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/strata-crawler/strata/archive"
	"github.com/strata-crawler/strata/internal/crashpoint"
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
			if err := a.requireDatabase(); err != nil {
				return err
			}
			lock, err := runlock.Acquire(a.cfg.Database.Path)
			if err != nil {
				return err
			}
			defer lock.Release()
			db, err := a.openStore(cmd.Context())
			if err != nil {
				return err
			}
			defer db.Close()
			arch, err := archive.Open(a.cfg.Archive.Root)
			if err != nil {
				return err
			}
			r := &reader{db: db, arch: arch}
			if !dryRun {
				if err := finishPrunes(cmd.Context(), r.db, r.arch, a.log); err != nil {
					return err
				}
			}
			n, err := prune(cmd.Context(), a, r, a.cfg.Archive.Keep, dryRun)
			if err != nil {
				return err
			}
			verb := "removed"
			if dryRun {
				verb = "would remove"
			}
			fmt.Fprintf(a.stdout, "%s %d versions older than %s\n", verb, n, fmtKeep(a.cfg.Archive.Keep))
			return nil
		},
	}
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "list the versions that would be removed, and remove nothing")
	return cmd
}

// pruneBatch is how many versions prune marks, and journals, per transaction.
const pruneBatch = 500

// prune removes (or, dry, lists) the versions older than keep. It is crash-safe: a batch of
// versions is marked pruned and entered in the prune journal in one transaction before any of
// their files is removed, and the journal entries are closed once the files are gone. A kill in
// between leaves versions marked pruned whose files may remain, which the next session removes
// (finishPrunes) — never a record that says a version is stored while its files are gone.
func prune(ctx context.Context, a *app, r *reader, keep time.Duration, dryRun bool) (int, error) {
	now := time.Now()
	vs, err := r.db.Prunable(ctx, now.Add(-keep))
	if err != nil {
		return 0, err
	}
	if dryRun {
		if len(vs) == 0 {
			return 0, nil
		}
		tw := tabwriter.NewWriter(a.stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "FETCHED (UTC)\tURL\tVERSION")
		for _, v := range vs {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", v.FetchedAt.UTC().Format("2006-01-02 15:04:05"), v.URL, v.Path)
		}
		return len(vs), tw.Flush()
	}
	n := 0
	for len(vs) > 0 {
		batch := vs[:min(pruneBatch, len(vs))]
		vs = vs[len(batch):]
		if err := r.db.MarkPruned(ctx, batch, now); err != nil {
			return n, err
		}
		paths := make([]string, len(batch))
		for i, v := range batch {
			if err := r.arch.Remove(v.Path); err != nil {
				return n, err // the journal keeps the batch: the next session tries again
			}
			paths[i] = v.Path
			crashpoint.Hit("pruning")
		}
		if err := r.db.Pruned(ctx, paths); err != nil {
			return n, err
		}
		n += len(batch)
	}
	return n, nil
}

func fmtKeep(d time.Duration) string {
	if d%(24*time.Hour) == 0 {
		return fmt.Sprintf("%d days", d/(24*time.Hour))
	}
	return d.String()
}
