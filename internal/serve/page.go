package serve

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/url"
	"regexp"
	"strconv"

	"github.com/strata-crawler/strata/archive"
	fetchoutcome "github.com/strata-crawler/strata/internal/outcome"
	"github.com/strata-crawler/strata/internal/store"
)

// versionsListed bounds the versions offered in a page's selectors: a page crawled daily for years
// would otherwise put thousands of options in each.
const versionsListed = 200

// PageHead is what every view of one page shows at its top.
type PageHead struct {
	Info     *store.URLInfo
	Title    string        // of its newest indexed version
	Versions []store.Fetch // stored versions, the newest first
	Tab      string        // the view of the page shown: overview, text, html, diff or links
}

func (s *Server) loadPage(ctx context.Context, r *http.Request) (*PageHead, error) {
	id, err := idParam(r, "id")
	if err != nil {
		return nil, err
	}
	u, err := s.opts.DB.URLByID(ctx, id)
	if err != nil {
		return nil, err
	}
	h := &PageHead{}
	if h.Info, err = s.opts.DB.URLInfo(ctx, u); err != nil {
		return nil, err
	}
	if h.Versions, err = s.opts.DB.StoredVersions(ctx, id, versionsListed); err != nil {
		return nil, err
	}
	marks, err := s.opts.DB.PageMarks(ctx, []int64{id})
	if err != nil {
		return nil, err
	}
	h.Title = marks[id].Title
	return h, nil
}

// version returns the stored version named by the query parameter name (a fetch id), or the
// current one when it is absent; a fetch of another page or one that stored nothing is not found.
func (s *Server) version(ctx context.Context, r *http.Request, h *PageHead, name string) (store.Fetch, error) {
	fid, err := intQuery(r, name)
	if err != nil {
		return store.Fetch{}, err
	}
	if fid == 0 {
		return s.opts.DB.LatestVersion(ctx, h.Info.ID)
	}
	f, err := s.opts.DB.FetchByID(ctx, fid)
	if err != nil {
		return f, err
	}
	if f.URLID != h.Info.ID || f.Path == "" {
		return f, errNotFound
	}
	return f, nil
}

type pageData struct {
	*PageHead
	Events     []store.PageEvent // new, gone, unlinked, the newest first
	Rate       string            // the change rate in words
	Observed   string            // how many of the recent fetches found a change
	Timeline   Chart
	Fetches    []store.Fetch
	NextFetch  string
	Out        []store.LinkOut
	In         []store.LinkIn
	MoreOut    bool
	MoreIn     bool
	Explain    *Explanation
	ExplainErr string
}

var timelineSeries = []Series{{"changed (height: share of text)", "s-changed"}, {"unchanged or 304", "s-same"},
	{"404 or 410", "s-404"}, {"no usable answer", "s-error"}, {"not fetched in the run", "s-skip"}}

// timelineRuns is how many runs a page's timeline spans.
const timelineRuns = 60

