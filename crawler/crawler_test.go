package crawler_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/strata-crawler/strata/archive"
	"github.com/strata-crawler/strata/crawler"
	"github.com/strata-crawler/strata/filter"
	"github.com/strata-crawler/strata/frequency"
	"github.com/strata-crawler/strata/internal/fetch"
	"github.com/strata-crawler/strata/internal/polite"
	"github.com/strata-crawler/strata/internal/robots"
	"github.com/strata-crawler/strata/internal/store"
	"github.com/strata-crawler/strata/internal/testweb"
)

const userAgent = "strata-test/1.0 (+https://lab.example/strata)"

// harness is a store, a test web and a crawler wired the way the command line wires them.
type harness struct {
	t     *testing.T
	db    *store.DB
	web   *testweb.Web
	gate  *polite.Gate
	c     *crawler.Crawler
	delay time.Duration
	cfg   crawler.Config
	fopts fetch.Options
	runs  int
	last  time.Time // start of the last run
	run   int64     // id of the last run
	arch  *archive.Dir

	gopts  polite.Options // the gate's, but for Loopback
	client *fetch.Client  // the crawler's, through the gate
	sentMu sync.Mutex
	sent   map[string]int // requests that reached the gate's transport, per host[:port]
}

// count wraps the gate's transport so that every request the crawler sends, answered or not, is
// counted per host: a refused connection leaves no trace in a server's log.
func (h *harness) count(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		h.sentMu.Lock()
		h.sent[r.URL.Host]++
		h.sentMu.Unlock()
		return rt.RoundTrip(r)
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// sentTo returns how many requests the crawler sent to host so far.
func (h *harness) sentTo(host string) int {
	h.sentMu.Lock()
	defer h.sentMu.Unlock()
	return h.sent[host]
}

type harnessOptions struct {
	delay        time.Duration // loopback politeness delay
	pageTimeout  time.Duration
	maxBytes     int64
	maxDuration  time.Duration
	allowPrivate func(string) bool
	archive      bool // store versions in an archive under t.TempDir()
	snapshot     bool
	// factor and maxLatencyGap are the gate's delay factor (default 1) and its cap on the gap a
	// slow response earns (default polite's).
	factor        float64
	maxLatencyGap time.Duration
	text          crawler.TextFunc // nil: stripTags
}

func newHarness(t *testing.T, o harnessOptions) *harness {
	t.Helper()
	if o.delay == 0 {
		o.delay = 50 * time.Millisecond
	}
	if o.pageTimeout == 0 {
		o.pageTimeout = 5 * time.Second
	}
	db, err := store.Open(t.Context(), filepath.Join(t.TempDir(), "strata.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	h := &harness{t: t, db: db, web: testweb.New(t), delay: o.delay, sent: map[string]int{}}
	var client *fetch.Client
	if o.factor == 0 {
		o.factor = 1
	}
	h.gopts = polite.Options{Delay: 10 * time.Second, LoopbackDelay: o.delay, DelayFactor: o.factor, MaxLatencyGap: o.maxLatencyGap}
	gopts := h.gopts
	gopts.Loopback = func(ctx context.Context, host string) bool {
		ok, _ := client.LoopbackOnly(ctx, host)
		return ok
	}
	h.gate = polite.New(gopts)
	allow := o.allowPrivate
	if allow == nil {
		allow = func(string) bool { return true }
	}
	h.fopts = fetch.Options{UserAgent: userAgent, PageTimeout: o.pageTimeout, MaxBytes: o.maxBytes, MaxRedirects: -1,
		AllowPrivate: allow, LookupNetIP: h.web.Resolver()}
	h.fopts.Wrap = func(rt http.RoundTripper) http.RoundTripper { return h.count(h.gate.Transport(rt)) }
	client = fetch.New(h.fopts)
	h.client = client
	t.Cleanup(client.Close)
	h.cfg = crawler.Config{UserAgent: userAgent, Workers: 8, PageTimeout: o.pageTimeout, MaxDuration: o.maxDuration,
		Snapshot: o.snapshot, Text: stripTags}
	if o.text != nil {
		h.cfg.Text = o.text
	}
	if o.archive {
		if h.arch, err = archive.Open(filepath.Join(t.TempDir(), "archive")); err != nil {
			t.Fatal(err)
		}
		h.cfg.Archive = h.arch
	}
	robotsClient := client.HTTPClient()
	h.c = crawler.New(db, client, func(ctx context.Context, origin *url.URL) robots.Result {
		return robots.Fetch(ctx, robotsClient, origin, userAgent)
	}, h.gate, h.cfg)
	return h
}

func (h *harness) seed(level, frMax int, urls ...string) {
	h.t.Helper()
	var seeds []store.NewSeed
	for _, u := range urls {
		pu, _ := url.Parse(u)
		seeds = append(seeds, store.NewSeed{URL: u, Host: pu.Host, Level: level, FrMax: frMax})
	}
	if _, err := h.db.AddSeeds(h.t.Context(), seeds); err != nil {
		h.t.Fatal(err)
	}
}

// stripTags is a stand-in text extractor: the tests here are about the pipeline, not about text.
func stripTags(body []byte, contentType, pageURL string) crawler.Text {
	var b strings.Builder
	in := false
	for _, r := range string(body) {
		switch {
		case r == '<':
			in = true
		case r == '>':
			in = false
			b.WriteByte(' ')
		case !in:
			b.WriteRune(r)
		}
	}
	return crawler.Text{Body: strings.Join(strings.Fields(b.String()), " ")}
}

// crawl runs one stage as a run of its own. Like the command line, it starts each run in a second of
// its own, as run directories are named to the second.
func (h *harness) crawl() (*crawler.Stats, error) {
	h.t.Helper()
	h.runs++
	if next := h.last.Truncate(time.Second).Add(time.Second); h.arch != nil && time.Now().Before(next) {
		time.Sleep(time.Until(next))
	}
	start := time.Now()
	if h.cfg.Now != nil { // a run starts on the stage's clock
		start = h.cfg.Now()
	}
	h.last = start
	id, err := h.db.BeginRun(h.t.Context(), start, 0)
	if err != nil {
		h.t.Fatal(err)
	}
	h.run = id
	return h.c.Crawl(h.t.Context(), crawler.Run{ID: id, Start: start})
}

func (h *harness) mustCrawl() *crawler.Stats {
	h.t.Helper()
	st, err := h.crawl()
	if err != nil {
		h.t.Fatalf("crawl: %v", err)
	}
	return st
}

func (h *harness) noViolations(robotsFirst bool) {
	h.t.Helper()
	for _, v := range h.web.Violations(testweb.CheckOptions{MinGap: h.delay, RobotsFirst: robotsFirst}) {
		h.t.Error(v)
	}
}

// urlState returns a URL's state and its fetches' statuses, newest first.
func (h *harness) urlState(u string) (string, []int) {
	h.t.Helper()
	info, err := h.db.URLInfo(h.t.Context(), u)
	if err != nil {
		h.t.Fatalf("URLInfo(%s): %v", u, err)
	}
	return info.State, info.Statuses
}

// TestCrawlHundredHostsPolitely is the acceptance test: a stage over a loopback web of 100
// hosts finishes with no politeness or robots.txt violation in the servers' own request logs.
func TestCrawlHundredHostsPolitely(t *testing.T) {
	h := newHarness(t, harnessOptions{delay: 100 * time.Millisecond})
	sites := h.web.AddSites(t, 100)
	var seeds []string
	for i, s := range sites {
		s.Robots("User-agent: *\nDisallow: /private\n", "/private")
		for _, p := range []string{"/", "/a", "/b"} {
			s.Page(p, fmt.Sprintf("<html><body><p>site %d page %s</p></body></html>", i, p))
			seeds = append(seeds, s.URL(p))
		}
		s.Page("/private/x", "<p>secret</p>")
		seeds = append(seeds, s.URL("/private/x"))
	}
	h.seed(0, 1, seeds...)
	start := time.Now()
	st := h.mustCrawl()
	t.Logf("100 hosts, 400 due URLs: %v, %d requests", time.Since(start), st.Requests)

	h.noViolations(true)
	if st.Fetched != 300 || st.Blocked != 100 || st.Errors != 0 || st.New != 300 || st.Done != 400 {
		t.Errorf("stats %+v; want 300 fetched (new), 100 blocked, no errors", st)
	}
	for _, s := range sites {
		if n := len(h.web.RequestsTo(s)); n != 4 {
			t.Errorf("%s got %d requests, want robots.txt + 3 pages", s.Name, n)
		}
		for _, r := range h.web.RequestsTo(s) {
			if r.UserAgent != userAgent {
				t.Errorf("%s saw user agent %q", s.Name, r.UserAgent)
			}
		}
	}
	if state, _ := h.urlState(sites[0].URL("/private/x")); state != "blocked" {
		t.Errorf("forbidden URL state %q, want blocked", state)
	}
	// The next run: robots.txt comes from the cache, every page is due again (fr_max 1).
	st = h.mustCrawl()
	h.noViolations(false)
	if st.Fetched != 300 || st.Unchanged != 300 || st.Requests != 300 {
		t.Errorf("second run %+v; want 300 unchanged fetches and no robots.txt request", st)
	}
}

func TestCrawlRobotsOutcomes(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	missing := h.web.AddSite(t) // robots.txt 404: everything allowed
	missing.Page("/", "<p>ok</p>")
	broken := h.web.AddSite(t) // robots.txt 503: nothing this run
	broken.Handle("/robots.txt", testweb.Status(503))
	broken.Page("/", "<p>never</p>")
	moved := h.web.AddSite(t) // robots.txt redirects within the site
	moved.Handle("/robots.txt", testweb.Redirect("/real-robots.txt", http.StatusMovedPermanently))
	moved.Handle("/real-robots.txt", testweb.Text("text/plain", "User-agent: strata-test\nDisallow: /no\n"))
	moved.Page("/yes", "<p>yes</p>")
	moved.Page("/no", "<p>no</p>")
	big := h.web.AddSite(t) // 600 KB robots.txt: only the first 500 KiB count
	big.Handle("/robots.txt", testweb.Text("text/plain", "User-agent: *\nDisallow: /early\n"+
		strings.Repeat("# padding line to push the next rule past the limit\n", 12000)+"Disallow: /late\n"))
	big.Page("/early", "<p>e</p>")
	big.Page("/late", "<p>l</p>")
	h.seed(0, 1, missing.URL("/"), broken.URL("/"), moved.URL("/yes"), moved.URL("/no"), big.URL("/early"), big.URL("/late"))

	st := h.mustCrawl()
	h.noViolations(false)
	if n := h.web.Count(missing, "/"); n != 1 {
		t.Errorf("site without robots.txt: / fetched %d times, want 1", n)
	}
	if n := len(h.web.RequestsTo(broken)); n != 1 {
		t.Errorf("site whose robots.txt is 503 got %d requests, want only robots.txt", n)
	}
	if state, statuses := h.urlState(broken.URL("/")); state != "active" || len(statuses) != 0 {
		t.Errorf("page behind a 503 robots.txt: %s %v; want active, never fetched (due next run)", state, statuses)
	}
	if h.web.Count(moved, "/no") != 0 || h.web.Count(moved, "/yes") != 1 {
		t.Error("redirected robots.txt not applied")
	}
	if h.web.Count(big, "/early") != 0 || h.web.Count(big, "/late") != 1 {
		t.Error("rules past 500 KiB of robots.txt must be ignored, rules before it applied")
	}
	if st.Blocked != 2 {
		t.Errorf("blocked %d, want 2", st.Blocked)
	}
	// Next run: the 503 site is asked again.
	broken.Robots("User-agent: *\nAllow: /\n")
	h.mustCrawl()
	if n := h.web.Count(broken, "/"); n != 1 {
		t.Errorf("after robots.txt recovered, / fetched %d times, want 1", n)
	}
}

func TestCrawlDelayFromRobots(t *testing.T) {
	h := newHarness(t, harnessOptions{delay: 20 * time.Millisecond})
	s := h.web.AddSite(t)
	s.Robots("User-agent: *\nCrawl-delay: 0.3\n")
	for _, p := range []string{"/1", "/2", "/3"} {
		s.Page(p, "<p>"+p+"</p>")
	}
	h.seed(0, 1, s.URL("/1"), s.URL("/2"), s.URL("/3"))
	h.mustCrawl()
	reqs := h.web.RequestsTo(s)
	if len(reqs) != 4 {
		t.Fatalf("%d requests, want 4", len(reqs))
	}
	for i := 2; i < len(reqs); i++ { // from the first page on, Crawl-delay applies
		if gap := reqs[i].Start.Sub(reqs[i-1].End); gap < 300*time.Millisecond {
			t.Errorf("gap %v before %s, want >= Crawl-delay 300ms", gap, reqs[i].Path)
		}
	}
}

func TestCrawlRetryAfter(t *testing.T) {
	h := newHarness(t, harnessOptions{delay: 20 * time.Millisecond})
	s := h.web.AddSite(t)
	s.Handle("/busy", retryOnce(700*time.Millisecond, "<p>finally</p>"))
	h.seed(0, 1, s.URL("/busy"))
	h.mustCrawl()
	var pages []testweb.Request
	for _, r := range h.web.RequestsTo(s) {
		if r.Path == "/busy" {
			pages = append(pages, r)
		}
	}
	if len(pages) != 2 || pages[0].Status != 429 || pages[1].Status != 200 {
		t.Fatalf("requests %+v; want a 429 then a 200", pages)
	}
	if gap := pages[1].Start.Sub(pages[0].End); gap < 700*time.Millisecond {
		t.Errorf("retried after %v, want >= Retry-After", gap)
	}
}

// retryOnce answers 429 with a Retry-After of after (in whole seconds, rounded up) once, then body.
func retryOnce(after time.Duration, body string) http.Handler {
	var answered atomic.Bool
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !answered.Swap(true) {
			w.Header().Set("Retry-After", fmt.Sprint(int((after+time.Second-1)/time.Second)))
			http.Error(w, "slow down", http.StatusTooManyRequests)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte(body))
	})
}

func TestCrawlTraps(t *testing.T) {
	h := newHarness(t, harnessOptions{pageTimeout: 300 * time.Millisecond, maxBytes: 64 << 10})
	s := h.web.AddSite(t)
	s.Handle("/drip", testweb.Slow(100, 50*time.Millisecond))
	s.Handle("/huge", testweb.Huge(20<<20))
	s.Handle("/bomb", testweb.GzipBomb(16<<20))
	s.Handle("/image.png", testweb.Text("image/png", "\x89PNG not really"))
	s.Handle("/picture", testweb.Text("image/png", "\x89PNG not really"))
	s.Handle("/loop-a", testweb.Redirect("/loop-b", http.StatusFound))
	s.Handle("/loop-b", testweb.Redirect("/loop-a", http.StatusFound))
	for i := 0; i < 7; i++ {
		s.Handle(fmt.Sprintf("/chain%d", i), testweb.Redirect(fmt.Sprintf("/chain%d", i+1), http.StatusMovedPermanently))
	}
	s.Page("/chain7", "<p>end of a long chain</p>")
	s.Page("/fine", "<p>fine</p>")
	h.seed(1, 1, s.URL("/drip"), s.URL("/huge"), s.URL("/bomb"), s.URL("/image.png"), s.URL("/picture"), s.URL("/loop-a"),
		s.URL("/chain0"), s.URL("/fine"))

	start := time.Now()
	st, err := h.crawl()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("trap site crawled in %v: %+v", time.Since(start), st)
	if st.Done != st.Due {
		t.Errorf("done %d of %d due: every due URL of a finished stage must be done", st.Done, st.Due)
	}
	h.noViolations(false)
	check := func(path, wantState string, wantErr string) {
		t.Helper()
		info, err := h.db.URLInfo(t.Context(), s.URL(path))
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if info.State != wantState || !strings.Contains(info.LastError, wantErr) {
			t.Errorf("%s: state %q, error %q; want %q and an error containing %q", path, info.State, info.LastError, wantState, wantErr)
		}
	}
	check("/drip", "active", "timeout after 300ms")
	check("/huge", "active", "body cut at 65536 bytes")
	check("/bomb", "active", "body cut at 65536 bytes")
	check("/picture", "filtered", `content type "image/png" is not text`)
	check("/image.png", "filtered", "") // by its extension, before any request
	if n := h.web.Count(s, "/image.png"); n != 0 {
		t.Errorf("a URL with an image extension was requested %d times", n)
	}
	check("/chain5", "active", "redirect chain longer than 5")
	check("/fine", "active", "")
	if n := h.web.Count(s, "/chain6"); n != 0 {
		t.Errorf("the 6th hop of a redirect chain was requested %d times", n)
	}
	if a, b := h.web.Count(s, "/loop-a"), h.web.Count(s, "/loop-b"); a != 1 || b != 1 {
		t.Errorf("redirect loop: /loop-a %d, /loop-b %d requests; want 1 each", a, b)
	}
}

func TestCrawlConditionalGet(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	s := h.web.AddSite(t)
	s.Handle("/", testweb.Conditional(`"v1"`, "<p>version one</p>"))
	h.seed(0, 1, s.URL("/"))
	if st := h.mustCrawl(); st.New != 1 {
		t.Fatalf("first run %+v", st)
	}
	if st := h.mustCrawl(); st.NotModified != 1 || st.Changed != 0 {
		t.Fatalf("second run %+v; want one 304", st)
	}
	s.Handle("/", testweb.Conditional(`"v2"`, "<p>version two</p>"))
	if st := h.mustCrawl(); st.Changed != 1 {
		t.Fatalf("third run %+v; want one change", st)
	}
}

func TestCrawlServerErrorsBackOff(t *testing.T) {
	h := newHarness(t, harnessOptions{delay: 10 * time.Millisecond})
	s := h.web.AddSite(t)
	var urls []string
	for i := 0; i < 8; i++ {
		p := fmt.Sprintf("/p%d", i)
		s.Handle(p, testweb.Status(500))
		urls = append(urls, s.URL(p))
	}
	h.seed(0, 1, urls...)
	st := h.mustCrawl()
	pages := 0
	for _, r := range h.web.RequestsTo(s) {
		if r.Path != "/robots.txt" {
			pages++
		}
	}
	if pages != 5 || st.Dropped != 1 || st.Errors != 5 {
		t.Errorf("%d page requests, stats %+v; want the domain dropped after 5 server errors", pages, st)
	}
	// Each failure in a row doubles the wait: after the k-th 500 the gap is at least delay·2^k.
	reqs := h.web.RequestsTo(s)
	for i := 2; i < len(reqs); i++ { // reqs[0] is robots.txt, reqs[1] the first failure
		failures := i - 1
		if gap, least := reqs[i].Start.Sub(reqs[i-1].End), h.delay*time.Duration(1<<failures); gap < least {
			t.Errorf("gap before request %d is %v, want >= %v after %d failures", i, gap, least, failures)
		}
	}
}

func TestCrawlUnreachableHost(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	ok := h.web.AddSite(t)
	ok.Page("/", "<p>ok</p>")
	h.seed(0, 1, "http://nowhere.test/", "http://nowhere.test/x", ok.URL("/"))
	st := h.mustCrawl()
	if st.Fetched != 1 || st.Dropped != 1 {
		t.Errorf("stats %+v; want the live site fetched and the unresolvable host dropped", st)
	}
	// robots.txt of the unresolvable host was unreachable, so its pages stay due for the next run.
	if state, statuses := h.urlState("http://nowhere.test/x"); state != "active" || len(statuses) != 0 {
		t.Errorf("unreachable host's page: %s %v", state, statuses)
	}
}

func TestCrawlPrivateAddressGuard(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	pub := h.web.AddSite(t)
	inner := h.web.AddSite(t)
	inner.Page("/admin", "<p>internal</p>")
	pub.Handle("/", testweb.Redirect(inner.NamedURL("/admin"), http.StatusFound))
	seeded := pub.Name
	// Let every http URL through the filters, so that only the address guard stands in the way.
	anyHTTP, err := filter.Scheme("http", "https")
	if err != nil {
		t.Fatal(err)
	}
	h.cfg.Filter = anyHTTP
	h = rewire(h, func(host string) bool { return host == seeded })
	h.seed(0, 1, pub.NamedURL("/"))
	h.mustCrawl()
	if n := len(h.web.RequestsTo(inner)); n != 0 {
		t.Fatalf("a redirect from a seeded host made strata request a non-seeded loopback host %d times", n)
	}
	if state, _ := h.urlState(inner.NamedURL("/admin")); state != "filtered" {
		t.Errorf("redirect target to a private address: state %q, want filtered", state)
	}
}

// rewire rebuilds h's crawler with a different AllowPrivate, keeping its web and store.
func rewire(h *harness, allow func(string) bool) *harness {
	var client *fetch.Client
	gopts := h.gopts
	gopts.Loopback = func(ctx context.Context, host string) bool { ok, _ := client.LoopbackOnly(ctx, host); return ok }
	h.gate = polite.New(gopts)
	opts := h.fopts
	opts.AllowPrivate = allow
	client = fetch.New(opts)
	h.client = client
	h.t.Cleanup(client.Close)
	rc := client.HTTPClient()
	h.c = crawler.New(h.db, client, func(ctx context.Context, o *url.URL) robots.Result {
		return robots.Fetch(ctx, rc, o, userAgent)
	}, h.gate, h.cfg)
	return h
}

func TestCrawlMaxDurationLeavesTheRestDue(t *testing.T) {
	h := newHarness(t, harnessOptions{delay: 50 * time.Millisecond, maxDuration: 250 * time.Millisecond})
	s := h.web.AddSite(t)
	var urls []string
	for i := 0; i < 20; i++ {
		p := fmt.Sprintf("/p%02d", i)
		s.Page(p, "<p>"+p+"</p>")
		urls = append(urls, s.URL(p))
	}
	h.seed(0, 1, urls...)
	st, err := h.crawl()
	if !errors.Is(err, crawler.ErrStopped) || !st.Stopped {
		t.Fatalf("err %v, stopped %v; want ErrStopped", err, st.Stopped)
	}
	if st.Fetched == 0 || st.Fetched >= 20 {
		t.Fatalf("fetched %d of 20 before the limit", st.Fetched)
	}
	hosts, _ := h.db.DueHosts(t.Context())
	if hosts[s.Host()] != 20-st.Fetched {
		t.Errorf("%d URLs still due, want %d", hosts[s.Host()], 20-st.Fetched)
	}
	// The next run, without a limit, reaches every page.
	h.cfg.MaxDuration = 0
	h = rewire(h, func(string) bool { return true })
	h.mustCrawl()
	seen := map[string]int{}
	for _, r := range h.web.RequestsTo(s) {
		seen[r.Path]++
	}
	for i := 0; i < 20; i++ {
		p := fmt.Sprintf("/p%02d", i)
		if seen[p] < 1 {
			t.Errorf("%s never fetched", p)
		}
	}
}

func TestCrawlDefaultFilterKeepsToSeedDomains(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	home, away := h.web.AddSite(t), h.web.AddSite(t)
	away.Page("/", "<p>elsewhere</p>")
	home.Handle("/", testweb.Redirect(away.URL("/"), http.StatusFound))
	h.seed(0, 1, home.URL("/"))
	h.mustCrawl()
	if n := len(h.web.RequestsTo(away)); n != 0 {
		t.Errorf("a redirect off the seed domains was followed: %d requests", n)
	}
	info, err := h.db.URLInfo(t.Context(), home.URL("/"))
	if err != nil || !strings.Contains(info.LastError, "rejected by the URL filter") || !strings.Contains(info.LastError, "seed") {
		t.Errorf("the redirect's fetch should say the filter refused its target: %+v, %v", info, err)
	}
}

func TestCrawlArchivesNewAndChangedVersionsOnly(t *testing.T) {
	h := newHarness(t, harnessOptions{archive: true})
	s := h.web.AddSite(t)
	s.Page("/news", "<html><body><p>first story</p></body></html>")
	h.seed(0, 1, s.URL("/news"))

	h.mustCrawl()
	s.Page("/news", "<html><body>\n<p>first   story</p>\n</body></html>") // markup and spacing only
	if st := h.mustCrawl(); st.Unchanged != 1 {
		t.Errorf("white space and markup churn counted as a change: %+v", st)
	}
	s.Page("/news", "<html><body><p>second story</p></body></html>")
	if st := h.mustCrawl(); st.Changed != 1 {
		t.Errorf("a text change was not detected: %+v", st)
	}
	versions := h.archivedVersions(s.URL("/news"))
	if len(versions) != 2 {
		t.Fatalf("%d versions archived, want 2 (first and changed): %v", len(versions), versions)
	}
	second, err := h.arch.ReadMeta(versions[1])
	if err != nil {
		t.Fatal(err)
	}
	if second.Replaces != versions[0] || second.URL != s.URL("/news") || second.RawFile != "page.html" {
		t.Errorf("second version's page.json: %+v", second)
	}
	if txt, _ := h.arch.ReadText(versions[1]); txt != "second story" {
		t.Errorf("page.txt = %q", txt)
	}
}

// archivedVersions lists the archive paths recorded for a URL, oldest first, checking each is complete.
func (h *harness) archivedVersions(u string) []string {
	h.t.Helper()
	paths, err := h.db.ArchivePaths(h.t.Context(), u)
	if err != nil {
		h.t.Fatal(err)
	}
	for _, p := range paths {
		for _, f := range []string{"page.html", "page.txt", "page.json"} {
			if _, err := os.Stat(filepath.Join(h.arch.Root(), p, f)); err != nil {
				h.t.Errorf("version %s lacks %s: %v", p, f, err)
			}
		}
	}
	return paths
}

func TestCrawlSnapshotLinksUnchangedPages(t *testing.T) {
	h := newHarness(t, harnessOptions{archive: true, snapshot: true})
	s := h.web.AddSite(t)
	s.Page("/", "<p>steady</p>")
	h.seed(0, 1, s.URL("/"))
	h.mustCrawl()
	h.mustCrawl()
	runs, _ := os.ReadDir(h.arch.Root())
	if len(runs) != 2 {
		t.Fatalf("%d run directories, want 2", len(runs))
	}
	for _, r := range runs {
		if _, err := os.Stat(filepath.Join(h.arch.Root(), r.Name(), hostDirOf(s), "page.txt")); err != nil {
			t.Errorf("run %s lacks the page: %v", r.Name(), err)
		}
	}
	if v := h.archivedVersions(s.URL("/")); len(v) != 1 {
		t.Errorf("%d versions recorded, want 1: a snapshot link is not a version", len(v))
	}
}

func hostDirOf(s *testweb.Site) string {
	return strings.ReplaceAll(s.Host(), ":", "_") + "_http"
}

func TestCrawlArchiveFailureIsRecordedAndTheStageGoesOn(t *testing.T) {
	h := newHarness(t, harnessOptions{archive: true})
	bad, good := h.web.AddSite(t), h.web.AddSite(t)
	bad.Page("/", "<p>cannot be stored</p>")
	good.Page("/", "<p>stored</p>")
	h.seed(0, 1, bad.URL("/"), good.URL("/"))
	// The directory of bad's host is taken by a file, as a full or read-only disk would refuse it.
	h.last = time.Now()
	runDir := filepath.Join(h.arch.Root(), archive.RunDir(h.last.Truncate(time.Second).Add(time.Second)))
	os.MkdirAll(runDir, 0o755)
	os.WriteFile(filepath.Join(runDir, hostDirOf(bad)), []byte("in the way"), 0o644)

	st := h.mustCrawl()
	if st.Errors != 1 || st.Fetched != 2 {
		t.Errorf("stats %+v; want both fetched and one archive error", st)
	}
	info, _ := h.db.URLInfo(t.Context(), bad.URL("/"))
	if !strings.Contains(info.LastError, "archive:") {
		t.Errorf("the failed page's fetch does not say why: %q", info.LastError)
	}
	if v := h.archivedVersions(good.URL("/")); len(v) != 1 {
		t.Errorf("the good site's page was not archived: %v", v)
	}
	if v := h.archivedVersions(bad.URL("/")); len(v) != 0 {
		t.Errorf("a version was recorded for the page that could not be stored: %v", v)
	}
	// Next run, with the disk fixed, the page is archived: its change was not lost.
	if st := h.mustCrawl(); len(h.archivedVersions(bad.URL("/"))) != 1 {
		t.Errorf("the page was not archived on the next run: %+v", st)
	}
}

func TestCrawlFollowsLinksDownTheLevels(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	s := h.web.AddSite(t)
	other := h.web.AddSite(t)
	s.Page("/", `<a href="/a">a</a> <a href="/b" rel="nofollow">b</a> <a href="`+other.URL("/")+`">away</a> <a href="/logo.png">logo</a>`)
	s.Page("/a", `<a href="/a/1">a1</a> <a href="/">home</a>`)
	s.Page("/a/1", `<a href="/a/1/deep">deeper than the levels go</a>`)
	s.Page("/b", `<p>nofollow target</p>`)
	s.Page("/quiet", `<meta name="robots" content="nofollow"><a href="/hidden">hidden</a>`)
	s.Page("/a/1/deep", `<p>never reached</p>`)
	s.Page("/hidden", `<p>never reached</p>`)
	h.seed(2, 1, s.URL("/"))
	h.seed(1, 1, s.URL("/quiet"))

	st := h.mustCrawl()
	for path, want := range map[string]int{"/": 1, "/a": 1, "/a/1": 1, "/b": 0, "/a/1/deep": 0, "/hidden": 0, "/logo.png": 0} {
		if got := h.web.Count(s, path); got != want {
			t.Errorf("%s requested %d times, want %d", path, got, want)
		}
	}
	if n := len(h.web.RequestsTo(other)); n != 0 {
		t.Errorf("an external link was followed by the crawl stage: %d requests", n)
	}
	if st.Links != 2 || st.Done != st.Due {
		t.Errorf("stats %+v; want 2 links followed (/a at level 1, /a/1 at level 0) and everything due done", st)
	}
	info, _ := h.db.URLInfo(t.Context(), s.URL("/a/1"))
	if info.Level != 0 {
		t.Errorf("/a/1 has level %d, want 0", info.Level)
	}
	// The next run: nothing changed, so no page is read for links and nothing new joins. The hubs /
	// and /a did not change, but their children have been fetched only once: nothing shows they are
	// quiet, so the selective rule leaves them to their own fr and all four are fetched.
	if st := h.mustCrawl(); st.Links != 0 || st.Fetched != 4 || st.SkippedSelective != 0 || st.Hubs != 2 {
		t.Errorf("second run %+v; want all four fetched, the hubs judged without skipping", st)
	}
	// The third: every page has two fetches now, unchanged, so the unchanged hub / skips /a and /a/1.
	if st := h.mustCrawl(); st.Fetched != 2 || st.SkippedSelective != 2 || st.Hubs != 1 {
		t.Errorf("third run %+v; want / and /quiet fetched, /a and /a/1 skipped with their hub", st)
	}
}

func TestLinksStage(t *testing.T) {
	tests := []struct {
		name string
		// old rewrites every stored page.json as strata wrote it before the crawl kept links there.
		old            bool
		ignoreNofollow bool
		reparsed       int // stored versions the links stage parses again
		added          int // external URLs admitted
	}{
		{name: "links kept by the crawl", reparsed: 0, added: 1},
		{name: "versions stored without links", old: true, reparsed: 3, added: 1},
		{name: "nofollow ignored", ignoreNofollow: true, reparsed: 0, added: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, harnessOptions{archive: true})
			anyHTTP, _ := filter.Scheme("http", "https")
			h.cfg.Filter = anyHTTP
			h.cfg.IgnoreNofollow = tt.ignoreNofollow
			h = rewire(h, func(string) bool { return true })
			a, b, c := h.web.AddSite(t), h.web.AddSite(t), h.web.AddSite(t)
			b.Robots("User-agent: *\nDisallow: /private\n", "/private")
			b.Page("/", "<p>b home</p>")
			a.Page("/", `<a href="/x">x</a> <a href="`+b.URL("/other")+`">b other</a> <a href="`+b.URL("/private/p")+`">b private</a>
		<a href="`+c.URL("/")+`" rel="nofollow">c</a>`)
			a.Page("/x", "<p>x</p>")
			h.seed(1, 1, a.URL("/"), b.URL("/"))
			h.mustCrawl()
			if tt.old {
				forgetLinks(t, h.arch)
			}
			run := crawler.Run{ID: 1}
			versions := &countingVersions{VersionReader: h.arch}
			ls, err := h.c.Links(t.Context(), h.db, versions, run, crawler.LinksConfig{NewFrMax: 1})
			if err != nil {
				t.Fatal(err)
			}
			if ls.Read != 3 || ls.Reparsed != tt.reparsed || versions.raw != tt.reparsed || ls.Links != 4 || ls.External != 3 ||
				ls.Added != tt.added || ls.Blocked != 1 {
				t.Errorf("links stage %+v, %d pages read back; want 3 versions, %d of them and of the pages read back parsed again, "+
					"4 links, 3 external, %d added, 1 blocked", ls, versions.raw, tt.reparsed, tt.added)
			}
			for u, want := range map[string]string{b.URL("/other"): "active", b.URL("/private/p"): "blocked"} {
				if info, err := h.db.URLInfo(t.Context(), u); err != nil || info.State != want {
					t.Errorf("%s: %+v, %v; want state %s", u, info, err, want)
				}
			}
			if _, err := h.db.URLInfo(t.Context(), c.URL("/")); (err == nil) != tt.ignoreNofollow {
				t.Errorf("the nofollow external link: admitted %v, want %v", err == nil, tt.ignoreNofollow)
			}
			// The next run: the page did not change, so its links are carried forward, not read.
			h.mustCrawl()
			ls, err = h.c.Links(t.Context(), h.db, h.arch, crawler.Run{ID: 2}, crawler.LinksConfig{})
			// /, b/, /x and b/other (and, with nofollow ignored, c/): /x has been fetched once and
			// b/other never, so nothing shows they are quiet and their unchanged hub cannot skip them.
			if want := 4 + tt.added - 1; err != nil || ls.Read != 0 || ls.Pages != want {
				t.Errorf("second links stage %+v, %v; want the %d fetched pages carried forward, none read", ls, err, want)
			}
			home, _ := h.db.URLInfo(t.Context(), a.URL("/"))
			if all, internal, _ := h.db.LinkCounts(t.Context(), home.ID); all != 4 || internal != 1 {
				t.Errorf("link counts of / after run 2: %d links, %d internal; want 4 and 1", all, internal)
			}
		})
	}
}

