package simulate

import (
	"math"

	"github.com/strata-crawler/strata/internal/config"
)

// setup is how one policy of a simulation is configured: the keys of strata.toml a user would set
// for it, on top of the defaults. Nothing here decides anything: the decisions are the crawler's.
type setup struct {
	configure func(*config.Config)
	oracle    bool // not a crawler: the analytic reference that fetches exactly what changed
	// trueRates gives the optimal policy the web's true mean rates instead of its estimates: the
	// reference strata's estimates are measured against.
	trueRates bool
}

// policies builds each policy's setup for a simulation.
var policies = map[string]func(Config) setup{
	"everything": func(Config) setup {
		return setup{configure: func(c *config.Config) { c.Frequency.Policy = "uniform" }}
	},
	"uniform": func(sc Config) setup {
		return setup{configure: func(c *config.Config) { c.Frequency.Policy, c.Optimizer.Budget = "uniform", sc.Budget }}
	},
	"nutch": func(sc Config) setup {
		return setup{configure: func(c *config.Config) { c.Frequency.Policy, c.Optimizer.Budget = "nutch", sc.Budget }}
	},
	"bouras": func(Config) setup {
		return setup{configure: func(c *config.Config) { c.Frequency.Policy = "bouras" }}
	},
	"hybrid": func(sc Config) setup {
		return setup{configure: func(c *config.Config) {
			c.Frequency.Policy, c.Optimizer.Budget = "hybrid", sc.Budget
			// Ghodsi's Normal and Slow intervals are 15 and 30 days for a budget that fits them;
			// set, as a user would, so that the queues fit the budget when half the pages are in
			// each (N/(2n) + N/(4n) = budget), with a sampling batch half of a site's share of it.
			share := float64(sc.Budget) / float64(sc.Pages)
			c.Hybrid.Normal = max(int(math.Round(0.75/share)), 1)
			c.Hybrid.Slow = 2 * c.Hybrid.Normal
			c.Hybrid.SampleSize = max(int(math.Ceil(share*float64(sc.Pages)/float64(sc.Sites)/2)), 1)
		}}
	},
	"optimal":      func(sc Config) setup { return setup{configure: optimal(sc)} },
	"optimal-true": func(sc Config) setup { return setup{configure: optimal(sc), trueRates: true} },
	"oracle":       func(Config) setup { return setup{oracle: true} },
}

// optimal configures the optimal policy at the simulation's budget and period.
func optimal(sc Config) func(*config.Config) {
	return func(c *config.Config) {
		c.Frequency.Policy, c.Optimizer.Budget, c.Optimizer.Period = "optimal", sc.Budget, sc.Period
	}
}

// policyOrder is the order of PolicyNames: the references last.
var policyOrder = []string{"everything", "uniform", "nutch", "bouras", "hybrid", "optimal", "optimal-true", "oracle"}

// PolicyNames lists the policies a simulation can compare, each strata itself with the default
// configuration and the keys a user would set for the policy (frequency.policy, optimizer.budget),
// but the oracle:
//
//   - everything: frequency.policy = "uniform" with no budget: every known page at every run;
//   - uniform: "uniform" at the budget: the pages that waited longest first, round robin;
//   - nutch: Apache Nutch's AdaptiveFetchSchedule ([frequency.Nutch]) at the budget;
//   - bouras: strata's default, [frequency.Bouras] with the selective rule; no budget, as in the paper;
//   - hybrid: Ghodsi et al.'s sampling and queues ([frequency.Hybrid]) at the budget;
//   - optimal: WebFountain's buckets and Wolf et al.'s allocation with rates strata estimates from
//     its own fetches, at the budget;
//   - optimal-true: the same with every page's true mean rate in place of the estimate, from its
//     first fetch on: the true-rate optimum, a reference no crawler can reach;
//   - oracle: a reference no crawler can reach, computed from the web's true history: at every run it
//     fetches exactly the pages that changed or appeared since the run before.
func PolicyNames() []string { return append([]string(nil), policyOrder...) }
