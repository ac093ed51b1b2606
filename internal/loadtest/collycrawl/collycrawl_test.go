package collycrawl_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/strata-crawler/strata/internal/loadtest/collycrawl"
	"github.com/strata-crawler/strata/internal/testweb"
)

// TestCrawl checks, from the servers' log, that the baseline crawls the whole web once and keeps
// the promises it is compared under: robots.txt first and once, one request at a time per host, the
// delay between page requests.
func TestCrawl(t *testing.T) {
	tests := []struct {
		hosts, pages, workers int
		delay                 time.Duration
	}{
		{hosts: 1, pages: 1, workers: 1},
		{hosts: 4, pages: 6, workers: 2},
		{hosts: 3, pages: 3, workers: 8, delay: 20 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("hosts=%d/pages=%d/workers=%d/delay=%v", tt.hosts, tt.pages, tt.workers, tt.delay), func(t *testing.T) {
			web := testweb.New(t)
			sites := web.AddLoadSites(t, testweb.NewLoadWeb(tt.pages), tt.hosts)
			var seeds []string
			for _, s := range sites {
				seeds = append(seeds, s.URL("/"))
			}
			st, err := collycrawl.Crawl(t.Context(), seeds, collycrawl.Options{UserAgent: "collycrawl-test/1.0",
				Workers: tt.workers, Delay: tt.delay})
			if err != nil {
				t.Fatal(err)
			}
			if want := int64(tt.hosts * tt.pages); st.Pages != want || st.Errors != 0 {
				t.Errorf("stats %+v: want %d pages, no errors", st, want)
			}
			for _, s := range sites {
				for p := 0; p < tt.pages; p++ {
					if n := web.Count(s, testweb.LoadPath(p)); n != 1 {
						t.Errorf("%s%s requested %d times, want once", s.Name, testweb.LoadPath(p), n)
					}
				}
			}
			for _, v := range web.Violations(testweb.CheckOptions{RobotsFirst: true}) {
				t.Error(v)
			}
			// colly fetches robots.txt outside its LimitRules, so the delay holds from the seed on.
			for _, s := range sites {
				reqs := web.RequestsTo(s)
				for k := 2; k < len(reqs); k++ {
					if gap := reqs[k].Start.Sub(reqs[k-1].End); gap < tt.delay {
						t.Errorf("%s: only %v between %s and %s (want >= %v)", s.Name, gap, reqs[k-1].Path, reqs[k].Path, tt.delay)
					}
				}
			}
		})
	}
}

func TestCrawlRefusesOtherAddresses(t *testing.T) {
	// 192.0.2.0/24 is TEST-NET-1: the dialler must refuse it before any packet leaves.
	st, err := collycrawl.Crawl(t.Context(), []string{"http://192.0.2.1/"}, collycrawl.Options{Workers: 1})
	if err == nil || st.Pages != 0 {
		t.Fatalf("crawl of a non-loopback seed: %+v, %v; want an error and no page", st, err)
	}
}

// TestCrawlArticles checks the reference's per-page work on a real-sized web: every page of every
// site crawled through the levels, and its visible text, without scripts, in a file of its own.
func TestCrawlArticles(t *testing.T) {
	web := testweb.New(t)
	lw := testweb.NewArticleWeb(12, 5, 20_000)
	sites := web.AddLoadSites(t, lw, 2)
	var seeds []string
	for _, s := range sites {
		seeds = append(seeds, s.URL("/"))
	}
	dir := t.TempDir()
	st, err := collycrawl.Crawl(t.Context(), seeds, collycrawl.Options{UserAgent: "collycrawl-test/1.0", Workers: 4,
		TextDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if st.Pages != 24 || st.Texts != 24 || st.Errors != 0 {
		t.Errorf("stats %+v: want 24 pages and texts, no errors", st)
	}
	files, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 24 {
		t.Fatalf("%d text files, want 24", len(files))
	}
	b, err := os.ReadFile(filepath.Join(dir, files[0].Name()))
	if err != nil {
		t.Fatal(err)
	}
	if text := string(b); !strings.Contains(text, "Related stories") || strings.Contains(text, "dataLayer") || strings.Contains(text, "<p") {
		t.Errorf("text file %s is not the page's visible text:\n%.500s", files[0].Name(), text)
	}
}
