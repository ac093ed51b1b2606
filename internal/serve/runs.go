package serve

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/strata-crawler/strata/internal/store"
)

// Page sizes. Every list is paginated with a keyset cursor, so a page costs the same at the end of
// a long list as at its start.
const (
	runsPerPage    = 50
	changesPerPage = 50
	sitesPerPage   = 50
	treePerPage    = 100
	fetchesPerPage = 50
	linksPerPage   = 100
	linksOnPage    = 20
	hitsPerPage    = 50
)

type runsData struct {
	Runs   []runRow
	Latest *runRow
	Chart  Chart
	Next   string // link to the older runs, "" on the last page
}

// runRow is a run with what the index step found about its pages.
type runRow struct {
	store.Run
	Pages store.PageCounts
}

var runSeries = []Series{
	{"new", "s-new"},
	{"changed", "s-changed"},
	{"unchanged or 304", "s-same"},
	{"404 or 410", "s-404"},
	{"errors", "s-error"},
	{"not due (fr)", "s-fr"},
	{"skipped (selective)", "s-sel"},
}

func (s *Server) runs(r *http.Request) (*view, error) {
	before, err := intQuery(r, "before")
	if err != nil {
		return nil, err
	}
	runs, err := s.opts.DB.Runs(r.Context(), before, runsPerPage+1)
	if err != nil {
		return nil, err
	}
	d := runsData{}
	if len(runs) > runsPerPage {
		runs = runs[:runsPerPage]
		d.Next = "/runs?before=" + strconv.FormatInt(runs[len(runs)-1].ID, 10)
	}
	ids := make([]int64, len(runs))
	for i, run := range runs {
		ids[i] = run.ID
	}
	counts, err := s.opts.DB.RunPageCounts(r.Context(), ids)
	if err != nil {
		return nil, err
	}
	for _, run := range runs {
		d.Runs = append(d.Runs, runRow{Run: run, Pages: counts[run.ID]})
	}
	if before == 0 && len(d.Runs) > 0 {
		d.Latest = &d.Runs[0]
	}
	cols := make([]Column, len(d.Runs))
	for i, run := range d.Runs {
		nf := run.Pages.NotFound
		// oldest on the left, as time runs
		cols[len(runs)-1-i] = Column{
			Values: []float64{float64(run.New), float64(run.Changed), float64(run.Unchanged + run.NotModified), float64(nf),
				float64(run.Errors), float64(run.SkippedFr), float64(run.SkippedSelective)},
			Href: fmt.Sprintf("/changes?run=%d", run.ID),
			Title: fmt.Sprintf("run %d, %s: %d fetched, %d new, %d changed, %d unchanged, %d not modified, %d answered 404 or 410, %d errors, %d not due, %d skipped",
				run.ID, fmtTime(run.StartedAt), run.Fetched, run.New, run.Changed, run.Unchanged, run.NotModified, nf, run.Errors,
				run.SkippedFr, run.SkippedSelective),
			Date: run.StartedAt,
			Skip: run.Fetched == 0,
		}
	}
	d.Chart = StackedBars("pages per run: new, changed, unchanged, 404, errors, not due and skipped", 760, 170, runSeries, cols, 0, count)
	return &view{Template: "runs", Title: "Runs", Nav: "runs", Data: d, Crumbs: []Crumb{{"Runs", ""}}, Feed: "/feed.atom"}, nil
}

type changesData struct {
	Run     store.Run
	Pages   store.PageCounts
	Runs    []store.Run // recent runs, for the selector
	Kind    string      // changed, new, gone or unlinked
	Kinds   []kindTab
	Site    string
	Sites   []string // known domains, for the selector's suggestions
	Min     int      // least change, in percent
	Mins    []int
	Changes []store.Change
	Events  []store.PageEvent
	Next    string
	Feed    string
}

// kindTab is one of the changes view's lists.
type kindTab struct {
	Kind, Name, Href string
	Count            int
	Known            bool // the count is known (the index step has summarised the run)
}

// changeKinds are the lists of the changes view, and what each says.
var changeKinds = []struct{ kind, name string }{
	{"changed", "changed"}, {"new", "new"}, {"gone", "gone"}, {"unlinked", "no longer linked"},
}

