package crawler

import (
	"context"
	"io"
	"net/url"
	"slices"
	"time"

	"github.com/strata-crawler/strata/internal/hints"
	"github.com/strata-crawler/strata/internal/store"
)

// Provider hints (Xu et al., paper 002): what sites say about their own updates. Once per run per
// origin, before its pages, the stage reads the sitemaps its robots.txt declares (or /sitemap.xml)
// and the feeds its pages link, one document per step like any request. A page whose lastmod is
// newer than our last fetch of it — compared on the site's own clock, the Date header it sent with
// that fetch — becomes due now; a due page the site calls unchanged is left for later if the
// origin's hints have proved right; pages strata did not know join the run, through the filters and
// the trap guard, with a first revisit interval from their changefreq.

// DocFetcher fetches a sitemap or feed: the body, which the caller closes, and the site's Date
// header (zero if absent). A non-2xx answer is an error.
type DocFetcher func(ctx context.Context, u string) (body io.ReadCloser, siteDate time.Time, err error)

// HintStore is what reading provider hints needs from the database.
type HintStore interface {
	HostHints(ctx context.Context, origin string) (store.HostHints, error)
	HintsRead(ctx context.Context, origin, domain string, t time.Time) error
	AddFeeds(ctx context.Context, origin, domain string, feeds []string) error
	ObserveHint(ctx context.Context, origin, domain string, agreed, changed bool) error
	ApplyHints(ctx context.Context, source string, hs []store.Hint) (known []store.HintedURL, unknown []string, err error)
	DeferByHint(ctx context.Context, ids []int64, runs int) error
	ResumeDeferred(ctx context.Context, origin, host string) (int, error)
	// StaleHints lists the origins whose sitemaps and feeds are due to be read again.
	StaleHints(ctx context.Context, before time.Time) ([]string, error)
}

var _ HintStore = (*store.DB)(nil)

const (
	maxChildSitemaps = 20 // child sitemaps of an index read per origin and run
	minHeeded        = 5  // checks of an origin's "changed" hints before their precision counts
)

type hintDoc struct {
	url   string
	feed  bool
	child bool // listed by a sitemap index: an index found here is not followed
}

// hintQueue is one origin's documents still to read in this run.
type hintQueue struct {
	pending           []hintDoc
	children          int
	trust             hints.Trust
	announced, missed int // changes seen on hinted pages that the hints announced, and not
	falseAlarms       int // fetches of pages the hints called changed that had not changed
	// audited says that a page it called unchanged was fetched anyway in this run, or that this is
	// not one of the origin's audit runs (auditRun). A trusted origin's "unchanged" must be checked
	// now and then, or a site whose lastmod stopped moving would keep its trust: its announced
	// changes check its "changed" hints, but only a fetch it said was needless can catch a change it
	// did not announce. Fetching one in four of the due pages it vouched for, as strata did before,
	// had strata simulate's honest sections sites fetch 2.9–4.0 pages per change in the second half
	// of 30 days, against 1.1 for a crawler that knew every change.
	audited bool
}

// auditRun reports whether run is one of origin's audit runs: every run while the origin's record
// is short or holds a miss, every second run once its hints have announced 4 changes strata then
// saw, every fourth once they have announced 8, with none missed. An audit a run cost strata
// simulate's honest sitemaps about 30 of their 142 fetches in the second half of 30 days. A miss
// brings the audits back to every run, so a sitemap that stops moving is caught by a few misses in
// a row, as before, once the first is found.
func (q *hintQueue) auditRun(run int64, origin string) bool {
	period := uint64(1)
	if q.missed == 0 {
		switch {
		case q.announced >= 8:
			period = 4
		case q.announced >= 4:
			period = 2
		}
	}
	// The origin's own phase, so that a crawl's origins do not all audit in the same runs.
	return (uint64(run)+mix(0, origin))%period == 0
}

// spares reports whether the origin's "not modified" hints may spare a fetch. Agreement alone is
// not enough: a site whose lastmod never moves is right on every day its pages do not change. Its
// hints must also have announced the changes strata then saw: at least 2 of them, and at most one
// in five missed.
func (q *hintQueue) spares() bool {
	return q.trust.Act(false) && q.announced >= 2 && q.missed*5 <= q.announced
}

