package cli

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/strata-crawler/strata/internal/simulate"
)

// simulateOptions are the flags of strata simulate.
type simulateOptions struct {
	mix, budget, plot, policies, web string
	pages, sites, days               int
	seed                             uint64
	births, deaths                   float64
	asJSON, mirror                   bool
}

func newSimulateCmd(a *app) *cobra.Command {
	var o simulateOptions
	cmd := &cobra.Command{
		Use:   "simulate [--mix M] [--pages N] [--sites H] [--days D] [--budget B] [--json] [--plot out.svg|out.png]",
		Short: "Compare the revisit policies side by side on a synthetic web",
		Long: `Simulate a synthetic web day by day and crawl it with every revisit policy side by side. Each policy
is strata itself: the run cycle of strata run, with a database and an archive of its own in a
temporary directory (in /dev/shm when there is one), the web answering in memory on a clock that says
the simulated day, and nothing sent to the network. The policies: crawl-everything, uniform (round
robin at the budget), Nutch's adaptive schedule, bouras (no budget, as in the paper), hybrid and
optimal at the budget, and the oracle, a reference no crawler can reach that fetches exactly the
pages that changed. They are judged from the requests they sent, against the web's true history.
A fetch costs about a millisecond, so simulations are limited to 20,000 pages and 365 days.

Mixes: cho (Cho and Garcia-Molina's measured change intervals), wolf (Wolf et al.'s Poisson, Pareto
and quasi-deterministic pages), bouras (with the two hub archetypes of Bouras's table 2), all, or a
list such as "static=0.2,cho=0.5,pareto=0.2,weekly=0.1,hub-a=0.05". The budget is a share of the
pages (0.2 or 20%) or pages per day (20000).`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runSimulate(cmd.Context(), a, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.web, "web", simulate.FamilyFlat, "the shape of the web: "+strings.Join(simulate.Families(), ", ")+
		" (flat: each site's hub links every page, with the mix's processes; sections: documentation sites three levels deep, with sitemaps; hostile: eight sites and three trap hosts)")
	f.StringVar(&o.mix, "mix", "all", "change processes: a preset ("+strings.Join(simulate.PresetNames(), ", ")+") or process=share,...")
	// The defaults take about two and a half minutes on two cores (docs/experiments.md): every
	// policy is strata's own run cycle, about a millisecond a fetch. The old defaults, 2,000 pages
	// and 60 days, would take about ten: 2,000 pages over 30 days had not finished after five.
	f.IntVar(&o.pages, "pages", 1000, "pages that exist at day 0 (at most 20,000)")
	f.IntVar(&o.sites, "sites", 10, "sites they are spread over")
	f.IntVar(&o.days, "days", 30, "days to simulate, one run a day")
	f.Uint64Var(&o.seed, "seed", 1, "random seed: the same seed gives the same web and results")
	f.StringVar(&o.budget, "budget", "0.2", "fetches per day of the budgeted policies: a share of the pages (0.2, 20%) or a number of pages")
	f.Float64Var(&o.births, "births", 0.002, "new pages per day, as a share of the pages")
	f.Float64Var(&o.deaths, "deaths", 0.001, "probability per day that a page disappears")
	f.StringVar(&o.policies, "policies", "", "comma-separated policies (default all: "+strings.Join(simulate.PolicyNames(), ", ")+")")
	f.BoolVar(&o.asJSON, "json", false, "print the results as JSON")
	f.BoolVar(&o.mirror, "mirror-threshold", false, "move the selective rule's thresholds away from the children's change share, not towards it as Bouras et al. say (docs/fidelity.md compares the two)")
	f.StringVar(&o.plot, "plot", "", "draw freshness vs fetches per day, and freshness over time, into this .svg or .png file")
	return cmd
}

// The largest simulation strata simulate runs, documented in the README. At day 0 the web is
// bounded by the simulator's own limits (simulate.MaxPages, MaxSites, MaxDays: every policy runs
// strata's real stages, about a millisecond a fetch). Births add pages over the days, and the web
// keeps every page that ever exists and every change of it in memory, so the pages that ever exist
// and the page-days are bounded too. Without these checks, --pages 100000000 or --days 1000000000
// ended in Go's "fatal error: out of memory".
const (
	maxSimEver     = 2_000_000  // pages that ever exist: --pages and the births over the days
	maxSimPageDays = 50_000_000 // pages that ever exist × days
)

// checkSimulateSize refuses a simulation past the limits above, before any memory is spent on it,
// naming the flag that passes them.
func checkSimulateSize(o simulateOptions) error {
	switch {
	case o.pages < 1 || o.pages > simulate.MaxPages:
		return usagef("simulate: --pages %d: must be between 1 and %d", o.pages, simulate.MaxPages)
	case o.days < 2 || o.days > simulate.MaxDays:
		return usagef("simulate: --days %d: must be between 2 (the initial crawl and one run) and %d", o.days, simulate.MaxDays)
	case o.sites < 1 || o.sites > o.pages || o.sites > simulate.MaxSites:
		return usagef("simulate: --sites %d: must be between 1 and --pages (%d), at most %d", o.sites, o.pages, simulate.MaxSites)
	case !(o.births >= 0 && o.births <= 1) || !(o.deaths >= 0 && o.deaths <= 1):
		return usagef("simulate: --births %v and --deaths %v: each must be between 0 and 1", o.births, o.deaths)
	}
	ever := float64(o.pages) * (1 + o.births*float64(o.days))
	switch {
	case ever > maxSimEver:
		return usagef("simulate: %d pages with --births %v over %d days make about %.0f pages, more than the %d strata simulates; "+
			"lower --pages, --births or --days", o.pages, o.births, o.days, ever, maxSimEver)
	case ever*float64(o.days) > maxSimPageDays:
		return usagef("simulate: about %.0f pages over %d days is %.3g page-days, more than the %d strata simulates; "+
			"lower --pages, --births or --days", ever, o.days, ever*float64(o.days), maxSimPageDays)
	}
	return nil
}

// parseBudget reads a share of pages ("0.2", "20%") or a number of pages per day ("20000").
func parseBudget(s string, pages int) (int, error) {
	t := strings.TrimSpace(s)
	if pct, ok := strings.CutSuffix(t, "%"); ok {
		v, err := strconv.ParseFloat(strings.TrimSpace(pct), 64)
		if err != nil || !(v > 0 && v <= 100) {
			return 0, usagef("simulate: --budget %q: a percentage must be above 0 and at most 100", s)
		}
		return max(int(v/100*float64(pages)+0.5), 1), nil
	}
	v, err := strconv.ParseFloat(t, 64)
	switch {
	case err != nil || !(v > 0) || math.IsInf(v, 0):
		return 0, usagef("simulate: --budget %q: want a share of the pages (0.2, 20%%) or pages per day (20000)", s)
	case v <= 1:
		return max(int(v*float64(pages)+0.5), 1), nil
	case v > maxSimEver:
		return 0, usagef("simulate: --budget %q: at most %d pages per day", s, maxSimEver)
	case v != float64(int(v)):
		return 0, usagef("simulate: --budget %q: pages per day must be a whole number", s)
	}
	return int(v), nil
}

func runSimulate(ctx context.Context, a *app, o simulateOptions) error {
	if err := checkSimulateSize(o); err != nil {
		return err
	}
	mix, err := simulate.ParseMix(o.mix)
	if err != nil {
		return usagef("simulate: --mix: %v", err)
	}
	budget, err := parseBudget(o.budget, o.pages)
	if err != nil {
		return err
	}
	var format string
	if o.plot != "" {
		switch ext := strings.ToLower(filepath.Ext(o.plot)); ext {
		case ".svg", ".png":
			format = ext[1:]
		default:
			return usagef("simulate: --plot %q: the file name must end in .svg or .png", o.plot)
		}
	}
	cfg := simulate.Config{Web: o.web, Pages: o.pages, Sites: o.sites, Days: o.days, Seed: o.seed, Mix: mix, Budget: budget,
		Births: o.births, Deaths: o.deaths, MirrorThreshold: o.mirror}
	if o.policies != "" {
		for _, p := range strings.Split(o.policies, ",") {
			cfg.Policies = append(cfg.Policies, strings.TrimSpace(p))
		}
	}
	res, err := simulate.Run(ctx, cfg)
	if errors.Is(err, simulate.ErrConfig) {
		return usageError{err}
	}
	if err != nil {
		return err
	}
	if format != "" {
		if err := writePlotFile(o.plot, format, res); err != nil {
			return err
		}
	}
	if o.asJSON {
		return writeJSON(a.stdout, res)
	}
	return writeSimulateTable(a, res)
}

func writeSimulateTable(a *app, res *simulate.Result) error {
	c := res.Config
	mix := "mix " + res.MixText
	if c.Web != simulate.FamilyFlat {
		mix = "its own processes"
	}
	fmt.Fprintf(a.stdout, "%s web: %d pages on %d sites (%d ever, %d changes), %d days, %s, budget %d pages/day, seed %d, in %v\n\n",
		c.Web, res.Pages-(res.Pages-c.Pages), res.Sites, res.Pages, res.Changes, c.Days, mix, c.Budget, c.Seed, res.Elapsed.Round(1e6))
	tw := tabwriter.NewWriter(a.stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "POLICY\tFETCHES/DAY\tFRESHNESS\tSTALE AGE (DAYS)\tEFFICIENCY\tCHANGES MISSED\tNEW PAGE DELAY (DAYS)\tTO TRAPS\t")
	for _, p := range res.Policies {
		fmt.Fprintf(tw, "%s\t%.0f\t%.3f\t%.2f\t%.3f\t%.1f%%\t%.2f (%d/%d)\t%.1f%%\t\n", p.Name, p.FetchesPerDay, p.Freshness, p.MeanStaleAge,
			p.Efficiency, 100*p.MissedShare, p.DiscoveryDelay, p.NewFetched, p.NewPages, 100*p.TrapShare)
	}
	return tw.Flush()
}

// writePlotFile writes the plot next to its final name and renames it into place, so that a reader
// never sees half a file.
func writePlotFile(path, format string, res *simulate.Result) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, ".strata-plot-*")
	if err != nil {
		return fmt.Errorf("plot %s: %w", path, err)
	}
	tmp := f.Name()
	defer os.Remove(tmp) // after a successful rename there is nothing left to remove
	if err := res.WritePlot(f, format); err != nil {
		f.Close()
		return fmt.Errorf("plot %s: %w", path, err)
	}
	if err := f.Chmod(0o644); err != nil { // CreateTemp makes it 0600; a plot is for others to read
		f.Close()
		return fmt.Errorf("plot %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("plot %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("plot %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("plot %s: %w", path, err)
	}
	return nil
}
