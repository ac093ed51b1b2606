package crawler_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/strata-crawler/strata/crawler"
	"github.com/strata-crawler/strata/internal/store"
	"github.com/strata-crawler/strata/internal/testweb"
	"github.com/strata-crawler/strata/internal/urlnorm"
)

// gatedDocs is the crawler's sitemap and feed fetcher through h's client, hence through its gate,
// as the command line wires it.
func gatedDocs(h *harness) crawler.DocFetcher {
	return func(ctx context.Context, u string) (io.ReadCloser, time.Time, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err != nil {
			return nil, time.Time{}, err
		}
		resp, err := h.client.HTTPClient().Do(req)
		if err != nil {
			return nil, time.Time{}, err
		}
		if resp.StatusCode != http.StatusOK {
			resp.Body.Close()
			return nil, time.Time{}, fmt.Errorf("status %d", resp.StatusCode)
		}
		return resp.Body, time.Time{}, nil
	}
}

// gapsAtLeast reports every gap in the site's log, between the end of one response and the next
// request, that is shorter than least.
func gapsAtLeast(t *testing.T, web *testweb.Web, s *testweb.Site, least time.Duration) {
	t.Helper()
	reqs := web.RequestsTo(s)
	for i := 1; i < len(reqs); i++ {
		if gap := reqs[i].Start.Sub(reqs[i-1].End); gap < least {
			t.Errorf("%s: only %v between %s and %s, want at least %v", s.Name, gap, reqs[i-1].Path, reqs[i].Path, least)
		}
	}
}

// TestCrawlDelayHoldsForEveryRequest is issue 18's first defect, seen from the servers: on hosts
// whose robots.txt says Crawl-delay, every request — the sitemap right after the robots.txt, the
// pages, a retry after a 429 — comes at least that long after the previous response ended, within a
// run and from the next run (a new gate, as in a new process) too. A host without a Crawl-delay
// beside them keeps its own, shorter, gap.
func TestCrawlDelayHoldsForEveryRequest(t *testing.T) {
	const crawlDelay = 400 * time.Millisecond
	h := newHarness(t, harnessOptions{delay: 20 * time.Millisecond})
	slow := h.web.AddSites(t, 2)
	plain := h.web.AddSite(t)
	var seeds []string
	for i, s := range append(slow, plain) {
		robots := "User-agent: *\nAllow: /\n"
		if i < len(slow) {
			robots = fmt.Sprintf("User-agent: *\nCrawl-delay: %.1f\n", crawlDelay.Seconds())
		}
		s.Robots(robots)
		s.Handle("/sitemap.xml", testweb.Text("application/xml", `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`+
			`<url><loc>`+s.URL("/listed")+`</loc></url></urlset>`))
		s.Page("/", "<p>home</p>")
		s.Page("/listed", "<p>listed in the sitemap</p>")
		s.Handle("/busy", retryOnce(time.Second, "<p>finally</p>"))
		seeds = append(seeds, s.URL("/"), s.URL("/busy"))
	}
	h.seed(0, 1, seeds...)
	h.cfg.Docs = gatedDocs(h)
	h = rewire(h, func(string) bool { return true })
	h.mustCrawl()
	h = rewire(h, func(string) bool { return true }) // the next process: a gate of its own
	h.mustCrawl()

	for _, s := range slow {
		reqs := h.web.RequestsTo(s)
		var paths []string
		for _, r := range reqs {
			paths = append(paths, r.Path)
		}
		// robots.txt, the sitemap, the pages, the retry; then the pages again in the second run.
		if len(reqs) < 7 || reqs[0].Path != "/robots.txt" || reqs[1].Path != "/sitemap.xml" {
			t.Errorf("%s: requests %v; want robots.txt, the sitemap, then the pages and the retry, twice", s.Name, paths)
		}
		gapsAtLeast(t, h.web, s, crawlDelay)
	}
	gapsAtLeast(t, h.web, plain, h.delay)
}

