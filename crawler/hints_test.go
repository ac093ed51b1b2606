package crawler_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/strata-crawler/strata/internal/testweb"
)

// hintedSite is a site of pages that change now and then, whose sitemap gives honest lastmod dates,
// and whose clock runs 90 days fast: every date it writes, Date headers included, is on its clock.
type hintedSite struct {
	site  *testweb.Site
	pages int
	lie   bool // the sitemap's lastmod never moves: every change is hidden
	// frozen, when set, is the site time from which the sitemap stops moving: its lastmods stay
	// those of that moment, as when a site's sitemap generator breaks.
	frozen time.Time
	now    func() time.Time // our (fake) clock
}

const siteSkew = 90 * 24 * time.Hour

var hintDay0 = time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)

func (h *hintedSite) siteNow() time.Time { return h.now().Add(siteSkew) }

// changesOn says whether page i changes at noon of day k (about one day in ten).
func changesOn(i, k int) bool { return (k*7+i*3)%10 == 0 }

// state returns page i's version and the site time of its last change, as of the site's now.
func (h *hintedSite) state(i int) (version int, lastmod time.Time) { return h.stateAt(i, h.siteNow()) }

// stateAt returns page i's version and the site time of its last change, as of site time now.
func (h *hintedSite) stateAt(i int, now time.Time) (version int, lastmod time.Time) {
	start := hintDay0.Add(siteSkew)
	lastmod = start.Add(-24 * time.Hour)
	for k := 0; ; k++ {
		at := start.Add(time.Duration(k)*24*time.Hour + 12*time.Hour)
		if at.After(now) {
			return version, lastmod
		}
		if changesOn(i, k) {
			version++
			lastmod = at
		}
	}
}

func newHintedSite(t *testing.T, web *testweb.Web, pages int, lie bool, now func() time.Time) *hintedSite {
	h := &hintedSite{site: web.AddSite(t), pages: pages, lie: lie, now: now}
	dated := func(w http.ResponseWriter) { w.Header().Set("Date", h.siteNow().Format(http.TimeFormat)) }
	for i := range pages {
		h.site.Handle(fmt.Sprintf("/p%d", i), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			dated(w)
			v, _ := h.state(i)
			fmt.Fprintf(w, "<h1>Page %d</h1><p>Text of page %d, revision %s.</p>", i, i, strings.Repeat("I", v+1))
		}))
	}
	h.site.Handle("/sitemap.xml", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		dated(w)
		w.Header().Set("Content-Type", "application/xml")
		fmt.Fprint(w, `<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`)
		for i := range pages {
			_, lm := h.state(i)
			if !h.frozen.IsZero() && h.siteNow().After(h.frozen) {
				_, lm = h.stateAt(i, h.frozen)
			}
			if h.lie {
				lm = hintDay0.Add(siteSkew - 24*time.Hour)
			}
			fmt.Fprintf(w, "<url><loc>%s</loc><lastmod>%s</lastmod></url>", h.site.URL(fmt.Sprintf("/p%d", i)), lm.Format(time.RFC3339))
		}
		fmt.Fprint(w, `</urlset>`)
	}))
	return h
}

// docs is a DocFetcher over plain HTTP for the loopback test web.
func docs(ctx context.Context, u string) (io.ReadCloser, time.Time, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, time.Time{}, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, time.Time{}, err
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return nil, time.Time{}, fmt.Errorf("status %d", resp.StatusCode)
	}
	date, _ := http.ParseTime(resp.Header.Get("Date"))
	return resp.Body, date, nil
}

