package simulate

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"
)

// Config sets up a simulation.
type Config struct {
	Pages  int     // pages of the initial crawl
	Sites  int     // sites they are spread over; each site's first page is its hub
	Days   int     // days simulated; one run a day, at midnight; run 0 is the initial full crawl
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
	case c.Days < 2:
		return fmt.Errorf("%w: %d days: need at least 2 (the initial crawl and one run)", ErrConfig, c.Days)
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
	Policies []PolicyResult `json:"policies"`
	Elapsed  time.Duration  `json:"elapsed_ns"`
}

// PolicyResult is one policy's measurements. Fetches, efficiency and misses count runs 1 to Days−1;
// the initial full crawl at run 0 is the same for every policy and left out. Freshness and age are
// averaged over the whole time [0, Days).
type PolicyResult struct {
	Name          string  `json:"name"`
	FetchesPerDay float64 `json:"fetches_per_day"`
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
	// DiscoveryDelay is the mean time, in days, from a new page's appearance to its first fetch,
	// over the NewFetched of NewPages new pages fetched by the end.
	DiscoveryDelay float64   `json:"discovery_delay_days"`
	NewPages       int       `json:"new_pages"`
	NewFetched     int       `json:"new_fetched"`
	DailyFresh     []float64 `json:"daily_freshness"`
	DailyFetches   []int     `json:"daily_fetches"`
}