// TestCrawlGapsAcrossRuns: the gap a slow response earned (here the delay factor 3 times 400 ms)
// holds for the next process too, not only the delay after the last recorded fetch.
func TestCrawlGapsAcrossRuns(t *testing.T) {
	const slow, factor = 400 * time.Millisecond, 3
	h := newHarness(t, harnessOptions{delay: 20 * time.Millisecond, factor: factor})
	s := h.web.AddSite(t)
	s.Handle("/slow", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(slow)
		fmt.Fprint(w, "<p>slow</p>")
	}))
	h.seed(0, 1, s.URL("/slow"))
	h.mustCrawl()
	h = rewire(h, func(string) bool { return true }) // the next process
	h.mustCrawl()
	reqs := h.web.RequestsTo(s)
	if len(reqs) != 3 || reqs[1].Path != "/slow" || reqs[2].Path != "/slow" {
		t.Fatalf("requests %+v; want robots.txt, then /slow once a run", reqs)
	}
	if gap := reqs[2].Start.Sub(reqs[1].End); gap < factor*slow {
		t.Errorf("the next run came %v after the slow response, want at least the %v it earned", gap, factor*slow)
	}
}

// TestCrawlDoesNotWaitOutAGapItCannotUse: the rest of issue 18's fourth defect. A slow page earned
// its host a long gap (150 s after a 30 s timeout there; 100 s here), and the run waited it out
// before finding that the host had nothing left to fetch. The next run, right after, keeps that gap:
// with a max duration shorter than it, it gives the host up at once without contacting it.
func TestCrawlDoesNotWaitOutAGapItCannotUse(t *testing.T) {
	h := newHarness(t, harnessOptions{delay: 20 * time.Millisecond, factor: 100, maxLatencyGap: time.Hour})
	s := h.web.AddSite(t)
	s.Handle("/slow", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(time.Second) // × 100: a gap of 100 s, and a few ms × 100 after the others
		fmt.Fprint(w, "<p>slow</p>")
	}))
	s.Page("/quick", "<p>quick</p>")
	h.seed(0, 1, s.URL("/quick"), s.URL("/slow"))
	st, err := crawlWithin(t, h, 30*time.Second)
	if err != nil || st.Fetched != 2 {
		t.Fatalf("stats %+v, %v; want both pages fetched and the stage finished", st, err)
	}
	h.cfg.MaxDuration = time.Minute
	h = rewire(h, func(string) bool { return true }) // the next process
	st, err = crawlWithin(t, h, 30*time.Second)
	if !errors.Is(err, crawler.ErrStopped) || st.Dropped != 1 || st.Fetched != 0 {
		t.Errorf("next run: %+v, %v; want the host given up, not contacted", st, err)
	}
	if n := len(h.web.RequestsTo(s)); n != 3 {
		t.Errorf("the site got %d requests, want 3 (robots.txt and two pages, in the first run)", n)
	}
}

// TestCrawlDelayLongerThanThePageTimeout: a Crawl-delay far longer than the page timeout is waited
// for between requests, not inside one, where it would count against the page's deadline and end
// in a timeout.
func TestCrawlDelayLongerThanThePageTimeout(t *testing.T) {
	h := newHarness(t, harnessOptions{delay: 20 * time.Millisecond, pageTimeout: 300 * time.Millisecond})
	s := h.web.AddSite(t)
	s.Robots("User-agent: *\nCrawl-delay: 1\n")
	s.Page("/a", "<p>a</p>")
	s.Page("/b", "<p>b</p>")
	h.seed(0, 1, s.URL("/a"), s.URL("/b"))
	st := h.mustCrawl()
	if st.Fetched != 2 || st.Errors != 0 {
		t.Errorf("stats %+v; want both pages fetched without error", st)
	}
	gapsAtLeast(t, h.web, s, time.Second)
}

