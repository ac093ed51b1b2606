// Package crawler runs strata's crawl stage: it takes the URLs that are due from the store, fetches
// them politely across many domains at once, and records every outcome.
//
// The stage follows Bouras et al. (section 3): at the start of a run every fr > 0 counts down by one,
// and the URLs with fr = 0 are due; each one crawled gets fr = fr_max. Work is organised by politeness
// domain: a bounded pool of workers takes whichever domain is ready next, does one step for it (fetch
// a robots.txt, or crawl one URL, the highest level first), and hands it back. Many domains are
// crawled at once while each sees one request at a time; the polite.Gate in the HTTP transport
// enforces the gap between requests whatever happens here. URLs found during the run (redirect
// targets now, links later) join the running stage through the store, so the frontier lives in
// SQLite rather than in memory.
package crawler

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/strata-crawler/strata/archive"
	"github.com/strata-crawler/strata/filter"
	"github.com/strata-crawler/strata/frequency"
	"github.com/strata-crawler/strata/internal/change"
	"github.com/strata-crawler/strata/internal/fetch"
	"github.com/strata-crawler/strata/internal/polite"
	"github.com/strata-crawler/strata/internal/robots"
	"github.com/strata-crawler/strata/internal/schedule"
	"github.com/strata-crawler/strata/internal/store"
	"github.com/strata-crawler/strata/internal/traps"
	"github.com/strata-crawler/strata/linkextract"
)

// Store is what the crawl stage needs from the database: the roles its parts play, each defined
// beside the part that uses it. All methods are safe for concurrent use.
type Store interface {
	Frontier
	BudgetStore     // budget.go: ordering the due URLs when the run cannot reach them all
	ReleaseDayStore // release.go: pages that change on release days
	Recorder        // commit.go: every outcome
	RobotsStore     // step.go: robots.txt, cached between runs
	SelectiveStore  // step.go: the selective rule at the hubs
	TrapStore       // trapguard.go: what the trap defences learn
	HintStore       // hints.go: sitemaps, feeds and the origins' trust
	PoliteStore     // polite.go: the gaps, between processes
}

// Frontier is the crawl's queue: which URLs are due, which comes next, and the URLs that join a
// run. All methods are safe for concurrent use.
type Frontier interface {
	// Countdown counts every fr > 0 down by one and returns how many URLs are due now and how many
	// wait; DueHosts counts the due URLs per host.
	Countdown(ctx context.Context) (due, waiting int, err error)
	DueHosts(ctx context.Context) (map[string]int, error)
	// NextDue returns the next due URL among hosts, the highest level first, or an error wrapping
	// store.ErrNotFound. Recording any outcome for a URL (RecordFetch with NextFr > 0, SetState, or
	// skipping it for run) takes it out of the due set.
	NextDue(ctx context.Context, q store.DueQuery) (*store.DueURL, error)
	// DueCandidates lists the due URLs of a budgeted run for its choice, DueByID hands one out when
	// its turn comes (ErrNotFound when it is no longer due).
	DueCandidates(ctx context.Context, run int64, fn func(store.Candidate) error) error
	DueByID(ctx context.Context, id, run int64) (*store.DueURL, error)
	// NextCandidates lists known pages not due yet, the soonest first, for a run with budget to spare.
	NextCandidates(ctx context.Context, runStart time.Time, n int, fn func(store.Candidate) error) error
	// DueSplit counts the due URLs never fetched and those fetched before.
	DueSplit(ctx context.Context) (newDue, known int, err error)
	// DueAmong gives the hosts of the due URLs among ids, for an immediate fetch.
	DueAmong(ctx context.Context, ids []int64) (map[string]int, error)
	// SetDue makes the pages in due due now and those in notDue wait one more run, whatever their
	// countdown says.
	SetDue(ctx context.Context, due, notDue []int64) error
	// Discover inserts the URLs found on a page that are new, due now, and returns those.
	Discover(ctx context.Context, found []store.NewURL) ([]store.NewURL, error)
	// ToDiscover returns the URLs of found that Discover would write (not in the table, or found
	// at a higher level), for a page that records them with its fetch (store.FetchRecord.Found).
	ToDiscover(ctx context.Context, found []store.NewURL) ([]store.NewURL, error)
	// Enqueue makes a URL due in this run (inserting it if new) unless it was crawled since runStart.
	Enqueue(ctx context.Context, u store.NewURL, runStart time.Time) (int64, store.Enqueued, error)
	// SeedHosts lists the seeds' host[:port]s, whose registrable domains the default filter keeps to.
	SeedHosts(ctx context.Context) ([]string, error)
}

