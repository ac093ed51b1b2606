package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/strata-crawler/strata/internal/pgstore"
	"github.com/strata-crawler/strata/internal/textindex"
)

func newIndexCmd(a *app) *cobra.Command {
	var rebuild bool
	cmd := &cobra.Command{
		Use:   "index [--rebuild]",
		Short: "Bring the full-text index and page events that strata serve reads up to date",
		Long: `Index the text and title of every stored version not yet indexed, and record the new, gone and
unlinked pages of every finished run, for strata serve's search, titles and change lists. Every
run does this after its crawl; this command backfills a database crawled before, or catches up
after an interrupted step. It goes on from where the last one stopped, and a second call with
nothing new does nothing. --rebuild empties the index first.

With database.url (PostgreSQL) it indexes the versions a single strata run process archived, and
those fleet workers (strata run --worker) archived to this machine's archive.root: each machine of a
fleet reads only its own root, so after --rebuild run strata index on each of them.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runIndex(cmd.Context(), a, rebuild)
		},
	}
	cmd.Flags().BoolVar(&rebuild, "rebuild", false, "empty the index and build it again from the archive")
	return cmd
}

func runIndex(ctx context.Context, a *app, rebuild bool) error {
	s, err := a.openSession(ctx, false)
	if err != nil {
		return err
	}
	defer s.Close()
	idx, ok := s.db.(indexStore)
	if !ok {
		return a.errSQLiteOnly()
	}
	if rebuild {
		if err := idx.ResetTextIndex(ctx); err != nil {
			return err
		}
	}
	st, err := textindex.Update(ctx, idx, s.arch)
	if err != nil {
		return err
	}
	// On PostgreSQL that was the versions no fleet worker archived; those archived to this
	// machine's archive root by workers are indexed with that root's mark.
	if pg, ok := s.db.(*pgstore.DB); ok {
		if fleet, err := pg.IndexRoot(ctx, a.cfg.Archive.Root); err != nil {
			return err
		} else if fleet {
			more, err := textindex.Index(ctx, pg, s.arch)
			if err != nil {
				return err
			}
			st.Versions, st.Missing, st.Bytes = st.Versions+more.Versions, st.Missing+more.Missing, st.Bytes+more.Bytes
			st.Elapsed += more.Elapsed
		}
	}
	msg := fmt.Sprintf("index: %s (%s of text) and %s summarised in %v", plural(st.Versions, "version"),
		fmtSize(st.Bytes), plural(st.Runs, "run"), st.Elapsed.Round(time.Millisecond))
	if st.Missing > 0 {
		msg += fmt.Sprintf("; %s missing from the archive, skipped", plural(st.Missing, "version"))
	}
	_, err = fmt.Fprintln(a.stdout, msg+".")
	return err
}

func fmtSize(n int64) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}

// indexStore is a database with a text index: SQLite's or PostgreSQL's.
type indexStore interface {
	textindex.Store
	ResetTextIndex(ctx context.Context) error
}
