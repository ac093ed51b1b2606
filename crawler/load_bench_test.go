package crawler_test

// End-to-end loopback load: a first full crawl stage of a testweb of H hosts × P pages, wired as
// the command line wires it (polite.Gate, fetch.Client, robots.txt, pagetext "main", an archive on
// disk). Nothing here runs without -bench, and every request goes to 127.0.0.0/8 (internal/testweb).
// Run one configuration per process, so that peak RSS belongs to it:
//
//	go test ./crawler/ -run '^$' -bench '^BenchmarkLoad$/^hosts=200$/^pages=50$' -benchtime 1x -timeout 30m -v
//	go test ./crawler/ -run '^$' -bench '^BenchmarkLoad$/^hosts=1000$/^pages=100$' -benchtime 1x -timeout 30m -v
//	go test ./crawler/ -run '^$' -bench 'BenchmarkLoadPolite' -benchtime 1x -timeout 30m -v
//
// Each host serves robots.txt, a seed "/" at level 1 that links to its other P-1 pages, and those
// pages (about 6 KB of generated text each, letters-only paths so the trap guard does not mistake
// them for a counter). The seed is the only URL in the table at the start; the rest are found by
// following its links in the same run. See docs/performance.md.

import (
	"context"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"syscall"
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

func BenchmarkLoad(b *testing.B) {
	for _, c := range []struct{ hosts, pages int }{{200, 50}, {1000, 20}, {1000, 100}} {
		b.Run(fmt.Sprintf("hosts=%d/pages=%d", c.hosts, c.pages), func(b *testing.B) {
			runLoad(b, c.hosts, c.pages, 0, 0)
		})
	}
}

// BenchmarkLoadPolite crawls a small web with a 1 s loopback delay: every host needs P requests after
// its robots.txt, each at least 1 s after the last, so the politeness bound is hosts/delay pages/s.
func BenchmarkLoadPolite(b *testing.B) {
	b.Run("hosts=100/pages=5/delay=1s", func(b *testing.B) {
		runLoad(b, 100, 5, time.Second, 1)
	})
}

var loadWords = strings.Fields(`the council said on tuesday that proposal would go to vote with report showing costs
	rising across city district while residents asked questions about schools roads housing parks library
	budget plan river bridge museum market station harbour festival garden theatre hospital university
	research students teachers farmers workers drivers nurses doctors engineers artists writers readers`)

// slug names page i of a site with letters only, scrambled so consecutive pages share no stepping number.
func slug(i int) string {
	n := uint32(i)*2654435761 + 12345
	var b [7]byte
	for k := range b {
		b[k] = byte('a' + n%26)
		n /= 26
	}
	return "/story/" + string(b[:]) + "-" + loadWords[i%len(loadWords)]
}

// pageHTML generates a page of about 6 KB whose words are unique to (site, page).
func pageHTML(site string, page int, links []string) string {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s/%d", site, page)
	r := rand.New(rand.NewPCG(h.Sum64(), uint64(page)))
	var b strings.Builder
	b.Grow(7000 + 80*len(links))
	fmt.Fprintf(&b, `<!DOCTYPE html><html><head><meta charset="utf-8"><title>%s %s</title></head><body><nav><a href="/">Home</a></nav><main><article><h1>%s</h1>`,
		loadWords[r.IntN(len(loadWords))], loadWords[r.IntN(len(loadWords))], site)
	for p := 0; p < 12; p++ {
		b.WriteString("<p>")
		for w := 0; w < 70; w++ {
			b.WriteString(loadWords[r.IntN(len(loadWords))])
			b.WriteByte(' ')
		}
		b.WriteString("</p>")
	}
	if len(links) > 0 {
		b.WriteString("<ul>")
		for _, l := range links {
			fmt.Fprintf(&b, `<li><a href="%s">%s</a></li>`, l, l[7:])
		}
		b.WriteString("</ul>")
	}
	b.WriteString("</article></main><footer>Example site</footer></body></html>")
	return b.String()
}

func runLoad(b *testing.B, hosts, pages int, delay time.Duration, factor float64) {
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		ctx := context.Background()
		dir := b.TempDir()
		db, err := store.Open(ctx, filepath.Join(dir, "strata.db"), store.Options{})
		if err != nil {
			b.Fatal(err)
		}
		arch, err := archive.Open(filepath.Join(dir, "archive"))
		if err != nil {
			b.Fatal(err)
		}
		web := testweb.New(b)
		sites := web.AddSites(b, hosts)
		seeds := make([]store.NewSeed, 0, hosts)
		for _, s := range sites {
			s.Robots("User-agent: *\nDisallow: /private/\n", "/private/")
			links := make([]string, 0, pages-1)
			for p := 1; p < pages; p++ {
				links = append(links, slug(p))
			}
			s.Page("/", pageHTML(s.Name, 0, links))
			for p := 1; p < pages; p++ {
				name, p := s.Name, p
				s.Handle(slug(p), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					w.Header().Set("Content-Type", "text/html; charset=utf-8")
					w.Write([]byte(pageHTML(name, p, nil)))
				}))
			}
			seeds = append(seeds, store.NewSeed{URL: s.URL("/"), Host: s.Host(), Level: 1, FrMax: 1})
		}
		if _, err := db.AddSeeds(ctx, seeds); err != nil {
			b.Fatal(err)
		}

		var client *fetch.Client
		gate := polite.New(polite.Options{Delay: 10 * time.Second, LoopbackDelay: delay, DelayFactor: factor,
			Loopback: func(ctx context.Context, host string) bool {
				ok, err := client.LoopbackOnly(ctx, host)
				return err == nil && ok
			}})
		client = fetch.New(fetch.Options{UserAgent: userAgent, PageTimeout: 30 * time.Second, MaxRedirects: -1,
			AllowPrivate: func(string) bool { return true }, LookupNetIP: web.Resolver(), Wrap: gate.Transport})
		robotsClient := client.HTTPClient()
		c := crawler.New(db, client, func(ctx context.Context, origin *url.URL) robots.Result {
			return robots.Fetch(ctx, robotsClient, origin, userAgent)
		}, gate, crawler.Config{UserAgent: userAgent, Workers: 32, PageTimeout: 30 * time.Second, Archive: arch,
			Text: func(body []byte, contentType, pageURL string) (string, string) {
				t, err := pagetext.Extract(body, pageURL, pagetext.Main)
				if err != nil {
					b.Error(err)
				}
				return t.Title, t.Body
			}})

		start := time.Now()
		id, err := db.BeginRun(ctx, start, 0)
		if err != nil {
			b.Fatal(err)
		}
		var before, after syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &before)
		b.StartTimer()
		st, err := c.Crawl(ctx, crawler.Run{ID: id, Start: start})
		b.StopTimer()
		wall := time.Since(start)
		syscall.Getrusage(syscall.RUSAGE_SELF, &after)
		if err != nil {
			b.Fatal(err)
		}
		want := hosts * pages
		if st.Fetched != want || st.Errors != 0 {
			b.Fatalf("fetched %d of %d pages, %d errors: %+v", st.Fetched, want, st.Errors, st)
		}
		cpu := tv(after.Utime) - tv(before.Utime) + tv(after.Stime) - tv(before.Stime)
		b.ReportMetric(float64(st.Fetched)/wall.Seconds(), "pages/s")
		b.ReportMetric(cpu.Seconds()/float64(st.Fetched)*1000, "cpu-s/1000pages")
		b.ReportMetric(float64(after.Maxrss)/1024, "peak-RSS-MB")
		if delay > 0 {
			bound := float64(hosts) / delay.Seconds()
			b.ReportMetric(float64(st.Fetched)/wall.Seconds()/bound*100, "%-of-polite-bound")
		}
		b.Logf("%d hosts × %d pages: %d pages, %d requests in %v; CPU %v (user %v, sys %v); peak RSS %d MB",
			hosts, pages, st.Fetched, st.Requests, wall.Round(time.Millisecond), cpu.Round(time.Millisecond),
			(tv(after.Utime) - tv(before.Utime)).Round(time.Millisecond), (tv(after.Stime) - tv(before.Stime)).Round(time.Millisecond),
			after.Maxrss/1024)
		// The servers' own logs, checked where that is cheap (Violations is quadratic in sites).
		if delay > 0 {
			// Where the time beyond the bound goes, from the servers' side: the first request's
			// offset from the start of the stage, and the gaps between one response and the next request.
			var first, gaps, maxGap time.Duration
			n := 0
			for _, s := range sites {
				reqs := web.RequestsTo(s)
				first += reqs[0].Start.Sub(start)
				for k := 1; k < len(reqs); k++ {
					g := reqs[k].Start.Sub(reqs[k-1].End)
					gaps += g
					maxGap = max(maxGap, g)
					n++
				}
			}
			b.Logf("per host: first request %v after the start on average; mean gap %v, max gap %v (delay %v)",
				(first / time.Duration(len(sites))).Round(time.Millisecond), (gaps / time.Duration(n)).Round(time.Millisecond),
				maxGap.Round(time.Millisecond), delay)
		}
		if want <= 20_000 {
			if v := web.Violations(testweb.CheckOptions{MinGap: delay, RobotsFirst: true}); len(v) > 0 {
				b.Errorf("%d politeness violations, first: %s", len(v), v[0])
			}
		}
		client.Close()
		db.Close()
		web.Close()
	}
}

func tv(t syscall.Timeval) time.Duration {
	return time.Duration(t.Sec)*time.Second + time.Duration(t.Usec)*time.Microsecond
}
