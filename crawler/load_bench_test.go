package crawler_test

// End-to-end loopback load: a first full crawl of a testweb of H hosts × P pages
// (testweb.LoadWeb), by strata's crawl stage wired as the command line wires it (polite.Gate,
// fetch.Client, robots.txt, pagetext "main", an archive on disk) and, in colly_bench_test.go, by a
// plain colly crawler of the same web. Nothing here runs without -bench, and every request goes to
// 127.0.0.0/8 (internal/testweb). Run one configuration per process, so that peak RSS belongs to it:
//
//	go test ./crawler/ -run '^$' -bench '^BenchmarkLoad$/^hosts=1000$/^pages=100$' -benchtime 1x -timeout 60m -v
//	go test ./crawler/ -run '^$' -bench '^BenchmarkLoadColly$/^hosts=1000$/^pages=100$' -benchtime 1x -timeout 60m -v
//	go test ./crawler/ -run '^$' -bench '^BenchmarkLoadPolite$/^hosts=1000$' -benchtime 1x -timeout 30m -v
//
// With STRATA_BENCH_WAITS=1 a run also samples the goroutines every 100 ms and logs where the
// crawl's workers are on average, by the innermost strata function and what it waits for: the
// off-CPU view (fsync, dialling, waiting for a response or for SQLite's lock) a CPU profile lacks.
//
// CPU seconds and peak RSS are the whole test process's, the web's servers included (they generate
// every page on the fly); internal/loadtest measures the crawler alone in its own process. The seed
// of each host is the only URL known at the start; the rest are found by following its links in the
// same run. See docs/performance.md.

import (
	"bytes"
	"context"
	"fmt"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"runtime/pprof"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/strata-crawler/strata/archive"
	"github.com/strata-crawler/strata/crawler"
	"github.com/strata-crawler/strata/internal/fetch"
	"github.com/strata-crawler/strata/internal/pagetext"
	"github.com/strata-crawler/strata/internal/polite"
	"github.com/strata-crawler/strata/internal/robots"
	"github.com/strata-crawler/strata/internal/store"
	"github.com/strata-crawler/strata/internal/testweb"
)

// loadCase is one web and politeness setting.
type loadCase struct {
	hosts, pages int
	delay        time.Duration // loopback_delay; LimitRule.Delay for colly
}

func (c loadCase) name() string {
	if c.delay > 0 {
		return fmt.Sprintf("hosts=%d/pages=%d/delay=%v", c.hosts, c.pages, c.delay)
	}
	return fmt.Sprintf("hosts=%d/pages=%d", c.hosts, c.pages)
}

// The zero-delay webs; 1,000 × 100 is the target web.
var loadCases = []loadCase{{200, 50, 0}, {1000, 20, 0}, {1000, 100, 0}}

// The polite webs: every host needs P requests after its robots.txt, each at least delay after the
// last response, so hosts/delay pages/s is the bound. At 1,000 hosts that bound (1,000 pages/s) is
// above what the zero-delay runs reach on a 2-core machine, so the 100-host case is the one that
// measures politeness overhead rather than CPU.
var politeCases = []loadCase{{100, 5, time.Second}, {100, 10, time.Second}, {1000, 10, time.Second}}

// loadWorkers is strata's default crawl.workers, and colly's bound on requests in flight.
const loadWorkers = 32

func BenchmarkLoad(b *testing.B) {
	for _, c := range loadCases {
		b.Run(c.name(), func(b *testing.B) { runLoad(b, c, prepareStrata) })
	}
}

func BenchmarkLoadPolite(b *testing.B) {
	for _, c := range politeCases {
		b.Run(c.name(), func(b *testing.B) { runLoad(b, c, prepareStrata) })
	}
}

// loadResult is what one crawl reports.
type loadResult struct {
	pages, requests, errors int
}

// prepareFunc sets a crawler up for the web's sites and returns the crawl to measure.
type prepareFunc func(b *testing.B, c loadCase, web *testweb.Web, sites []*testweb.Site) func(ctx context.Context) (loadResult, error)

// prepareStrata wires strata's crawl stage as internal/cli does, with the sites' seeds in a new store.
func prepareStrata(b *testing.B, c loadCase, web *testweb.Web, sites []*testweb.Site) func(ctx context.Context) (loadResult, error) {
	seeds := make([]string, len(sites))
	for i, s := range sites {
		seeds[i] = s.URL("/")
	}
	crawl, _ := newStrata(b, seeds, web.Resolver(), c.delay, 0)
	return crawl
}

