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
	Runs   []store.Run
	Latest *store.Run
	Chart  Chart
	Next   string // link to the older runs, "" on the last page
}

var runSeries = []Series{
	{"changed", "s-changed"},
	{"unchanged", "s-same"},
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
	d.Runs = runs
	if before == 0 && len(runs) > 0 {
		d.Latest = &runs[0]
	}
	cols := make([]Column, len(runs))
	for i, run := range runs {
		// oldest on the left, as time runs
		cols[len(runs)-1-i] = Column{
			Values: []float64{float64(run.Changed), float64(run.Unchanged + run.NotModified), float64(run.Errors),
				float64(run.SkippedFr), float64(run.SkippedSelective)},
			Href: fmt.Sprintf("/changes?run=%d", run.ID),
			Title: fmt.Sprintf("run %d, %s: %d fetched, %d changed, %d unchanged, %d errors, %d not due, %d skipped",
				run.ID, fmtTime(run.StartedAt), run.Fetched, run.Changed, run.Unchanged+run.NotModified, run.Errors,
				run.SkippedFr, run.SkippedSelective),
		}
	}
	d.Chart = StackedBars("pages per run: changed, unchanged, errors, not due and skipped", 760, 150, runSeries, cols, 0, count)
	return &view{Template: "runs", Title: "Runs", Nav: "runs", Data: d}, nil
}

type changesData struct {
	Run     store.Run
	Runs    []store.Run // recent runs, for the selector
	Site    string
	Sites   []string // known domains, for the selector's suggestions
	Min     int      // least change, in percent
	Mins    []int
	Changes []store.Change
	Next    string
}

// changes lists what changed in a run (by default the latest), the biggest change first.
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
	d := changesData{Site: strings.TrimSpace(q.Get("site")), Min: int(minPct), Mins: []int{0, 1, 10, 25, 50, 90}}
	if d.Runs, err = s.opts.DB.Runs(ctx, 0, 30); err != nil {
		return nil, err
	}
	if d.Sites, err = s.opts.DB.Domains(ctx, "", 200); err != nil {
		return nil, err
	}
	v := &view{Template: "changes", Title: "Changes", Nav: "changes", Data: &d}
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
	cq := store.ChangeQuery{Run: d.Run.ID, MinMagnitude: float64(minPct) / 100, Limit: changesPerPage + 1}
	if d.Site != "" {
		origins, err := s.opts.DB.DomainOrigins(ctx, d.Site)
		if err != nil {
			return nil, err
		}
		cq.Hosts = []string{d.Site} // a host[:port] typed in works too
		for _, o := range origins {
			cq.Hosts = append(cq.Hosts, o.Host)
		}
	}
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
