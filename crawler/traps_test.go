package crawler_test

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/strata-crawler/strata/crawler"
	"github.com/strata-crawler/strata/internal/config"
	"github.com/strata-crawler/strata/internal/store"
	"github.com/strata-crawler/strata/internal/testweb"
	"github.com/strata-crawler/strata/internal/traps"
)

// trapWorld is a loopback web with both sides of the trap defences: legitimate sites whose URLs
// look like traps (numbered pagination, release notes) and sites with a trap each (a calendar,
// session ids, a link farm, a path loop) besides a few real pages. Every site is a host of its own.
type trapWorld struct {
	web   *testweb.Web
	sites []*trapSite
	named map[string]*trapSite // by testweb site name
}

type trapSite struct {
	role string // pagination, docs, calendar, sessions, farm, loop
	site *testweb.Site
	h    testweb.Hostile
}

// trapLevel is the seed level of every site: deep enough for the documentation site's oldest
// release note, found through 54 "previous release" links, and for a trap to show its depth.
const trapLevel = 64

func newTrapWorld(tb testing.TB, paginated, farm int) *trapWorld {
	w := &trapWorld{web: testweb.New(tb), named: map[string]*trapSite{}}
	add := func(role string, f func(*testweb.Site) testweb.Hostile) {
		s := w.web.AddSite(tb)
		ts := &trapSite{role: role, site: s, h: f(s)}
		w.sites = append(w.sites, ts)
		w.named[s.Name] = ts
	}
	for range paginated {
		add("pagination", func(s *testweb.Site) testweb.Hostile { return s.Pagination(50, 20) })
	}
	add("docs", (*testweb.Site).DocSite)
	add("calendar", (*testweb.Site).Calendar)
	add("sessions", (*testweb.Site).SessionIDs)
	add("farm", func(s *testweb.Site) testweb.Hostile { return s.LinkFarm(farm) })
	add("loop", (*testweb.Site).Loop)
	return w
}

// legit counts the real pages of the web.
func (w *trapWorld) legit() int {
	n := 0
	for _, s := range w.sites {
		n += len(s.h.Legit)
	}
	return n
}

// trapRun is what one run cost, read from the servers' logs.
type trapRun struct {
	pages  int                 // page requests (robots.txt, sitemaps and feeds aside)
	trap   int                 // of them, into a trap
	byRole map[string]int      // trap requests by the trap's site role
	urls   map[string][]string // the URLs of those requests, by role
}

func (r trapRun) share() float64 {
	if r.pages == 0 {
		return 0
	}
	return float64(r.trap) / float64(r.pages)
}

// trapOutcome is what a series of runs did to the web.
type trapOutcome struct {
	runs []trapRun
	// lost are the real pages a trap defence kept from being fetched: held at the end, or never
	// let into the table; unreached are those never fetched otherwise (a budget not reaching them
	// yet). Both by site role, each page as site+path.
	lost, unreached map[string][]string
	rules           []store.TrapRule
}

func count(m map[string][]string) int {
	n := 0
	for _, l := range m {
		n += len(l)
	}
	return n
}

func (o trapOutcome) total() (pages, trap int) {
	for _, r := range o.runs {
		pages += r.pages
		trap += r.trap
	}
	return pages, trap
}

// tail sums the runs after the first k.
func (o trapOutcome) tail(k int) (pages, trap int) {
	for _, r := range o.runs[min(k, len(o.runs)):] {
		pages += r.pages
		trap += r.trap
	}
	return pages, trap
}

func (o trapOutcome) String() string {
	var b strings.Builder
	for i, r := range o.runs {
		fmt.Fprintf(&b, "run %2d: %5d page fetches, %4d in traps (%4.1f %%) %v\n", i+1, r.pages, r.trap, 100*r.share(), r.byRole)
	}
	pages, trap := o.total()
	fmt.Fprintf(&b, "all runs: %d page fetches, %d in traps (%.1f %%); real pages lost to a defence: %d %v; not reached yet: %d\n",
		pages, trap, 100*float64(trap)/float64(max(pages, 1)), count(o.lost), o.lost, count(o.unreached))
	for _, r := range o.rules {
		if r.Throttled {
			fmt.Fprintf(&b, "  throttled %-40s %-10s since run %d: %d/%d repeats, %d self-found, %d levels; holds %d, probe every %d runs\n",
				r.Unit, r.Reason, r.SinceRun, r.Dups, r.Judged, r.SelfFound, r.MaxLevel-r.MinLevel, r.Held, r.ProbeEvery)
		}
	}
	return b.String()
}