// newStrata opens a store in a temporary directory, adds seeds at level 1 and returns the crawl of
// a first run, wired as internal/cli wires it, and the store.
func newStrata(b *testing.B, seedURLs []string, resolver func(context.Context, string) ([]netip.Addr, error),
	delay, maxDuration time.Duration) (func(ctx context.Context) (loadResult, error), *store.DB) {
	ctx := b.Context()
	dir := b.TempDir()
	db, err := store.Open(ctx, filepath.Join(dir, "strata.db"), store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	arch, err := archive.Open(filepath.Join(dir, "archive"))
	if err != nil {
		b.Fatal(err)
	}
	seeds := make([]store.NewSeed, 0, len(seedURLs))
	for _, s := range seedURLs {
		u, err := url.Parse(s)
		if err != nil {
			b.Fatal(err)
		}
		seeds = append(seeds, store.NewSeed{URL: s, Host: u.Host, Level: 1, FrMax: 1})
	}
	if _, err := db.AddSeeds(ctx, seeds); err != nil {
		b.Fatal(err)
	}
	// Delay factor 0 at zero delay, so nothing but the crawler's own work sets the pace; 1 (the
	// configuration's minimum) on the polite webs.
	factor := 0.0
	if delay > 0 {
		factor = 1
	}
	var client *fetch.Client
	gate := polite.New(polite.Options{Delay: 10 * time.Second, LoopbackDelay: delay, DelayFactor: factor,
		Loopback: func(ctx context.Context, host string) bool {
			ok, err := client.LoopbackOnly(ctx, host)
			return err == nil && ok
		}})
	client = fetch.New(fetch.Options{UserAgent: userAgent, PageTimeout: 30 * time.Second, MaxRedirects: -1,
		AllowPrivate: func(string) bool { return true }, LookupNetIP: resolver, Wrap: gate.Transport})
	b.Cleanup(client.Close)
	robotsClient := client.HTTPClient()
	cr := crawler.New(db, client, func(ctx context.Context, origin *url.URL) robots.Result {
		return robots.Fetch(ctx, robotsClient, origin, userAgent)
	}, gate, crawler.Config{UserAgent: userAgent, Workers: loadWorkers, PageTimeout: 30 * time.Second, Archive: arch,
		MaxDuration: maxDuration,
		Text: func(body []byte, contentType, pageURL string) crawler.Text {
			t, err := pagetext.Extract(body, pageURL, pagetext.Main)
			if err != nil {
				b.Error(err)
			}
			return crawler.Text{Title: t.Title, Body: t.Body, Mode: string(t.Mode), Alt: t.Alt}
		}})
	return func(ctx context.Context) (loadResult, error) {
		start := time.Now()
		id, err := db.BeginRun(ctx, start, 0)
		if err != nil {
			return loadResult{}, err
		}
		st, err := cr.Crawl(ctx, crawler.Run{ID: id, Start: start})
		if st == nil {
			return loadResult{}, err
		}
		return loadResult{pages: st.Fetched, requests: st.Requests, errors: st.Errors}, err
	}, db
}

// runLoad builds the web, lets prepare set a crawler up, and measures its crawl: pages/s, CPU seconds
// per 1,000 pages (getrusage, the whole process), peak RSS (maxrss, the whole process) and, on the
// polite webs, the share of the politeness bound. It fails if a page was missed or a site saw a
// politeness violation.
func runLoad(b *testing.B, c loadCase, prepare prepareFunc) {
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		web := testweb.New(b)
		sites := web.AddLoadSites(b, testweb.NewLoadWeb(c.pages), c.hosts)
		crawl := prepare(b, c, web, sites)

		var stopWaits func()
		if os.Getenv("STRATA_BENCH_WAITS") != "" {
			stopWaits = sampleWaits(b)
		}
		userBefore, sysBefore, _ := selfUsage()
		start := time.Now()
		b.StartTimer()
		res, err := crawl(b.Context())
		b.StopTimer()
		wall := time.Since(start)
		userAfter, sysAfter, maxRSS := selfUsage()
		if stopWaits != nil {
			stopWaits()
		}
		if err != nil {
			b.Fatal(err)
		}
		if want := c.hosts * c.pages; res.pages != want || res.errors != 0 {
			b.Fatalf("fetched %d of %d pages, %d errors", res.pages, want, res.errors)
		}
		user, sys := userAfter-userBefore, sysAfter-sysBefore
		cpu := user + sys
		b.ReportMetric(float64(res.pages)/wall.Seconds(), "pages/s")
		b.ReportMetric(cpu.Seconds()/float64(res.pages)*1000, "cpu-s/1000pages")
		b.ReportMetric(float64(maxRSS)/(1<<20), "peak-RSS-MB")
		if c.delay > 0 {
			bound := float64(c.hosts) / c.delay.Seconds()
			b.ReportMetric(float64(res.pages)/wall.Seconds()/bound*100, "%-of-polite-bound")
		}
		b.Logf("%d hosts × %d pages: %d pages, %d requests in %v; CPU %v (user %v, sys %v); peak RSS %d MB",
			c.hosts, c.pages, res.pages, res.requests, wall.Round(time.Millisecond), cpu.Round(time.Millisecond),
			user.Round(time.Millisecond), sys.Round(time.Millisecond), maxRSS>>20)
		if c.delay > 0 {
			logGaps(b, web, sites, start, c.delay)
		}
		// The servers' own log: one request at a time per site, the delay between them, robots.txt
		// first. Checked where that is cheap (Violations is quadratic in sites).
		if c.hosts*c.pages <= 20_000 {
			if v := web.Violations(testweb.CheckOptions{MinGap: c.delay, RobotsFirst: true}); len(v) > 0 {
				b.Errorf("%d politeness violations, first: %s", len(v), v[0])
			}
		}
		web.Close()
	}
}