// changes lists what happened to pages in a run (by default the latest): the changed pages, the
// biggest change first, or its new, gone or unlinked pages.
func (s *Server) changes(r *http.Request) (*view, error) {
	ctx := r.Context()
	q := r.URL.Query()
	runID, err := intQuery(r, "run")
	if err != nil {
		return nil, err
	}
	minPct, err := intQuery(r, "min")
	if err != nil || minPct > 100 {
		return nil, badRequestf("min must be a percentage from 0 to 100, got %q", q.Get("min"))
	}
	d := changesData{Site: strings.TrimSpace(q.Get("site")), Min: int(minPct), Mins: []int{0, 1, 10, 25, 50, 90}, Kind: q.Get("kind")}
	switch d.Kind {
	case "":
		d.Kind = "changed"
	case "changed", "new", "gone", "unlinked":
	default:
		return nil, badRequestf("kind must be changed, new, gone or unlinked, got %q", d.Kind)
	}
	if d.Runs, err = s.opts.DB.Runs(ctx, 0, 30); err != nil {
		return nil, err
	}
	if d.Sites, err = s.opts.DB.Domains(ctx, "", 200); err != nil {
		return nil, err
	}
	v := &view{Template: "changes", Title: "Changes", Nav: "changes", Data: &d, Crumbs: []Crumb{{"Runs", "/runs"}, {"Changes", ""}}}
	switch {
	case runID > 0:
		if d.Run, err = s.opts.DB.RunByID(ctx, runID); err != nil {
			return nil, err
		}
	case len(d.Runs) > 0:
		d.Run = d.Runs[0]
	default:
		return v, nil // no run yet: the template says so
	}
	v.Title = fmt.Sprintf("Changes in run %d", d.Run.ID)
	v.Crumbs = []Crumb{{"Runs", "/runs"}, {fmt.Sprintf("Run %d", d.Run.ID), ""}}
	counts, err := s.opts.DB.RunPageCounts(ctx, []int64{d.Run.ID})
	if err != nil {
		return nil, err
	}
	d.Pages = counts[d.Run.ID]
	base := url.Values{"run": {strconv.FormatInt(d.Run.ID, 10)}}
	if d.Site != "" {
		base.Set("site", d.Site)
	}
	for _, k := range changeKinds {
		t := kindTab{Kind: k.kind, Name: k.name, Known: true}
		switch k.kind {
		case "changed":
			t.Count = d.Run.Changed
		case "new":
			t.Count, t.Known = d.Pages.New, d.Pages.Known
		case "gone":
			t.Count, t.Known = d.Pages.Gone, d.Pages.Known
		case "unlinked":
			t.Count, t.Known = d.Pages.Unlinked, d.Pages.Known
		}
		hv := url.Values{"kind": {k.kind}}
		for key, vals := range base {
			hv[key] = vals
		}
		t.Href = "/changes?" + hv.Encode()
		d.Kinds = append(d.Kinds, t)
	}
	feed := url.Values{}
	if d.Site != "" {
		feed.Set("site", d.Site)
	}
	d.Feed = "/feed.atom"
	if len(feed) > 0 {
		d.Feed += "?" + feed.Encode()
	}
	v.Feed = d.Feed
	var hosts []string
	if d.Site != "" {
		if hosts, err = s.siteHosts(r, d.Site); err != nil {
			return nil, err
		}
	}
	if d.Kind != "changed" {
		after, err := intQuery(r, "after")
		if err != nil {
			return nil, err
		}
		if d.Events, err = s.opts.DB.PageEvents(ctx, store.EventQuery{Run: d.Run.ID, Kind: d.Kind, Hosts: hosts, After: after,
			Limit: changesPerPage + 1}); err != nil {
			return nil, err
		}
		var more bool
		if d.Events, more = trim(d.Events, changesPerPage); more {
			next := url.Values{"kind": {d.Kind}, "after": {strconv.FormatInt(d.Events[len(d.Events)-1].URLID, 10)}}
			for key, vals := range base {
				next[key] = vals
			}
			d.Next = "/changes?" + next.Encode()
		}
		return v, nil
	}
	cq := store.ChangeQuery{Run: d.Run.ID, MinMagnitude: float64(minPct) / 100, Limit: changesPerPage + 1, Hosts: hosts}
	if a := q.Get("after"); a != "" {
		mag, id, ok := strings.Cut(a, ":")
		m, err1 := strconv.ParseFloat(mag, 64)
		n, err2 := strconv.ParseInt(id, 10, 64)
		if !ok || err1 != nil || err2 != nil {
			return nil, badRequestf("after must be magnitude:fetch, got %q", a)
		}
		cq.After = &store.Change{Magnitude: m, FetchID: n}
	}
	if d.Changes, err = s.opts.DB.Changes(ctx, cq); err != nil {
		return nil, err
	}
	if len(d.Changes) > changesPerPage {
		d.Changes = d.Changes[:changesPerPage]
		last := d.Changes[len(d.Changes)-1]
		next := url.Values{"run": {strconv.FormatInt(d.Run.ID, 10)}, "after": {
			strconv.FormatFloat(last.Magnitude, 'g', -1, 64) + ":" + strconv.FormatInt(last.FetchID, 10)}}
		if d.Site != "" {
			next.Set("site", d.Site)
		}
		if minPct > 0 {
			next.Set("min", strconv.FormatInt(minPct, 10))
		}
		d.Next = "/changes?" + next.Encode()
	}
	return v, nil
}