var _ Frontier = (*store.DB)(nil)

var _ Store = (*store.DB)(nil)

// Fetcher fetches one page without following redirects. *fetch.Client implements it.
type Fetcher interface {
	Fetch(ctx context.Context, req fetch.Request) (*fetch.Response, error)
}

var _ Fetcher = (*fetch.Client)(nil)

// Archive stores page versions. *archive.Dir implements it.
type Archive interface {
	// Stage writes a version's files under temporary names in the run's directory; Commit puts a
	// batch of staged versions in place durably, returning one error per version. On an error
	// nothing of the version is left behind.
	Stage(runStart time.Time, v archive.Version) (*archive.Pending, error)
	Commit(batch []*archive.Pending) []error
	// Snapshot links the stored version at from into the run's directory.
	Snapshot(runStart time.Time, pageURL, from string) (string, error)
}

var _ Archive = (*archive.Dir)(nil)

// TextFunc extracts the title and the readable text of a page from its UTF-8 body.
type TextFunc func(body []byte, contentType, pageURL string) Text

// Text is the readable text of a page, and the links read from the same parse.
type Text struct {
	Title, Body string
	// Mode is how Body was extracted from HTML: "main" (the main content), "full" (every visible
	// block, as configured) or "fallback" (main content asked for, none found: every visible
	// block); "" for a body that is not HTML. It is recorded with the version.
	Mode string
	// Alt returns the body in the other kind of text, where the extractor has it: the whole
	// text beside "main", the main content found but not trusted beside "fallback" ("" if none).
	// A version whose kind differs from the previous version's is compared with it in the
	// previous one's kind. Nil when there is none; called only on such a switch.
	Alt func() string
	// Links are the page's links, pageURL its base, where the function read them from the parse
	// that gave the text; nil when it did not (the crawler then reads them itself).
	Links *linkextract.Page
}

// RobotsFetcher fetches the robots.txt of an origin (scheme://host[:port]).
type RobotsFetcher func(ctx context.Context, origin *url.URL) robots.Result