// dayClock is the runs' clock: one day per run, as strata run from cron would see it.
type dayClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *dayClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *dayClock) next() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(24 * time.Hour)
	return c.t
}

// trapCrawl is a database crawling a web run after run, each run a whole cycle (crawl, recalc,
// links) as strata run does it.
type trapCrawl struct {
	t     testing.TB
	db    *store.DB
	cyc   *crawler.Cycle
	clock *dayClock
}

func newTrapCrawl(t testing.TB, policy string, budget int, seeds []store.NewSeed) *trapCrawl {
	t.Helper()
	ctx := t.Context()
	dir := t.TempDir()
	db, err := store.Open(ctx, filepath.Join(dir, "strata.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.AddSeeds(ctx, seeds); err != nil {
		t.Fatal(err)
	}
	conf, err := config.Load(config.Options{WorkDir: dir, Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	conf.Crawl.UserAgent = userAgent
	conf.Crawl.Workers = 16
	conf.Politeness.LoopbackDelay = time.Millisecond
	conf.Frequency.Policy = policy
	conf.Optimizer.Budget = budget
	setup := crawler.SetupOf(conf)
	setup.Crawl.Log = slog.New(slog.DiscardHandler)
	c := &trapCrawl{t: t, db: db, clock: &dayClock{t: time.Date(2026, 1, 1, 3, 0, 0, 0, time.UTC)}}
	setup.Crawl.Now = c.clock.Now
	if c.cyc, err = crawler.Open(ctx, db, nil, setup); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.cyc.Close)
	return c
}

// run plays one run, a day after the last.
func (c *trapCrawl) run() *crawler.Stats {
	c.t.Helper()
	ctx := c.t.Context()
	now := c.clock.next()
	run, err := c.db.BeginRun(ctx, now, 0)
	if err != nil {
		c.t.Fatal(err)
	}
	st, err := c.cyc.Crawl(ctx, crawler.Run{ID: run, Start: now})
	if err != nil {
		c.t.Fatal(err)
	}
	if _, _, err := c.cyc.After(ctx, run); err != nil {
		c.t.Fatal(err)
	}
	if err := c.db.FinishRun(ctx, store.Run{ID: run, EndedAt: now, Status: "completed"}); err != nil {
		c.t.Fatal(err)
	}
	return st
}

// play crawls the web from scratch for runs runs with the policy and budget (pages per run, 0:
// none) given.
func (w *trapWorld) play(t testing.TB, policy string, budget, runs int) trapOutcome {
	t.Helper()
	ctx := t.Context()
	var seeds []store.NewSeed
	for _, s := range w.sites {
		seeds = append(seeds, store.NewSeed{URL: s.site.URL("/"), Host: s.site.Host(), Level: trapLevel, FrMax: 1})
	}
	c := newTrapCrawl(t, policy, budget, seeds)
	db := c.db
	out := trapOutcome{}
	first := len(w.web.Requests())
	seen := first
	for range runs {
		c.run()
		reqs := w.web.Requests()
		r := trapRun{byRole: map[string]int{}, urls: map[string][]string{}}
		for _, q := range reqs[seen:] {
			ts := w.named[q.Site]
			if ts == nil || q.Path == "/robots.txt" || strings.HasPrefix(q.Path, "/sitemap") {
				continue
			}
			r.pages++
			if ts.h.Trap != nil && ts.h.Trap(q.Path) {
				r.trap++
				r.byRole[ts.role]++
				r.urls[ts.role] = append(r.urls[ts.role], ts.site.URL(q.Path))
			}
		}
		seen = len(reqs)
		out.runs = append(out.runs, r)
	}
	fetched := map[string]bool{}
	for _, q := range w.web.Requests()[first:] {
		if q.Status == 200 {
			fetched[q.Site+q.Path] = true
		}
	}
	held, err := db.HeldURLs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	out.lost, out.unreached = map[string][]string{}, map[string][]string{}
	for _, s := range w.sites {
		for _, p := range s.h.Legit {
			if fetched[s.site.Name+p] {
				continue
			}
			if _, ok := held[s.site.URL(p)]; ok {
				out.lost[s.role] = append(out.lost[s.role], s.site.Name+p)
			} else {
				out.unreached[s.role] = append(out.unreached[s.role], s.site.Name+p)
			}
		}
	}
	if out.rules, err = db.TrapRules(ctx); err != nil {
		t.Fatal(err)
	}
	return out
}

// throttledRoles returns the site roles that have a throttled trap rule.
func (w *trapWorld) throttledRoles(o trapOutcome) map[string]bool {
	out := map[string]bool{}
	for _, r := range o.rules {
		for _, s := range w.sites {
			if r.Throttled && strings.HasPrefix(r.Unit, s.site.Host()+"/") {
				out[s.role] = true
			}
		}
	}
	return out
}

var trapRoles = []string{"calendar", "sessions", "farm", "loop"}

// throttledSince returns the run in which the trap of role was throttled (the run count when it was
// not).
func (w *trapWorld) throttledSince(o trapOutcome, role string) int64 {
	since := int64(len(o.runs))
	for _, r := range o.rules {
		for _, s := range w.sites {
			if s.role == role && r.Throttled && strings.HasPrefix(r.Unit, s.site.Host()+"/") && r.SinceRun < since {
				since = r.SinceRun
			}
		}
	}
	return since
}

// covered reports whether a throttled rule's unit covers the URL u.
func (w *trapWorld) covered(o trapOutcome, u string) bool {
	pu, err := url.Parse(u)
	if err != nil || !traps.Patterned(pu) {
		return false
	}
	for _, r := range o.rules {
		if r.Throttled && r.Unit == traps.Unit(pu) {
			return true
		}
	}
	return false
}

// TestTrapWorldLosesNothingAndPaysLittle plays the trap world without a budget and with one of 10 %
// of its real pages: no real page may be held back, every trap must be throttled after at most 30
// of its pages were fetched, and cost at most a probe per run after that. The world is small, with a
// trap on 4 of its 13 sites, so its shares of a run mean little; BenchmarkTrapWorld measures those
// on the web.
func TestTrapWorldLosesNothingAndPaysLittle(t *testing.T) {
	w := newTrapWorld(t, 4, 500)
	legit := w.legit()
	tests := []struct {
		name   string
		policy string
		budget int
		runs   int
	}{
		{"no budget", "bouras", 0, 4},
		{"budget 10%", "optimal", legit / 10, 16},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := w.play(t, tt.policy, tt.budget, tt.runs)
			t.Logf("%d real pages, budget %d:\n%s", legit, tt.budget, o)
			if n := count(o.lost); n != 0 {
				t.Errorf("%d real pages held back by a trap defence: %v", n, o.lost)
			}
			if n := count(o.unreached); tt.budget == 0 && n != 0 {
				t.Errorf("%d real pages never fetched without a budget: %v", n, o.unreached)
			}
			throttled := w.throttledRoles(o)
			for _, role := range trapRoles {
				if !throttled[role] {
					t.Errorf("the %s trap is not throttled after %d runs", role, tt.runs)
				}
			}
			for _, role := range trapRoles {
				since := w.throttledSince(o, role)
				learnt := 0
				for _, r := range o.runs[:since] {
					learnt += r.byRole[role]
				}
				if learnt > 30 {
					t.Errorf("the %s trap took %d fetches until it was throttled in run %d, want at most 30", role, learnt, since)
				}
				// After the throttle the trap may not grow: its rule's URLs cost at most a probe per
				// run, and no trap page is fetched for the first time but a probe. A trap page the
				// rule does not cover and that was fetched before (/loop/a/b/ has no loop in its URL
				// yet) is an ordinary known page: it is revisited at its own rate, not counted.
				known := map[string]bool{}
				for _, r := range o.runs[:since] {
					for _, u := range r.urls[role] {
						known[u] = true
					}
				}
				costly := 0
				for _, r := range o.runs[since:] {
					for _, u := range r.urls[role] {
						if !known[u] || w.covered(o, u) {
							costly++
						}
						known[u] = true
					}
				}
				if runs := len(o.runs) - int(since); costly > runs {
					t.Errorf("the %s trap took %d fetches of new or held pages in the %d runs after it was throttled, want at most one a run", role, costly, runs)
				}
			}
		})
	}
}

