package simulate

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/strata-crawler/strata/archive"
	"github.com/strata-crawler/strata/crawler"
	"github.com/strata-crawler/strata/frequency"
	"github.com/strata-crawler/strata/internal/config"
	"github.com/strata-crawler/strata/internal/store"
)

// Limits of a simulation: every policy runs strata's real stages with a database and an archive of
// its own, which costs about a millisecond per fetch, so a simulation is sized for minutes, not hours.
const (
	MaxPages = 20000
	MaxSites = 2000
	MaxDays  = 365
)

// Config sets up a simulation.
type Config struct {
	// Web is the family of the synthetic web (Families); "" means FamilyFlat.
	Web    string
	Pages  int     // pages that exist at day 0; each site's first page is its hub
	Sites  int     // sites they are spread over
	Days   int     // days simulated, one run a day at midnight, the first at day 0
	Seed   uint64  // the same seed gives the same web and the same results
	Mix    Mix     // change processes
	Budget int     // fetches per run for the budgeted policies
	Births float64 // new pages per day, as a share of Pages
	Deaths float64 // probability per day that a (non-hub) page disappears
	// SiteCorrelation is the correlation of a page's latent rate level with its site's, in [0, 1):
	// how much the pages of one site are alike. Default 0.6.
	SiteCorrelation float64
	Period          int      // the optimal policy's scheduling period, runs; default 30 (optimizer.period)
	Limit           int      // records the policies examine (frequency.limit); default 10
	Policies        []string // names from PolicyNames; empty means all
	// MirrorThreshold moves the selective rule's thresholds away from the children's change share
	// instead of towards it (frequency.Selective.Mirror), to compare the two readings of Bouras et al.
	MirrorThreshold bool
	// Port is the port in the sites' URLs (0: none). The web answers in memory whatever it is; a
	// crawl of the same web over sockets needs the same URLs to make the same choices.
	Port int
	// Dir is where each policy's database and archive are made (and removed at the end); "" means
	// /dev/shm when it exists, else the system's temporary directory.
	Dir string
}

// ErrConfig is wrapped by the errors Run returns for a Config it cannot simulate.
var ErrConfig = errors.New("invalid simulation")

func (c *Config) defaults() error {
	if c.SiteCorrelation == 0 {
		c.SiteCorrelation = 0.6
	}
	if c.Period == 0 {
		c.Period = 30
	}
	if c.Limit == 0 {
		c.Limit = 10
	}
	switch {
	case c.Pages < 1 || c.Sites < 1 || c.Sites > c.Pages:
		return fmt.Errorf("%w: %d pages on %d sites: need at least one page per site", ErrConfig, c.Pages, c.Sites)
	case c.Pages > MaxPages || c.Sites > MaxSites:
		return fmt.Errorf("%w: %d pages on %d sites: at most %d pages and %d sites", ErrConfig, c.Pages, c.Sites, MaxPages, MaxSites)
	case c.Days < 2 || c.Days > MaxDays:
		return fmt.Errorf("%w: %d days: need 2 to %d", ErrConfig, c.Days, MaxDays)
	case c.Budget < 1:
		return fmt.Errorf("%w: budget %d pages per run: must be at least 1", ErrConfig, c.Budget)
	case !(c.Births >= 0) || !(c.Deaths >= 0) || c.Births > 1 || c.Deaths > 1:
		return fmt.Errorf("%w: births %v and deaths %v per day: must be within [0, 1]", ErrConfig, c.Births, c.Deaths)
	case !(c.SiteCorrelation >= 0 && c.SiteCorrelation < 1):
		return fmt.Errorf("%w: site correlation %v: must be within [0, 1)", ErrConfig, c.SiteCorrelation)
	case c.Period < 1 || c.Limit < 2:
		return fmt.Errorf("%w: period %d, limit %d: need period >= 1, limit >= 2", ErrConfig, c.Period, c.Limit)
	case c.Mix == Mix{}:
		return fmt.Errorf("%w: empty mix", ErrConfig)
	}
	if c.Web == "" {
		c.Web = FamilyFlat
	}
	if !slices.Contains(Families(), c.Web) {
		return fmt.Errorf("%w: unknown web %q (known: %s)", ErrConfig, c.Web, strings.Join(Families(), ", "))
	}
	if len(c.Policies) == 0 {
		c.Policies = PolicyNames()
	}
	for _, p := range c.Policies {
		if _, ok := policies[p]; !ok {
			return fmt.Errorf("%w: unknown policy %q (known: %s)", ErrConfig, p, strings.Join(PolicyNames(), ", "))
		}
	}
	return nil
}

