package crawler_test

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/strata-crawler/strata/crawler"
	"github.com/strata-crawler/strata/internal/robots"
	"github.com/strata-crawler/strata/internal/store"
)

// discoverCounting is the SQLite store with its Discover transactions counted.
type discoverCounting struct {
	*store.DB
	discovers atomic.Int32
}

func (s *discoverCounting) Discover(ctx context.Context, found []store.NewURL) ([]store.NewURL, error) {
	s.discovers.Add(1)
	return s.DB.Discover(ctx, found)
}

// TestCrawlRecordsFoundLinksWithTheFetch: a page's links are written in its fetch's transaction,
// not in one of their own (issue 19), and still join the run: every page is fetched once, the
// counts are those of a Discover per page. Only a page with more links than one batch writes its
// first batches on their own, so the trap guard counts them before it admits more.
func TestCrawlRecordsFoundLinksWithTheFetch(t *testing.T) {
	for _, tt := range []struct {
		name      string
		links     int   // on the home page, besides /a
		discovers int32 // Discover transactions expected
	}{
		{"pages of a batch or fewer links", 20, 0},
		{"a page of more links than a batch", 150, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, harnessOptions{delay: time.Millisecond})
			st := &discoverCounting{DB: h.db}
			robotsClient := h.client.HTTPClient()
			c := crawler.New(st, h.client, func(ctx context.Context, origin *url.URL) robots.Result {
				return robots.Fetch(ctx, robotsClient, origin, userAgent)
			}, h.gate, h.cfg)
			s := h.web.AddSite(t)
			var home strings.Builder
			home.WriteString(`<a href="/a">a</a>`)
			for i := range tt.links {
				// Paths and texts of words, not numbers: pages alike would look like a trap.
				fmt.Fprintf(&home, ` <a href="/%s">p</a>`, word(i))
				s.Page("/"+word(i), `<p>about `+word(i)+`</p> <a href="/">home</a> <a href="/a">a</a>`)
			}
			s.Page("/", home.String())
			s.Page("/a", `<a href="/a/one">one</a> <a href="/">home</a> <a href="/`+word(0)+`">first</a>`)
			s.Page("/a/one", `<p>leaf</p>`)
			h.seed(2, 1, s.URL("/"))
			run, err := h.db.BeginRun(t.Context(), time.Now(), 0)
			if err != nil {
				t.Fatal(err)
			}
			stats, err := c.Crawl(t.Context(), crawler.Run{ID: run, Start: time.Now()})
			if err != nil {
				t.Fatal(err)
			}
			if n := st.discovers.Load(); n != tt.discovers {
				t.Errorf("%d Discover transactions, want %d", n, tt.discovers)
			}
			want := tt.links + 2 // the home page's links and /a/one
			if stats.Links != want || stats.NewURLs != want || stats.Due != want+1 || stats.Done != want+1 || stats.Fetched != want+1 {
				t.Errorf("stats %+v; want %d links new and due, %d pages done", stats, want, want+1)
			}
			for _, path := range []string{"/", "/a", "/a/one", "/" + word(0), "/" + word(tt.links-1)} {
				if got := h.web.Count(s, path); got != 1 {
					t.Errorf("%s requested %d times, want 1", path, got)
				}
			}
			if info, err := h.db.URLInfo(t.Context(), s.URL("/a/one")); err != nil || info.Level != 0 {
				t.Errorf("URLInfo(/a/one) = %+v, %v; want level 0", info, err)
			}
		})
	}
}

// word is a name made of letters for i.
func word(i int) string {
	b := []byte{'x'}
	for {
		b = append(b, byte('a'+i%26))
		if i /= 26; i == 0 {
			return string(b)
		}
	}
}