// crawlWithin runs one stage like h.crawl, but fails the test if the stage is still running after
// limit: the stages below must end without waiting for gaps of an hour or more.
func crawlWithin(t *testing.T, h *harness, limit time.Duration) (*crawler.Stats, error) {
	t.Helper()
	start := time.Now()
	id, err := h.db.BeginRun(t.Context(), start, 0)
	if err != nil {
		t.Fatal(err)
	}
	h.run = id
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	type result struct {
		st  *crawler.Stats
		err error
	}
	done := make(chan result, 1)
	go func() {
		st, err := h.c.Crawl(ctx, crawler.Run{ID: id, Start: start})
		done <- result{st, err}
	}()
	select {
	case r := <-done:
		return r.st, r.err
	case <-time.After(limit):
		cancel()
		<-done
		t.Fatalf("the stage was still running %v after it started: it waited for a gap it could not use", limit)
		return nil, nil
	}
}

// TestCrawlEndsOnceTheBudgetIsSpent is issue 18's fourth defect: a run whose budget was spent went on
// waiting for a domain whose next request was far off (there, 150 s after a slow page; here, a
// Crawl-delay of an hour) before it could notice that it had nothing left to fetch.
func TestCrawlEndsOnceTheBudgetIsSpent(t *testing.T) {
	h := newHarness(t, harnessOptions{delay: 20 * time.Millisecond})
	far, near := h.web.AddSite(t), h.web.AddSite(t)
	far.Robots("User-agent: *\nCrawl-delay: 3600\n")
	far.Page("/", "<p>far</p>")
	for _, p := range []string{"/1", "/2", "/3"} {
		near.Page(p, "<p>near "+p+"</p>")
	}
	h.seed(0, 1, far.URL("/"), near.URL("/1"), near.URL("/2"), near.URL("/3"))
	h.cfg.Budget = 2
	h = rewire(h, func(string) bool { return true })
	st, err := crawlWithin(t, h, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if st.Fetched != 2 || h.web.Count(far, "/") != 0 {
		t.Errorf("stats %+v, far / fetched %d times; want the budget's 2 pages, from the near site", st, h.web.Count(far, "/"))
	}
}

// TestCrawlGivesUpWhatCannotStartInTime: the other half of the fourth defect. A domain whose next
// request may not start before the stage's max duration is over is given up at once, and when that
// leaves nothing, the stage ends instead of waiting for the window to close; its URLs stay due.
func TestCrawlGivesUpWhatCannotStartInTime(t *testing.T) {
	h := newHarness(t, harnessOptions{delay: 20 * time.Millisecond, maxDuration: time.Hour})
	far, near := h.web.AddSite(t), h.web.AddSite(t)
	far.Robots("User-agent: *\nCrawl-delay: 7200\n")
	far.Page("/1", "<p>far 1</p>")
	far.Page("/2", "<p>far 2</p>")
	near.Page("/", "<p>near</p>")
	h.seed(0, 1, far.URL("/1"), far.URL("/2"), near.URL("/"))
	st, err := crawlWithin(t, h, 30*time.Second)
	if !errors.Is(err, crawler.ErrStopped) || !st.Stopped || st.Dropped != 1 {
		t.Fatalf("err %v, stats %+v; want the stage stopped, the far domain given up", err, st)
	}
	if st.Fetched != 1 || len(h.web.RequestsTo(far)) != 1 {
		t.Errorf("stats %+v, far site got %d requests; want the near page, and only robots.txt from the far site", st, len(h.web.RequestsTo(far)))
	}
	if hosts, _ := h.db.DueHosts(t.Context()); hosts[far.Host()] != 2 {
		t.Errorf("due after the stage: %v; want the far site's 2 pages", hosts)
	}
}

// refusedOn returns host:port on ip where nothing listens: connections are refused.
func refusedOn(t *testing.T, ip netip.Addr) string {
	t.Helper()
	ln, err := net.Listen("tcp", netip.AddrPortFrom(ip, 0).String())
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// TestCrawlBacksOffUnreachableHosts is issue 18's fifth defect: a link to a port that refuses
// connections (127.0.0.1:8080 next to the site that linked it) stayed due, and was tried, in every
// run. A host that cannot be reached now waits 1, 2, 4… runs, whether its robots.txt or a page
// failed, and the rest of its domain is crawled as usual.
func TestCrawlBacksOffUnreachableHosts(t *testing.T) {
	const runs = 9
	h := newHarness(t, harnessOptions{delay: 5 * time.Millisecond})
	site := h.web.AddSite(t)
	dead := refusedOn(t, site.IP) // the same politeness domain as site: its address
	// The home page changes at every visit, so that the selective rule never skips what it links.
	var visits atomic.Int64
	site.Handle("/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<p>home, edition %s</p><a href="/a">a</a><a href="http://%s/">a server that is not running</a>`,
			strings.Repeat("I", int(visits.Add(1))), dead)
	}))
	site.Page("/a", "<p>a</p>")
	gone := h.web.AddSite(t) // answers in the first run, then goes away: robots.txt stays cached
	gone.Page("/", "<p>soon gone</p>")
	h.seed(1, 1, site.URL("/"))
	h.seed(0, 1, gone.URL("/"))

	var deadTries, goneTries []int
	lastDead, lastGone := 0, 0
	for run := 1; run <= runs; run++ {
		if run == 2 {
			gone.Close()
		}
		h.mustCrawl()
		if n := h.sentTo(dead); n > lastDead {
			deadTries, lastDead = append(deadTries, run), n
		}
		if n := h.sentTo(gone.Host()); n > lastGone {
			goneTries, lastGone = append(goneTries, run), n
		}
		if n := h.web.Count(site, "/a"); n != run {
			t.Errorf("run %d: %s/a fetched %d times in all, want once a run: the refused port must not stop its domain", run, site.Name, n)
		}
	}
	if want := []int{1, 2, 4, 8}; fmt.Sprint(deadTries) != fmt.Sprint(want) {
		t.Errorf("the refused port was tried in runs %v, want %v", deadTries, want)
	}
	if want := []int{1, 2, 3, 5, 9}; fmt.Sprint(goneTries) != fmt.Sprint(want) {
		t.Errorf("the site that went away was tried in runs %v, want %v", goneTries, want)
	}
	if state, statuses := h.urlState("http://" + dead + "/"); state != "active" || len(statuses) != 0 {
		t.Errorf("the refused URL: %s %v; want active, never answered", state, statuses)
	}
}

