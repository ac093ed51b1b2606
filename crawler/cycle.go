package crawler

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/url"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/strata-crawler/strata/archive"
	"github.com/strata-crawler/strata/frequency"
	"github.com/strata-crawler/strata/internal/change"
	"github.com/strata-crawler/strata/internal/config"
	"github.com/strata-crawler/strata/internal/fetch"
	"github.com/strata-crawler/strata/internal/pagetext"
	"github.com/strata-crawler/strata/internal/polite"
	"github.com/strata-crawler/strata/internal/robots"
	"github.com/strata-crawler/strata/internal/store"
	"github.com/strata-crawler/strata/internal/traps"
)

// MinDelay is the politeness floor between two requests to one domain whose hosts are not all
// loopback. Open raises any smaller Network.Delay to it: strata promises it to every site.
const MinDelay = 10 * time.Second

// Policy is the revisit policy: how the Frequency Manager turns what a run saw into the next
// revisit intervals (the configuration's [frequency], [optimizer] and [hybrid] tables).
type Policy struct {
	Name            string // "bouras" (also ""), "nutch", "optimal" or "hybrid"
	Limit, Min, Max int    // records examined and the bounds of fr_max (0: the policy's defaults)
	// Plan is the optimal policy's budget, period and change-rate buckets.
	Plan frequency.PlanConfig
	// Weighted makes the optimal policy minimise Wolf et al.'s weighted staleness.
	Weighted bool
	// Selective applies Bouras et al.'s selective incremental rule (3.3) at the hubs; it belongs to
	// the bouras policy and is ignored by the others, which schedule every page by its own interval.
	Selective bool
	// Hybrid holds the hybrid policy's settings.
	Hybrid frequency.Hybrid
	// KnownRates, when set, gives the optimal policy every page's change rate instead of its
	// estimate: the simulator's true-rate reference. strata itself never sets it.
	KnownRates func(pageURL string) (rate float64, ok bool)
}

// PerPage returns the rule that recalculates one page at a time, or nil for the optimal policy,
// which plans every page at once.
func (p Policy) PerPage() (frequency.Policy, error) {
	switch p.Name {
	case "optimal":
		return nil, nil
	case "hybrid":
		return p.Hybrid.Policy(), nil
	}
	return frequency.New(p.Name, frequency.WithLimit(p.Limit), frequency.WithBounds(p.Min, p.Max))
}

// hybrid returns the hybrid policy's settings when it is the policy, else nil.
func (p Policy) hybrid() *frequency.Hybrid {
	if p.Name != "hybrid" {
		return nil
	}
	h := p.Hybrid
	return &h
}

// Network is how a cycle reaches the sites: the identity it sends, the limits of one fetch and the
// politeness gate every request passes.
type Network struct {
	UserAgent   string
	PageTimeout time.Duration
	MaxBytes    int64
	// Delay is the gap between requests to one domain; below MinDelay it counts as MinDelay.
	Delay time.Duration
	// LoopbackDelay is the gap for hosts whose addresses are all loopback, and only for them.
	LoopbackDelay time.Duration
	DelayFactor   float64
	ByHost        bool // each host is its own politeness domain (default: its registrable domain)
	// AllowPrivate lets links and redirects reach private and loopback addresses; seeded hosts may
	// always be reached.
	AllowPrivate bool
	// Hints reads sitemaps and feeds for provider hints.
	Hints bool
	// Transport, when set, answers every request instead of the network, behind the same gate and
	// fetch client: the simulator's web in memory. Nothing else sets it.
	Transport http.RoundTripper
}

// Setup is everything Open needs besides the database and the archive.
type Setup struct {
	Net    Network
	Crawl  Config // the crawl stage; its UserAgent, PageTimeout, Archive, Docs and Hybrid are set by Open
	Policy Policy
	Links  LinksConfig
	Text   pagetext.Mode // the text archived and compared: pagetext.Main or pagetext.Full
	// WARC writes each run's exchanges as WARC files in the archive too (archive.warc); Open
	// points it at the archive's run directories. Software names strata in their warcinfo.
	WARC     bool
	WARCMax  int64
	WARCGzip int // gzip level of the WARC's records; 0 is warc.DefaultGzipLevel
	Software string
}

