package cli

import (
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/strata-crawler/strata/crawler"
	"github.com/strata-crawler/strata/frequency"
)

// maxBudget is the largest budget of pages per run, the range of optimizer.budget.
const maxBudget = 1_000_000_000

func newPlanCmd(a *app) *cobra.Command {
	var asJSON bool
	var budget int
	cmd := &cobra.Command{
		Use:   "plan [--budget N] [--json]",
		Short: "Show the crawl allocation per change-rate bucket: pages, crawls per period, fr_max, staleness",
		Long: `Show the allocation of crawls to change-rate buckets: per bucket the rate range, pages, crawls per
period of optimizer.period runs, the revisit interval and the expected staleness, and in total the
crawls per run and the expected share of pages whose stored copy is current.

With frequency.policy = "optimal" (or --budget N), it is the plan the optimal policy (WebFountain's
change-rate buckets, Wolf et al.'s allocation) makes for optimizer.budget pages per run from the
change rates strata has estimated so far; every run applies such a plan. With any other policy, it
is the allocation the pages' current fr_max values make (their harmonic mean per bucket), judged by
the same staleness, so policies can be compared on one scale. It changes nothing.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cmd.Flags().Changed("budget") && (budget < 1 || budget > maxBudget) {
				return usagef("plan: --budget %d: pages per run must be between 1 and %d", budget, maxBudget)
			}
			db, closeDB, err := a.openReadAny(cmd.Context())
			if err != nil {
				return err
			}
			defer closeDB()
			cfg := crawler.SetupOf(a.cfg).Policy.Plan
			if budget > 0 {
				cfg.Budget = budget
			}
			optimal := a.cfg.Frequency.Policy == "optimal" || budget > 0
			if optimal && cfg.Budget <= 0 {
				return usagef("plan: no budget: set optimizer.budget (pages per run) or pass --budget N")
			}
			weighted := a.cfg.Optimizer.Objective == "weighted"
			loads, err := db.BucketLoads(cmd.Context(), weighted)
			if err != nil {
				return err
			}
			if len(loads) == 0 {
				_, err := fmt.Fprintln(a.stdout, "no active URLs yet")
				return err
			}
			var plan *frequency.Plan
			if optimal {
				plan = frequency.MakePlan(crawler.Groups(loads, weighted), cfg)
			} else {
				plan = frequency.CurrentPlan(crawler.Groups(loads, weighted), cfg)
			}
			if asJSON {
				return writeJSON(a.stdout, plan)
			}
			w := a.stdout
			if optimal {
				fmt.Fprintf(w, "budget %d pages per run, period %d runs, %d pages\n\n", plan.Budget, plan.Period, plan.Pages)
			} else {
				fmt.Fprintf(w, "the %s policy's current intervals, period %d runs, %d pages\n\n", a.cfg.Frequency.Policy, plan.Period, plan.Pages)
			}
			tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
			weight := ""
			if weighted {
				weight = "WEIGHT\t"
			}
			fmt.Fprintln(tw, "BUCKET\tCHANGES PER RUN\t"+weight+"PAGES\tCRAWLS PER PERIOD\tFR_MAX\tSTALENESS\t")
			for _, b := range plan.Buckets {
				bucket, rates := fmt.Sprint(b.Bucket), fmt.Sprintf("%.3g–%.3g", b.RateLo, b.RateHi)
				if b.Bucket < 0 {
					bucket, rates = "new", fmt.Sprintf("~%.3g (assumed)", b.Rate)
				}
				if weighted {
					rates += fmt.Sprintf("\t%.2g", b.Weight)
				}
				fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%.1f%%\t\n", bucket, rates, b.Pages, b.Crawls, b.FrMax, 100*b.Staleness)
			}
			tw.Flush()
			_, err = fmt.Fprintf(w, "\nexpected: %.1f crawls per run, %.1f%% of pages current on average\n",
				plan.ExpectedPerRun, 100*plan.ExpectedFreshness)
			return err
		},
	}
	cmd.Flags().IntVar(&budget, "budget", 0, "pages per run (default optimizer.budget)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}
