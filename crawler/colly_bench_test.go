package crawler_test

// The comparison the issue asks for: a plain github.com/gocolly/colly/v2 crawler of the same web as
// BenchmarkLoad and BenchmarkLoadPolite, with the same parallelism (loadWorkers requests in flight,
// one at a time per host) and the same delay. See internal/loadtest/collycrawl for its settings and
// load_bench_test.go for what is measured. Run one configuration per process:
//
//	go test ./crawler/ -run '^$' -bench '^BenchmarkLoadColly$/^hosts=1000$/^pages=100$' -benchtime 1x -timeout 60m -v

import (
	"context"
	"testing"

	"github.com/strata-crawler/strata/internal/loadtest/collycrawl"
	"github.com/strata-crawler/strata/internal/testweb"
)

func BenchmarkLoadColly(b *testing.B) {
	for _, c := range loadCases {
		b.Run(c.name(), func(b *testing.B) { runLoad(b, c, prepareColly) })
	}
}

func BenchmarkLoadCollyPolite(b *testing.B) {
	for _, c := range politeCases {
		b.Run(c.name(), func(b *testing.B) { runLoad(b, c, prepareColly) })
	}
}

func prepareColly(b *testing.B, c loadCase, _ *testweb.Web, sites []*testweb.Site) func(ctx context.Context) (loadResult, error) {
	seeds := make([]string, len(sites))
	for i, s := range sites {
		seeds[i] = s.URL("/")
	}
	return func(ctx context.Context) (loadResult, error) {
		st, err := collycrawl.Crawl(ctx, seeds, collycrawl.Options{UserAgent: userAgent, Workers: loadWorkers, Delay: c.delay})
		return loadResult{pages: int(st.Pages), requests: int(st.Requests), errors: int(st.Errors)}, err
	}
}