// SetupOf is the setup a configuration describes. The caller adds what is not configuration: the
// stage's Log, Progress and AfterCrash.
func SetupOf(cfg *config.Config) Setup {
	f, o, h := cfg.Frequency, cfg.Optimizer, cfg.Hybrid
	return Setup{
		Net: Network{
			UserAgent:     cfg.Crawl.UserAgent,
			PageTimeout:   cfg.Crawl.PageTimeout,
			MaxBytes:      cfg.Crawl.MaxBytes,
			Delay:         cfg.Politeness.Delay,
			LoopbackDelay: cfg.Politeness.LoopbackDelay,
			DelayFactor:   cfg.Politeness.DelayFactor,
			ByHost:        cfg.Politeness.DomainKey == "host",
			AllowPrivate:  cfg.Crawl.AllowPrivate,
			Hints:         cfg.Hints.Enabled,
		},
		Crawl: Config{
			Workers:        cfg.Crawl.Workers,
			MaxDuration:    cfg.Crawl.MaxDuration,
			Filter:         cfg.Filter,
			Snapshot:       cfg.Archive.Snapshot == "hardlink",
			IgnoreNofollow: !cfg.Links.HonourNofollow,
			NewFrMax:       cfg.Seed.FrMax,
			Limit:          f.Limit,
			Traps:          traps.Config{MaxNewPerDomain: cfg.Traps.MaxNewPerDomain, MaxURLsPerDomain: cfg.Traps.MaxURLsPerDomain},
			Change:         change.Options{MinDistance: cfg.Change.MinDistance},
			Budget:         o.Budget,
			NewShare:       o.NewShare,
			MaxFrMax:       f.Max,
		},
		Policy: Policy{
			Name: f.Policy, Limit: f.Limit, Min: f.Min, Max: f.Max, Selective: f.Selective,
			Plan: frequency.PlanConfig{Budget: o.Budget, Period: o.Period, MinCrawls: o.MinCrawls, MaxCrawls: o.MaxCrawls,
				Buckets: frequency.Buckets{MinRate: o.MinRate, MaxRate: o.MaxRate}},
			Weighted: o.Objective == "weighted",
			Hybrid: frequency.Hybrid{SampleSize: h.SampleSize, Step: h.Step, MinHistory: h.MinHistory, Normal: h.Normal, Slow: h.Slow,
				Rho0Start: frequency.DefaultRho0Start, Estimator: frequency.Estimator{MinRate: o.MinRate, MaxRate: o.MaxRate}},
		},
		Links:    LinksConfig{ExternalLevel: cfg.Links.ExternalLevel, NewFrMax: cfg.Seed.FrMax},
		Text:     pagetext.Mode(cfg.Archive.Text),
		WARC:     cfg.Archive.WARC,
		WARCMax:  cfg.Archive.WARCMax,
		WARCGzip: cfg.Archive.WARCGzip,
	}
}

// CycleStore is what a run cycle needs from the database: the roles of its stages, and what the
// Frequency Manager reads besides the pages (the runs before, the origins' dates, its models).
type CycleStore interface {
	Store         // the crawl stage
	LinkStore     // links
	RecalcStore   // recalc
	ReleaseStore  // recalc: release days
	OptimizeStore // recalc: the optimal policy's plan
	RunStore
	ModelStore
	// OriginDates returns, per origin that dated anything, how often its Last-Modified dates
	// agreed with what strata saw and how often they did not.
	OriginDates(ctx context.Context) (map[string]store.Dates, error)
}

var _ CycleStore = (*store.DB)(nil)

// RunStore is what the cycle reads of the runs before this one.
type RunStore interface {
	// RecentRuns returns the last n runs, the newest first.
	RecentRuns(ctx context.Context, n int) ([]store.Run, error)
}

// ModelStore keeps named models between runs, such as the optimal policy's change-rate prior. Model
// returns an error wrapping store.ErrNotFound for a name never saved; SaveModel replaces one.
type ModelStore interface {
	Model(ctx context.Context, name string) ([]byte, error)
	SaveModel(ctx context.Context, name string, body []byte) error
}

// Cycle is the run cycle of one database, Bouras et al.'s figure 2: the crawl stage, then the
// Frequency Manager (recalc) and the Link Extractor Manager (links) side by side. strata run and
// strata simulate both run it, so a simulated policy is the one that crawls.
type Cycle struct {
	db      CycleStore
	arch    *archive.Dir
	crawler *Crawler
	policy  Policy
	links   LinksConfig
	log     *slog.Logger
	close   func()
	docs    DocFetcher // sitemaps through the polite client, for Sitemap
	allowed *hostSet   // hosts the client may reach on a private address: the seeds', and a named sitemap's
}