// logGaps logs where the time beyond the politeness bound goes, from the servers' side: the first
// request's offset from the start, and the gaps between one response and the next request.
func logGaps(b *testing.B, web *testweb.Web, sites []*testweb.Site, start time.Time, delay time.Duration) {
	var first, gaps, maxGap time.Duration
	n := 0
	for _, s := range sites {
		reqs := web.RequestsTo(s)
		if len(reqs) == 0 {
			continue
		}
		first += reqs[0].Start.Sub(start)
		for k := 1; k < len(reqs); k++ {
			g := reqs[k].Start.Sub(reqs[k-1].End)
			gaps += g
			maxGap = max(maxGap, g)
			n++
		}
	}
	if n == 0 {
		return
	}
	b.Logf("per host: first request %v after the start on average; mean gap %v, max gap %v (delay %v)",
		(first / time.Duration(len(sites))).Round(time.Millisecond), (gaps / time.Duration(n)).Round(time.Millisecond),
		maxGap.Round(time.Millisecond), delay)
}

// sampleWaits samples the goroutine profile every 100 ms until the returned function is called,
// which logs how many goroutines of strata's crawl workers (or colly's fetches) were, on average,
// at each place: the innermost strata (or colly) frame, and the innermost frames of the stack, which
// say what it waits for.
func sampleWaits(b *testing.B) (stop func()) {
	done, finished := make(chan struct{}), make(chan struct{})
	at := map[string]int{}
	samples := 0
	go func() {
		defer close(finished)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			var buf bytes.Buffer
			if err := pprof.Lookup("goroutine").WriteTo(&buf, 1); err != nil {
				b.Error(err)
				return
			}
			samples++
			for _, rec := range strings.Split(buf.String(), "\n\n") {
				if !strings.Contains(rec, "crawler.(*stage).work") && !strings.Contains(rec, "colly/v2.(*Collector).fetch") {
					continue
				}
				var n int
				fmt.Sscanf(rec, "%d @", &n)
				at[waitPlace(rec)] += n
			}
		}
	}()
	return func() {
		close(done)
		<-finished
		type place struct {
			where string
			n     int
		}
		var all []place
		for w, n := range at {
			all = append(all, place{w, n})
		}
		sort.Slice(all, func(i, j int) bool { return all[i].n > all[j].n })
		var out strings.Builder
		for i, p := range all {
			if i == 15 {
				break
			}
			fmt.Fprintf(&out, "\n%6.2f  %s", float64(p.n)/float64(max(samples, 1)), p.where)
		}
		b.Logf("goroutines per sample (%d samples), by innermost strata or colly frame [innermost frames < their callers]:%s", samples, out.String())
	}
}

// waitPlace names a goroutine's place from a record of pprof's debug=1 goroutine profile.
func waitPlace(rec string) string {
	var inner []string
	owner := ""
	for _, line := range strings.Split(rec, "\n") {
		f := strings.Fields(line)
		if len(f) < 3 || f[0] != "#" {
			continue
		}
		fn := f[2]
		if i := strings.LastIndex(fn, "+0x"); i > 0 {
			fn = fn[:i]
		}
		short := fn[strings.LastIndex(fn, "/")+1:]
		if owner == "" && (strings.Contains(fn, "strata-crawler/strata/") || strings.Contains(fn, "gocolly/colly")) &&
			!strings.Contains(fn, "crawler_test") {
			owner = short
		}
		if owner == "" && len(inner) < 4 {
			inner = append(inner, short)
		}
	}
	return owner + " [" + strings.Join(inner, " < ") + "]"
}