// TestTrapClearsWhenTheSiteChanges throttles a farm of near-identical pages, then gives its pages
// text of their own: the probes bring new text five runs in a row, the farm is cleared, and every
// page it held is fetched.
func TestTrapClearsWhenTheSiteChanges(t *testing.T) {
	web := testweb.New(t)
	s := web.AddSite(t)
	const n = 60
	var changed atomic.Bool
	var index strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&index, `<a href="/many/%d.html">%d</a> `, i, i)
	}
	s.Page("/", "<html><body><p>Entries</p>"+index.String()+"</body></html>")
	s.HandlePrefix("/many/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		text := "Entry " + strings.TrimPrefix(r.URL.Path, "/many/")
		if changed.Load() {
			text = fmt.Sprintf("Entry %s: %s", r.URL.Path, strings.Repeat(fmt.Sprintf("word%c ", 'a'+len(r.URL.Path)%26), 3)+r.URL.Path[len("/many/"):])
			text = strings.Map(func(c rune) rune { // numbers are set aside: spell them out
				if c >= '0' && c <= '9' {
					return 'a' + (c - '0')
				}
				return c
			}, text)
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<html><body><p>%s</p><a href="/">back</a></body></html>`, text)
	}))
	c := newTrapCrawl(t, "nutch", 0, []store.NewSeed{{URL: s.URL("/"), Host: s.Host(), Level: 2, FrMax: 1}})
	farmFetches := func() map[string]bool {
		got := map[string]bool{}
		for _, r := range web.RequestsTo(s) {
			if strings.HasPrefix(r.Path, "/many/") {
				got[r.Path] = true
			}
		}
		return got
	}
	c.run()
	first := len(farmFetches())
	rules, err := c.db.TrapRules(t.Context())
	if err != nil || len(rules) != 1 || !rules[0].Throttled || first >= n {
		t.Fatalf("after run 1: %d of %d farm pages fetched, rules %+v, %v; want the farm throttled", first, n, rules, err)
	}
	changed.Store(true)
	cleared := 0
	for run := 2; run <= 9 && cleared == 0; run++ {
		c.run()
		if rules, _ := c.db.TrapRules(t.Context()); len(rules) == 1 && !rules[0].Throttled {
			cleared = run
		}
	}
	c.run() // the released pages are fetched in the run after the one that cleared the farm
	evs, _ := c.db.TrapEvents(t.Context(), 20)
	kinds := ""
	for _, e := range evs {
		kinds += e.Kind + " "
	}
	if cleared == 0 || !strings.Contains(kinds, "cleared") {
		t.Fatalf("the farm was not cleared within 8 runs of its change (events: %s)", kinds)
	}
	if got := len(farmFetches()); got != n {
		t.Errorf("%d of the %d farm pages fetched after it was cleared in run %d", got, n, cleared)
	}
	t.Logf("%d farm pages fetched in run 1, cleared in run %d, events: %s", first, cleared, kinds)
}

// BenchmarkTrapWorld measures the trap defences on the web: 200 sites of 50 numbered pages,
// a documentation site with 59 release notes, and four sites with a trap each (a calendar, session
// ids, a farm of 5,000 near-identical pages, a loop) — without a budget (default policy, 6 runs)
// and under optimizer.budget at 10 and 20 % of the real pages (optimal policy, 30 runs). It reports
// real pages held back by a defence, and the share of fetches spent in traps. Nothing here runs
// without -bench, and every request goes to 127.0.0.0/8:
//
//	go test ./crawler/ -run '^$' -bench '^BenchmarkTrapWorld$' -benchtime 1x -timeout 60m -v
func BenchmarkTrapWorld(b *testing.B) {
	w := newTrapWorld(b, 200, 5000)
	legit := w.legit()
	for _, c := range []struct {
		name, policy string
		budget, runs int
	}{
		{"no-budget", "bouras", 0, 6},
		{"budget-10pct", "optimal", legit / 10, 30},
		{"budget-20pct", "optimal", legit / 5, 30},
	} {
		b.Run(c.name, func(b *testing.B) {
			for range b.N {
				o := w.play(b, c.policy, c.budget, c.runs)
				b.Logf("%d real pages, policy %s, budget %d:\n%s", legit, c.policy, c.budget, o)
				pages, trap := o.total()
				tp, tt := o.tail(5)
				worst := 0.0
				for _, r := range o.runs {
					worst = max(worst, r.share())
				}
				b.ReportMetric(float64(count(o.lost)), "held-back")
				b.ReportMetric(float64(count(o.unreached)), "not-reached")
				b.ReportMetric(100*float64(trap)/float64(max(pages, 1)), "%trap-all")
				b.ReportMetric(100*float64(tt)/float64(max(tp, 1)), "%trap-after-5")
				b.ReportMetric(100*worst, "%trap-worst-run")
			}
		})
	}
}
