package serve

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/strata-crawler/strata/internal/store"
)

// siteSummary is one row of the sites list.
type siteSummary struct {
	Domain      string
	Origins     []store.Origin
	Pages       []int    // URLs known per origin, in the order of Origins
	Delays      []string // the politeness delay in force per origin, in words
	Total       int
	LastRun     store.DomainRun
	Traps       int
	MaxDelay    string
	RobotsWorst int // the robots.txt status that restricts most, -1 if none was fetched
}

type sitesData struct {
	Sites   []siteSummary
	LastRun int64
	Next    string
}

func (s *Server) siteList(r *http.Request) (*view, error) {
	ctx := r.Context()
	after := r.URL.Query().Get("after")
	domains, err := s.opts.DB.Domains(ctx, after, sitesPerPage+1)
	if err != nil {
		return nil, err
	}
	d := sitesData{}
	if len(domains) > sitesPerPage {
		domains = domains[:sitesPerPage]
		d.Next = "/sites?" + url.Values{"after": {domains[len(domains)-1]}}.Encode()
	}
	runs, err := s.opts.DB.Runs(ctx, 0, 1)
	if err != nil {
		return nil, err
	}
	if len(runs) > 0 {
		d.LastRun = runs[0].ID
	}
	version, err := s.opts.DB.DataVersion(ctx)
	if err != nil {
		return nil, err
	}
	for _, dom := range domains {
		sum, ok := s.sites.get(version, dom)
		if !ok {
			if sum, err = s.summarize(ctx, dom, d.LastRun); err != nil {
				return nil, err
			}
			s.sites.put(version, dom, sum)
		}
		d.Sites = append(d.Sites, sum)
	}
	return &view{Template: "sites", Title: "Sites", Nav: "sites", Data: d, Crumbs: []Crumb{{"Sites", ""}}}, nil
}

func (s *Server) summarize(ctx context.Context, domain string, lastRun int64) (siteSummary, error) {
	sum := siteSummary{Domain: domain, RobotsWorst: -1}
	var err error
	if sum.Origins, err = s.opts.DB.DomainOrigins(ctx, domain); err != nil {
		return sum, err
	}
	var maxDelay time.Duration
	for _, o := range sum.Origins {
		n, err := s.opts.DB.HostURLs(ctx, o.Host)
		if err != nil {
			return sum, err
		}
		sum.Pages = append(sum.Pages, n)
		sum.Total += n
		d, words := s.delay(o)
		maxDelay = max(maxDelay, d)
		sum.Delays = append(sum.Delays, words)
		if robotsRank(o.RobotsStatus) > robotsRank(sum.RobotsWorst) {
			sum.RobotsWorst = o.RobotsStatus
		}
	}
	sum.MaxDelay = fmtDuration(maxDelay)
	if lastRun > 0 {
		runs, err := s.opts.DB.DomainRuns(ctx, domain, []int64{lastRun})
		if err != nil {
			return sum, err
		}
		sum.LastRun = runs[0]
	}
	if _, sum.Traps, err = s.opts.DB.DomainTraps(ctx, domain, 0); err != nil {
		return sum, err
	}
	return sum, nil
}

// delay returns the least gap strata keeps between two requests to an origin's domain, as the
// politeness gate computes it before response times are counted: the configured delay (the
// loopback one for loopback hosts) or the robots.txt Crawl-delay, whichever is larger.
func (s *Server) delay(o store.Origin) (time.Duration, string) {
	base := s.opts.Delay
	host := o.Host
	if h, _, err := net.SplitHostPort(o.Host); err == nil {
		host = h
	}
	if ip := net.ParseIP(strings.Trim(host, "[]")); host == "localhost" || ip != nil && ip.IsLoopback() {
		base = s.opts.LoopbackDelay
	}
	if o.CrawlDelay > base {
		return o.CrawlDelay, fmtDuration(o.CrawlDelay) + " (robots.txt Crawl-delay)"
	}
	if o.CrawlDelay > 0 {
		return base, fmtDuration(base) + " (configured; Crawl-delay " + fmtDuration(o.CrawlDelay) + ")"
	}
	return base, fmtDuration(base) + " (configured)"
}

// robotsRank orders robots.txt outcomes by how much they restrict: a 5xx or no answer stops the
// crawl of the origin, a 2xx has rules, a 4xx allows everything.
func robotsRank(code int) int {
	switch {
	case code < 0:
		return 0
	case code >= 400 && code < 500:
		return 1
	case code >= 200 && code < 300:
		return 2
	}
	return 3
}

type siteData struct {
	siteSummary
	Chart  Chart
	Events []store.TrapEvent
}

var siteSeries = []Series{{"changed", "s-changed"}, {"fetched, unchanged", "s-same"}, {"404 or 410", "s-404"},
	{"not visited in the run", "s-skip"}}