// Open wires a cycle: a politeness gate inside a guarded fetch client, robots.txt and provider hints
// through the same gate, the crawl stage, and the policy. arch may be nil: nothing is archived and
// the links stage reads no versions. Close releases the client's connections.
func Open(ctx context.Context, db CycleStore, arch *archive.Dir, s Setup) (*Cycle, error) {
	if _, err := s.Policy.PerPage(); err != nil {
		return nil, err
	}
	seeds, err := db.SeedHosts(ctx)
	if err != nil {
		return nil, err
	}
	seeded := &hostSet{}
	for _, h := range seeds {
		seeded.add((&url.URL{Host: h}).Hostname())
	}
	n := s.Net
	var client *fetch.Client
	gate := polite.New(polite.Options{
		Delay:         max(n.Delay, MinDelay),
		LoopbackDelay: n.LoopbackDelay,
		DelayFactor:   n.DelayFactor,
		ByHost:        n.ByHost,
		Loopback: func(ctx context.Context, host string) bool {
			ok, err := client.LoopbackOnly(ctx, host)
			return err == nil && ok
		},
	})
	wrap := gate.Transport
	if n.Transport != nil {
		wrap = func(http.RoundTripper) http.RoundTripper { return gate.Transport(n.Transport) }
	}
	client = fetch.New(fetch.Options{
		UserAgent:    n.UserAgent,
		PageTimeout:  n.PageTimeout,
		MaxBytes:     n.MaxBytes,
		MaxRedirects: -1, // each hop is a request of its own, scheduled politely by the crawler
		AllowPrivate: func(host string) bool { return n.AllowPrivate || seeded.has(host) },
		Wrap:         wrap,
	})
	httpClient := client.HTTPClient()
	cfg := s.crawlConfig(arch)
	if n.Hints {
		cfg.Docs = docFetcher(httpClient, n.UserAgent)
	}
	c := New(db, client, func(ctx context.Context, origin *url.URL) robots.Result {
		return robots.Fetch(ctx, httpClient, origin, n.UserAgent)
	}, gate, cfg)
	return &Cycle{db: db, arch: arch, crawler: c, policy: s.Policy, links: s.Links, log: c.cfg.Log, close: client.Close,
		docs: docFetcher(httpClient, n.UserAgent), allowed: seeded}, nil
}

// Close releases the cycle's idle connections.
func (c *Cycle) Close() { c.close() }

// Crawl runs the crawl stage of run.
func (c *Cycle) Crawl(ctx context.Context, run Run) (*Stats, error) {
	if c.docs == nil {
		return nil, ErrNoNetwork
	}
	return c.crawler.Crawl(ctx, run)
}

// After runs the stages that follow a crawl, recalc and links, side by side on separate connections
// and transactions: neither holds a write transaction while waiting for the other, so they cannot
// deadlock, and SQLite's busy timeout orders their short writes.
func (c *Cycle) After(ctx context.Context, run int64) (*RecalcStats, *LinkStats, error) {
	var rs *RecalcStats
	var ls *LinkStats
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) {
		rs, err = c.Recalc(gctx, run)
		return err
	})
	g.Go(func() (err error) {
		ls, err = c.Links(gctx, run)
		return err
	})
	if err := g.Wait(); err != nil {
		return nil, nil, err
	}
	return rs, ls, nil
}

// Links runs the Link Extractor Manager for run.
func (c *Cycle) Links(ctx context.Context, run int64) (*LinkStats, error) {
	var versions VersionReader = noVersions{}
	if c.arch != nil {
		versions = c.arch
	}
	return c.crawler.Links(ctx, c.db, versions, Run{ID: run}, c.links)
}

// Recalc runs the Frequency Manager for run. A per-page policy recalculates every page the run
// crawled. The optimal policy estimates their change rates against the population prior the last
// run fitted, refits and keeps the prior, then plans every page's fr_max and phase under the budget.
// Release weekdays are looked for either way.
func (c *Cycle) Recalc(ctx context.Context, run int64) (*RecalcStats, error) {
	per, err := c.policy.PerPage()
	if err != nil {
		return nil, err
	}
	dates, err := c.dates(ctx)
	if err != nil {
		return nil, err
	}
	rates := &Rates{Dates: dates}
	if per == nil {
		if rates, err = c.ratePrior(ctx); err != nil {
			return nil, err
		}
		rates.Dates = dates
	}
	rs, err := c.crawler.Recalc(ctx, c.db, Run{ID: run}, per, c.policy.Limit, rates)
	if err != nil {
		return rs, err
	}
	if rates.Mix != nil {
		body, err := json.Marshal(rates.Mix)
		if err != nil {
			return rs, fmt.Errorf("save the change-rate prior: %w", err)
		}
		if err := c.db.SaveModel(ctx, ratePriorModel, body); err != nil {
			return rs, err
		}
	}
	if _, err := c.crawler.Releases(ctx, c.db, Run{ID: run}); err != nil {
		return rs, err
	}
	if per != nil {
		return rs, nil
	}
	start := time.Now()
	cfg := c.policy.Plan
	newPerRun, err := c.newPerRun(ctx)
	if err != nil {
		return rs, err
	}
	cfg.Budget = max(cfg.Budget-newPerRun, 1)
	plan, err := c.crawler.Optimize(ctx, c.db, Run{ID: run}, cfg, c.policy.Weighted)
	if err != nil {
		return rs, err
	}
	rs.Elapsed += time.Since(start)
	c.log.Info("optimal plan applied", "buckets", len(plan.Buckets), "expected_per_run", fmt.Sprintf("%.1f", plan.ExpectedPerRun),
		"budget", plan.Budget, "expected_freshness", fmt.Sprintf("%.3f", plan.ExpectedFreshness))
	return rs, nil
}

