package crawler

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/strata-crawler/strata/archive"
	"github.com/strata-crawler/strata/internal/fetch"
	"github.com/strata-crawler/strata/internal/robots"
	"github.com/strata-crawler/strata/internal/store"
	"github.com/strata-crawler/strata/internal/warc"
)

// WARCOptions turn on WARC writing during a crawl: every fetch and robots.txt exchange of the run
// is written to the run's WARC files (archive.WARCDir) as well as recorded.
type WARCOptions struct {
	Dir       func(runStart time.Time) string // the run's WARC directory
	MaxSize   int64                           // bytes at which a file is closed and the next begun
	GzipLevel int                             // of the page records' members; 0 is warc.DefaultGzipLevel
	Software  string                          // for the warcinfo record
}

// priorStore finds the earlier capture a revisit refers to. *store.DB implements it; a store that
// does not has no earlier captures, and every page is written in full.
type priorStore interface {
	LastResponse(ctx context.Context, urlID int64) (*store.PriorCapture, error)
}

// newWARCWriter opens the writer of the run's WARC files; nil when WARC writing is off.
func (c *Crawler) newWARCWriter(runStart time.Time) *warc.Writer {
	o := c.cfg.WARC
	if o == nil || o.Dir == nil {
		return nil
	}
	prefix := "strata-" + archive.RunDir(runStart)
	return warc.NewWriter(o.Dir(runStart), prefix, o.MaxSize, warc.Info(o.Software, c.cfg.UserAgent, runStart))
}

// capture keeps the head of a page's exchange on its record and, when WARC writing is on, builds
// its WARC records: a response, or a revisit of the URL's latest response when the payload is the
// same or the server said 304, its request, and a metadata record of strata's facts. A WARC
// failure is logged and loses only the WARC records; the fetch is recorded as usual.
func (s *stage) capture(ctx context.Context, u *store.DueURL, resp *fetch.Response, rec *store.FetchRecord, p page) *warc.Encoded {
	c := &store.Capture{Request: resp.Head.Request, Response: resp.Head.Response, IP: resp.Head.RemoteAddr}
	if !resp.NotModified {
		c.PayloadDigest = warc.PayloadDigest(resp.Body)
	}
	rec.Capture = c
	if s.commit.warc == nil || len(resp.Head.Response) == 0 {
		return nil
	}
	// The digest the captures table keeps is the record's: computed once, for both.
	pg := warc.Page{Exchange: exchangeOf(u.URL, rec.FetchedAt, resp), NotModified: resp.NotModified, PayloadDigest: c.PayloadDigest,
		GzipLevel: s.c.cfg.WARC.GzipLevel}
	// A URL never fetched before has no earlier response to refer to: no query for it.
	if ps, ok := s.c.store.(priorStore); ok && !u.New && (resp.Status == http.StatusOK || resp.NotModified) {
		prior, err := ps.LastResponse(ctx, u.ID)
		switch {
		case err == nil:
			pg.Prior = &warc.Ref{ID: prior.WARCID, URL: prior.URL, Date: prior.FetchedAt}
			pg.PriorDigest = prior.PayloadDigest
		case !errors.Is(err, store.ErrNotFound):
			s.c.cfg.Log.Warn("WARC: earlier capture not found; written in full", "url", u.URL, "error", err)
		}
	}
	pg.Facts = s.facts(u, resp, rec, p)
	e, err := warc.EncodePage(pg)
	if err != nil {
		s.c.cfg.Log.Error("WARC: could not build the records of a page", "url", u.URL, "error", err)
		return nil
	}
	c.WARCID, c.WARCType = e.ID, e.Type
	return &e
}

// exchangeOf is the WARC view of a response: its body as strata keeps it, and why it is shorter
// than what the server sent, if it is.
func exchangeOf(url string, at time.Time, resp *fetch.Response) warc.Exchange {
	x := warc.Exchange{URL: url, Date: at, IP: resp.Head.RemoteAddr, Request: resp.Head.Request, Response: resp.Head.Response, Body: resp.Body}
	switch {
	case resp.Truncated:
		x.Truncated = "length"
	case !resp.Kept && !resp.NotModified && resp.Status != http.StatusNoContent:
		x.Truncated = "unspecified" // a type strata does not keep: its body was not read
	}
	return x
}

// facts are strata's own facts about a fetch, for its metadata record: the page's place in the
// schedule, what the change detection found, how its text was extracted, and its links.
func (s *stage) facts(u *store.DueURL, resp *fetch.Response, rec *store.FetchRecord, p page) [][2]string {
	f := [][2]string{
		{"strata-run", strconv.FormatInt(s.run.ID, 10)},
		{"level", strconv.Itoa(u.Level)},
		{"fr", strconv.Itoa(rec.NextFr)},
		{"fr-max", strconv.Itoa(u.FrMax)},
	}
	switch {
	case rec.NotModified:
		f = append(f, [2]string{"change", "not-modified"})
	case rec.ContentHash == "":
	case u.ContentHash == "":
		f = append(f, [2]string{"change", "new"})
	case rec.Changed:
		f = append(f, [2]string{"change", "changed"})
	default:
		f = append(f, [2]string{"change", "unchanged"})
	}
	if rec.ContentHash != "" && rec.Magnitude >= 0 {
		f = append(f, [2]string{"change-magnitude", strconv.FormatFloat(rec.Magnitude, 'f', 4, 64)})
	}
	if p.mode != "" {
		f = append(f, [2]string{"text-mode", p.mode})
	}
	if p.title != "" {
		f = append(f, [2]string{"title", p.title})
	}
	if p.links != nil {
		for _, l := range p.links.Links {
			f = append(f, [2]string{"outlink", l.URL})
		}
	}
	if loc := resp.Header.Get("Location"); loc != "" && resp.Status >= 300 && resp.Status < 400 {
		f = append(f, [2]string{"outlink", loc})
	}
	return f
}

// captureRobots keeps the head of a robots.txt exchange with its cache entry and, when WARC writing
// is on, writes its request and response records. They become durable with the next batch of pages.
func (s *stage) captureRobots(rec *store.Robots, res robots.Result) {
	rec.Request, rec.Response = res.Head.Request, res.Head.Response
	if s.commit.warc == nil || len(res.Head.Response) == 0 {
		return
	}
	x := warc.Exchange{URL: res.URL, Date: res.FetchedAt, IP: res.Head.RemoteAddr, Request: res.Head.Request,
		Response: res.Head.Response, Body: res.Body}
	if res.Outcome != robots.Parsed && res.Status != http.StatusNoContent {
		x.Truncated = "unspecified" // only a 2xx body is read
	}
	e, err := warc.EncodePage(warc.Page{Exchange: x, Facts: [][2]string{{"strata-run", strconv.FormatInt(s.run.ID, 10)}, {"robots", res.Outcome.String()}},
		GzipLevel: s.c.cfg.WARC.GzipLevel})
	if err != nil {
		s.c.cfg.Log.Error("WARC: could not build the records of a robots.txt", "url", res.URL, "error", err)
		return
	}
	if _, err := s.commit.warc.AppendPage(e); err != nil {
		s.c.cfg.Log.Error("WARC: could not write the records of a robots.txt", "url", res.URL, "error", err)
	}
}