// Result is what a simulation measured.
type Result struct {
	Config   Config         `json:"config"`
	MixText  string         `json:"mix"`
	Pages    int            `json:"pages_ever"` // pages that existed at some time, births included
	Changes  int            `json:"changes"`    // change events over the simulation
	Sites    int            `json:"sites"`      // sites, trap hosts included
	Policies []PolicyResult `json:"policies"`
	Elapsed  time.Duration  `json:"elapsed_ns"`
}

// PolicyResult is one policy's measurements, judged from the requests its crawl sent to the web.
// Freshness and age are averaged over the whole time [0, Days).
type PolicyResult struct {
	Name          string  `json:"name"`
	FetchesPerDay float64 `json:"fetches_per_day"` // page requests per run, 404s included
	// Freshness is the time-average share of the live pages whose stored copy is current; a page
	// not fetched yet since it appeared counts as stale.
	Freshness float64 `json:"freshness"`
	// MeanStaleAge is the mean age, in days, of the stale copies: the time since the page first
	// changed after the copy was fetched, averaged over the stale page-time.
	MeanStaleAge float64 `json:"mean_stale_age_days"`
	// Efficiency is Ghodsi et al.'s: fetches that found a change (or a new page) / fetches.
	Efficiency float64 `json:"efficiency"`
	// Missed counts the changes whose version was never fetched: overwritten by the next change
	// before any fetch. MissedShare is Missed / all changes.
	Missed      int     `json:"missed"`
	MissedShare float64 `json:"missed_share"`
	// DiscoveryDelay is the mean time, in days, from a page's appearance after day 0 to its first
	// fetch, over the NewFetched of NewPages such pages fetched by the end.
	DiscoveryDelay float64 `json:"discovery_delay_days"`
	NewPages       int     `json:"new_pages"`
	NewFetched     int     `json:"new_fetched"`
	// FoundDelay is the mean time, in days, from the run whose fetches first linked a new page to
	// its first fetch, over the NewFetched pages (a page found another way counts as found when
	// fetched); NewFound counts the new pages found before the last two runs, and FoundIn2 those of
	// them fetched within two runs of being found.
	FoundDelay   float64   `json:"found_delay_days"`
	NewFound     int       `json:"new_found"`
	FoundIn2     int       `json:"found_in_2_runs"`
	DailyFresh   []float64 `json:"daily_freshness"`
	DailyFetches []int     `json:"daily_fetches"`
	// TrapShare is the share of the page requests that went to trap hosts' pages: fetches wasted.
	TrapShare float64 `json:"trap_share"`
	// Sites breaks the results down by site, so that sites whose sitemaps or dates tell the truth
	// can be told from those whose do not.
	Sites []SiteResult `json:"sites,omitempty"`
	// Fetched lists, per run, the pages the run requested, in ascending order: what the policy
	// chose. The oracle has none.
	Fetched [][]int32 `json:"-"`
}

// SiteResult is one site's share of a policy's results. Fetches and Changes leave out run 0, the
// initial crawl every policy makes alike; Changes counts every change of its pages after it, the
// number of fetches a crawler that knew every change would need at most.
type SiteResult struct {
	Site      int     `json:"site"`
	Sitemap   string  `json:"sitemap"` // none, honest, stale or lying
	Dates     string  `json:"dates"`   // what its Last-Modified headers say: none, true, now or build
	Trap      string  `json:"trap,omitempty"`
	Pages     int     `json:"pages"` // pages that ever lived on it
	Changes   int     `json:"changes"`
	Fetches   int     `json:"fetches"`
	Freshness float64 `json:"freshness"`
	// LateFreshness, LateChanges and LateFetches are over the second half of the days, when a
	// budgeted policy has long finished its first crawl of the site: the steady state.
	LateFreshness float64 `json:"late_freshness"`
	LateChanges   int     `json:"late_changes"`
	LateFetches   int     `json:"late_fetches"`
}