// newPerRun is how many of a run's fetches never-fetched pages are expected to take: the mean of
// the last three finished runs, at most what the new pages' share of the budget allows them ahead of
// the known ones. The plan shares out what is left: the known pages' budget. A crawl that is still
// discovering its sites thus plans few revisits, and a settled one plans with nearly all of it.
func (c *Cycle) newPerRun(ctx context.Context) (int, error) {
	runs, err := c.db.RecentRuns(ctx, 4)
	if err != nil {
		return 0, err
	}
	sum, n := 0, 0
	for _, r := range runs {
		if !r.EndedAt.IsZero() && r.Budget > 0 && n < 3 {
			sum, n = sum+r.NewFetched, n+1
		}
	}
	if n == 0 {
		return 0, nil
	}
	share := c.crawler.cfg.NewShare
	return min(sum/n, int(math.Ceil(share*float64(c.policy.Plan.Budget)))), nil
}

// dates returns whose Last-Modified dates recalc believes, and the time between runs that turns
// their ages into runs.
func (c *Cycle) dates(ctx context.Context) (Dates, error) {
	origins, err := c.db.OriginDates(ctx)
	if err != nil {
		return Dates{}, err
	}
	runs, err := c.db.RecentRuns(ctx, 11)
	if err != nil {
		return Dates{}, err
	}
	starts := make([]time.Time, len(runs))
	for i, r := range runs {
		starts[i] = r.StartedAt
	}
	return Dates{RunLength: runLength(starts), Origins: origins}, nil
}

// ratePriorModel names the optimal policy's change-rate prior in the models table.
const ratePriorModel = "rate_prior"

// ratePriors are the rates of the prior: log-spaced over the buckets' range.
const ratePriors = 25

// ratePrior loads the optimal policy's change-rate prior as the last run left it (a flat one the
// first time, or when the rate range was changed since), with the budget's mean revisit interval.
func (c *Cycle) ratePrior(ctx context.Context) (*Rates, error) {
	b := c.policy.Plan.Buckets
	mix := frequency.NewRateMix(b.MinRate, b.MaxRate, ratePriors)
	body, err := c.db.Model(ctx, ratePriorModel)
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
	loads, err := c.db.BucketLoads(ctx, false)
	if err != nil {
		return nil, err
	}
	pages := 0
	for _, l := range loads {
		pages += l.Pages
	}
	newPerRun, err := c.newPerRun(ctx)
	if err != nil {
		return nil, err
	}
	interval := float64(max(pages, 1)) / float64(max(c.policy.Plan.Budget-newPerRun, 1))
	return &Rates{Mix: &mix, Interval: max(interval, 1), Known: c.policy.KnownRates}, nil
}

// noVersions is the version reader of a cycle without an archive: every version is missing.
type noVersions struct{}

func (noVersions) ReadMeta(rel string) (*archive.Meta, error) {
	return nil, fmt.Errorf("read version %s: %w", rel, errNoArchive)
}

func (noVersions) ReadRaw(rel string) ([]byte, error) {
	return nil, fmt.Errorf("read version %s: %w", rel, errNoArchive)
}

var errNoArchive = errors.New("no archive")

// docFetcher returns the crawler's sitemap and feed fetcher, through the same guarded, polite client
// as every request.
func docFetcher(client *http.Client, userAgent string) DocFetcher {
	return func(ctx context.Context, u string) (io.ReadCloser, time.Time, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err != nil {
			return nil, time.Time{}, fmt.Errorf("fetch %s: %w", u, err)
		}
		req.Header.Set("User-Agent", userAgent)
		resp, err := client.Do(req)
		if err != nil {
			return nil, time.Time{}, fmt.Errorf("fetch %s: %w", u, err)
		}
		if resp.StatusCode != http.StatusOK {
			resp.Body.Close()
			return nil, time.Time{}, fmt.Errorf("fetch %s: status %d", u, resp.StatusCode)
		}
		date, _ := http.ParseTime(resp.Header.Get("Date"))
		return resp.Body, date, nil
	}
}