func (s *Server) pageView(r *http.Request) (*view, error) {
	ctx := r.Context()
	h, err := s.loadPage(ctx, r)
	if err != nil {
		return nil, err
	}
	before, err := intQuery(r, "before")
	if err != nil {
		return nil, err
	}
	d := pageData{PageHead: h, Rate: rateWords(h.Info.ChangeRate)}
	if d.Fetches, err = s.opts.DB.Fetches(ctx, h.Info.ID, before, fetchesPerPage+1); err != nil {
		return nil, err
	}
	if len(d.Fetches) > fetchesPerPage {
		d.Fetches = d.Fetches[:fetchesPerPage]
		d.NextFetch = fmt.Sprintf("/page/%d?before=%d#fetches", h.Info.ID, d.Fetches[len(d.Fetches)-1].ID)
	}
	recent := d.Fetches
	if before != 0 {
		if recent, err = s.opts.DB.Fetches(ctx, h.Info.ID, 0, fetchesPerPage); err != nil {
			return nil, err
		}
	}
	runs, err := s.opts.DB.Runs(ctx, 0, timelineRuns)
	if err != nil {
		return nil, err
	}
	window, err := s.opts.DB.Fetches(ctx, h.Info.ID, 0, 4*timelineRuns)
	if err != nil {
		return nil, err
	}
	d.Timeline = timeline(h.Info.ID, runs, window, len(window) < 4*timelineRuns)
	d.Observed = observed(recent)
	if d.Events, err = s.opts.DB.URLEvents(ctx, h.Info.ID, 20); err != nil {
		return nil, err
	}
	if d.Out, err = s.opts.DB.LinksOut(ctx, h.Info.ID, "", linksOnPage+1); err != nil {
		return nil, err
	}
	if d.In, err = s.opts.DB.LinksIn(ctx, h.Info.ID, 0, linksOnPage+1); err != nil {
		return nil, err
	}
	d.Out, d.MoreOut = trim(d.Out, linksOnPage)
	d.In, d.MoreIn = trim(d.In, linksOnPage)
	if s.opts.Explain != nil {
		if d.Explain, err = s.opts.Explain(ctx, h.Info.URL); err != nil {
			if ctx.Err() != nil {
				return nil, err
			}
			s.log.Warn("serve: explain", "url", h.Info.URL, "err", err)
			d.ExplainErr = err.Error()
		}
	}
	h.Tab = "overview"
	return &view{Template: "page", Title: pageTitle(h), Nav: "page", Data: d, Crumbs: s.pageCrumbs(ctx, h, ""),
		Feed: fmt.Sprintf("/feed.atom?page=%d", h.Info.ID)}, nil
}

// pageTitle is the browser title of a page's views: its own title and its URL.
func pageTitle(h *PageHead) string {
	if h.Title != "" {
		return h.Title + " · " + h.Info.URL
	}
	return h.Info.URL
}

// pageCrumbs are the breadcrumbs of a page's view: its place in its site, then the view's name.
func (s *Server) pageCrumbs(ctx context.Context, h *PageHead, tab string) []Crumb {
	cs := s.withSite(ctx, h.Info.URL, urlCrumbs(h.Info.URL, true))
	if tab == "" {
		return cs
	}
	last := &cs[len(cs)-1]
	if last.Href == "" {
		last.Href = fmt.Sprintf("/page/%d", h.Info.ID)
	} else {
		cs = append(cs, Crumb{"page", fmt.Sprintf("/page/%d", h.Info.ID)})
	}
	return append(cs, Crumb{tab, ""})
}

func trim[T any](xs []T, n int) ([]T, bool) {
	if len(xs) > n {
		return xs[:n], true
	}
	return xs, false
}

// timeline draws a page's history across the last runs, oldest on the left, one column per run
// with its date: a changed fetch as a bar as high as the share of its text that changed, the other
// answers as low bars (404s in their own colour), and a run that did not fetch the page as a hatched
// mark, so that the runs it skipped show. complete says newestFirst holds every fetch of the page
// (so runs before its first fetch are left out rather than marked skipped).
func timeline(urlID int64, runsNewestFirst []store.Run, newestFirst []store.Fetch, complete bool) Chart {
	byRun := map[int64]store.Fetch{}
	first := int64(0)
	for _, f := range newestFirst {
		if _, ok := byRun[f.RunID]; !ok || f.Changed {
			byRun[f.RunID] = f // a run with a changed fetch shows it
		}
		first = f.RunID
	}
	var cols []Column
	for i := len(runsNewestFirst) - 1; i >= 0; i-- {
		run := runsNewestFirst[i]
		if complete && (first == 0 || run.ID < first) {
			continue
		}
		f, ok := byRun[run.ID]
		c := Column{Values: make([]float64, 4), Date: run.StartedAt}
		if !ok {
			c.Skip = true
			c.Title = fmt.Sprintf("run %d, %s: not fetched (not due, or skipped with its hub)", run.ID, fmtTime(run.StartedAt))
			cols = append(cols, c)
			continue
		}
		c.Title = fmt.Sprintf("run %d, %s: %s", f.RunID, fmtTime(f.FetchedAt), outcome(f))
		switch {
		case f.Changed:
			c.Values[0] = 1
			if f.Magnitude >= 0 {
				c.Values[0] = max(f.Magnitude, 0.04)
			}
			c.Href = fmt.Sprintf("/page/%d/diff?to=%d", urlID, f.ID)
		case f.Status == 404 || f.Status == 410:
			c.Values[2] = 0.08
		case f.Status == 0 || f.Error != "" && f.Status != 200 && !f.NotModified:
			c.Values[3] = 0.08
		default:
			c.Values[1] = 0.04
		}
		if f.Path != "" && !f.Changed {
			c.Href = fmt.Sprintf("/page/%d/text?v=%d", urlID, f.ID)
		}
		cols = append(cols, c)
	}
	return StackedBars("the page in each run, oldest first: the share of its text that changed", 760, 130, timelineSeries, cols, 1, percent)
}