// heeded reports whether the origin's "changed" hints are worth acting on: making a page due now,
// and valuing it as certainly stale in a budget. A new origin gets the benefit of the doubt, but
// once its "changed" hints have been checked minHeeded times, at least half of them must have been
// right. Agreement over all hints is not enough: a sitemap that stamps every page with the day it
// was generated is right about every page that did change, and on strata simulate's lying sites
// it held a score near 0.5 while its false alarms took the budget.
func (q *hintQueue) heeded() bool {
	if !q.trust.Act(true) {
		return false
	}
	checked := q.announced + q.falseAlarms
	return checked < minHeeded || 2*q.announced >= checked
}

// hintStep reads the next hint document of the origin of u, if any is left: done reports that
// this step was spent on it.
func (s *stage) hintStep(ctx context.Context, d *domain, u *url.URL, e *robotsEntry) (done bool, err error) {
	if s.c.cfg.Docs == nil || len(s.run.Only) > 0 {
		return false, nil
	}
	o := origin(u)
	q, ok := d.hints[o]
	if !ok {
		if q, err = s.newHintQueue(ctx, d, u, e); err != nil {
			return false, err
		}
		d.hints[o] = q
	}
	if len(q.pending) == 0 {
		return false, nil
	}
	doc := q.pending[0]
	q.pending = q.pending[1:]
	return true, s.readHint(ctx, d, o, q, doc)
}

func (s *stage) newHintQueue(ctx context.Context, d *domain, u *url.URL, e *robotsEntry) (*hintQueue, error) {
	o := origin(u)
	h, err := s.c.store.HostHints(ctx, o)
	if err != nil {
		return nil, err
	}
	q := &hintQueue{trust: hints.Trust{Agreed: h.Agreed, Disagreed: h.Disagreed}, announced: h.Announced, missed: h.Missed,
		falseAlarms: h.FalseAlarms}
	q.audited = !q.auditRun(s.run.ID, o)
	// An origin whose "unchanged" no longer spares fetches gets back the pages it had deferred by the
	// longest interval: a sitemap that stopped moving must not keep them waiting that long.
	if !q.spares() && h.Announced+h.Missed > 0 {
		if _, err := s.c.store.ResumeDeferred(ctx, o, u.Host); err != nil {
			return nil, err
		}
	}
	now := s.c.cfg.Now()
	if !h.ReadAt.IsZero() && !h.ReadAt.Before(s.run.Start) { // read in this run already
		return q, nil
	}
	// Sitemaps on the origin itself only: another host's are that host's business, and its
	// politeness gap is not the one this worker holds.
	for _, sm := range e.rules.Sitemaps() {
		if su, err := url.Parse(sm); err == nil && origin(su) == o {
			q.pending = append(q.pending, hintDoc{url: su.String()})
		}
	}
	if len(q.pending) == 0 && e.rules.Allowed(s.c.token, "/sitemap.xml") {
		q.pending = append(q.pending, hintDoc{url: o + "/sitemap.xml"})
	}
	for _, f := range h.Feeds {
		if fu, err := url.Parse(f); err == nil && origin(fu) == o && e.rules.Allowed(s.c.token, fu.RequestURI()) {
			q.pending = append(q.pending, hintDoc{url: f, feed: true})
		}
	}
	// Recorded now, not after the last document: an origin whose documents fail is not asked again
	// at every step or run of the day.
	return q, s.c.store.HintsRead(ctx, o, d.key, now)
}