// Config tunes the stage.
type Config struct {
	UserAgent   string        // the product token in it is matched against robots.txt groups
	Workers     int           // domains worked on at once
	PageTimeout time.Duration // the fetcher's per-page limit
	// StepTimeout bounds one step, including any wait at the politeness gate between the hops of a
	// robots.txt redirect; a step in flight when the stage stops gets this long to finish. Default
	// PageTimeout + 10s.
	StepTimeout time.Duration
	MaxDuration time.Duration // stop handing out work after this long; 0 = no limit
	RobotsTTL   time.Duration // how long a fetched robots.txt is trusted; default 24h
	// MaxRetryAfter is the longest Retry-After strata waits for within a run; a longer one drops the
	// domain until the next run. Default 5 minutes.
	MaxRetryAfter time.Duration
	Log           *slog.Logger
	// Progress, if set, is called after every step with the stage's counts so far. It must be quick.
	Progress func(Stats)
	Now      func() time.Time
	// AfterCrash says the previous run ended without recording its end (killed, crashed): requests it
	// had in flight are unknown, so every domain is treated as contacted just now.
	AfterCrash bool
	// Filter decides every URL before it is requested or joins the run; nil means filter.Default().
	Filter filter.Filter
	// Archive stores new and changed versions; nil stores none (fetches are still recorded).
	Archive Archive
	// WARC, when set, writes every exchange of a run to its WARC files as well.
	WARC *WARCOptions
	// Text extracts the text that is archived and compared between versions; nil uses the body.
	Text TextFunc
	// Snapshot hard-links each unchanged page's current version into the run's directory, so every
	// run directory is a complete snapshot.
	Snapshot bool
	// IgnoreNofollow follows links marked rel=nofollow (or sponsored, ugc) and links on pages whose
	// meta robots says nofollow. By default strata honours both.
	IgnoreNofollow bool
	// NewFrMax is the revisit interval given to pages found by following links; default 1.
	NewFrMax int
	// Selective is the selective incremental rule (Bouras et al. 3.3); the zero value means
	// frequency.DefaultSelective(). SelectiveOff turns the rule off: every due page is crawled
	// whatever its hub did, as policies other than Bouras's schedule pages by their own intervals.
	Selective    frequency.Selective
	SelectiveOff bool
	// Limit is how many of a page's last records the rules look at (frequency.limit); default 10.
	Limit int
	// MaxSkips is how many runs in a row the selective rule may skip a page before it is crawled
	// anyway, so that its record, and with it the rule's evidence, never freezes; default 3.
	MaxSkips int
	// Traps limits what new URLs a run admits (caps, calendars, duplicate prefixes).
	Traps traps.Config
	// Change tunes what counts as a non-trivial change.
	Change change.Options
	// Budget caps the pages fetched per run (0: no cap). Never-fetched URLs may take NewShare of it
	// before known ones are served (WebFountain's two queues; see frequency.Pick). Unlike the other
	// fields, a zero NewShare is a share of zero: new URLs get only what the known ones leave. The
	// configuration's default is 1, new pages first.
	Budget   int
	NewShare float64
	// PriorityConstant is Xu et al.'s c in the cost of staleness, which orders the due URLs when the
	// run has less budget or time than they need; default 0.1.
	PriorityConstant float64
	// Weighted values the due pages of a budgeted run by their weights (seed priority and in-links,
	// the optimal policy's weighted objective); otherwise every page counts the same.
	Weighted bool
	// Uniform values the due pages of a budgeted run by how long they waited alone, so the budget
	// visits every page in turn (the uniform policy's round robin).
	Uniform bool
	// Hybrid, when set, samples the pages with little history per site and run (Ghodsi et al.):
	// pages still sampled are due every run, and a per-site Sampler chooses how many batches of them
	// are fetched. The other pages are crawled as their fr says.
	Hybrid *frequency.Hybrid
	// Docs fetches sitemaps and feeds for provider hints; nil reads none. An origin's sitemaps and
	// feeds are read once per run: a few requests, against a page budget they may spare.
	Docs DocFetcher
	// RunInterval is the time between runs that a sitemap's changefreq is measured in (default 24h),
	// and MaxFrMax the longest first revisit interval a changefreq may give (default 30).
	RunInterval time.Duration
	MaxFrMax    int
	// Fleet, when set, shares the frontier with other processes: a domain is worked only under its
	// lease (crawler/fleet.go). Nil for a single process, as with SQLite.
	Fleet Fleet
}

// Crawler runs crawl stages.
type Crawler struct {
	store  Store
	fetch  Fetcher
	robots RobotsFetcher
	gate   *polite.Gate
	cfg    Config
	token  string

	buckets frequency.Buckets // change-rate buckets, WebFountain's one byte per page
}

