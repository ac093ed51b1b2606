package serve

import (
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/strata-crawler/strata/internal/store"
)

// Feed sizes: the entries of a feed, the runs a site feed looks back over, and the changed lines an
// entry quotes.
const (
	feedEntries = 50
	feedRuns    = 30
	feedLines   = 6
	// feedDiffMax bounds the texts an entry quotes a diff of; a longer page gets its summary only.
	feedDiffMax = 256 << 10
)

type atomFeed struct {
	XMLName xml.Name    `xml:"http://www.w3.org/2005/Atom feed"`
	Title   string      `xml:"title"`
	ID      string      `xml:"id"`
	Updated string      `xml:"updated"`
	Links   []atomLink  `xml:"link"`
	Author  atomAuthor  `xml:"author"`
	Entries []atomEntry `xml:"entry"`
}

type atomLink struct {
	Rel  string `xml:"rel,attr,omitempty"`
	Href string `xml:"href,attr"`
	Type string `xml:"type,attr,omitempty"`
}

type atomAuthor struct {
	Name string `xml:"name"`
}

type atomEntry struct {
	Title    string      `xml:"title"`
	ID       string      `xml:"id"`
	Updated  string      `xml:"updated"`
	Link     atomLink    `xml:"link"`
	Category []atomCat   `xml:"category"`
	Summary  atomText    `xml:"summary"`
	Content  *atomText   `xml:"content,omitempty"`
	Author   *atomAuthor `xml:"author,omitempty"`
}

type atomCat struct {
	Term string `xml:"term,attr"`
}

// atomText is plain text: the feed carries no markup at all, so a reader has nothing to run.
type atomText struct {
	Type string `xml:"type,attr"`
	Body string `xml:",chardata"`
}

// feedQuery is what a feed is filtered by.
type feedQuery struct {
	Site  string
	Page  int64
	Kinds map[string]bool
	Min   float64
}