func (s *Server) site(r *http.Request) (*view, error) {
	ctx := r.Context()
	domain := r.PathValue("domain")
	runs, err := s.opts.DB.Runs(ctx, 0, 60)
	if err != nil {
		return nil, err
	}
	var last int64
	if len(runs) > 0 {
		last = runs[0].ID
	}
	sum, err := s.summarize(ctx, domain, last)
	if err != nil {
		return nil, err
	}
	if len(sum.Origins) == 0 {
		return nil, errNotFound
	}
	d := siteData{siteSummary: sum}
	if d.Events, _, err = s.opts.DB.DomainTraps(ctx, domain, 20); err != nil {
		return nil, err
	}
	ids := make([]int64, len(runs))
	for i, run := range runs {
		ids[len(runs)-1-i] = run.ID
	}
	per, err := s.opts.DB.DomainRuns(ctx, domain, ids)
	if err != nil {
		return nil, err
	}
	pages, err := s.opts.DB.DomainPageCounts(ctx, domain, ids)
	if err != nil {
		return nil, err
	}
	cols := make([]Column, len(per))
	for i, p := range per {
		nf := pages[p.RunID].NotFound
		run := runs[len(runs)-1-i]
		cols[i] = Column{Values: []float64{float64(p.Changed), float64(max(0, p.Fetched-p.Changed-nf)), float64(nf)},
			Href: fmt.Sprintf("/changes?run=%d&site=%s", p.RunID, url.QueryEscape(domain)),
			Title: fmt.Sprintf("run %d, %s: %d fetched, %d changed, %d answered 404 or 410", p.RunID, fmtTime(run.StartedAt),
				p.Fetched, p.Changed, nf),
			Date: run.StartedAt, Skip: p.Fetched == 0}
		if p.Fetched == 0 {
			cols[i].Title = fmt.Sprintf("run %d, %s: no page of %s was due", p.RunID, fmtTime(run.StartedAt), domain)
		}
	}
	d.Chart = StackedBars("pages per run on "+domain+", oldest first", 760, 150, siteSeries, cols, 0, count)
	return &view{Template: "site", Title: domain, Nav: "sites", Data: d, Crumbs: []Crumb{{"Sites", "/sites"}, {domain, ""}},
		Feed: "/feed.atom?site=" + url.QueryEscape(domain)}, nil
}

type treeData struct {
	Prefix  string
	PageID  int64 // the page at Prefix itself, 0 if none
	Entries []treeEntry
	Next    string
	Bytes   bool  // the directory is too large to sort naturally: byte order
	Run     int64 // the run whose new, gone and unlinked pages are marked
}

// treeEntry is one child of a directory with what the tree shows of it.
type treeEntry struct {
	store.TreeEntry
	store.PageMark
	Events []string // new, gone, unlinked in the last summarised run
}

// naturalLimit is how many children a directory may have for the tree to sort them naturally:
// each page of the listing then reads them all (one index seek each) and sorts them. A larger one
// is listed in byte order, page by page from the index.
const naturalLimit = 5000

// tree lists one directory of a site's URL space, like ls, in natural order (release.0.7 before
// release.0.10), with each page's title and state and what the last run did to it.
func (s *Server) tree(r *http.Request) (*view, error) {
	ctx := r.Context()
	q := r.URL.Query()
	prefix := q.Get("p")
	u, err := url.Parse(prefix)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || !strings.HasSuffix(prefix, "/") {
		return nil, badRequestf("p must be a URL directory such as https://example.org/docs/, got %q", prefix)
	}
	d := treeData{Prefix: prefix}
	origin := u.Scheme + "://" + u.Host + "/"
	if !strings.HasPrefix(prefix, origin) {
		return nil, badRequestf("p must be a URL directory such as https://example.org/docs/, got %q", prefix)
	}
	if id, err := s.opts.DB.URLID(ctx, prefix); err == nil {
		d.PageID = id
	}
	after := q.Get("after")
	all, err := s.opts.DB.Tree(ctx, prefix, "", naturalLimit+1)
	if err != nil {
		return nil, err
	}
	var entries []store.TreeEntry
	if len(all) <= naturalLimit && q.Get("order") != "bytes" {
		slices.SortFunc(all, func(a, b store.TreeEntry) int { return natCompare(a.Name, b.Name) })
		i := 0
		if after != "" {
			i, _ = slices.BinarySearchFunc(all, after, func(e store.TreeEntry, t string) int { return natCompare(e.Name, t) })
			if i < len(all) && all[i].Name == after {
				i++
			}
		}
		entries = all[i:]
		if len(entries) > treePerPage {
			entries = entries[:treePerPage+1]
		}
	} else {
		d.Bytes = true
		if entries, err = s.opts.DB.Tree(ctx, prefix, after, treePerPage+1); err != nil {
			return nil, err
		}
	}
	if len(entries) > treePerPage {
		entries = entries[:treePerPage]
		next := url.Values{"p": {prefix}, "after": {entries[len(entries)-1].Name}}
		if d.Bytes {
			next.Set("order", "bytes")
		}
		d.Next = "/tree?" + next.Encode()
	}
	ids := make([]int64, 0, len(entries))
	for _, e := range entries {
		if e.URLID != 0 {
			ids = append(ids, e.URLID)
		}
	}
	marks, err := s.opts.DB.PageMarks(ctx, ids)
	if err != nil {
		return nil, err
	}
	if d.Run, err = s.opts.DB.LastSummarizedRun(ctx); err != nil {
		return nil, err
	}
	events, err := s.opts.DB.EventsAmong(ctx, d.Run, ids)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		d.Entries = append(d.Entries, treeEntry{TreeEntry: e, PageMark: marks[e.URLID], Events: events[e.URLID]})
	}
	return &view{Template: "tree", Title: prefix, Nav: "sites", Data: d, Crumbs: s.withSite(ctx, prefix, urlCrumbs(prefix, false))}, nil
}