// observed says how many of a page's recent fetches found a change, and how many versions they
// stored.
func observed(newestFirst []store.Fetch) string {
	usable, changed := 0, 0
	for _, f := range newestFirst {
		if f.Status == 200 || f.NotModified {
			usable++
		}
		if f.Changed {
			changed++
		}
	}
	if usable == 0 {
		return "no usable fetch yet"
	}
	return fmt.Sprintf("changed at %d of its last %d usable fetches", changed, usable)
}

// outcome says in words what one fetch found, as strata history does (package outcome), with the
// error recorded, if any.
func outcome(f store.Fetch) string {
	label := fetchoutcome.Label(f.Facts(), f.Magnitude)
	switch k := fetchoutcome.Of(f.Facts()); {
	case f.Error == "" || k == fetchoutcome.New || k == fetchoutcome.Changed || f.Facts().Trivial():
		return label
	case f.Status == 0:
		return "no answer: " + f.Error
	}
	return label + ": " + f.Error
}

// rateWords puts an estimated change rate (changes per run) in words.
func rateWords(rate float64) string {
	switch {
	case rate < 0:
		return "not estimated yet"
	case rate < 0.001:
		return fmt.Sprintf("%.4f changes per run: practically never", rate)
	case rate >= 1:
		return fmt.Sprintf("%.2f changes per run: at every run", rate)
	}
	return fmt.Sprintf("%.3f changes per run: about once every %.0f runs", rate, 1/rate)
}

type linksData struct {
	*PageHead
	Out  bool
	Outs []store.LinkOut
	Ins  []store.LinkIn
	Next string
}

func (s *Server) links(r *http.Request) (*view, error) {
	ctx := r.Context()
	h, err := s.loadPage(ctx, r)
	if err != nil {
		return nil, err
	}
	q := r.URL.Query()
	d := linksData{PageHead: h, Out: q.Get("dir") != "in"}
	if d.Out {
		outs, err := s.opts.DB.LinksOut(ctx, h.Info.ID, q.Get("after"), linksPerPage+1)
		if err != nil {
			return nil, err
		}
		var more bool
		if d.Outs, more = trim(outs, linksPerPage); more {
			d.Next = fmt.Sprintf("/page/%d/links?dir=out&after=%s", h.Info.ID, url.QueryEscape(d.Outs[len(d.Outs)-1].ToURL))
		}
	} else {
		after, err := intQuery(r, "after")
		if err != nil {
			return nil, err
		}
		ins, err := s.opts.DB.LinksIn(ctx, h.Info.ID, after, linksPerPage+1)
		if err != nil {
			return nil, err
		}
		var more bool
		if d.Ins, more = trim(ins, linksPerPage); more {
			d.Next = fmt.Sprintf("/page/%d/links?dir=in&after=%d", h.Info.ID, d.Ins[len(d.Ins)-1].FromID)
		}
	}
	h.Tab = "links"
	name := "links out"
	if !d.Out {
		name = "links in"
	}
	return &view{Template: "links", Title: "Links of " + pageTitle(h), Nav: "page", Data: d, Crumbs: s.pageCrumbs(ctx, h, name)}, nil
}

type textData struct {
	*PageHead
	V          store.Fetch
	Meta       *archive.Meta
	Text       string
	Prev, Next int64 // neighbouring stored versions, 0 if none
	HTML       bool  // the frame view rather than the text
}

