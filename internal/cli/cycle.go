package cli

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/strata-crawler/strata/crawler"
	"github.com/strata-crawler/strata/internal/runcycle"
	"github.com/strata-crawler/strata/internal/store"
	"github.com/strata-crawler/strata/internal/urlnorm"
)

func newRunCmd(a *app) *cobra.Command {
	var cron, worker bool
	var lease time.Duration
	cmd := &cobra.Command{
		Use:   "run [--cron] [--max-duration D] [--worker [--lease D]]",
		Short: "Run the whole cycle: crawl, then recalculate revisit intervals and extract links",
		Long: `Run the paper's cycle once: the crawl stage (see strata crawl), then the Frequency Manager
(strata recalc) and the Link Extractor Manager (strata links) side by side, as in Bouras et al.'s
figure 2. This is the command to put in cron.

With --worker (database.url only), this process is one of several, on one machine or many,
crawling one PostgreSQL frontier: it joins the run in progress or begins one, crawls the domains
it holds the lease of, archives to its own archive.root, and the last to finish runs recalc and
links. A worker that dies loses its leases after --lease; the others take its domains.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if worker {
				if cron {
					return usagef("--worker and --cron: start workers from cron without --cron, or stagger them yourself")
				}
				return a.workerCycle(cmd.Context(), lease)
			}
			if cmd.Flags().Changed("lease") {
				return usagef("--lease is a worker's: add --worker")
			}
			return runCycle(cmd.Context(), a, cron)
		},
	}
	cmd.Flags().BoolVar(&cron, "cron", false, "first wait the day's offset inside schedule.start_window")
	cmd.Flags().BoolVar(&worker, "worker", false, "be one worker of a fleet sharing database.url's frontier")
	cmd.Flags().DurationVar(&lease, "lease", 30*time.Second, "how long a worker's domains stay its own without renewal (with --worker)")
	a.bind(cmd.Flags(), "crawl.max_duration", "max-duration", "", "stop the crawl stage after this long, e.g. 2h (default crawl.max_duration)")
	return cmd
}

func runCycle(ctx context.Context, a *app, cron bool) error {
	return a.cycle(ctx, runcycle.Options{Cron: cron})
}

// cycle runs one whole run in a session of its own: the crawl stage (over only o.Only, if set),
// then, unless o.CrawlOnly, recalculation and links and the after-run work.
func (a *app) cycle(ctx context.Context, o runcycle.Options) error {
	s, err := a.openSession(ctx, len(o.Only) > 0)
	if err != nil {
		return err
	}
	defer s.Close()
	return a.runError(s.runner().Run(ctx, o))
}

// runError gives the run cycle's refusals their one-line messages and exit codes.
func (a *app) runError(err error) error {
	switch {
	case errors.Is(err, runcycle.ErrNoWork):
		return usagef("nothing to crawl: %s has no seeds (add one with strata seed add URL)", a.databaseName())
	case errors.Is(err, runcycle.ErrNoRun):
		return usagef("no run yet: run strata crawl first")
	}
	return err
}

func summarizeLater(rs *crawler.RecalcStats, ls *crawler.LinkStats) string {
	return fmt.Sprintf("recalc: %s recalculated (%d to be visited sooner, %d later, %d hubs adjusted) in %v; "+
		"links: %s recorded from %d stored versions, %d external URLs admitted, %d blocked by robots.txt, in %v.",
		plural(rs.Pages, "revisit interval"), rs.Faster, rs.Slower, rs.Adjusted, rs.Elapsed.Round(time.Millisecond),
		plural(ls.Links, "link"), ls.Read, ls.Added, ls.Blocked, ls.Elapsed.Round(time.Millisecond))
}

func newRecalcCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "recalc",
		Short: "Recalculate the revisit interval of every page the last run crawled (the Frequency Manager)",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.laterStage(cmd.Context(), func(ctx context.Context, r *runcycle.Runner) (string, error) {
				run, rs, err := r.Recalc(ctx)
				if err != nil {
					return "", err
				}
				return fmt.Sprintf("run %d: %s recalculated (%d to be visited sooner, %d later, %d hubs adjusted) in %v",
					run, plural(rs.Pages, "revisit interval"), rs.Faster, rs.Slower, rs.Adjusted, rs.Elapsed.Round(time.Millisecond)), nil
			})
		},
	}
}

func newLinksCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "links",
		Short: "Record the link graph of the pages the last run crawled and admit external links (the Link Extractor Manager)",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.laterStage(cmd.Context(), func(ctx context.Context, r *runcycle.Runner) (string, error) {
				run, ls, err := r.Links(ctx)
				if err != nil {
					return "", err
				}
				return fmt.Sprintf("run %d: %s recorded from %d stored versions (%d pages), %d external URLs admitted, %d blocked by robots.txt, in %v",
					run, plural(ls.Links, "link"), ls.Read, ls.Pages, ls.Added, ls.Blocked, ls.Elapsed.Round(time.Millisecond)), nil
			})
		},
	}
}

// laterStage runs one of the stages that follow a crawl, on its own, for the last run.
func (a *app) laterStage(ctx context.Context, stage func(context.Context, *runcycle.Runner) (string, error)) error {
	s, err := a.openSession(ctx, false)
	if err != nil {
		return err
	}
	defer s.Close()
	msg, err := stage(ctx, s.runner())
	if err != nil {
		return a.runError(err)
	}
	_, err = fmt.Fprintln(a.stdout, msg)
	return err
}

func newFetchCmd(a *app) *cobra.Command {
	var file string
	cmd := &cobra.Command{
		Use:   "fetch URL... [--file FILE]",
		Short: "Crawl the given URLs now, outside the schedule, politely, and record them like any other fetch",
		Long: `Crawl the given URLs now (WebFountain's top-level queue for crawls a person asks for): the same
politeness, robots.txt, filters and archive as a scheduled crawl, recorded in a run of its own and
followed by recalculation and links. Unknown URLs are added at level 0. Their links are not
followed and redirects are recorded, not followed. If any URL is invalid, nothing is fetched.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			in, err := urlArgs(cmd, "fetch", args, file)
			if err != nil {
				return err
			}
			if err := a.setup(); err != nil {
				return err
			}
			seen := map[string]bool{}
			var urls []store.NewURL
			var where []seedArg
			for _, s := range in {
				u, err := urlnorm.Parse(s.raw)
				if err != nil {
					return fmt.Errorf("fetch: %s: %w", s.where, err)
				}
				if !seen[u.String()] {
					seen[u.String()] = true
					urls = append(urls, store.NewURL{URL: u.String(), Host: u.Host, FrMax: a.cfg.Seed.FrMax})
					where = append(where, s)
				}
			}
			if err := a.checkFetchable(cmd.Context(), where, urls); err != nil {
				return err
			}
			return a.cycle(cmd.Context(), runcycle.Options{Only: urls})
		},
	}
	cmd.Flags().StringVar(&file, "file", "", "read URLs from FILE, one per line ('-' for standard input)")
	return cmd
}
