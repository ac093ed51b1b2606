package crawler_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/strata-crawler/strata/crawler"
	"github.com/strata-crawler/strata/internal/config"
	"github.com/strata-crawler/strata/internal/store"
	"github.com/strata-crawler/strata/internal/testweb"
)

// dayCycle is a database crawled by the whole cycle (crawl, then recalc and links) once per virtual
// day, wired from the default configuration as strata run wires it.
type dayCycle struct {
	t     *testing.T
	db    *store.DB
	conf  *config.Config
	cyc   *crawler.Cycle
	clock *dayClock
	runs  int
}

// newDayCycle opens a database with seeds and a cycle on the default configuration, with loopback
// politeness lowered to keep the test fast and with whatever edit changes.
func newDayCycle(t *testing.T, seeds []store.NewSeed, edit func(*config.Config)) *dayCycle {
	t.Helper()
	dir := t.TempDir()
	conf, err := config.Load(config.Options{WorkDir: dir, Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	conf.Crawl.UserAgent = userAgent
	conf.Politeness.LoopbackDelay, conf.Politeness.DelayFactor = time.Millisecond, 1
	if edit != nil {
		edit(conf)
	}
	db, err := store.Open(t.Context(), filepath.Join(dir, "strata.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.AddSeeds(t.Context(), seeds); err != nil {
		t.Fatal(err)
	}
	c := &dayCycle{t: t, db: db, conf: conf, clock: &dayClock{t: time.Date(2026, 3, 1, 3, 0, 0, 0, time.UTC)}}
	c.reopen(nil)
	return c
}

// reopen wires the cycle again, as the next strata run would, with whatever edit changes in its setup.
func (c *dayCycle) reopen(edit func(*crawler.Setup)) {
	c.t.Helper()
	if c.cyc != nil {
		c.cyc.Close()
	}
	setup := crawler.SetupOf(c.conf)
	setup.Crawl.Log = slog.New(slog.DiscardHandler)
	setup.Crawl.Now = c.clock.Now
	if edit != nil {
		edit(&setup)
	}
	cyc, err := crawler.Open(c.t.Context(), c.db, nil, setup)
	if err != nil {
		c.t.Fatal(err)
	}
	c.cyc = cyc
	c.t.Cleanup(cyc.Close)
}

// run plays one run, a day after the last, under ctx. Like strata run, it recalculates and records
// links after a complete crawl or one its max duration stopped, not after a cancelled one; either
// way the run is finished. It returns the crawl's counts and its error, ErrStopped included.
func (c *dayCycle) run(ctx context.Context) (*crawler.Stats, error) {
	c.t.Helper()
	now := c.clock.next()
	c.runs++
	id, err := c.db.BeginRun(c.t.Context(), now, 0)
	if err != nil {
		c.t.Fatal(err)
	}
	st, cerr := c.cyc.Crawl(ctx, crawler.Run{ID: id, Start: now})
	if cerr != nil && !errors.Is(cerr, crawler.ErrStopped) {
		c.t.Fatal(cerr)
	}
	status := "completed"
	if cerr != nil {
		status = "interrupted"
	}
	if ctx.Err() == nil {
		if _, _, err := c.cyc.After(c.t.Context(), id); err != nil {
			c.t.Fatal(err)
		}
	}
	if err := c.db.FinishRun(c.t.Context(), store.Run{ID: id, EndedAt: now, Status: status}); err != nil {
		c.t.Fatal(err)
	}
	return st, cerr
}

// mustRun plays one run that must complete.
func (c *dayCycle) mustRun() *crawler.Stats {
	c.t.Helper()
	st, err := c.run(c.t.Context())
	if err != nil {
		c.t.Fatalf("run %d: %v", c.runs, err)
	}
	return st
}

// fetchedSince returns the paths of site requested from the log's entry from on (robots.txt and
// sitemaps aside), each with how often, and the log's length.
func fetchedSince(web *testweb.Web, site *testweb.Site, from int) (map[string]int, int) {
	reqs := web.RequestsTo(site)
	out := map[string]int{}
	for _, q := range reqs[from:] {
		if q.Path != "/robots.txt" && !strings.HasPrefix(q.Path, "/sitemap") {
			out[q.Path]++
		}
	}
	return out, len(reqs)
}

// links is an HTML page that links to paths.
func links(title string, paths ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "<html><head><title>%s</title></head><body><h1>%s</h1><ul>", title, title)
	for _, p := range paths {
		fmt.Fprintf(&b, `<li><a href="%s">%s</a></li>`, p, p)
	}
	b.WriteString("</ul></body></html>")
	return b.String()
}

// TestStoppedRunLeavesDiscoveredPagesDue stops a run after its hub found new pages and before it
// fetched them — by its max duration, or by a cancelled context as SIGINT does — and checks that the
// next run fetches every one of them, although the hub is unchanged by then and its known children
// are quiet, so that the selective rule skips them (issue 17: such pages waited 3 runs). The URLs
// the stopped run did not reach stay due.
func TestStoppedRunLeavesDiscoveredPagesDue(t *testing.T) {
	for _, how := range []string{"max duration", "cancelled"} {
		t.Run(how, func(t *testing.T) {
			web := testweb.New(t)
			s := web.AddSite(t)
			// The hub / links 10 pages that never change; before the third run it links 4 more. 10
			// known children of 14 are enough for the selective rule to judge the hub in the fourth.
			var old, added []string
			for i := range 10 {
				old = append(old, fmt.Sprintf("/old%d", i))
			}
			for i := range 4 {
				added = append(added, fmt.Sprintf("/new%d", i))
			}
			s.Page("/", links("hub", old...))
			for i, p := range append(append([]string{}, old...), added...) {
				s.Page(p, "<html><body><p>The page "+editToken(1000+i)+" says the same thing every day.</p></body></html>")
			}
			// The first page fetched after the hub in the third run stops the run: it waits for the
			// stage's deadline to pass, or cancels the run's context, before it answers.
			var mu sync.Mutex
			var stop func()
			s.Handle("/old0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				f := stop
				mu.Unlock()
				if f != nil {
					f()
				}
				fmt.Fprint(w, "<html><body><p>The page "+editToken(1000)+" says the same thing every day.</p></body></html>")
			}))
			c := newDayCycle(t, []store.NewSeed{{URL: s.URL("/"), Host: s.Host(), Level: 1, FrMax: 1}}, func(conf *config.Config) {
				conf.Frequency.Max = 1 // every page is due every run: the selective rule is all that can leave one out
			})
			c.mustRun()
			c.mustRun()
			s.Page("/", links("hub", append(append([]string{}, old...), added...)...))
			_, logged := fetchedSince(web, s, 0)

			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			const window = time.Second // the stage's max duration: ample for a robots.txt and the hub
			var deadline time.Time
			if how == "max duration" {
				c.reopen(func(s *crawler.Setup) { s.Crawl.MaxDuration = window })
				mu.Lock()
				stop = func() { time.Sleep(time.Until(deadline) + 50*time.Millisecond) }
				mu.Unlock()
			} else {
				mu.Lock()
				stop = cancel
				mu.Unlock()
			}
			deadline = time.Now().Add(window)
			st, err := c.run(ctx)
			mu.Lock()
			stop = nil
			mu.Unlock()
			if !errors.Is(err, crawler.ErrStopped) || !st.Stopped {
				t.Fatalf("third run: err %v, stats %+v; want it stopped", err, st)
			}
			got, next := fetchedSince(web, s, logged)
			if got["/"] == 0 || got["/old0"] == 0 {
				t.Fatalf("the stopped run fetched %v: the test must stop it after the hub, at /old0", got)
			}
			for _, p := range added {
				if got[p] > 0 {
					t.Fatalf("the stopped run fetched %s: the test must stop it before the new pages (fetched %v)", p, got)
				}
			}
			due, err := c.db.DueHosts(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if left := st.Due - st.Done; due[s.Host()] != left || left < len(added) {
				t.Errorf("after the stopped run %d URLs are due, the stage left %d unreached; want the same, the %d new pages among them",
					due[s.Host()], left, len(added))
			}

			if how == "max duration" {
				c.reopen(nil)
			}
			st = c.mustRun()
			got, _ = fetchedSince(web, s, next)
			for _, p := range added {
				if got[p] != 1 {
					t.Errorf("%s, found by the stopped run, was requested %d times in the next run, want 1", p, got[p])
				}
			}
			t.Logf("after the stop: %d fetched, %d left out by the selective rule; fetched %v", st.Fetched, st.SkippedSelective, got)
		})
	}
}

// unchangedSpan reads a page's fetches before run: the run of its last usable fetch, and how many
// runs its fetches show it unchanged for — from the fetch after its last change (or its first
// fetch) to its last fetch. ok is false when it has no usable fetch.
func unchangedSpan(hist []store.HistoryEntry, run int64) (last, span int64, ok bool) {
	var runs []int64
	var changed []bool
	for _, h := range hist {
		if h.RunID >= run || h.Error != "" || (h.Status != http.StatusOK && !h.NotModified) {
			continue
		}
		runs, changed = append(runs, h.RunID), append(changed, h.Changed)
	}
	if len(runs) == 0 {
		return 0, 0, false
	}
	k := len(runs) - 1
	for k > 0 && !changed[k] {
		k--
	}
	return runs[len(runs)-1], runs[len(runs)-1] - runs[k], true
}

// pathOf returns the path of an absolute URL, for short messages.
func pathOf(u string) string {
	if pu, err := url.Parse(u); err == nil {
		return pu.Path
	}
	return u
}

// hiddenWithoutEvidence returns, for the pages of urls that the selective rule left out of run,
// those whose own history does not support it, each with why. A page's own evidence supports being
// left out of run when it has been seen unchanged over at least as many runs as have passed since
// its last fetch: one run of waiting needs two fetches a run apart with no change between them, a
// second run in a row needs the page seen unchanged over two runs, and so on. A page never fetched
// has no evidence at all.
func hiddenWithoutEvidence(t *testing.T, db *store.DB, run int64, urls []string) []string {
	t.Helper()
	var out []string
	for _, u := range urls {
		info, err := db.URLInfo(t.Context(), u)
		if err != nil {
			t.Fatal(err)
		}
		if info.SkippedRun != run {
			continue
		}
		hist, err := db.History(t.Context(), u)
		if err != nil {
			t.Fatal(err)
		}
		last, span, ok := unchangedSpan(hist, run)
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("%s (never fetched, left out by %s)", pathOf(u), pathOf(info.SkippedBy)))
		case run-last > span:
			out = append(out, fmt.Sprintf("%s (left out by %s %d runs after its last fetch, seen unchanged over %d)",
				pathOf(u), pathOf(info.SkippedBy), run-last, span))
		}
	}
	return out
}