// Run simulates every policy of cfg on the same synthetic web and measures them. Each policy but the
// oracle is strata itself: the run cycle of strata run (crawler.Open), with a database and an archive
// of its own in a temporary directory and the web answering in memory, once per simulated day, on a
// clock that says that day. The result depends only on cfg.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	start := time.Now()
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	w, err := NewWeb(cfg)
	if err != nil {
		return nil, err
	}
	res := &Result{Config: cfg, MixText: cfg.Mix.String(), Pages: len(w.pages), Changes: len(w.times), Sites: len(w.roots),
		Policies: make([]PolicyResult, len(cfg.Policies))}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(max(runtime.GOMAXPROCS(0), 2))
	for i, name := range cfg.Policies {
		g.Go(func() error {
			var err error
			res.Policies[i], err = simulatePolicy(gctx, w, cfg, name)
			if err != nil {
				return fmt.Errorf("simulate %s: %w", name, err)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	res.Elapsed = time.Since(start)
	return res, nil
}

// simulatePolicy runs one policy over the whole simulation and scores it.
func simulatePolicy(ctx context.Context, w *Web, cfg Config, name string) (PolicyResult, error) {
	p := policies[name](cfg)
	if p.oracle {
		return w.score(name, oracleFetches(w, cfg.Days), cfg.Days), nil
	}
	srv := w.NewServer(cfg.Port)
	if err := crawl(ctx, w, srv, cfg, p); err != nil {
		return PolicyResult{}, err
	}
	log := srv.Log()
	r := w.score(name, fetchesOf(log, cfg.Days), cfg.Days)
	traps, all := 0, 0
	for _, h := range log {
		if h.Trap {
			traps++
		}
		if h.Trap || h.Page >= 0 {
			all++
		}
	}
	if all > 0 {
		r.TrapShare = float64(traps) / float64(all)
	}
	return r, nil
}

// crawl runs the policy's cycle once per day of the simulation against srv, which answers in memory.
func crawl(ctx context.Context, w *Web, srv *Server, cfg Config, p setup) error {
	base := cfg.Dir
	if base == "" {
		if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
			base = "/dev/shm" // memory: the database and the archive are thrown away at the end
		}
	}
	dir, err := os.MkdirTemp(base, "strata-simulate-")
	if err != nil {
		return fmt.Errorf("simulation directory: %w", err)
	}
	defer os.RemoveAll(dir)
	clock := &clock{}
	db, err := store.Open(ctx, filepath.Join(dir, "strata.db"), store.Options{Now: clock.Now})
	if err != nil {
		return err
	}
	defer db.Close()
	arch, err := archive.Open(filepath.Join(dir, "archive"))
	if err != nil {
		return err
	}
	level := w.depth() // the seeds reach every page of their sites, as a user would set seed.level
	seeds := make([]store.NewSeed, len(w.roots))
	for s, r := range w.roots {
		seeds[s] = store.NewSeed{URL: srv.URL(r), Host: Site(s, srv.port), Level: level, FrMax: 1}
	}
	if _, err := db.AddSeeds(ctx, seeds); err != nil {
		return err
	}
	conf, err := config.Load(config.Options{WorkDir: dir, Getenv: func(string) string { return "" }})
	if err != nil {
		return err
	}
	conf.Crawl.UserAgent = "strata-simulate/1 (+https://example.org/strata-simulate)"
	conf.Crawl.Workers = 8
	conf.Politeness.LoopbackDelay = 0 // the web answers at once; no site to spare
	conf.Frequency.Limit = cfg.Limit
	p.configure(conf)
	setup := crawler.SetupOf(conf)
	setup.Net.Transport = srv.Transport()
	setup.Crawl.Log = slog.New(slog.DiscardHandler)
	setup.Crawl.Now = clock.Now
	if cfg.MirrorThreshold {
		setup.Crawl.Selective = frequency.DefaultSelective()
		setup.Crawl.Selective.Mirror = true
	}
	if p.trueRates {
		setup.Policy.KnownRates = func(u string) (float64, bool) {
			i, ok := srv.pageOf(u)
			if !ok {
				return 0, false
			}
			return w.pages[i].rate, true
		}
	}
	cyc, err := crawler.Open(ctx, db, arch, setup)
	if err != nil {
		return err
	}
	defer cyc.Close()
	for d := range cfg.Days {
		if err := ctx.Err(); err != nil {
			return err
		}
		now := dayTime(float64(d))
		clock.Set(now)
		srv.SetTime(float64(d))
		run, err := db.BeginRun(ctx, now, 0)
		if err != nil {
			return err
		}
		st, err := cyc.Crawl(ctx, crawler.Run{ID: run, Start: now})
		if err != nil {
			return fmt.Errorf("day %d: %w", d, err)
		}
		if _, _, err := cyc.After(ctx, run); err != nil {
			return fmt.Errorf("day %d: %w", d, err)
		}
		rec := store.Run{ID: run, EndedAt: now, Status: "completed"}
		st.Fill(&rec)
		if err := db.FinishRun(ctx, rec); err != nil {
			return err
		}
	}
	return nil
}

// clock is the simulation's time: the day of the run.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

// fetchesOf turns a server's log into the pages fetched by each run (day), ascending, with status 200.
func fetchesOf(log []Hit, days int) [][]fetch {
	out := make([][]fetch, days)
	for _, h := range log {
		d := int(h.At)
		if h.Page < 0 || d < 0 || d >= days {
			continue
		}
		out[d] = append(out[d], fetch{page: h.Page, ok: h.Status == http.StatusOK || h.Status == http.StatusNotModified})
	}
	return out
}

// fetch is one page request of a run.
type fetch struct {
	page int32
	ok   bool // answered 200 or 304: the crawler's copy is current from then on
}
