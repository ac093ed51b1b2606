package crawler_test

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/strata-crawler/strata/crawler"
	"github.com/strata-crawler/strata/frequency"
)

// TestCrawlBudgetSharesNewAndKnown checks WebFountain's two queues under a per-run budget: a run
// fetches at most the budget, gives new_share of it to never-fetched URLs and the rest to known ones,
// and a share with nothing left due passes to the other.
func TestCrawlBudgetSharesNewAndKnown(t *testing.T) {
	h := newHarness(t, harnessOptions{delay: 5 * time.Millisecond})
	s := h.web.AddSite(t)
	var urls []string
	for i := range 10 {
		p := fmt.Sprintf("/p%d", i)
		s.Page(p, "<p>"+p+"</p>")
		urls = append(urls, s.URL(p))
	}
	h.seed(0, 1, urls...)

	tests := []struct {
		budget      int
		share       float64
		new, known  int
		left        int // due URLs left after the run
		prioritized bool
	}{
		// Nothing known yet: the known share passes to the new URLs.
		{budget: 4, share: 0.25, new: 4, known: 0, left: 6, prioritized: true},
		// 6 new and 4 known due: 2 new (0.4 of 5), 3 known.
		{budget: 5, share: 0.4, new: 2, known: 3, left: 5, prioritized: true},
		// 4 new, 6 known due (fr_max 1): a budget above the due count is no cap at all.
		{budget: 20, share: 0.5, new: 4, known: 6, left: 0, prioritized: false},
	}
	for i, tc := range tests {
		h.cfg.Budget, h.cfg.NewShare = tc.budget, tc.share
		h = rewire(h, func(string) bool { return true })
		st := h.mustCrawl()
		if st.NewFetched != tc.new || st.KnownFetched != tc.known {
			t.Errorf("run %d: fetched %d new, %d known; want %d, %d", i+1, st.NewFetched, st.KnownFetched, tc.new, tc.known)
		}
		if st.Due-st.Done != tc.left {
			t.Errorf("run %d: %d URLs left due, want %d", i+1, st.Due-st.Done, tc.left)
		}
		if st.Prioritized != tc.prioritized {
			t.Errorf("run %d: prioritized %v, want %v", i+1, st.Prioritized, tc.prioritized)
		}
		doms, err := h.db.RunDomains(t.Context(), h.run)
		if err != nil {
			t.Fatal(err)
		}
		if len(doms) != 1 || doms[0].Fetched != tc.new+tc.known {
			t.Errorf("run %d: per-domain budget %+v, want one domain with %d fetches", i+1, doms, tc.new+tc.known)
		}
	}
}

// TestCrawlShortRunTakesTheStalestFirst checks Xu et al.'s order: when the budget cannot cover the
// due pages, the page left stale longest (times its weight) is fetched first.
func TestCrawlShortRunTakesTheStalestFirst(t *testing.T) {
	h := newHarness(t, harnessOptions{delay: 5 * time.Millisecond})
	s := h.web.AddSite(t)
	for _, p := range []string{"/a", "/b", "/c"} {
		s.Page(p, "<p>"+p+"</p>")
	}
	// /a is crawled in the first run only; /b and /c in the first two runs: in the third, /a has
	// been stale longest and must come first although its row is the oldest of equals otherwise.
	h.seed(0, 1, s.URL("/a"), s.URL("/b"), s.URL("/c"))
	h.mustCrawl()
	h.cfg.Budget, h.cfg.NewShare = 2, 0
	h = rewire(h, func(string) bool { return true })
	time.Sleep(20 * time.Millisecond)
	st := h.mustCrawl() // /a and /b by id; /c waits
	if st.KnownFetched != 2 {
		t.Fatalf("second run fetched %d known pages, want 2", st.KnownFetched)
	}
	time.Sleep(20 * time.Millisecond)
	h.cfg.Budget = 1
	h = rewire(h, func(string) bool { return true })
	h.mustCrawl()
	if n := h.web.Count(s, "/c"); n != 2 {
		t.Errorf("/c fetched %d times, want 2: it was the stalest page in the third run", n)
	}
}

// TestCrawlAccountsForTheChangeModel checks the run's accountability: pages fetched with a rate
// estimate carry the probability of a change the estimate gave them, next to what was observed.
func TestCrawlAccountsForTheChangeModel(t *testing.T) {
	h := newHarness(t, harnessOptions{delay: 5 * time.Millisecond})
	s := h.web.AddSite(t)
	s.Page("/still", "<p>the same text every time</p>")
	visits := 0
	s.Handle("/moving", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		visits++
		fmt.Fprintf(w, "<p>version %s of the page</p>", strings.Repeat("x", visits))
	}))
	h.seed(0, 1, s.URL("/still"), s.URL("/moving"))
	policy, err := frequency.New("bouras")
	if err != nil {
		t.Fatal(err)
	}
	var last *crawler.Stats
	estimated, observed, expected := 0, 0, 0.0
	for range 5 {
		last = h.mustCrawl()
		if _, err := h.c.Recalc(t.Context(), h.db, crawler.Run{ID: h.run}, policy, 10, nil); err != nil {
			t.Fatal(err)
		}
		estimated += last.Estimated
		observed += last.ObservedChanges
		expected += last.ExpectedChanges
	}
	// Every fetch of the moving page after its second is a change foreseen by a high estimate; the
	// still page's estimate is low and it never changes.
	if estimated < 4 || observed < 3 {
		t.Fatalf("%d fetches with an estimate, %d changes among them; want at least 4 and 3", estimated, observed)
	}
	if math.Abs(expected-float64(observed)) > 0.35*float64(observed)+0.5 {
		t.Errorf("the estimates expected %.2f changes, %d were observed", expected, observed)
	}
	if last.ObservedChanges != 1 {
		t.Errorf("last run observed %d changes, want 1 (the moving page)", last.ObservedChanges)
	}
	doms, err := h.db.RunDomains(t.Context(), h.run)
	if err != nil {
		t.Fatal(err)
	}
	if len(doms) != 1 || doms[0].Changed != 1 || doms[0].Expected != last.ExpectedChanges {
		t.Errorf("run domains %+v; want one with 1 change and %.2f expected", doms, last.ExpectedChanges)
	}
}

// TestCrawlStopsWhileDomainsAreReady: the max duration stops the stage even when some domain is
// always ready (many domains, no wait at the gate), and what was not reached stays due.
func TestCrawlStopsWhileDomainsAreReady(t *testing.T) {
	h := newHarness(t, harnessOptions{delay: time.Millisecond, maxDuration: 100 * time.Millisecond})
	var urls []string
	for _, s := range h.web.AddSites(t, 30) {
		for i := range 20 {
			p := fmt.Sprintf("/p%d", i)
			s.Handle(p, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				time.Sleep(5 * time.Millisecond)
				fmt.Fprintf(w, "<p>%s</p>", p)
			}))
			urls = append(urls, s.URL(p))
		}
	}
	h.seed(0, 1, urls...)
	st, err := h.crawl()
	t.Logf("done %d of %d in %v", st.Done, len(urls), st.Elapsed)
	if !errors.Is(err, crawler.ErrStopped) || !st.Stopped {
		t.Fatalf("err %v, stopped %v: want the stage stopped by its max duration", err, st.Stopped)
	}
	hosts, err := h.db.DueHosts(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	left := 0
	for _, n := range hosts {
		left += n
	}
	if left == 0 || left != len(urls)-st.Done {
		t.Errorf("%d URLs left due after %d done of %d; want the rest due", left, st.Done, len(urls))
	}
}