func (s *Server) readVersion(ctx context.Context, r *http.Request, html bool) (*textData, error) {
	h, err := s.loadPage(ctx, r)
	if err != nil {
		return nil, err
	}
	v, err := s.version(ctx, r, h, "v")
	if err != nil {
		return nil, err
	}
	d := &textData{PageHead: h, V: v, HTML: html}
	for i, x := range h.Versions {
		if x.ID == v.ID {
			if i > 0 {
				d.Next = h.Versions[i-1].ID
			}
			if i+1 < len(h.Versions) {
				d.Prev = h.Versions[i+1].ID
			}
		}
	}
	if err := s.readable(v); err != nil {
		return nil, s.located(ctx, v, err)
	}
	if d.Meta, err = s.opts.Archive.ReadMeta(v.Path); err != nil {
		return nil, s.located(ctx, v, archiveErr(err))
	}
	if !html {
		if d.Text, err = s.opts.Archive.ReadText(v.Path); err != nil {
			return nil, s.located(ctx, v, archiveErr(err))
		}
	}
	return d, nil
}

// readable says why a version's files cannot be read, if they cannot.
func (s *Server) readable(v store.Fetch) error {
	switch {
	case s.opts.Archive == nil:
		return fmt.Errorf("%w: the archive directory does not exist", errGone)
	case v.Pruned:
		return fmt.Errorf("%w: this version is older than archive.keep and was pruned", errGone)
	}
	return nil
}

// heldElsewhere is a version that a fleet worker archived under its own archive root, which this
// machine cannot read: the page says where it is rather than failing.
type heldElsewhere struct{ worker, root, path string }

func (e heldElsewhere) Error() string {
	return fmt.Sprintf("this version (%s) is held by worker %s, under its archive root %s, not in this machine's archive", e.path, e.worker, e.root)
}

// located turns err, the failure to read version v here, into where v is when a fleet worker
// archived it: with workers on many machines each keeps the versions it fetched under its own
// archive.root. A pruned version is gone everywhere.
func (s *Server) located(ctx context.Context, v store.Fetch, err error) error {
	if v.Pruned || !errors.Is(err, errGone) {
		return err
	}
	homes, ok := s.opts.DB.(VersionHomes)
	if !ok {
		return err
	}
	worker, root, found, herr := homes.Home(ctx, v.RunID, v.Path)
	switch {
	case herr != nil:
		return herr
	case !found:
		return err
	}
	return heldElsewhere{worker: worker, root: root, path: v.Path}
}

func archiveErr(err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w (removed by hand?)", errGone)
	}
	return err
}

func (s *Server) text(r *http.Request) (*view, error) {
	d, err := s.readVersion(r.Context(), r, false)
	if err != nil {
		return nil, err
	}
	d.Tab = "text"
	return &view{Template: "text", Title: "Text of " + pageTitle(d.PageHead), Nav: "page", Data: d,
		Crumbs: s.pageCrumbs(r.Context(), d.PageHead, "text")}, nil
}

func (s *Server) htmlView(r *http.Request) (*view, error) {
	d, err := s.readVersion(r.Context(), r, true)
	if err != nil {
		return nil, err
	}
	d.Tab = "html"
	return &view{Template: "text", Title: "HTML of " + pageTitle(d.PageHead), Nav: "page", Data: d,
		Crumbs: s.pageCrumbs(r.Context(), d.PageHead, "html")}, nil
}

type diffData struct {
	*PageHead
	From, To store.Fetch
	Mode     string // line or word
	Lines    []Line
	Spans    []Span
	Added    int
	Removed  int
	Same     bool
	TooLong  bool // a word diff was asked for texts too long for it
	OnlyOne  bool // the page has fewer than two versions
}