// feed serves an Atom feed of what happened to pages: across sites, of one site (site=domain) or of
// one page (page=id), of the kinds asked for (kind=changed,new,gone,unlinked; default all), changes
// of at least min percent of the text. Like every strata page it is read-only and has no script:
// its text is plain and escaped.
func (s *Server) feed(w http.ResponseWriter, r *http.Request) {
	hdr := w.Header()
	hdr.Set("Content-Security-Policy", pagePolicy)
	hdr.Set("X-Content-Type-Options", "nosniff")
	hdr.Set("Referrer-Policy", "no-referrer")
	hdr.Set("Cache-Control", "no-cache")
	fq, err := parseFeedQuery(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	f, err := s.buildFeed(r, fq)
	switch {
	case errors.Is(err, errNotFound) || errors.Is(err, store.ErrNotFound):
		http.Error(w, "no such page", http.StatusNotFound)
		return
	case err != nil:
		s.log.Error("serve: feed", "query", r.URL.RawQuery, "err", err)
		http.Error(w, "strata could not build the feed", http.StatusInternalServerError)
		return
	}
	body, err := xml.MarshalIndent(f, "", "  ")
	if err != nil {
		s.log.Error("serve: feed", "err", err)
		http.Error(w, "strata could not build the feed", http.StatusInternalServerError)
		return
	}
	hdr.Set("Content-Type", "application/atom+xml; charset=utf-8")
	w.Write([]byte(xml.Header))
	w.Write(body)
}

func parseFeedQuery(r *http.Request) (feedQuery, error) {
	q := r.URL.Query()
	fq := feedQuery{Site: strings.TrimSpace(q.Get("site")), Kinds: map[string]bool{}}
	if p := q.Get("page"); p != "" {
		n, err := strconv.ParseInt(p, 10, 64)
		if err != nil || n <= 0 {
			return fq, fmt.Errorf("page must be a page number, got %q", p)
		}
		fq.Page = n
	}
	if m := q.Get("min"); m != "" {
		n, err := strconv.Atoi(m)
		if err != nil || n < 0 || n > 100 {
			return fq, fmt.Errorf("min must be a percentage from 0 to 100, got %q", m)
		}
		fq.Min = float64(n) / 100
	}
	kinds := q.Get("kind")
	if kinds == "" {
		kinds = "changed,new,gone,unlinked"
	}
	for _, k := range strings.Split(kinds, ",") {
		switch k = strings.TrimSpace(k); k {
		case "changed", "new", "gone", "unlinked":
			fq.Kinds[k] = true
		default:
			return fq, fmt.Errorf("kind must be a list of changed, new, gone and unlinked, got %q", k)
		}
	}
	return fq, nil
}

// feedItem is one entry before it is written.
type feedItem struct {
	Kind      string
	URLID     int64
	URL       string
	Title     string
	FetchID   int64
	RunID     int64
	At        time.Time
	Magnitude float64
}

func (s *Server) buildFeed(r *http.Request, fq feedQuery) (*atomFeed, error) {
	ctx := r.Context()
	base := "http://" + r.Host
	self := base + "/feed.atom"
	if r.URL.RawQuery != "" {
		self += "?" + r.URL.RawQuery
	}
	f := &atomFeed{Title: "strata: what changed", ID: "urn:strata:feed:" + r.URL.RawQuery, Author: atomAuthor{"strata"},
		Links: []atomLink{{Rel: "self", Href: self, Type: "application/atom+xml"}, {Rel: "alternate", Href: base + "/changes"}}}
	var items []feedItem
	var err error
	switch {
	case fq.Page > 0:
		items, err = s.pageItems(ctx, fq)
		if err == nil {
			u, uerr := s.opts.DB.URLByID(ctx, fq.Page)
			if uerr != nil {
				return nil, uerr
			}
			f.Title = "strata: " + u
			f.Links[1].Href = fmt.Sprintf("%s/page/%d", base, fq.Page)
		}
	default:
		items, err = s.runItems(r, fq)
		if fq.Site != "" {
			f.Title = "strata: " + fq.Site
			f.Links[1].Href = base + "/sites/" + url.PathEscape(fq.Site)
		}
	}
	if err != nil {
		return nil, err
	}
	for _, it := range items {
		f.Entries = append(f.Entries, s.entry(ctx, base, it))
	}
	var updated time.Time
	for _, it := range items {
		if it.At.After(updated) {
			updated = it.At
		}
	}
	f.Updated = updated.UTC().Format(time.RFC3339)
	return f, nil
}

// pageItems are one page's changes and events, the newest first.
func (s *Server) pageItems(ctx context.Context, fq feedQuery) ([]feedItem, error) {
	u, err := s.opts.DB.URLByID(ctx, fq.Page)
	if err != nil {
		return nil, err
	}
	marks, err := s.opts.DB.PageMarks(ctx, []int64{fq.Page})
	if err != nil {
		return nil, err
	}
	title := marks[fq.Page].Title
	var items []feedItem
	if fq.Kinds["changed"] {
		fetches, err := s.opts.DB.Fetches(ctx, fq.Page, 0, 4*feedEntries)
		if err != nil {
			return nil, err
		}
		for _, f := range fetches {
			if f.Changed && (fq.Min == 0 || f.Magnitude >= fq.Min) {
				items = append(items, feedItem{Kind: "changed", URLID: fq.Page, URL: u, Title: title, FetchID: f.ID, RunID: f.RunID,
					At: f.FetchedAt, Magnitude: f.Magnitude})
			}
		}
	}
	events, err := s.opts.DB.URLEvents(ctx, fq.Page, feedEntries)
	if err != nil {
		return nil, err
	}
	runAt := map[int64]time.Time{}
	for _, e := range events {
		if fq.Kinds[e.Kind] {
			items = append(items, s.eventItem(ctx, e, runAt))
		}
	}
	sortItems(items)
	return items[:min(len(items), feedEntries)], nil
}

// runItems are the changes and events of the recent runs, the newest run first, the biggest changes
// of a run first.
func (s *Server) runItems(r *http.Request, fq feedQuery) ([]feedItem, error) {
	ctx := r.Context()
	var hosts []string
	if fq.Site != "" {
		var err error
		if hosts, err = s.siteHosts(r, fq.Site); err != nil {
			return nil, err
		}
	}
	runs, err := s.opts.DB.Runs(ctx, 0, feedRuns)
	if err != nil {
		return nil, err
	}
	runAt := map[int64]time.Time{}
	var items []feedItem
	for _, run := range runs {
		if len(items) >= feedEntries {
			break
		}
		runAt[run.ID] = run.StartedAt
		if fq.Kinds["changed"] {
			cs, err := s.opts.DB.Changes(ctx, store.ChangeQuery{Run: run.ID, Hosts: hosts, MinMagnitude: fq.Min, Limit: feedEntries - len(items)})
			if err != nil {
				return nil, err
			}
			for _, c := range cs {
				items = append(items, feedItem{Kind: "changed", URLID: c.URLID, URL: c.URL, Title: c.Title, FetchID: c.FetchID,
					RunID: run.ID, At: c.FetchedAt, Magnitude: c.Magnitude})
			}
		}
		for _, kind := range []string{"new", "gone", "unlinked"} {
			if !fq.Kinds[kind] || len(items) >= feedEntries {
				continue
			}
			evs, err := s.opts.DB.PageEvents(ctx, store.EventQuery{Run: run.ID, Kind: kind, Hosts: hosts, Limit: feedEntries - len(items)})
			if err != nil {
				return nil, err
			}
			for _, e := range evs {
				items = append(items, s.eventItem(ctx, e, runAt))
			}
		}
	}
	return items, nil
}

func (s *Server) eventItem(ctx context.Context, e store.PageEvent, runAt map[int64]time.Time) feedItem {
	at := e.At
	if at.IsZero() {
		if t, ok := runAt[e.RunID]; ok {
			at = t
		} else if run, err := s.opts.DB.RunByID(ctx, e.RunID); err == nil {
			at, runAt[e.RunID] = run.StartedAt, run.StartedAt
		}
	}
	return feedItem{Kind: e.Kind, URLID: e.URLID, URL: e.URL, Title: e.Title, FetchID: e.FetchID, RunID: e.RunID, At: at, Magnitude: -1}
}

func sortItems(items []feedItem) {
	slices.SortStableFunc(items, func(a, b feedItem) int { return b.At.Compare(a.At) })
}

// entry writes one item, quoting the lines that changed when the texts can be read.
func (s *Server) entry(ctx context.Context, base string, it feedItem) atomEntry {
	name := it.Title
	if name == "" {
		name = it.URL
	}
	e := atomEntry{ID: fmt.Sprintf("urn:strata:%s:%d:%d", it.Kind, it.RunID, it.URLID), Updated: it.At.UTC().Format(time.RFC3339),
		Category: []atomCat{{Term: it.Kind}}, Summary: atomText{Type: "text"}}
	when := fmt.Sprintf("run %d, %s UTC", it.RunID, fmtTime(it.At))
	switch it.Kind {
	case "changed":
		e.Title = "Changed: " + name
		e.Link = atomLink{Href: fmt.Sprintf("%s/page/%d/diff?to=%d", base, it.URLID, it.FetchID)}
		e.Summary.Body = fmt.Sprintf("%s: %s of the text changed (%s).", it.URL, fmtPercent(it.Magnitude), when)
		if excerpt := s.diffExcerpt(ctx, it); excerpt != "" {
			e.Content = &atomText{Type: "text", Body: excerpt}
		}
	case "new":
		e.Title = "New: " + name
		e.Link = atomLink{Href: fmt.Sprintf("%s/page/%d", base, it.URLID)}
		e.Summary.Body = fmt.Sprintf("%s: first stored version (%s).", it.URL, when)
	case "gone":
		e.Title = "Gone: " + name
		e.Link = atomLink{Href: fmt.Sprintf("%s/page/%d", base, it.URLID)}
		e.Summary.Body = fmt.Sprintf("%s is gone: it answered 410, or 404 three times in a row (%s).", it.URL, when)
	default:
		e.Title = "No longer linked: " + name
		e.Link = atomLink{Href: fmt.Sprintf("%s/page/%d", base, it.URLID)}
		e.Summary.Body = fmt.Sprintf("%s: the pages that linked to it no longer do (%s).", it.URL, when)
	}
	return e
}

// diffExcerpt quotes the first lines that a change removed and added, diff style; "" when the
// versions cannot be read or are too long to compare here.
func (s *Server) diffExcerpt(ctx context.Context, it feedItem) string {
	if s.opts.Archive == nil {
		return ""
	}
	to, err := s.opts.DB.FetchByID(ctx, it.FetchID)
	if err != nil || to.Path == "" || to.Pruned {
		return ""
	}
	from, err := s.opts.DB.VersionBefore(ctx, it.URLID, it.FetchID)
	if err != nil || from.Pruned {
		return ""
	}
	var texts [2]string
	for i, f := range []store.Fetch{from, to} {
		if texts[i], err = s.opts.Archive.ReadText(f.Path); err != nil || len(texts[i]) > feedDiffMax {
			return ""
		}
	}
	var b strings.Builder
	n, more := 0, 0
	for _, l := range LineDiff(texts[0], texts[1]) {
		if l.Op != Del && l.Op != Ins {
			continue
		}
		if n == feedLines {
			more++
			continue
		}
		sign := "+ "
		if l.Op == Del {
			sign = "- "
		}
		b.WriteString(sign + l.Text + "\n")
		n++
	}
	if more > 0 {
		fmt.Fprintf(&b, "… and %d more changed lines\n", more)
	}
	return b.String()
}