// TestHonestHintsSaveFetchesAtEqualFreshness crawls the same site for 30 days, once a day, with every
// page due every day (fr_max 1): without hints, and with the site's sitemap, whose clock runs 90 days
// ahead of ours, and with a sitemap that lies. All see every change the day after it happens; with hints, once the site's lastmod
// dates have proved right, most of the fetches of unchanged pages are spared.
func TestHonestHintsSaveFetchesAtEqualFreshness(t *testing.T) {
	const pages, days = 12, 30
	type result struct{ pageFetches, changes, sitemaps, skipped int }
	run := func(withHints, lie bool) result {
		var now atomic.Int64
		clock := func() time.Time { return time.Unix(0, now.Load()).UTC() }
		now.Store(hintDay0.Add(3 * time.Hour).UnixNano())
		h := newHarness(t, harnessOptions{delay: 2 * time.Millisecond})
		site := newHintedSite(t, h.web, pages, lie, clock)
		var urls []string
		for i := range pages {
			urls = append(urls, site.site.URL(fmt.Sprintf("/p%d", i)))
		}
		h.seed(0, 1, urls...)
		h.cfg.Now = clock
		if withHints {
			h.cfg.Docs = docs
		}
		h = rewire(h, func(string) bool { return true })
		var r result
		for d := range days {
			now.Store(hintDay0.Add(time.Duration(d)*24*time.Hour + 3*time.Hour).UnixNano())
			st := h.mustCrawl()
			r.changes += st.Changed
			r.sitemaps += st.HintDocs
			r.skipped += st.SkippedHint
		}
		for _, q := range h.web.RequestsTo(site.site) {
			if strings.HasPrefix(q.Path, "/p") {
				r.pageFetches++
			}
		}
		return r
	}
	without, with, lied := run(false, false), run(true, false), run(true, true)
	t.Logf("without hints: %+v; with hints: %+v; with a lying sitemap: %+v", without, with, lied)
	wantChanges := 0
	for i := range pages {
		for k := 0; k < days-1; k++ { // a change at noon of day k is seen on day k+1
			if changesOn(i, k) {
				wantChanges++
			}
		}
	}
	if without.changes != wantChanges || with.changes != wantChanges {
		t.Errorf("changes seen: %d without hints, %d with; want %d both (equal freshness)", without.changes, with.changes, wantChanges)
	}
	if without.pageFetches != pages*days {
		t.Errorf("without hints: %d page fetches, want %d", without.pageFetches, pages*days)
	}
	if with.sitemaps != days {
		t.Errorf("with hints: %d sitemaps read, want one a day (%d)", with.sitemaps, days)
	}
	if float64(with.pageFetches) > 0.6*float64(without.pageFetches) {
		t.Errorf("with honest hints: %d page fetches, want markedly fewer than %d", with.pageFetches, without.pageFetches)
	}
	// A site whose lastmod hides every change never earns the trust that spares fetches: nothing
	// is missed.
	if lied.changes != wantChanges {
		t.Errorf("with a lying sitemap: %d changes seen, want %d", lied.changes, wantChanges)
	}
}

// TestFrozenSitemapLosesItsTrust: a site whose sitemap was honest for 20 days, then stopped moving
// (its generator broke), while its pages kept changing. Trust earned in the first weeks spares the
// fetches of pages it vouches for, deferring them by the longest interval; once the audits catch
// changes it did not announce, the site loses that trust and its deferred pages go back on their
// own schedule, so the changes stop being missed.
func TestFrozenSitemapLosesItsTrust(t *testing.T) {
	const pages, days, freeze = 12, 46, 20
	var now atomic.Int64
	clock := func() time.Time { return time.Unix(0, now.Load()).UTC() }
	now.Store(hintDay0.Add(3 * time.Hour).UnixNano())
	h := newHarness(t, harnessOptions{delay: 2 * time.Millisecond})
	site := newHintedSite(t, h.web, pages, false, clock)
	site.frozen = hintDay0.Add(siteSkew + freeze*24*time.Hour)
	var urls []string
	for i := range pages {
		urls = append(urls, site.site.URL(fmt.Sprintf("/p%d", i)))
	}
	h.seed(0, 1, urls...)
	h.cfg.Now = clock
	h.cfg.Docs = docs
	h = rewire(h, func(string) bool { return true })
	seen := make([]int, days) // changes seen by the run of each day
	skipped := make([]int, days)
	for d := range days {
		now.Store(hintDay0.Add(time.Duration(d)*24*time.Hour + 3*time.Hour).UnixNano())
		st := h.mustCrawl()
		seen[d], skipped[d] = st.Changed, st.SkippedHint
	}
	want := func(d int) int { // changes at noon of day d-1, due to be seen on day d
		n := 0
		for i := range pages {
			if changesOn(i, d-1) {
				n++
			}
		}
		return n
	}
	t.Logf("changes seen by day: %v; pages spared by the hints: %v", seen, skipped)
	spared := 0
	for d := 1; d < freeze; d++ {
		spared += skipped[d]
	}
	if spared == 0 {
		t.Fatalf("the honest sitemap earned no trust in %d days: nothing spared", freeze)
	}
	// From 16 days after the freeze, every change is seen the day after it happens: in the runs we
	// made, the audits (every fourth run while the record is clean, every run once one has found a
	// miss) caught the sitemap in 5 to 10 runs, and audits every run in 4 to 12 (the crawl's timing
	// varies which pages they draw). When audits were drawn from the due pages only and the counts
	// were cumulative, the site kept its trust and the changes went unseen from day 21 to the end.
	for d := freeze + 16; d < days; d++ {
		if seen[d] != want(d) {
			t.Errorf("day %d: %d changes seen, %d happened the day before", d, seen[d], want(d))
		}
	}
}