func (s *Server) diff(r *http.Request) (*view, error) {
	ctx := r.Context()
	h, err := s.loadPage(ctx, r)
	if err != nil {
		return nil, err
	}
	q := r.URL.Query()
	d := &diffData{PageHead: h, Mode: q.Get("mode")}
	if d.Mode != "word" {
		d.Mode = "line"
	}
	h.Tab = "diff"
	v := &view{Template: "diff", Title: "Diff of " + pageTitle(h), Nav: "page", Data: d, Crumbs: s.pageCrumbs(ctx, h, "diff")}
	if len(h.Versions) < 2 && q.Get("from") == "" {
		d.OnlyOne = true
		return v, nil
	}
	if d.To, err = s.version(ctx, r, h, "to"); err != nil {
		return nil, err
	}
	if q.Get("from") != "" {
		if d.From, err = s.version(ctx, r, h, "from"); err != nil {
			return nil, err
		}
	} else if d.From, err = s.opts.DB.VersionBefore(ctx, h.Info.ID, d.To.ID); errors.Is(err, store.ErrNotFound) {
		d.OnlyOne = true // to is the first version: nothing before it
		return v, nil
	} else if err != nil {
		return nil, err
	}
	var texts [2]string
	for i, f := range []store.Fetch{d.From, d.To} {
		if err := s.readable(f); err != nil {
			return nil, s.located(ctx, f, err)
		}
		if texts[i], err = s.opts.Archive.ReadText(f.Path); err != nil {
			return nil, s.located(ctx, f, archiveErr(err))
		}
	}
	d.Same = texts[0] == texts[1]
	d.Lines = LineDiff(texts[0], texts[1])
	for _, l := range d.Lines {
		switch l.Op {
		case Ins:
			d.Added++
		case Del:
			d.Removed++
		}
	}
	if d.Mode == "word" {
		var ok bool
		if d.Spans, ok = WordDiff(texts[0], texts[1]); !ok {
			d.TooLong, d.Mode = true, "line"
		}
		d.Spans = FoldSpans(d.Spans)
	}
	return v, nil
}

// charsetToken is what a charset label may contain; anything else is dropped rather than put in a
// header.
var charsetToken = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,40}$`)

// raw serves the bytes of an archived version as served, sandboxed: the policy gives the document a
// unique origin, runs no script and lets it load nothing, even when it is opened outside strata's
// frame.
func (s *Server) raw(w http.ResponseWriter, r *http.Request) {
	hdr := w.Header()
	hdr.Set("Content-Security-Policy", rawPolicy)
	hdr.Set("X-Content-Type-Options", "nosniff")
	hdr.Set("X-Frame-Options", "SAMEORIGIN")
	hdr.Set("Referrer-Policy", "no-referrer")
	hdr.Set("Cross-Origin-Resource-Policy", "same-origin")
	fid, err := idParam(r, "fetch")
	if err != nil {
		http.Error(w, "no such version", http.StatusNotFound)
		return
	}
	f, err := s.opts.DB.FetchByID(r.Context(), fid)
	switch {
	case errors.Is(err, store.ErrNotFound) || err == nil && f.Path == "":
		http.Error(w, "no such version", http.StatusNotFound)
		return
	case err != nil:
		s.log.Error("serve: raw", "fetch", fid, "err", err)
		http.Error(w, "strata could not read the version", http.StatusInternalServerError)
		return
	}
	err = s.readable(f)
	var meta *archive.Meta
	var body []byte
	if err == nil {
		if meta, err = s.opts.Archive.ReadMeta(f.Path); err == nil {
			body, err = s.opts.Archive.ReadRaw(f.Path)
		}
		if errors.Is(err, fs.ErrNotExist) {
			err = archiveErr(err)
		}
	}
	if err != nil {
		var held heldElsewhere
		switch err = s.located(r.Context(), f, err); {
		case errors.As(err, &held):
			http.Error(w, held.Error(), http.StatusOK)
			return
		case errors.Is(err, errGone):
			http.Error(w, err.Error(), http.StatusGone)
			return
		}
		s.log.Error("serve: raw", "fetch", fid, "err", err)
		http.Error(w, "strata could not read the version", http.StatusInternalServerError)
		return
	}
	ctype := "text/plain; charset=utf-8"
	if meta.RawFile == archive.HTMLFile {
		cs := "utf-8"
		if charsetToken.MatchString(meta.Charset) {
			cs = meta.Charset
		}
		ctype = "text/html; charset=" + cs
	}
	hdr.Set("Content-Type", ctype)
	hdr.Set("Content-Length", strconv.Itoa(len(body)))
	w.Write(body)
}
