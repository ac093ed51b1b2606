package cli

import (
	"context"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/strata-crawler/strata/archive"
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

// prune removes (or, dry, lists) the versions older than keep.
func prune(ctx context.Context, a *app, r *reader, keep time.Duration, dryRun bool) (int, error) {
	now := time.Now()
	vs, err := r.db.Prunable(ctx, now.Add(-keep))
	if err != nil {
		return 0, err
	}
	var tw *tabwriter.Writer
	if dryRun && len(vs) > 0 {
		tw = tabwriter.NewWriter(a.stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "FETCHED (UTC)\tURL\tVERSION")
	}
	for _, v := range vs {
		if dryRun {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", v.FetchedAt.UTC().Format("2006-01-02 15:04:05"), v.URL, v.Path)
			continue
		}
		// Files first, then the record: a crash in between leaves a version marked stored whose files
		// are gone, which history reports as missing — never a record pointing at half a version.
		if err := r.arch.Remove(v.Path); err != nil {
			return 0, err
		}
		if err := r.db.MarkPruned(ctx, v.Path, now); err != nil {
			return 0, err
		}
	}
	if tw != nil {
		return len(vs), tw.Flush()
	}
	return len(vs), nil
}

func fmtKeep(d time.Duration) string {
	if d%(24*time.Hour) == 0 {
		return fmt.Sprintf("%d days", d/(24*time.Hour))
	}
	return d.String()
}