// New returns a Crawler. gate must be the one in the fetcher's and the robots fetcher's transport.
func New(st Store, f Fetcher, rf RobotsFetcher, gate *polite.Gate, cfg Config) *Crawler {
	if cfg.Workers <= 0 {
		cfg.Workers = 32
	}
	if cfg.RobotsTTL <= 0 {
		cfg.RobotsTTL = 24 * time.Hour
	}
	if cfg.MaxRetryAfter <= 0 {
		cfg.MaxRetryAfter = 5 * time.Minute
	}
	if cfg.PageTimeout <= 0 {
		cfg.PageTimeout = 30 * time.Second
	}
	if cfg.StepTimeout <= 0 {
		cfg.StepTimeout = cfg.PageTimeout + 10*time.Second
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Filter == nil {
		cfg.Filter = filter.Default()
	}
	if cfg.NewFrMax <= 0 {
		cfg.NewFrMax = 1
	}
	if cfg.Selective == (frequency.Selective{}) {
		cfg.Selective = frequency.DefaultSelective()
	}
	if cfg.Limit <= 0 {
		cfg.Limit = 10
	}
	if cfg.MaxSkips <= 0 {
		cfg.MaxSkips = 3
	}
	if !(cfg.NewShare >= 0 && cfg.NewShare <= 1) { // also NaN
		cfg.NewShare = 1
	}
	if cfg.PriorityConstant <= 0 {
		cfg.PriorityConstant = 0.1
	}
	if cfg.RunInterval <= 0 {
		cfg.RunInterval = 24 * time.Hour
	}
	if cfg.MaxFrMax <= 0 {
		cfg.MaxFrMax = 30
	}
	return &Crawler{store: st, fetch: f, robots: rf, gate: gate, cfg: cfg, token: robots.ProductToken(cfg.UserAgent)}
}

// Stats counts what a stage did.
type Stats struct {
	Due         int // due at the start, plus URLs that joined during the stage
	Done        int // URLs taken out of the due set: crawled, blocked or failed
	Fetched     int // responses received
	Changed     int // content differed from the stored version
	Unchanged   int // same content (hash)
	NotModified int // 304
	New         int // first version of a page
	Redirects   int // redirect responses whose target joined the run
	Links       int // new internal links that joined the run, one level down
	TrapEvents  int // trap defences that fired (see strata traps)
	Hubs        int // hubs that came due and were judged by the selective rule
	Forced      int // hubs whose subtree the selective rule visited although the hub had not changed
	Errors      int // fetches without a usable response, and 5xx
	Blocked     int // refused by robots.txt, never requested
	Filtered    int // rejected by the URL filters, never requested
	NotFound    int // 404 and 410 answers: not errors, the site's word that the page is not there
	Gone        int // pages marked gone: a 410, or the third 404 in a row
	SkippedFr   int // active URLs not due this run: their fr had not reached 0
	// SkippedSelective counts URLs not crawled because their hub did not change and too few of its
	// children did (the selective rule, Bouras et al. 3.3).
	SkippedSelective int
	NewURLs          int   // URLs added to the table during the stage
	Bytes            int64 // body bytes received (compressed)
	Requests         int   // HTTP requests sent, robots.txt included
	Domains          int   // domains with due URLs
	Active           int   // domains being worked on right now
	Dropped          int   // domains given up for the rest of the run
	Stopped          bool  // the stage ended early (max duration or a signal); unreached URLs stay due
	Elapsed          time.Duration

	// Budget is the run's cap on page fetches (0: none), NewFetched and KnownFetched how the pages
	// fetched split between never-fetched and known ones; Prioritized reports that the due URLs were
	// ordered by the cost of staleness because the run could not reach them all.
	Budget, NewFetched, KnownFetched int
	Prioritized                      bool
	// Forward counts the known pages brought forward: not due yet, fetched because the budget had
	// room left once nothing was due.
	Forward int
	// Sampled counts the pages the hybrid policy's samplers chose, SampledChanged those of them
	// that had changed.
	Sampled, SampledChanged int
	// Provider hints: sitemaps and feeds read, pages made due by a lastmod newer than our last
	// fetch, and due pages left for later because a trusted site said they had not changed.
	HintDocs, HintedDue, SkippedHint int
	// The change model's accountability: Estimated pages were fetched with a rate estimate; the
	// estimates expected ExpectedChanges of them to have changed, and ObservedChanges had.
	Estimated, ObservedChanges int
	ExpectedChanges            float64
}

// Fill copies the stage's counts into the run's record. Its outcome counts are the stage's own
// tallies; strata crawl and run replace them with the run's fetches counted by package outcome's
// definition (store.DB.RunOutcomes), as every report of the run counts them.
func (st *Stats) Fill(r *store.Run) {
	r.Fetched, r.New, r.Changed, r.Unchanged, r.NotModified = st.Fetched, st.New, st.Changed, st.Unchanged, st.NotModified
	r.Errors, r.Blocked, r.NewURLs, r.Bytes, r.CrawlTime = st.Errors, st.Blocked, st.NewURLs, st.Bytes, st.Elapsed
	r.NotFound, r.Gone = st.NotFound, st.Gone
	r.SkippedFr, r.SkippedSelective = st.SkippedFr, st.SkippedSelective
	r.Hubs, r.HubsReentered, r.TrapEvents = st.Hubs, st.Forced, st.TrapEvents
	r.Budget, r.NewFetched, r.KnownFetched = st.Budget, st.NewFetched, st.KnownFetched
	r.Estimated, r.ExpectedChanges, r.ObservedChanges = st.Estimated, st.ExpectedChanges, st.ObservedChanges
}

// Run identifies the run a stage belongs to.
type Run struct {
	ID    int64
	Start time.Time
	// Only, when set, makes the stage an immediate fetch of these URLs (WebFountain's top-level
	// queue for crawls a person asks for): no countdown, no other URL, the same politeness and
	// pipeline, recorded like any other fetch. Links found are not followed.
	Only []int64
	// Join says another worker of a fleet began the run and counted the frontier down: this stage
	// crawls what is due without counting down again. Counted, if set, is called once the stage has
	// counted down (or joined), so that the worker that began the run may let others join it.
	Join    bool
	Counted func()
}

// ErrStopped is returned, wrapped, when the stage was stopped before it finished; everything it did
// is recorded and the rest stays due.
var ErrStopped = errors.New("crawl stopped before all due URLs were reached")

// Crawl runs one crawl stage for run. It returns the stage's stats; the error is non-nil when the
// store failed (the stage stops at once) or, wrapping ErrStopped, when the stage was stopped.
func (c *Crawler) Crawl(ctx context.Context, run Run) (*Stats, error) {
	start := time.Now()
	var due, waiting int
	var hosts map[string]int
	var err error
	if len(run.Only) > 0 {
		if hosts, err = c.store.DueAmong(ctx, run.Only); err != nil {
			return nil, err
		}
		for _, n := range hosts {
			due += n
		}
	} else if run.Join {
		if hosts, err = c.store.DueHosts(ctx); err != nil {
			return nil, err
		}
		for _, n := range hosts {
			due += n
		}
	} else {
		if due, waiting, err = c.store.Countdown(ctx); err != nil {
			return nil, err
		}
		if rd, rw, err := c.releaseCountdown(ctx); err != nil {
			return nil, err
		} else if rd+rw > 0 {
			newDue, known, err := c.store.DueSplit(ctx)
			if err != nil {
				return nil, err
			}
			waiting += due - (newDue + known)
			due = newDue + known
		}
		if hosts, err = c.store.DueHosts(ctx); err != nil {
			return nil, err
		}
	}
	if run.Counted != nil {
		run.Counted()
	}
	// Politeness holds across processes: every gap an earlier run promised is kept.
	unreachable, err := c.restoreGaps(ctx, hosts)
	if err != nil {
		return nil, err
	}
	seedHosts, err := c.store.SeedHosts(ctx)
	if err != nil {
		return nil, err
	}
	perHost, err := c.store.URLsPerHost(ctx)
	if err != nil {
		return nil, err
	}
	perDomain := map[string]int{}
	for h, n := range perHost {
		perDomain[c.gate.Key(h)] += n
	}
	guard, held, err := c.trapGuard(ctx, run, perDomain)
	if err != nil {
		return nil, err
	}
	due -= held
	s := &stage{c: c, run: run, hops: map[int64]int{}, retries: map[int64]int{}, seedDomains: SeedDomains(seedHosts),
		guard: guard, budget: newBudget(0, 0), unreachable: unreachable}
	if c.cfg.Fleet != nil {
		s.leases = &leases{fleet: c.cfg.Fleet, held: map[string]string{}}
	}
	budgeted := false
	if len(run.Only) == 0 {
		s.budget = newBudget(c.cfg.Budget, c.cfg.NewShare)
		if c.cfg.Fleet != nil {
			// The budget is the run's: the fleet's workers draw on one account, whose cap the run's
			// first worker set.
			if err := s.budget.share(ctx, c.cfg.Fleet, run.ID); err != nil {
				return nil, err
			}
			if s.budget.total != c.cfg.Budget {
				c.cfg.Log.Warn("this worker's optimizer.budget differs from the run's; the run's holds",
					"run", run.ID, "budget", s.budget.total, "configured", c.cfg.Budget)
			}
		}
		budgeted = s.budget.total > 0
		s.stats.Budget = s.budget.total
		switch {
		case budgeted:
			// The choice of each round weighs pages by their seed's priority and in-links.
			if _, err := c.store.UpdateWeights(ctx); err != nil {
				return nil, err
			}
			s.picks = &picks{}
			s.newTaken, s.domainsSeen = map[string]int{}, map[string]bool{}
		case c.short(ctx, due, s.budget.total, hosts):
			if _, err := c.store.UpdateWeights(ctx); err != nil {
				return nil, err
			}
			var updated store.Updated
			if c.cfg.Docs != nil {
				updated = hintUpdated(c.cfg.Now())
			}
			if _, err := c.store.Prioritize(ctx, c.cfg.Now(), c.cfg.PriorityConstant, updated); err != nil {
				return nil, err
			}
			s.stats.Prioritized = true
		}
	}
	s.sched = newScheduler(c.gate)
	// Once the budget is spent nothing more can be fetched: the stage ends rather than waiting for
	// domains whose gap has not passed.
	s.sched.halt = func() bool { _, spent := s.budget.prefer(); return spent }
	s.sched.onLate = func(key string, at time.Time) {
		c.cfg.Log.Warn("domain given up for this run; its URLs stay due", "domain", key,
			"why", "its next request may not start before "+at.Format(time.RFC3339)+", after the end of the run")
	}
	if budgeted {
		s.sched.horizon, s.sched.onPostpone = roundHorizon, s.postpone
	}
	keys := s.sched.addHosts(hosts)
	schedule.Order(c.cfg.Now(), keys)
	s.sched.rankAndStart(keys)
	if err := s.addHintOrigins(ctx); err != nil {
		return nil, err
	}
	s.stats.Due, s.stats.SkippedFr, s.stats.Domains = due, waiting, len(keys)
	c.cfg.Log.Info("crawl stage started", "run", run.ID, "due", due, "domains", len(keys), "workers", c.cfg.Workers)

	workCtx := ctx
	if c.cfg.MaxDuration > 0 {
		var cancel context.CancelFunc
		workCtx, cancel = context.WithTimeout(ctx, c.cfg.MaxDuration)
		defer cancel()
	}
	s.commit = newCommitter(ctx, c.cfg.Archive, run.Start, c.store, c.cfg.Log, c.cfg.Workers)
	s.commit.warc = c.newWARCWriter(run.Start)
	stopGaps := c.keepGaps(ctx)
	// Without a budget one round takes everything due, and what joins during it. With one, the
	// first round reads robots.txt and the provider hints the domains are due for, and every later
	// round fetches what pickRound chose.
	err = s.round(workCtx)
	for rounds := 0; budgeted && err == nil && workCtx.Err() == nil && rounds < maxRounds; rounds++ {
		var n int
		if n, err = s.pickRound(ctx); err != nil || n == 0 {
			break
		}
		err = s.round(workCtx)
	}
	s.commit.close()
	if serr := s.releaseAll(context.WithoutCancel(ctx)); serr != nil && err == nil {
		err = serr
	}
	if serr := s.budget.giveBack(context.WithoutCancel(ctx)); serr != nil && err == nil {
		err = serr
	}
	if serr := stopGaps(); serr != nil && err == nil {
		err = serr
	}
	if serr := s.saveTraps(context.WithoutCancel(ctx)); serr != nil && err == nil {
		err = serr
	}
	if serr := c.store.SaveRunDomains(context.WithoutCancel(ctx), run.ID, s.ledger.list()); serr != nil && err == nil {
		err = serr
	}
	st := s.snapshot()
	st.Elapsed = time.Since(start)
	switch {
	case err != nil && workCtx.Err() == nil:
		return st, err // the store failed
	case workCtx.Err() != nil || s.sched.lateCount() > 0:
		// Domains given up because their next request could not start before the end are what the
		// end of the window left undone, just as if the stage had waited for it.
		st.Stopped = true
		cause := "max duration reached"
		switch {
		case ctx.Err() != nil:
			cause = "interrupted"
		case workCtx.Err() == nil:
			cause = "what is left may not start within the max duration"
		}
		c.cfg.Log.Warn("crawl stage stopped", "why", cause, "done", st.Done, "due", st.Due)
		return st, fmt.Errorf("%w: %s after %v", ErrStopped, cause, st.Elapsed.Round(time.Second))
	}
	c.cfg.Log.Info("crawl stage finished", "run", run.ID, "fetched", st.Fetched, "changed", st.Changed,
		"errors", st.Errors, "blocked", st.Blocked, "elapsed", st.Elapsed.Round(time.Millisecond))
	return st, nil
}

// stage is one running crawl stage.
type stage struct {
	c      *Crawler
	run    Run
	sched  *scheduler
	commit *committer // records the crawled pages of all workers together

	mu      sync.Mutex
	stats   Stats
	hops    map[int64]int // redirect hops that led to a URL in this run
	retries map[int64]int // Retry-After retries of a URL in this run

	seedDomains map[string]bool // registrable domains of the seeds, for the filters
	guard       *traps.Guard    // what new URLs this run admits
	budget      *budget         // the run's page fetches, new and known
	picks       *picks          // with a budget, the URLs chosen for the current round
	newTaken    map[string]int  // with a budget, never-fetched URLs chosen per domain in this run, under mu
	domainsSeen map[string]bool // with a budget, the domains that had something to fetch in this run, under mu
	ledger      ledger          // fetches and expected changes per domain
	unreachable map[string]bool // hosts that could not be reached lately, under mu
	leases      *leases         // with a fleet, the domains this stage holds

	requests atomic.Int64
}

func (s *stage) count(f func(*Stats)) {
	s.mu.Lock()
	f(&s.stats)
	st := s.stats
	s.mu.Unlock()
	if s.c.cfg.Progress != nil {
		st.Active, st.Requests = s.sched.activeCount(), int(s.requests.Load())
		s.c.cfg.Progress(st)
	}
}

func (s *stage) snapshot() *Stats {
	s.mu.Lock()
	st := s.stats
	s.mu.Unlock()
	st.Requests = int(s.requests.Load())
	st.Dropped = s.sched.droppedCount()
	return &st
}

// round runs the stage's workers until no domain has work left.
func (s *stage) round(ctx context.Context) error {
	g, gctx := errgroup.WithContext(ctx)
	for range s.c.cfg.Workers {
		g.Go(func() error { return s.work(gctx, g) })
	}
	return g.Wait()
}

// work is one worker: it takes ready domains and does one step for each until none is left. A
// step that handed a page to the committer finishes in a goroutine of g of its own, which hands the
// domain back once the page is recorded: a worker does not wait for the disk.
func (s *stage) work(ctx context.Context, g *errgroup.Group) error {
	for {
		d, err := s.sched.next(ctx)
		if err != nil || d == nil {
			return nil // stopped, or nothing left
		}
		// A step in flight finishes even when the stage is stopped — a page is either recorded
		// whole or left due — but not for longer than a page may take.
		stepCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.c.cfg.StepTimeout)
		if wait, err := s.lease(stepCtx, d); err != nil || wait {
			cancel()
			s.sched.done(d, err == nil)
			if err != nil {
				return err
			}
			continue
		}
		more, finish, err := s.step(stepCtx, d)
		if finish != nil && err == nil {
			g.Go(func() error {
				defer cancel()
				err := finish()
				if err == nil && more {
					err = s.settle(stepCtx, d)
				}
				if herr := s.handBack(stepCtx, d, more); err == nil {
					err = herr
				}
				return err
			})
			continue
		}
		if err == nil && more {
			err = s.settle(stepCtx, d)
		}
		if herr := s.handBack(stepCtx, d, more); err == nil {
			err = herr
		}
		cancel()
		if err != nil {
			return err
		}
	}
}

// SeedDomains turns the seeds' host[:port]s into the registrable domains the default filter keeps a
// crawl on.
func SeedDomains(hostports []string) map[string]bool {
	hosts := make([]string, len(hostports))
	for i, h := range hostports {
		hosts[i] = (&url.URL{Host: h}).Hostname()
	}
	return filter.DomainSet(hosts...)
}

// origin returns scheme://host[:port] of a URL.
func origin(u *url.URL) string { return u.Scheme + "://" + u.Host }

func sortedKeys(m map[string]int) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