// TestCrawlURLAsWritten is issue 18's seventh defect: the seed /another/path?, which robots.txt
// disallows, was requested as /another/path, because the normaliser dropped the empty query. The URL
// requested and matched against robots.txt is the one the site wrote.
func TestCrawlURLAsWritten(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	s := h.web.AddSite(t)
	s.Robots("User-agent: *\nDisallow: /another/path?\n", "/another/path?")
	s.Page("/another/path", "<p>allowed</p>")
	s.Page("/q", "<p>q</p>")
	// As strata seed add enters them: normalised.
	var seeds []string
	for _, raw := range []string{s.URL("/another/path?"), s.URL("/another/path"), s.URL("/q?")} {
		u, err := urlnorm.Normalize(raw)
		if err != nil {
			t.Fatal(err)
		}
		seeds = append(seeds, u)
	}
	h.seed(0, 1, seeds...)
	st := h.mustCrawl()
	h.noViolations(true)
	if st.Blocked != 1 || st.Fetched != 2 {
		t.Errorf("stats %+v; want /another/path? blocked, the other two fetched", st)
	}
	if state, _ := h.urlState(s.URL("/another/path?")); state != "blocked" {
		t.Errorf("/another/path? is %s, want blocked", state)
	}
	var paths []string
	for _, r := range h.web.RequestsTo(s) {
		paths = append(paths, r.Path)
	}
	if got := strings.Join(paths, " "); got != "/robots.txt /another/path /q?" && got != "/robots.txt /q? /another/path" {
		t.Errorf("the site saw %q; want robots.txt, /another/path and /q? as written", got)
	}
}

var _ crawler.PoliteStore = (*store.DB)(nil)
