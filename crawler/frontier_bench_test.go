package crawler_test

// Peak RSS of a crawl whose frontier holds a million URLs, in a few minutes: 10,000 hosts × 100
// pages, of which the first run reaches every robots.txt and seed (each seed adds its 99 links to
// the table, so the frontier reaches 1 M URLs within a couple of minutes) and as many pages as it can
// before frontierDuration. The web is a testweb.LoadServer, without a request log, so that the
// servers' own memory stays small. Set STRATA_BENCH_HEAPPROFILE=FILE to write a heap profile of
// what is live at the time limit; the Go heap figures are from the same moment.
//
//	go test ./crawler/ -run '^$' -bench '^BenchmarkLoadFrontier$' -benchtime 1x -timeout 30m -v

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"runtime"
	"runtime/pprof"
	"sync/atomic"
	"testing"
	"time"

	"github.com/strata-crawler/strata/crawler"
	"github.com/strata-crawler/strata/internal/testweb"
)

const frontierDuration = 3 * time.Minute

func BenchmarkLoadFrontier(b *testing.B) {
	const hosts, pages = 10_000, 100
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		ls, err := testweb.ServeLoad(testweb.NewLoadWeb(pages), hosts)
		if err != nil {
			b.Fatal(err) // past the open-file limit (ulimit -n): one listener per host
		}
		seeds := make([]string, len(ls.Hosts))
		for k, h := range ls.Hosts {
			seeds[k] = "http://" + h + "/"
		}
		crawl, db := newStrata(b, seeds, loopbackOnly, 0, frontierDuration)
		// At the time limit, what is live: the heap profile and the runtime's memory statistics. A
		// backstop a minute later closes the servers, which ends the crawl (every domain is dropped
		// at its next refused connection) should the stage not stop at its MaxDuration.
		var ms runtime.MemStats
		var backstop atomic.Bool
		measured := make(chan struct{})
		limit := time.AfterFunc(frontierDuration, func() {
			defer close(measured)
			runtime.GC()
			runtime.ReadMemStats(&ms)
			if name := os.Getenv("STRATA_BENCH_HEAPPROFILE"); name != "" {
				if f, err := os.Create(name); err == nil {
					pprof.WriteHeapProfile(f)
					f.Close()
				}
			}
		})
		stop := time.AfterFunc(frontierDuration+time.Minute, func() {
			backstop.Store(true)
			ls.Close()
		})
		start := time.Now()
		b.StartTimer()
		res, err := crawl(b.Context())
		b.StopTimer()
		wall := time.Since(start)
		stop.Stop()
		if err != nil && !errors.Is(err, crawler.ErrStopped) {
			b.Fatal(err)
		}
		if limit.Stop() {
			close(measured)
			runtime.ReadMemStats(&ms)
		}
		<-measured
		if backstop.Load() {
			b.Errorf("the crawl did not stop at its MaxDuration (%v); the servers were closed after %v", frontierDuration, wall.Round(time.Second))
		}
		_, _, maxRSS := selfUsage()
		st, err := db.Status(b.Context(), 1)
		if err != nil {
			b.Fatal(err)
		}
		urls := 0
		for _, n := range st.URLs {
			urls += n
		}
		served := ls.Stats()
		if err := ls.Close(); err != nil {
			b.Error(err)
		}
		if served.Overlaps > 0 {
			b.Errorf("%d requests overlapped another to the same site", served.Overlaps)
		}
		b.ReportMetric(float64(urls), "URLs")
		b.ReportMetric(float64(res.pages), "pages")
		b.ReportMetric(float64(maxRSS)/(1<<20), "peak-RSS-MB")
		b.ReportMetric(float64(ms.HeapInuse)/(1<<20), "heap-inuse-MB")
		b.Logf("%d URLs in the table; %d pages and %d robots.txt served in %v; peak RSS %d MB (servers included); at the time limit, after a GC: Go heap in use %d MB, stacks %d MB, runtime total %d MB",
			urls, served.Pages, served.Robots, wall.Round(time.Second), maxRSS>>20, ms.HeapInuse>>20, ms.StackInuse>>20, ms.Sys>>20)
	}
}

// loopbackOnly resolves loopback addresses to themselves and nothing else.
func loopbackOnly(_ context.Context, host string) ([]netip.Addr, error) {
	ip, err := netip.ParseAddr(host)
	if err != nil || !ip.IsLoopback() {
		return nil, fmt.Errorf("resolve %s: not a loopback address", host)
	}
	return []netip.Addr{ip}, nil
}