// countingVersions counts the pages read back from the archive.
type countingVersions struct {
	crawler.VersionReader
	raw int
}

func (v *countingVersions) ReadRaw(rel string) ([]byte, error) {
	v.raw++
	return v.VersionReader.ReadRaw(rel)
}

// forgetLinks rewrites every page.json of the archive without the links the crawl kept there, as
// strata wrote them before it kept them.
func forgetLinks(t *testing.T, arch *archive.Dir) {
	t.Helper()
	err := filepath.WalkDir(arch.Root(), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.Name() != archive.MetaFile {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		var m archive.Meta
		if err := json.Unmarshal(b, &m); err != nil {
			return err
		}
		if m.Links == nil {
			t.Errorf("%s: the crawl kept no links", path)
		}
		m.Links, m.NoFollow = nil, false
		if b, err = json.Marshal(m); err != nil {
			return err
		}
		return os.WriteFile(path, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestAdaptiveSelectiveCycle runs the whole cycle — crawl, then recalculation — ten times over a
// scripted web and checks the paper's promises: a page that changes every run is visited every run
// and settles at fr_max 1; a page that never changes is visited less and less; a hub that never
// changes, with children that never change, has its subtree skipped; the same kind of hub with
// children that all change is re-entered; and far fewer pages are downloaded than by crawling
// everything, with the counts matching the servers' own logs.
func TestAdaptiveSelectiveCycle(t *testing.T) {
	h := newHarness(t, harnessOptions{delay: 5 * time.Millisecond})
	s := h.web.AddSite(t)
	run := 0 // the scripted web's clock: content is a function of the run
	page := func(f func() string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, f())
		})
	}
	words := []string{"harbour", "library", "tram", "tomato", "council", "bridge", "museum", "orchard", "ferry", "garden", "tower"}
	s.Handle("/hot", page(func() string { return fmt.Sprintf("<p>breaking news about the %s</p>", words[run%len(words)]) }))
	s.Handle("/cold", page(func() string { return "<p>the same every day</p>" }))
	kids := func(hub string) string {
		var b strings.Builder
		for i := 1; i <= 5; i++ {
			fmt.Fprintf(&b, `<a href="/%s/%d">%d</a> `, hub, i, i)
		}
		return "<h1>" + hub + "</h1>" + b.String()
	}
	s.Handle("/quiet/", page(func() string { return kids("quiet") }))
	s.Handle("/busy/", page(func() string { return kids("busy") }))
	for i := 1; i <= 5; i++ {
		s.Handle(fmt.Sprintf("/quiet/%d", i), page(func() string { return "<p>an old page</p>" }))
		s.Handle(fmt.Sprintf("/busy/%d", i), page(func() string {
			return fmt.Sprintf("<p>the latest comment on item %d praises the %s</p>", i, words[(run+i)%len(words)])
		}))
	}
	h.seed(0, 1, s.URL("/hot"), s.URL("/cold"))
	h.seed(1, 1, s.URL("/quiet/"), s.URL("/busy/"))
	policy, err := frequency.New("bouras")
	if err != nil {
		t.Fatal(err)
	}

	const runs = 10
	var fetched, requests, skipped, forced, changedHot int
	var coldFrMax []int
	for run = 1; run <= runs; run++ {
		st := h.mustCrawl()
		if _, err := h.c.Recalc(t.Context(), h.db, crawler.Run{ID: h.run}, policy, 10, nil); err != nil {
			t.Fatal(err)
		}
		fetched += st.Fetched
		requests += st.Requests
		skipped += st.SkippedSelective
		forced += st.Forced
		cold, _ := h.db.URLInfo(t.Context(), s.URL("/cold"))
		coldFrMax = append(coldFrMax, cold.FrMax)
	}
	hot, _ := h.db.URLInfo(t.Context(), s.URL("/hot"))
	hotVisits := h.web.Count(s, "/hot")
	changedHot = countChanges(t, h, s.URL("/hot"))
	t.Logf("10 runs: %d fetches (crawl-everything: %d), %d skipped by the selective rule, %d subtrees visited for their children; /cold fr_max by run %v",
		fetched, runs*14, skipped, forced, coldFrMax)

	cold, _ := h.db.URLInfo(t.Context(), s.URL("/cold"))
	t.Logf("estimated change rates: /hot %.3f per run (bucket %d), /cold %.4f (bucket %d)", hot.ChangeRate, hot.RateBucket,
		cold.ChangeRate, cold.RateBucket)
	if hot.ChangeRate < 1 || cold.ChangeRate > 0.1 || hot.RateBucket <= cold.RateBucket {
		t.Errorf("change rates: /hot %.3f (bucket %d), /cold %.4f (bucket %d); want /hot >= 1 per run, /cold near 0",
			hot.ChangeRate, hot.RateBucket, cold.ChangeRate, cold.RateBucket)
	}
	if hotVisits != runs || hot.FrMax != 1 || changedHot != runs-1 {
		t.Errorf("/hot: %d visits, fr_max %d, %d changes seen; want every run, fr_max 1, no change missed", hotVisits, hot.FrMax, changedHot)
	}
	for i := 1; i < len(coldFrMax); i++ {
		if coldFrMax[i] < coldFrMax[i-1] {
			t.Errorf("/cold: fr_max went down at run %d: %v", i+1, coldFrMax)
		}
	}
	if last := coldFrMax[len(coldFrMax)-1]; last < 3 || h.web.Count(s, "/cold") > runs/2 {
		t.Errorf("/cold: fr_max by run %v, %d visits; want it to climb and be visited in at most half the runs", coldFrMax, h.web.Count(s, "/cold"))
	}
	quiet, busy := 0, 0
	for i := 1; i <= 5; i++ {
		quiet += h.web.Count(s, fmt.Sprintf("/quiet/%d", i))
		busy += h.web.Count(s, fmt.Sprintf("/busy/%d", i))
	}
	if skipped == 0 || quiet >= busy {
		t.Errorf("quiet hub's children fetched %d times, busy hub's %d, %d skipped: the quiet subtree should be skipped", quiet, busy, skipped)
	}
	if forced == 0 || busy < 5*(runs/2) {
		t.Errorf("busy hub's children fetched %d times, %d subtree visits: the busy subtree should be re-entered", busy, forced)
	}
	t.Logf("fetches per page: /hot %d, /cold %d, /quiet/ %d and its 5 children %d, /busy/ %d and its 5 children %d",
		hotVisits, h.web.Count(s, "/cold"), h.web.Count(s, "/quiet/"), quiet, h.web.Count(s, "/busy/"), busy)
	if fetched > runs*14*8/10 {
		t.Errorf("%d fetches in %d runs; want at least a fifth fewer than crawl-everything's %d", fetched, runs, runs*14)
	}
	pageRequests := 0
	for _, r := range h.web.Requests() {
		if r.Path != "/robots.txt" {
			pageRequests++
		}
	}
	if pageRequests != fetched || len(h.web.Requests()) != requests {
		t.Errorf("the servers saw %d page requests (%d in all); the stages reported %d fetches (%d requests)",
			pageRequests, len(h.web.Requests()), fetched, requests)
	}
	h.noViolations(false)
}

func countChanges(t *testing.T, h *harness, u string) int {
	t.Helper()
	hist, err := h.db.History(t.Context(), u)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range hist {
		if e.Changed {
			n++
		}
	}
	return n
}

func TestCrawlCounterIsNotAChange(t *testing.T) {
	h := newHarness(t, harnessOptions{archive: true})
	s := h.web.AddSite(t)
	article := "<p>The council met on Tuesday to discuss the harbour plan. Members agreed to publish the survey " +
		"before the summer and to hold two public meetings in the town hall.</p>"
	s.Page("/", "<p>You are visitor 1041.</p>"+article)
	h.seed(0, 1, s.URL("/"))
	h.mustCrawl()
	s.Page("/", "<p>You are visitor 1042.</p>"+article)
	if st := h.mustCrawl(); st.Changed != 0 {
		t.Errorf("a visit counter counted as a change: %+v", st)
	}
	s.Page("/", "<p>You are visitor 1043.</p>"+strings.Replace(article, "two public meetings", "three public meetings and an exhibition", 1))
	if st := h.mustCrawl(); st.Changed != 1 {
		t.Errorf("an edited sentence was not a change: %+v", st)
	}
	hist, err := h.db.History(t.Context(), s.URL("/"))
	if err != nil || len(hist) != 3 {
		t.Fatalf("history %v, %v", hist, err)
	}
	if m := hist[2].Magnitude; m <= 0 || m >= 0.5 {
		t.Errorf("magnitude of a one-sentence edit = %v, want small but above 0", m)
	}
	if hist[1].Changed || hist[1].Stored == "" {
		t.Errorf("the counter-only version: changed %v, stored %q; want not changed but archived (its bytes differ)", hist[1].Changed, hist[1].Stored)
	}
}