// readHint fetches and applies one sitemap or feed. A document that cannot be had or read is logged
// and skipped: hints are a bonus, never a reason to stop.
func (s *stage) readHint(ctx context.Context, d *domain, o string, q *hintQueue, doc hintDoc) error {
	s.requests.Add(1)
	base, err := url.Parse(doc.url)
	if err != nil {
		return nil
	}
	body, siteDate, err := s.c.cfg.Docs(ctx, doc.url)
	if err != nil {
		s.c.cfg.Log.Debug("hint document not read", "url", doc.url, "error", err)
		return nil
	}
	defer body.Close()
	lim := hints.Limits{SiteNow: siteDate}
	var entries []hints.Entry
	source := "sitemap"
	if doc.feed {
		source = "feed"
		f, err := hints.ParseFeed(body, base, lim)
		if err != nil {
			s.c.cfg.Log.Debug("feed not read", "url", doc.url, "error", err)
			return nil
		}
		entries = f.URLs
	} else {
		sm, err := hints.ParseSitemap(body, base, lim)
		if err != nil {
			s.c.cfg.Log.Debug("sitemap not read", "url", doc.url, "error", err)
			return nil
		}
		if sm.Err != nil || sm.Truncated {
			s.c.cfg.Log.Info("sitemap read in part", "url", doc.url, "entries", len(sm.URLs), "truncated", sm.Truncated, "error", sm.Err)
		}
		entries = sm.URLs
		if !doc.child {
			for _, c := range sm.Children {
				if q.children == maxChildSitemaps {
					break
				}
				if cu, err := url.Parse(c.URL); err == nil && origin(cu) == o {
					q.children++
					q.pending = append(q.pending, hintDoc{url: c.URL, child: true})
				}
			}
		}
	}
	s.count(func(st *Stats) { st.HintDocs++ })
	return s.applyHints(ctx, d, q, source, entries)
}

// applyHints acts on a document's entries.
func (s *stage) applyHints(ctx context.Context, d *domain, q *hintQueue, source string, entries []hints.Entry) error {
	if len(entries) == 0 {
		return nil
	}
	hs := make([]store.Hint, len(entries))
	byURL := make(map[string]hints.Entry, len(entries))
	for i, e := range entries {
		hs[i] = store.Hint{URL: e.URL, LastMod: e.LastMod.String()}
		byURL[e.URL] = e
	}
	known, unknown, err := s.c.store.ApplyHints(ctx, source, hs)
	if err != nil {
		return err
	}
	var dueNow, deferred []int64
	audit, auditKey := -1, uint64(0) // the vouched page to fetch anyway, if this run has none yet
	for i, k := range known {
		if k.State != "active" || !k.Fetched || k.NotFound {
			continue // a page that answered 404 is due every run until it answers or is gone
		}
		newer, sure := hints.NewerThanFetch(byURL[k.URL].LastMod, k.SiteDate)
		switch {
		case !sure:
		case newer && k.Fr > 0 && q.heeded():
			dueNow = append(dueNow, k.ID)
			s.sched.addHost(k.Host)
		case !newer && !k.Snapshot && q.spares():
			if key := mix(s.run.ID, k.URL); !q.audited && (audit < 0 || key < auditKey) {
				audit, auditKey = i, key
			}
			if k.Fr == 0 {
				deferred = append(deferred, k.ID)
			}
		}
	}
	// The audit: one page the origin vouches for, drawn afresh each run, is fetched anyway, due or
	// deferred, so that a sitemap that stops moving is caught even while every page it vouched for
	// waits the longest interval.
	if audit >= 0 {
		q.audited = true
		a := known[audit]
		deferred = slices.DeleteFunc(deferred, func(id int64) bool { return id == a.ID })
		if a.Fr > 0 {
			dueNow = append(dueNow, a.ID)
			s.sched.addHost(a.Host)
		}
	}
	if len(dueNow) > 0 {
		if err := s.c.store.SetDue(ctx, dueNow, nil); err != nil {
			return err
		}
	}
	if len(deferred) > 0 {
		if err := s.c.store.DeferByHint(ctx, deferred, s.c.cfg.MaxFrMax); err != nil {
			return err
		}
	}
	s.count(func(st *Stats) {
		st.HintedDue += len(dueNow)
		st.Due += len(dueNow)
		st.SkippedHint += len(deferred)
		st.Due -= len(deferred)
	})
	// Pages strata did not know: found by the site's own account, one level of links below them.
	var found []store.NewURL
	for _, raw := range unknown {
		nu, err := url.Parse(raw)
		if err != nil || s.c.gate.Key(nu.Host) != d.key {
			continue
		}
		dec := s.decide(nu, 0, false)
		if !dec.Accept {
			continue
		}
		if dec.URL != nil {
			nu = dec.URL
		}
		frMax := s.c.cfg.NewFrMax
		if f, ok := byURL[raw].ChangeFreq.FrMax(s.c.cfg.RunInterval, s.c.cfg.MaxFrMax); ok {
			frMax = f
		}
		found = append(found, store.NewURL{URL: nu.String(), Host: nu.Host, FrMax: frMax})
		if len(found) == discoverBatch {
			if err := s.discover(ctx, d, nil, found); err != nil {
				return err
			}
			found = found[:0]
		}
	}
	return s.discover(ctx, d, nil, found)
}