// TestSelectiveRuleHidesNothingWithoutEvidence crawls a site of two hub levels — the seed / links
// /hub/, which links 8 pages that never change and /hub/busy, which changes every day, and / links
// /other — with the default policy for 8 runs; before the sixth, /hub/ links a new page. It checks
// what issue 17 asks of the selective rule: an unchanged hub never hides, for more than one run, a
// page whose own interval says it is due unless that page's own evidence supports it (the reading
// in hiddenWithoutEvidence), so a skip cannot spread from the seed over the site on the word of
// pages fetched once or twice; a page that changes at every fetch is never left out; a page never
// fetched is never left out.
func TestSelectiveRuleHidesNothingWithoutEvidence(t *testing.T) {
	web := testweb.New(t)
	s := web.AddSite(t)
	leaves := []string{"/hub/busy"}
	for i := range 8 {
		leaves = append(leaves, fmt.Sprintf("/hub/p%d", i))
	}
	s.Page("/", links("home", "/hub/", "/other"))
	s.Page("/other", "<html><body><p>Another page that does not change.</p></body></html>")
	s.Page("/hub/", links("hub", leaves...))
	for i, p := range leaves[1:] {
		s.Page(p, "<html><body><p>A page that does not change: "+editToken(1000+i)+".</p></body></html>")
	}
	var mu sync.Mutex
	day := 0
	s.Handle("/hub/busy", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		d := day
		mu.Unlock()
		fmt.Fprintf(w, "<html><body><p>Today's news: %s.</p></body></html>", editToken(d))
	}))
	c := newDayCycle(t, []store.NewSeed{{URL: s.URL("/"), Host: s.Host(), Level: 2, FrMax: 1}}, nil)
	all := []string{s.URL("/"), s.URL("/other"), s.URL("/hub/")}
	for _, p := range leaves {
		all = append(all, s.URL(p))
	}
	failed := map[string]string{}
	fail := func(check, format string, args ...any) {
		if failed[check] != "" {
			failed[check] += "; "
		}
		failed[check] += fmt.Sprintf(format, args...)
	}
	logged := 0
	var table strings.Builder
	for run := 1; run <= 8; run++ {
		mu.Lock()
		day = run
		mu.Unlock()
		if run == 6 {
			s.Page("/hub/late", "<html><body><p>A page added late.</p></body></html>")
			s.Page("/hub/", links("hub", append(append([]string{}, leaves...), "/hub/late")...))
			all = append(all, s.URL("/hub/late"))
		}
		st := c.mustRun()
		got, n := fetchedSince(web, s, logged)
		logged = n
		var paths []string
		for p := range got {
			paths = append(paths, p)
		}
		sort.Strings(paths)
		fmt.Fprintf(&table, "run %d: %2d fetched, %2d left out: %s\n", run, st.Fetched, st.SkippedSelective, strings.Join(paths, " "))
		if got["/hub/busy"] == 0 {
			fail("busy", "run %d did not fetch /hub/busy, which changed at every fetch", run)
		}
		if run == 6 && got["/hub/late"] == 0 {
			fail("new", "run 6 did not fetch /hub/late, linked by /hub/ since then")
		}
		if hidden := hiddenWithoutEvidence(t, c.db, int64(run), all); len(hidden) > 0 {
			fail("evidence", "run %d: %s", run, strings.Join(hidden, ", "))
		}
	}
	t.Logf("page requests per run:\n%s", table.String())
	knownFailures(t, failed, selectiveKnown)
}

// selectiveKnown are the checks of TestSelectiveRuleHidesNothingWithoutEvidence that fail today,
// with the defect behind each (see knownFailures).
var selectiveKnown = map[string]string{
	"evidence": "frequency.Quiet takes two unchanged fetches as enough evidence for any number of skips up to " +
		"maxSkips (3): in run 3 the seed / leaves out /hub/ and its quiet pages, in run 4 /hub/ (due, as it was skipped) " +
		"leaves them out again, in run 5 / again, so pages seen unchanged over one run wait three",
}
