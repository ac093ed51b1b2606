package crawler_test

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/strata-crawler/strata/internal/config"
	"github.com/strata-crawler/strata/internal/store"
	"github.com/strata-crawler/strata/internal/testweb"
)

// TestBudgetSharedBySlowHosts plays issue 17's slow hosts on a small scale: six sites of 20 pages
// each, every page changing every day, two of them asking for a Crawl-delay of 25 ms (25 times the
// fast sites' 1 ms gap; the were 2 s against a loopback gap of 100 ms). A first run without a
// budget finds every page; then a budget of 20 % of the pages (24 a run) holds for 6 runs, under
// nutch and under optimal (whose period is set to those 6 runs, so that the test sees a whole one).
//
// Every page changes as often as every other, so every site needs the same: a budget shared by need
// gives each site a sixth of the fetches, the two slow sites a third between them, whatever their
// Crawl-delay. Each site must get at least 80 % of a sixth. A budget spent by whoever answers first
// gives the fast sites nearly all of it (in the issue, under nutch at 20 %, 54 and 59 fetches to the
// slow sites against 470 to 630 to the others in 30 runs).
func TestBudgetSharedBySlowHosts(t *testing.T) {
	const (
		sites, pages, runs = 6, 20, 6
		budget             = sites * pages / 5
	)
	for _, policy := range []string{"nutch", "optimal"} {
		t.Run(policy, func(t *testing.T) {
			web := testweb.New(t)
			var mu sync.Mutex
			day := 0
			var seeds []store.NewSeed
			all := web.AddSites(t, sites)
			for i, s := range all {
				if i < 2 {
					s.Robots("User-agent: *\nCrawl-delay: 0.025\n")
				}
				var paths []string
				for k := 1; k < pages; k++ {
					paths = append(paths, fmt.Sprintf("/p%d", k))
				}
				s.Page("/", links("home", paths...))
				s.HandlePrefix("/p", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					mu.Lock()
					d := day
					mu.Unlock()
					// Words, not numbers, tell the pages and the days apart: the change detector and the
					// trap defences set numbers aside, and pages alike but for a number are a link farm.
					k, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/p"))
					fmt.Fprintf(w, "<html><body><p>Page %s, edition %s.</p></body></html>", editToken(1000+k), editToken(d))
				}))
				seeds = append(seeds, store.NewSeed{URL: s.URL("/"), Host: s.Host(), Level: 1, FrMax: 1})
			}
			// The first run, without a budget, finds every page; then the budget is set, and every page is
			// known: the runs that follow share the budget among known pages, by their value.
			c := newDayCycle(t, seeds, func(conf *config.Config) {
				conf.Frequency.Policy = policy
				conf.Optimizer.Period = runs
			})
			c.mustRun()
			from := map[*testweb.Site]int{}
			for _, s := range all {
				_, from[s] = fetchedSince(web, s, 0)
			}
			first := map[*testweb.Site]int{}
			for k, v := range from {
				first[k] = v
			}
			c.conf.Optimizer.Budget = budget
			c.reopen(nil)
			total := 0
			var table strings.Builder
			for run := 2; run <= runs+1; run++ {
				mu.Lock()
				day = run
				mu.Unlock()
				st := c.mustRun()
				total += st.Fetched
				var per []int
				for _, s := range all {
					m, n := fetchedSince(web, s, from[s])
					k := 0
					for _, v := range m {
						k += v
					}
					per = append(per, k)
					from[s] = n
				}
				fmt.Fprintf(&table, "run %d: %d fetched, %d of them known, %d due, %d brought forward; per site %v\n", run, st.Fetched, st.KnownFetched, st.Due, st.Forward, per)
			}
			var got []int
			for _, s := range all {
				n := 0
				for _, k := range mapOf(fetchedSince(web, s, first[s])) {
					n += k
				}
				got = append(got, n)
			}
			t.Logf("%s, budget %d a run, period %d runs; page fetches per run and site (the first two slow):\n%s"+
				"per site over the %d budgeted runs: %v, %d in all", policy, budget, runs, table.String(), runs, got, total)
			failed := map[string]string{}
			if total < budget*runs*9/10 {
				failed["budget"] = fmt.Sprintf("%d page fetches in %d runs, want the budget (%d a run) used", total, runs, budget)
			}
			fair := total / sites
			var short []string
			for i, n := range got {
				if 10*n < 8*fair {
					kind := "fast"
					if i < 2 {
						kind = "slow"
					}
					short = append(short, fmt.Sprintf("%s site %d got %d", kind, i+1, n))
				}
			}
			if len(short) > 0 {
				failed["share"] = fmt.Sprintf("%s page fetches, want at least 80 %% of a sixth of %d (%d)", strings.Join(short, ", "), total, fair)
			}
			knownFailures(t, failed, shareKnown[policy])
		})
	}
}

// shareKnown are the checks of TestBudgetSharedBySlowHosts that fail today, by policy, with the
// defect behind each (see knownFailures).
var shareKnown = map[string]map[string]string{
	"optimal": {"share": "the plan's phases put each page's first revisit at least half an interval away, so the first " +
		"budgeted runs have little due and bring pages forward (store.NextCandidates) by due_tick, then id: the budget " +
		"goes to the sites whose pages entered the table first, site after site (run 2 of one play: 16 and 8 fetches " +
		"for the first two sites, none for the other four), and a site slowed by its Crawl-delay is found last in the " +
		"first crawl; over one period six identical sites got 11 to 41 fetches"},
}

// mapOf drops fetchedSince's second result.
func mapOf(m map[string]int, _ int) map[string]int { return m }