// TestNewerLastmodMakesAPageDueNow: a page crawled only once a month is fetched the day after its
// sitemap's lastmod moves past our last fetch — on the site's clock, 90 days off ours.
func TestNewerLastmodMakesAPageDueNow(t *testing.T) {
	for _, withHints := range []bool{false, true} {
		var now atomic.Int64
		clock := func() time.Time { return time.Unix(0, now.Load()).UTC() }
		now.Store(hintDay0.Add(3 * time.Hour).UnixNano())
		h := newHarness(t, harnessOptions{delay: 2 * time.Millisecond})
		site := newHintedSite(t, h.web, 1, false, clock) // page 0 changes at noon of day 0
		h.seed(0, 30, site.site.URL("/p0"))
		h.cfg.Now = clock
		if withHints {
			h.cfg.Docs = docs
		}
		h = rewire(h, func(string) bool { return true })
		h.mustCrawl()
		now.Store(hintDay0.Add(27 * time.Hour).UnixNano())
		st := h.mustCrawl()
		if want := map[bool]int{false: 0, true: 1}[withHints]; st.Changed != want || st.HintedDue != want {
			t.Errorf("hints %v: day 1 saw %d changes, %d pages made due by a hint; want %d", withHints, st.Changed, st.HintedDue, want)
		}
	}
}

// TestLinkedFeedIsReadWithTheSitesHints: a feed a page links is recorded, once however many pages
// link it, and read with the site's hints the next day; its item dates then act like lastmods.
func TestLinkedFeedIsReadWithTheSitesHints(t *testing.T) {
	var now atomic.Int64
	clock := func() time.Time { return time.Unix(0, now.Load()).UTC() }
	now.Store(hintDay0.Add(3 * time.Hour).UnixNano())
	h := newHarness(t, harnessOptions{delay: 2 * time.Millisecond})
	s := h.web.AddSite(t)
	for _, p := range []string{"/a", "/b"} {
		s.Page(p, `<html><head><link rel="alternate" type="application/rss+xml" href="/feed.xml"></head><body><p>`+p+`</p></body></html>`)
	}
	s.Handle("/feed.xml", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/rss+xml")
		fmt.Fprintf(w, `<?xml version="1.0"?><rss version="2.0"><channel><title>t</title><item><title>a</title><link>%s</link>`+
			`<pubDate>%s</pubDate></item></channel></rss>`, s.URL("/a"), hintDay0.Format(http.TimeFormat))
	}))
	h.seed(0, 1, s.URL("/a"), s.URL("/b"))
	h.cfg.Now, h.cfg.Docs = clock, docs
	h = rewire(h, func(string) bool { return true })
	for day, want := range []int{0, 1} {
		now.Store(hintDay0.Add(time.Duration(day)*24*time.Hour + 3*time.Hour).UnixNano())
		before := h.web.Count(s, "/feed.xml")
		st := h.mustCrawl()
		if got := h.web.Count(s, "/feed.xml") - before; got != want || st.HintDocs != want {
			t.Errorf("day %d: the feed was requested %d times and %d hint documents read; want %d", day, got, st.HintDocs, want)
		}
	}
	hh, err := h.db.HostHints(t.Context(), "http://"+s.Host())
	if err != nil {
		t.Fatal(err)
	}
	if len(hh.Feeds) != 1 || hh.Feeds[0] != s.URL("/feed.xml") {
		t.Errorf("feeds recorded for the site: %v, want just %s", hh.Feeds, s.URL("/feed.xml"))
	}
	info, err := h.db.URLInfo(t.Context(), s.URL("/a"))
	if err != nil {
		t.Fatal(err)
	}
	if info.HintSource != "feed" || info.HintLastMod == "" {
		t.Errorf("/a carries hint %q from %q; want the feed's date", info.HintLastMod, info.HintSource)
	}
}
