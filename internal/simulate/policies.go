package simulate

import (
	"math"

	"github.com/strata-crawler/strata/crawler"
	"github.com/strata-crawler/strata/frequency"
)

// setup is how one policy of a simulation is configured: strata's own policy settings, as a user
// would write them in strata.toml, and the run budget. Nothing here decides anything: the decisions
// are the crawler's.
type setup struct {
	policy crawler.Policy
	budget int  // optimizer.budget; 0 = none
	oracle bool // not a crawler: the analytic reference that fetches exactly what changed
}

// policies builds each policy's setup for a simulation.
var policies = map[string]func(Config) setup{
	"everything": func(Config) setup { return setup{policy: crawler.Policy{Name: "uniform"}} },
	"uniform": func(c Config) setup {
		return setup{policy: crawler.Policy{Name: "uniform"}, budget: c.Budget}
	},
	"nutch": func(c Config) setup {
		return setup{policy: crawler.Policy{Name: "nutch", Limit: c.Limit}, budget: c.Budget}
	},
	"bouras": func(c Config) setup {
		return setup{policy: crawler.Policy{Name: "bouras", Limit: c.Limit, Selective: true}}
	},
	"hybrid": func(c Config) setup {
		return setup{policy: crawler.Policy{Name: "hybrid", Limit: c.Limit, Hybrid: hybridFor(c)}, budget: c.Budget}
	},
	"optimal": func(c Config) setup {
		return setup{policy: crawler.Policy{Name: "optimal", Limit: c.Limit, Plan: frequency.PlanConfig{Budget: c.Budget,
			Period: c.Period, MinCrawls: 1}}, budget: c.Budget}
	},
	"oracle": func(Config) setup { return setup{oracle: true} },
}

// hybridFor sets the hybrid policy's queues from the budget, as a user would: Ghodsi's Normal and
// Slow intervals are 15 and 30 days for a budget that fits them; here they are set so that the
// queues fit the budget when half the pages are in each (N/(2n) + N/(4n) = budget), and a sampling
// batch is half of a site's share of the budget.
func hybridFor(c Config) frequency.Hybrid {
	share := float64(c.Budget) / float64(c.Pages)
	normal := max(int(math.Round(0.75/share)), 1)
	size := max(int(math.Ceil(share*float64(c.Pages)/float64(c.Sites)/2)), 1)
	return frequency.Hybrid{Normal: normal, Slow: 2 * normal, SampleSize: size, Rho0Start: frequency.DefaultRho0Start}
}

// policyOrder is the order of PolicyNames: the references last.
var policyOrder = []string{"everything", "uniform", "nutch", "bouras", "hybrid", "optimal", "oracle"}

// PolicyNames lists the policies a simulation can compare, each strata itself configured as a user
// would configure it (frequency.policy, optimizer.budget), but the oracle:
//
//   - everything: frequency.policy = "uniform" with no budget: every known page at every run;
//   - uniform: "uniform" at the budget: the pages that waited longest first, round robin;
//   - nutch: Apache Nutch's AdaptiveFetchSchedule ([frequency.Nutch]) at the budget;
//   - bouras: strata's default, [frequency.Bouras] with the selective rule; no budget, as in the paper;
//   - hybrid: Ghodsi et al.'s sampling and queues ([frequency.Hybrid]) at the budget;
//   - optimal: WebFountain's buckets and Wolf et al.'s allocation with rates strata estimates from
//     its own fetches, at the budget;
//   - oracle: a reference no crawler can reach, computed from the web's true history: at every run it
//     fetches exactly the pages that changed or appeared since the run before.
func PolicyNames() []string { return append([]string(nil), policyOrder...) }
