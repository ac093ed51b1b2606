package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/sync/errgroup"

	"github.com/strata-crawler/strata/crawler"
	"github.com/strata-crawler/strata/frequency"
	"github.com/strata-crawler/strata/internal/config"
	"github.com/strata-crawler/strata/internal/store"
	"github.com/strata-crawler/strata/internal/urlnorm"
)

func newRunCmd(a *app) *cobra.Command {
	var cron bool
	cmd := &cobra.Command{
		Use:   "run [--cron] [--max-duration D]",
		Short: "Run the whole cycle: crawl, then recalculate revisit intervals and extract links",
		Long: `Run the paper's cycle once: the crawl stage (see strata crawl), then the Frequency Manager
(strata recalc) and the Link Extractor Manager (strata links) side by side, as in Bouras et al.'s
figure 2. This is the command to put in cron.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runCycle(cmd.Context(), a, cron)
		},
	}
	cmd.Flags().BoolVar(&cron, "cron", false, "first wait the day's offset inside schedule.start_window")
	a.bind(cmd.Flags(), "crawl.max_duration", "max-duration", "", "stop the crawl stage after this long, e.g. 2h (default crawl.max_duration)")
	return cmd
}

func runCycle(ctx context.Context, a *app, cron bool) error {
	return a.cycle(ctx, cron, nil)
}

// cycle runs the crawl stage (over only the given URLs, if any), then recalculation and links.
func (a *app) cycle(ctx context.Context, cron bool, only []store.NewURL) error {
	s, err := a.openSession(ctx, len(only) > 0)
	if err != nil {
		return err
	}
	defer s.Close()
	a.warnPlaceholder()
	var ids []int64
	if len(only) > 0 {
		if ids, err = s.db.Immediate(ctx, only); err != nil {
			return err
		}
	}
	res, cerr := s.crawl(ctx, cron, ids)
	if res == nil {
		return cerr
	}
	// Recalculation and links run on what the crawl did, even when its time window closed; not after
	// a signal or a failure.
	if ctx.Err() == nil && (cerr == nil || errors.Is(cerr, crawler.ErrStopped)) {
		rs, ls, err := s.laterStages(ctx, res.c, res.run.ID)
		if err != nil {
			res.close()
			return err
		}
		res.run.RecalcTime, res.run.LinksTime = rs.Elapsed, ls.Elapsed
		fmt.Fprintln(a.stdout, summarizeLater(rs, ls))
	}
	return s.finish(ctx, res, cerr)
}

// laterStages runs recalculation and link extraction side by side, on separate connections and
// transactions: neither holds a write transaction while waiting for the other, so they cannot
// deadlock, and SQLite's busy timeout orders their short writes.
func (s *session) laterStages(ctx context.Context, c *crawler.Crawler, run int64) (*crawler.RecalcStats, *crawler.LinkStats, error) {
	policy, err := s.policy()
	if err != nil {
		return nil, nil, err
	}
	var rs *crawler.RecalcStats
	var ls *crawler.LinkStats
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) {
		rs, err = s.recalc(gctx, c, policy, run)
		return err
	})
	g.Go(func() (err error) {
		ls, err = c.Links(gctx, s.db, s.arch, crawler.Run{ID: run}, s.linksConfig())
		return err
	})
	if err := g.Wait(); err != nil {
		return nil, nil, err
	}
	return rs, ls, nil
}

// policy returns the per-page policy, or nil for the optimal policy, which plans all pages at once.
func (s *session) policy() (frequency.Policy, error) {
	f := s.a.cfg.Frequency
	switch f.Policy {
	case "optimal":
		return nil, nil
	case "hybrid":
		return hybridOf(s.a.cfg).Policy(), nil
	}
	return frequency.New(f.Policy, frequency.WithLimit(f.Limit), frequency.WithBounds(f.Min, f.Max))
}

// recalc runs the Frequency Manager for run; with the optimal policy it estimates the change rates of
// the pages crawled against the population prior the last run fitted, refits and keeps the prior,
// then plans every page's fr_max and phase under the budget.
func (s *session) recalc(ctx context.Context, c *crawler.Crawler, policy frequency.Policy, run int64) (*crawler.RecalcStats, error) {
	var rates *crawler.Rates
	if policy == nil {
		var err error
		if rates, err = s.ratePrior(ctx); err != nil {
			return nil, err
		}
	}
	rs, err := c.RecalcWith(ctx, s.db, crawler.Run{ID: run}, policy, s.a.cfg.Frequency.Limit, rates)
	if err != nil {
		return rs, err
	}
	if rates != nil {
		body, err := json.Marshal(rates.Mix)
		if err != nil {
			return rs, fmt.Errorf("save the change-rate prior: %w", err)
		}
		if err := s.db.SaveModel(ctx, ratePriorModel, body); err != nil {
			return rs, err
		}
	}
	if _, err := c.Releases(ctx, s.db, crawler.Run{ID: run}); err != nil {
		return rs, err
	}
	if policy != nil {
		return rs, nil
	}
	start := time.Now()
	plan, err := c.Optimize(ctx, s.db, crawler.Run{ID: run}, s.a.optimalConfig(), s.a.cfg.Optimizer.Objective == "weighted")
	if err != nil {
		return rs, err
	}
	rs.Elapsed += time.Since(start)
	s.a.log.Info("optimal plan applied", "buckets", len(plan.Buckets), "expected_per_run", fmt.Sprintf("%.1f", plan.ExpectedPerRun),
		"budget", plan.Budget, "expected_freshness", fmt.Sprintf("%.3f", plan.ExpectedFreshness))
	return rs, nil
}

// hybridOf returns the hybrid policy's settings, or nil when it is not the policy.
func hybridOf(cfg *config.Config) *frequency.Hybrid {
	if cfg.Frequency.Policy != "hybrid" {
		return nil
	}
	h := cfg.Hybrid
	return &frequency.Hybrid{SampleSize: h.SampleSize, Step: h.Step, MinHistory: h.MinHistory, Normal: h.Normal, Slow: h.Slow,
		Rho0Start: frequency.DefaultRho0Start, Estimator: frequency.Estimator{MinRate: cfg.Optimizer.MinRate, MaxRate: cfg.Optimizer.MaxRate}}
}

// ratePriorModel names the optimal policy's change-rate prior in the models table.
const ratePriorModel = "rate_prior"

// ratePriors are the rates of the prior: log-spaced over the buckets' range.
const ratePriors = 25

// ratePrior loads the optimal policy's change-rate prior as the last run left it (a flat one the
// first time, or when the rate range was changed since), with the budget's mean revisit interval.
func (s *session) ratePrior(ctx context.Context) (*crawler.Rates, error) {
	o := s.a.cfg.Optimizer
	mix := frequency.NewRateMix(o.MinRate, o.MaxRate, ratePriors)
	body, err := s.db.Model(ctx, ratePriorModel)
	switch {
	case err == nil:
		var stored frequency.RateMix
		if json.Unmarshal(body, &stored) == nil && len(stored.Rates) == ratePriors && len(stored.Weights) == ratePriors &&
			math.Abs(stored.Rates[0]/mix.Rates[0]-1) < 1e-9 && math.Abs(stored.Rates[ratePriors-1]/mix.Rates[ratePriors-1]-1) < 1e-9 {
			mix = stored
		}
	case !errors.Is(err, store.ErrNotFound):
		return nil, err
	}
	loads, err := s.db.BucketLoads(ctx, false)
	if err != nil {
		return nil, err
	}
	pages := 0
	for _, l := range loads {
		pages += l.Pages
	}
	interval := float64(max(pages, 1)) / float64(max(o.Budget, 1))
	return &crawler.Rates{Mix: &mix, Interval: max(interval, 1)}, nil
}

func (a *app) optimalConfig() frequency.PlanConfig {
	o := a.cfg.Optimizer
	return frequency.PlanConfig{Budget: o.Budget, Period: o.Period, MinCrawls: o.MinCrawls, MaxCrawls: o.MaxCrawls,
		Buckets: frequency.Buckets{MinRate: o.MinRate, MaxRate: o.MaxRate}}
}

func (s *session) linksConfig() crawler.LinksConfig {
	return crawler.LinksConfig{ExternalLevel: s.a.cfg.Links.ExternalLevel, NewFrMax: s.a.cfg.Seed.FrMax,
		HonourNofollow: s.a.cfg.Links.HonourNofollow}
}

func summarizeLater(rs *crawler.RecalcStats, ls *crawler.LinkStats) string {
	return fmt.Sprintf("recalc: %s recalculated (%d to be visited sooner, %d later, %d hubs adjusted) in %v; "+
		"links: %s recorded from %d stored versions, %d external URLs admitted, %d blocked by robots.txt, in %v.",
		plural(rs.Pages, "revisit interval"), rs.Faster, rs.Slower, rs.Adjusted, rs.Elapsed.Round(time.Millisecond),
		plural(ls.Links, "link"), ls.Read, ls.Added, ls.Blocked, ls.Elapsed.Round(time.Millisecond))
}

// lastRun returns the id of the most recent run, or a usage error when there is none.
func lastRun(ctx context.Context, db *store.DB) (int64, error) {
	runs, err := db.RecentRuns(ctx, 1)
	if err != nil {
		return 0, err
	}
	if len(runs) == 0 {
		return 0, usagef("no run yet: run strata crawl first")
	}
	return runs[0].ID, nil
}

func newRecalcCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "recalc",
		Short: "Recalculate the revisit interval of every page the last run crawled (the Frequency Manager)",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.laterStage(cmd.Context(), func(ctx context.Context, s *session, c *crawler.Crawler, run int64) (string, error) {
				policy, err := s.policy()
				if err != nil {
					return "", err
				}
				rs, err := s.recalc(ctx, c, policy, run)
				if err != nil {
					return "", err
				}
				if err := s.db.SetStageTimes(ctx, run, rs.Elapsed, 0); err != nil {
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
			return a.laterStage(cmd.Context(), func(ctx context.Context, s *session, c *crawler.Crawler, run int64) (string, error) {
				ls, err := c.Links(ctx, s.db, s.arch, crawler.Run{ID: run}, s.linksConfig())
				if err != nil {
					return "", err
				}
				if err := s.db.SetStageTimes(ctx, run, 0, ls.Elapsed); err != nil {
					return "", err
				}
				return fmt.Sprintf("run %d: %s recorded from %d stored versions (%d pages), %d external URLs admitted, %d blocked by robots.txt, in %v",
					run, plural(ls.Links, "link"), ls.Read, ls.Pages, ls.Added, ls.Blocked, ls.Elapsed.Round(time.Millisecond)), nil
			})
		},
	}
}

// laterStage runs one of the stages that follow a crawl, on its own, for the last run.
func (a *app) laterStage(ctx context.Context, stage func(context.Context, *session, *crawler.Crawler, int64) (string, error)) error {
	s, err := a.openSession(ctx, false)
	if err != nil {
		return err
	}
	defer s.Close()
	run, err := lastRun(ctx, s.db)
	if err != nil {
		return err
	}
	c, closeClient, err := a.newCrawler(ctx, s.db, s.arch, nil, false)
	if err != nil {
		return err
	}
	defer closeClient()
	msg, err := stage(ctx, s, c, run)
	if err != nil {
		return err
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
			return a.cycle(cmd.Context(), false, urls)
		},
	}
	cmd.Flags().StringVar(&file, "file", "", "read URLs from FILE, one per line ('-' for standard input)")
	return cmd
}