// observeHint checks a hinted page's fetch against its hint, for the origin's trust.
func (s *stage) observeHint(ctx context.Context, d *domain, pu *url.URL, u *store.DueURL, rec *store.FetchRecord) error {
	if u.HintLastMod == "" || u.SiteDate.IsZero() || !(rec.Status == 200 || rec.NotModified) {
		return nil
	}
	stamp, err := hints.ParseStamp(u.HintLastMod)
	if err != nil {
		return nil
	}
	newer, sure := hints.NewerThanFetch(stamp, u.SiteDate)
	if !sure {
		return nil
	}
	agreed := newer == rec.Changed
	if q, ok := d.hints[origin(pu)]; ok {
		q.trust = q.trust.Observe(newer, rec.Changed)
		switch {
		case rec.Changed && agreed:
			q.announced++
		case rec.Changed:
			q.missed++
		case newer:
			q.falseAlarms++
		}
	}
	return s.c.store.ObserveHint(ctx, origin(pu), d.key, agreed, rec.Changed)
}

// hintUpdated tells Prioritize how long ago a hinted page changed, on our clock: the hint's
// earliest time less the site's clock at our last fetch is how long after that fetch the change
// came.
func hintUpdated(now time.Time) store.Updated {
	return func(_ string, hint string, siteDate, lastFetch time.Time) (time.Duration, bool) {
		stamp, err := hints.ParseStamp(hint)
		if err != nil {
			return 0, false
		}
		newer, sure := hints.NewerThanFetch(stamp, siteDate)
		if !sure || !newer {
			return 0, false
		}
		earliest, _ := stamp.Bounds()
		changed := lastFetch.Add(earliest.Sub(siteDate))
		return now.Sub(changed), true
	}
}

// noteFeeds records the feeds a page links on its own origin, to be read with the origin's hints.
// Called by the worker holding d.
func (s *stage) noteFeeds(ctx context.Context, d *domain, pu *url.URL, feeds []string) error {
	o := origin(pu)
	var own []string
	for _, f := range feeds {
		// A site links the same feed from every page: it is recorded once per run, not per page.
		if fu, err := url.Parse(f); err == nil && origin(fu) == o && !d.feeds[fu.String()] {
			d.feeds[fu.String()] = true
			own = append(own, fu.String())
		}
	}
	if len(own) == 0 {
		return nil
	}
	return s.c.store.AddFeeds(ctx, o, d.key, own)
}

// hintsOnly reads the hint documents of d's origins that have nothing due: the sitemap of a site
// whose pages all wait may say that one of them changed. done is false when none is left.
func (s *stage) hintsOnly(ctx context.Context, d *domain) (done bool, err error) {
	for len(d.hintOrigins) > 0 {
		ou, perr := url.Parse(d.hintOrigins[0])
		if perr != nil {
			d.hintOrigins = d.hintOrigins[1:]
			continue
		}
		if s.notReady(ctx, d, ou.Host) {
			return true, nil
		}
		entry, requested, err := s.robotsFor(ctx, d, ou)
		switch {
		case err != nil:
			return false, err
		case requested:
			return true, nil
		case entry.private || entry.rules == nil:
			d.hintOrigins = d.hintOrigins[1:]
			continue
		case s.notReady(ctx, d, ou.Host):
			return true, nil
		}
		if done, err := s.hintStep(ctx, d, ou, entry); done || err != nil {
			return done, err
		}
		d.hintOrigins = d.hintOrigins[1:]
	}
	return false, nil
}

// addHintOrigins brings the origins whose hints are stale into the stage, each with its domain.
func (s *stage) addHintOrigins(ctx context.Context) error {
	if s.c.cfg.Docs == nil || len(s.run.Only) > 0 {
		return nil
	}
	origins, err := s.c.store.StaleHints(ctx, s.run.Start)
	if err != nil {
		return err
	}
	for _, o := range origins {
		if ou, err := url.Parse(o); err == nil && ou.Host != "" {
			s.sched.addHintOrigin(ou.Host, o)
		}
	}
	return nil
}