// Run simulates every policy of cfg on the same synthetic web, side by side, and measures them. It
// touches neither disk nor network; the policies run in parallel, each with its own random stream,
// so the result depends only on cfg.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	start := time.Now()
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	w := newWeb(webConfig{pages: cfg.Pages, sites: cfg.Sites, days: cfg.Days, mix: cfg.Mix, births: cfg.Births,
		deaths: cfg.Deaths, siteCorrelation: cfg.SiteCorrelation, seed: cfg.Seed})
	res := &Result{Config: cfg, MixText: cfg.Mix.String(), Pages: len(w.pages), Changes: len(w.times),
		Policies: make([]PolicyResult, len(cfg.Policies))}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(runtime.GOMAXPROCS(0))
	for i, name := range cfg.Policies {
		g.Go(func() error {
			s := newSim(w, cfg, name)
			if err := s.run(gctx, policies[name](s)); err != nil {
				return fmt.Errorf("simulate %s: %w", name, err)
			}
			res.Policies[i] = s.result(name)
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	res.Elapsed = time.Since(start)
	return res, nil
}

// policy is one revisit policy under simulation. run is called once per run d >= 1 and fetches
// pages through s.fetch, which tells each outcome at once; pages found on a fetched hub become known
// (s.pending) and can be fetched from the next run on.
type policy interface {
	run(s *sim, d int)
}

// outcome is what one fetch told the crawler.
type outcome struct {
	changed bool // the content differed from the stored copy (always true for a first fetch)
	first   bool // the page had never been fetched
	gone    bool // the page no longer exists
}

// pageState is what one policy's crawler has of one page.
type pageState struct {
	lastFetch float64 // time of the last fetch; < 0 before the first
	next      int32   // index in web.times of the page's first change after lastFetch
	known     bool
	gone      bool // the crawler learnt that it disappeared
}

// sim is one policy's crawl of the shared web.
type sim struct {
	w       *web
	cfg     Config
	rng     *rand.Rand
	st      []pageState
	known   []int32 // pages the crawler knows, in the order it learnt them (gone ones included)
	pending []int32 // known pages never fetched, waiting for their first fetch
	found   []int32 // pages discovered in the current run: pending from the next run
	next    []int32 // per site: index in web.children of the first child not known yet

	d        int
	budget   int // fetches left in this run; -1 = no limit
	limited  bool
	fetched  []bool // fetched in the current run
	runList  []int32
	fetches  int
	changedN int
	missed   int
	daily    []float64
	dailyN   []int
	fresh    float64
	stale    float64
	age      float64
	newDelay float64
	newPages int
	newSeen  int
}

func newSim(w *web, cfg Config, name string) *sim {
	h := fnv.New64a()
	h.Write([]byte(name))
	s := &sim{w: w, cfg: cfg, rng: rand.New(rand.NewPCG(cfg.Seed, h.Sum64())), st: make([]pageState, len(w.pages)),
		next: make([]int32, len(w.roots)), fetched: make([]bool, len(w.pages))}
	for i := range s.st {
		s.st[i].lastFetch = -1
	}
	return s
}

// run plays the initial crawl and runs 1 to Days−1.
func (s *sim) run(ctx context.Context, p policy) error {
	// Run 0: the initial full crawl of every page there is at time 0, the same for every policy.
	s.d, s.budget = 0, -1
	for i := range s.w.initial {
		s.learn(int32(i))
	}
	for _, i := range s.pending {
		s.fetch(i)
	}
	s.pending = s.pending[:0]
	s.found = s.found[:0]
	s.measureDay(0)
	initial := s.fetches
	s.fetches, s.changedN, s.missed = 0, 0, 0
	s.dailyN = append(s.dailyN, initial)
	for d := 1; d < s.cfg.Days; d++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		s.beginRun(d)
		before := s.fetches
		p.run(s, d)
		s.endRun()
		s.dailyN = append(s.dailyN, s.fetches-before)
		s.measureDay(d)
	}
	s.finish()
	return nil
}

func (s *sim) beginRun(d int) {
	s.d = d
	s.budget, s.limited = -1, false
	for _, i := range s.runList {
		s.fetched[i] = false
	}
	s.runList = s.runList[:0]
	s.pending = append(s.pending, s.found...)
	s.found = s.found[:0]
}

// limit caps this run's fetches; the budgeted policies call it first.
func (s *sim) limit(n int) { s.budget, s.limited = n, true }

// left reports whether the run may fetch another page.
func (s *sim) left() bool { return !s.limited || s.budget > 0 }

func (s *sim) endRun() {
	// Pending pages that were fetched leave the queue.
	k := 0
	for _, i := range s.pending {
		if s.st[i].lastFetch < 0 && !s.st[i].gone {
			s.pending[k] = i
			k++
		}
	}
	s.pending = s.pending[:k]
}

// learn makes page i known.
func (s *sim) learn(i int32) {
	if s.st[i].known {
		return
	}
	s.st[i].known = true
	s.known = append(s.known, i)
	if s.d == 0 {
		s.pending = append(s.pending, i)
	} else {
		s.found = append(s.found, i)
	}
}

// fetch fetches page i at the current run, unless the budget is spent or i was fetched in this run
// already (ok false). A fetched hub makes its site's new pages known.
func (s *sim) fetch(i int32) (o outcome, ok bool) {
	if !s.left() || s.fetched[i] || s.st[i].gone {
		return o, false
	}
	if s.limited {
		s.budget--
	}
	s.fetched[i] = true
	s.runList = append(s.runList, i)
	s.fetches++
	t := float64(s.d)
	p := &s.w.pages[i]
	st := &s.st[i]
	if p.died <= t {
		st.gone = true
		return outcome{gone: true}, true
	}
	// Changes since the last fetch (or since the page appeared).
	j := st.next
	if st.lastFetch < 0 {
		j = p.lo
	}
	k := int32(0)
	for j+k < p.hi && s.w.times[j+k] <= t {
		k++
	}
	o.first = st.lastFetch < 0
	o.changed = o.first || k > 0
	if k > 1 {
		s.missed += int(k - 1)
	}
	if o.first && p.born > 0 {
		s.newPages++
		s.newSeen++
		s.newDelay += t - p.born
	}
	if o.changed {
		s.changedN++
	}
	st.lastFetch, st.next = t, j+k
	if p.root {
		kids := s.w.children[p.site]
		n := &s.next[p.site]
		for int(*n) < len(kids) && s.w.pages[kids[*n]].born <= t {
			s.learn(kids[*n])
			*n++
		}
	}
	return o, true
}

// measureDay adds the freshness and age of every live page over [d, d+1).
func (s *sim) measureDay(d int) {
	a0, a1 := float64(d), float64(d+1)
	var fresh, stale, age float64
	for i := range s.w.pages {
		p := &s.w.pages[i]
		if p.born >= a1 {
			break // pages are in birth order
		}
		a, b := max(a0, p.born), min(a1, p.died)
		if b <= a {
			continue
		}
		st := &s.st[i]
		c := p.born // a page never fetched is stale since it appeared
		if st.lastFetch >= 0 {
			c = math.Inf(1)
			if st.next < p.hi {
				c = s.w.times[st.next]
			}
		}
		if c >= b {
			fresh += b - a
			continue
		}
		from := max(a, c)
		fresh += from - a
		stale += b - from
		age += ((b-c)*(b-c) - (from-c)*(from-c)) / 2
	}
	s.fresh += fresh
	s.stale += stale
	s.age += age
	s.daily = append(s.daily, fresh/max(fresh+stale, 1e-300))
}

// finish counts the changes still waiting at the end whose versions were overwritten, and the new
// pages never fetched.
func (s *sim) finish() {
	end := float64(s.cfg.Days)
	for i := range s.w.pages {
		p := &s.w.pages[i]
		st := &s.st[i]
		j := st.next
		if st.lastFetch < 0 {
			j = p.lo
			if p.born > 0 && p.born < end {
				s.newPages++
			}
		}
		if n := int(p.hi - j); n > 1 {
			s.missed += n - 1
		}
	}
}

func (s *sim) result(name string) PolicyResult {
	runs := float64(s.cfg.Days - 1)
	r := PolicyResult{Name: name, FetchesPerDay: float64(s.fetches) / runs, Freshness: s.fresh / max(s.fresh+s.stale, 1e-300),
		Missed: s.missed, NewPages: s.newPages, NewFetched: s.newSeen, DailyFresh: s.daily, DailyFetches: s.dailyN}
	if s.stale > 0 {
		r.MeanStaleAge = s.age / s.stale
	}
	if s.fetches > 0 {
		r.Efficiency = float64(s.changedN) / float64(s.fetches)
	}
	if n := len(s.w.times); n > 0 {
		r.MissedShare = float64(s.missed) / float64(n)
	}
	if s.newSeen > 0 {
		r.DiscoveryDelay = s.newDelay / float64(s.newSeen)
	}
	return r
}

// live reports whether the crawler still counts page i among the pages to revisit.
func (s *sim) live(i int32) bool { return s.st[i].known && !s.st[i].gone }

// fetchPending fetches the known pages never fetched yet, oldest first, while the budget lasts:
// every budgeted policy gives new pages the first share of its run, as strata does (a URL admitted
// by the links stage is due at the next run).
func (s *sim) fetchPending() {
	for _, i := range s.pending {
		if !s.left() {
			return
		}
		s.fetch(i)
	}
}

// byOverdue sorts pages by the time they came due, earliest first (ties by id), so that a run that
// cannot fetch every due page fetches the longest-waiting ones.
func byOverdue(pages []int32, dueAt func(int32) float64) {
	slices.SortFunc(pages, func(a, b int32) int {
		da, db := dueAt(a), dueAt(b)
		switch {
		case da < db:
			return -1
		case da > db:
			return 1
		}
		return int(a - b)
	})
}
