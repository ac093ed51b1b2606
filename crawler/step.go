package crawler

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/strata-crawler/strata/archive"
	"github.com/strata-crawler/strata/filter"
	"github.com/strata-crawler/strata/frequency"
	"github.com/strata-crawler/strata/internal/change"
	"github.com/strata-crawler/strata/internal/fetch"
	"github.com/strata-crawler/strata/internal/robots"
	"github.com/strata-crawler/strata/internal/store"
	"github.com/strata-crawler/strata/internal/traps"
	"github.com/strata-crawler/strata/internal/urlnorm"
	"github.com/strata-crawler/strata/internal/warc"
	"github.com/strata-crawler/strata/linkextract"
)

const (
	maxRedirectHops = 5 // a chain longer than this is not followed (Heritrix, wget and browsers use 5–20)
	maxTimeouts     = 3 // consecutive page timeouts before a domain is given up for the run
	maxFailures     = 5 // consecutive 5xx answers before a domain is given up for the run
	maxRetries      = 3 // Retry-After retries of one URL within a run
	// goneAfter404 is how many fetches in a row must answer 404 before a page is marked gone (410
	// marks it at once): one 404 can be a site's passing mistake. A page that answered 404 is due
	// in the next run whatever its interval, and the selective rule does not skip it (see
	// store.DB.Countdown), so gone is learnt in three runs.
	goneAfter404 = 3
)

var errNoMore = errors.New("no due URL left")

// step does one unit of work for domain d — fetch a robots.txt, or take one URL through the
// pipeline — and reports whether d has more. When a page went to the committer, finish is the rest
// of the step, to run once it is recorded; the domain stays busy until then.
// RobotsStore caches robots.txt between runs, and finds the URLs a robots.txt blocked.
type RobotsStore interface {
	// RobotsCache returns origin's cached robots.txt, or an error wrapping store.ErrNotFound;
	// SaveRobots replaces it.
	RobotsCache(ctx context.Context, origin string) (*store.Robots, error)
	SaveRobots(ctx context.Context, r store.Robots) error
	// BlockedURLs lists host's URLs held as blocked, for a robots.txt that may allow them now.
	BlockedURLs(ctx context.Context, host string) ([]store.BlockedURL, error)
}

var _ RobotsStore = (*store.DB)(nil)

// SelectiveStore serves the selective incremental rule (Bouras et al. 3.3) at the hubs.
type SelectiveStore interface {
	// HasChildren reports whether hub has children; ChildRecords returns each child's last limit
	// records, the newest first.
	HasChildren(ctx context.Context, hub int64) (bool, error)
	ChildRecords(ctx context.Context, hub int64, limit int) ([][]store.Record, error)
	// SetHub stores the hub's threshold and its children's change ratio.
	SetHub(ctx context.Context, hub int64, threshold, childRatio float64) error
	// ForceChildren makes the hub's children due in the run that started at runStart and returns
	// their hosts; SkipSubtree takes the subtree's due pages out of run, unless quiet says a page's
	// records are not evidence enough or it was skipped maxSkips runs in a row, and counts them.
	ForceChildren(ctx context.Context, hub int64, runStart time.Time) ([]string, error)
	SkipSubtree(ctx context.Context, hub, run int64, maxSkips int, quiet func([]store.Record) bool) (int, error)
}

var _ SelectiveStore = (*store.DB)(nil)

func (s *stage) step(ctx context.Context, d *domain) (more bool, finish func() error, err error) {
	u, err := s.nextURL(ctx, d)
	if errors.Is(err, errNoMore) {
		more, err := s.hintsOnly(ctx, d)
		return more, nil, err
	}
	if err != nil {
		return false, nil, err
	}
	parsed, err := url.Parse(u.URL)
	if err != nil { // stored URLs are normalised; this would be a corrupt row
		return true, nil, s.fail(ctx, u, store.FetchRecord{Error: "stored URL does not parse: " + err.Error(), NextFr: u.FrMax, State: "filtered"})
	}

	// The filters first: configuration may have changed since the URL entered the table, and a
	// rejected URL costs the site nothing.
	if dec := s.decide(parsed, u.Level, u.IsSeed); !dec.Accept {
		if err := s.c.store.SetState(ctx, u.ID, "filtered"); err != nil {
			return false, nil, err
		}
		s.c.cfg.Log.Debug("filtered", "url", u.URL, "reason", dec.Reason)
		s.count(func(st *Stats) { st.Filtered++; st.Done++ })
		return true, nil, nil
	}

	if s.notReady(ctx, d, u.Host) {
		return true, nil, nil
	}
	entry, requested, err := s.robotsFor(ctx, d, parsed)
	switch {
	case err != nil:
		return false, nil, err
	case entry.private:
		return true, nil, s.fail(ctx, u, store.FetchRecord{Error: "host resolves to a private address and was not seeded; not crawled",
			NextFr: u.FrMax, State: "filtered"})
	case entry.rules == nil:
		// robots.txt unreachable: nothing of this host this run (RFC 9309 2.3.1.4); robotsFor has
		// made its URLs wait.
		return true, nil, nil
	case requested:
		return true, nil, nil // that was this step's request; the URL is still due
	case s.notReady(ctx, d, u.Host):
		return true, nil, nil // the robots.txt in force set a Crawl-delay that has not passed
	}
	if done, err := s.hintStep(ctx, d, parsed, entry); done || err != nil {
		return err == nil, nil, err // a sitemap or feed was this step's request; the URL may still be due
	}
	switch {
	case !entry.rules.Allowed(s.c.token, parsed.RequestURI()):
		if err := s.c.store.SetState(ctx, u.ID, "blocked"); err != nil {
			return false, nil, err
		}
		s.count(func(st *Stats) { st.Blocked++; st.Done++ })
		return true, nil, nil
	}
	if ok, err := s.budget.take(ctx, u.New); err != nil || !ok {
		return false, nil, err // the run's budget is spent; the URL stays due
	}
	finish, err = s.crawl(ctx, d, u, parsed)
	return true, finish, err
}

// nextURL returns the next due URL of d: the highest priority first when the run is short of
// budget or time, else the highest level first across all its hosts, so a hub is crawled before the
// pages below it. Under a budget it asks first for the kind (new or known) whose share remains.
func (s *stage) nextURL(ctx context.Context, d *domain) (*store.DueURL, error) {
	if s.picks != nil {
		return s.nextPicked(ctx, d)
	}
	for {
		hosts, gen := s.sched.hosts(d)
		if len(hosts) == 0 {
			return nil, errNoMore
		}
		kind, spent := s.budget.prefer()
		if spent {
			return nil, errNoMore
		}
		q := store.DueQuery{Hosts: hosts, Run: s.run.ID, Kind: kind, Only: s.run.Only}
		if h := s.c.cfg.Hybrid; h != nil && len(s.run.Only) == 0 {
			q.Sample, q.History = store.SampleQueue, h.History()
		}
		u, err := s.c.store.NextDue(ctx, q)
		if errors.Is(err, store.ErrNotFound) && kind != store.DueAny {
			q.Kind = store.DueAny // nothing of the preferred kind here: the other share takes it
			u, err = s.c.store.NextDue(ctx, q)
		}
		if errors.Is(err, store.ErrNotFound) && q.Sample == store.SampleQueue && s.sampleMore(d) {
			q.Sample = store.SampleOnly // the known pages are done: the site's sampled pages, batch by batch
			u, err = s.c.store.NextDue(ctx, q)
		}
		if errors.Is(err, store.ErrNotFound) {
			if s.sched.exhausted(d, gen) {
				return nil, errNoMore
			}
			continue
		}
		return u, err
	}
}

// crawl takes one URL through the pipeline: fetch → outcome → text → change detection → archive →
// follow → record. The fetch row is recorded only after the archive holds the version it points at.
// The page is handed to the committer; finish waits for its record and does what depends on it
// (hints, the trap guard, the selective rule, the counts), so the worker is free meanwhile.
func (s *stage) crawl(ctx context.Context, d *domain, u *store.DueURL, pu *url.URL) (finish func() error, err error) {
	started := s.c.cfg.Now()
	s.requests.Add(1)
	resp, ferr := s.c.fetch.Fetch(ctx, fetch.Request{URL: u.URL, ETag: u.ETag, LastModified: u.LastModified})
	rec, keep := s.outcome(d, u, resp, ferr)
	if !keep {
		return nil, nil // abandoned at a stop: nothing recorded, the URL stays due
	}
	if unreachableKind(ferr) {
		if rec.NextFr, err = s.backOff(ctx, d, u.Host, rec.Error); err != nil {
			return nil, err
		}
	} else if resp != nil {
		if err := s.reachable(ctx, u.Host); err != nil {
			return nil, err
		}
	}
	rec.URLID, rec.RunID, rec.FetchedAt = u.ID, s.run.ID, started
	var norm string // the text with numbers and dates set aside, for the novelty check
	rec.Origin, rec.Domain = origin(pu), d.key
	var version *archive.Version
	var warcRecords *warc.Encoded
	var decided map[string]traps.Decision // the trap guard's, for the URLs the page found (rec.Found)
	if resp != nil {
		rec.Duration, rec.SiteDate = resp.Duration, resp.Date
		p := s.extract(resp)
		norm = s.detectChange(&rec, u, resp, p)
		dateChange(&rec, u, resp, started)
		version = s.archive(&rec, u, resp, p)
		warcRecords = s.capture(ctx, u, resp, &rec, p)
		err := s.follow(ctx, d, u, pu, resp, &rec)
		if err == nil {
			decided, err = s.followLinks(ctx, d, u, pu, resp, &rec, p.links)
		}
		if err != nil {
			return nil, err
		}
	}
	job := s.commit.submit(&rec, version, warcRecords)
	return func() error {
		archErr, err := job.wait()
		if archErr != nil {
			s.c.cfg.Log.Error("could not archive a page; its change is picked up next time", "url", u.URL, "error", archErr)
			s.count(func(st *Stats) { st.Errors++ })
		}
		if err != nil {
			return err
		}
		if rec.Found != nil {
			s.added(d, rec.Found.Added, decided)
		}
		return s.recorded(ctx, d, u, pu, resp, &rec, norm)
	}, nil
}

// recorded does what depends on a page's record being stored: the provider hint's verdict, the
// trap guard's novelty check, the selective rule, the hybrid sampler and the counts.
func (s *stage) recorded(ctx context.Context, d *domain, u *store.DueURL, pu *url.URL, resp *fetch.Response,
	rec *store.FetchRecord, norm string) error {
	if err := s.observeHint(ctx, d, pu, u, rec); err != nil {
		return err
	}
	if u.ContentHash == "" && norm != "" { // a first version: does it bring its unit anything new?
		if err := s.judgeTrap(ctx, d, pu, norm); err != nil {
			return err
		}
	}
	if err := s.selective(ctx, u, rec); err != nil {
		return err
	}
	usable := rec.Status == 200 || rec.NotModified
	if u.Sampled {
		d.sample.left-- // a page of the batch spent, whatever the answer
	}
	if u.Sampled && usable {
		d.sample.s.Observe(rec.Changed)
		s.count(func(st *Stats) {
			st.Sampled++
			if rec.Changed {
				st.SampledChanged++
			}
		})
	}
	p := -1.0
	if usable {
		p = changeProbability(u.ChangeRate, u.LastRun, s.run.ID)
	}
	s.ledger.record(d.key, rec.Changed, p)
	s.count(func(st *Stats) {
		st.Done++
		if u.New {
			st.NewFetched++
		} else {
			st.KnownFetched++
		}
		if p >= 0 {
			st.Estimated++
			st.ExpectedChanges += p
			if rec.Changed {
				st.ObservedChanges++
			}
		}
		if resp != nil {
			st.Fetched++
			st.Bytes += resp.Bytes
		}
		if resp != nil && (resp.Status == http.StatusNotFound || resp.Status == http.StatusGone) {
			st.NotFound++
		}
		if rec.State == "gone" {
			st.Gone++
		}
		switch {
		case rec.Error != "" && (resp == nil || resp.Status >= 500):
			st.Errors++
		case rec.NotModified:
			st.NotModified++
		case rec.Changed:
			st.Changed++
		case rec.ContentHash != "" && u.ContentHash == "":
			st.New++
		case rec.ContentHash != "":
			st.Unchanged++
		}
	})
	s.c.cfg.Log.Debug("fetched", "url", u.URL, "status", rec.Status, "changed", rec.Changed, "error", rec.Error,
		"took", rec.Duration.Round(time.Millisecond))
	return nil
}

// outcome turns a fetch into the record to store, and applies the domain's backoff rules. keep is
// false when the fetch was abandoned because the stage is stopping.
func (s *stage) outcome(d *domain, u *store.DueURL, resp *fetch.Response, ferr error) (rec store.FetchRecord, keep bool) {
	rec.NextFr = u.FrMax
	if ferr != nil {
		var fe *fetch.Error
		kind := fetch.Other
		if errors.As(ferr, &fe) {
			kind = fe.Kind
		}
		rec.Error = ferr.Error()
		switch kind {
		case fetch.Canceled:
			return rec, false
		case fetch.DNS, fetch.Refused, fetch.TLS:
			// The host is unreachable: crawl gives it up for this run and backs its URLs off.
		case fetch.Private:
			rec.State = "filtered"
		case fetch.Timeout:
			d.timeouts++
			if d.timeouts >= maxTimeouts {
				s.dropDomain(d, u.Host, fmt.Sprintf("%d page timeouts in a row", d.timeouts))
			}
		}
		return rec, true
	}

	d.timeouts = 0
	rec.Status = resp.Status
	rec.Size = int64(len(resp.Body))
	rec.ContentType = resp.ContentType
	rec.ETag, rec.LastModified = resp.ETag, resp.LastModified
	switch st := resp.Status; {
	case st == http.StatusNotModified:
		rec.NotModified = true
		rec.ETag, rec.LastModified = firstNonEmpty(resp.ETag, u.ETag), firstNonEmpty(resp.LastModified, u.LastModified)
	case st == http.StatusTooManyRequests || (st == http.StatusServiceUnavailable && resp.RetryAfter > 0):
		wait := resp.RetryAfter
		if wait <= 0 {
			wait = time.Minute
		}
		if wait > s.c.cfg.MaxRetryAfter {
			rec.Error = fmt.Sprintf("HTTP %d: server asked to retry after %v, more than the %v strata waits within a run", st, wait, s.c.cfg.MaxRetryAfter)
			rec.NextFr = 0
			s.dropDomain(d, u.Host, rec.Error)
			return rec, true
		}
		s.mu.Lock()
		s.retries[u.ID]++
		tries := s.retries[u.ID]
		s.mu.Unlock()
		rec.Error = fmt.Sprintf("HTTP %d: server asked to retry after %v", st, wait)
		s.c.gate.Defer(u.Host, time.Now().Add(wait))
		if tries < maxRetries {
			rec.NextFr = 0 // crawled again in this run once the domain's deferral has passed
		} else {
			rec.NextFr = 1
		}
	case st >= 500:
		d.failures++
		rec.Error = fmt.Sprintf("HTTP %d", st)
		rec.NextFr = 1 // try again next run
		if d.failures >= maxFailures {
			s.dropDomain(d, u.Host, fmt.Sprintf("%d server errors in a row", d.failures))
		} else {
			// Back off exponentially: the gap after this response doubles with each failure in a row.
			s.c.gate.Defer(u.Host, time.Now().Add(s.c.gate.Gap(context.Background(), u.Host, resp.Duration)*time.Duration(1<<d.failures)))
		}
		return rec, true
	case st == http.StatusGone:
		rec.State = "gone"
	case st == http.StatusNotFound:
		if past, err := s.c.store.RecentStatuses(context.Background(), u.ID, goneAfter404-1); err == nil &&
			len(past) == goneAfter404-1 && allEqual(past, http.StatusNotFound) {
			rec.State = "gone"
		}
		rec.Error = "HTTP 404"
		rec.NextFr = 1 // checked again next run
	case st >= 400:
		rec.Error = fmt.Sprintf("HTTP %d", st)
	case st >= 300:
		// Redirects are followed by follow(); a 3xx without Location is just recorded.
	case !resp.Kept:
		rec.Error = fmt.Sprintf("content type %q is not text; not kept", resp.ContentType)
		rec.State = "filtered"
	}
	if st := resp.Status; st < 500 {
		d.failures = 0
	}
	if resp.Truncated {
		rec.Error = joinErr(rec.Error, fmt.Sprintf("body cut at %d bytes", len(resp.Body)))
	}
	return rec, true
}

// page is what the pipeline reads out of a response.
type page struct {
	title, text string
	mode        string            // Text.Mode
	alt         func() string     // Text.Alt
	links       *linkextract.Page // an HTML page's links, read from the parse that gave its text
}

// extract returns the title, readable text and links of a kept 200 response.
func (s *stage) extract(resp *fetch.Response) page {
	if !resp.Kept || resp.Status != http.StatusOK {
		return page{}
	}
	var t Text
	if s.c.cfg.Text == nil {
		t.Body = string(resp.Text)
	} else {
		t = s.c.cfg.Text(resp.Text, resp.ContentType, resp.FinalURL)
	}
	return page{title: t.Title, text: t.Body, mode: t.Mode, alt: t.Alt, links: pageLinks(resp, t)}
}

// detectChange decides whether the page changed in a non-trivial way (package change): its text is
// compared with the stored version's with white space, numbers, dates and times set aside, so a
// rotating timestamp or visit counter is not a change; the magnitude of the change is recorded too.
// The first version of a page is not a change: the paper counts changes between consecutive records.
// It returns the hash of the normalised text, "" when the response had no content.
func (s *stage) detectChange(rec *store.FetchRecord, u *store.DueURL, resp *fetch.Response, p page) string {
	if !resp.Kept || resp.NotModified || resp.Status != http.StatusOK {
		return ""
	}
	text := p.text
	if strings.TrimSpace(text) == "" {
		text = string(resp.Text) // a page without text (images only, say) is compared by its bytes
	}
	d := change.Summarize(text)
	rec.ContentHash = d.Hash
	rec.Digest, _ = d.MarshalBinary()
	rec.TextMode = p.mode
	rec.Magnitude = -1
	var prev change.Digest
	switch {
	case u.ContentHash == "":
		rec.Magnitude = 0 // the first version
	case len(u.Digest) > 0 && prev.UnmarshalBinary(u.Digest) == nil:
		// Like with like: a page that moved between its main content and its whole text (an
		// edit took it across the fallback rule, or archive.text changed) is compared in the
		// previous version's kind of text, or the navigation and footer that came or went would
		// count as most of the page changing. The version stored, and its digest, are the new kind.
		cur := d
		if k := textKind(u.TextMode); k != "" && textKind(p.mode) != "" && k != textKind(p.mode) && strings.TrimSpace(p.text) != "" && p.alt != nil {
			cur = change.Summarize(p.alt())
		}
		res := change.Compare(prev, cur, s.c.cfg.Change)
		rec.Changed, rec.Magnitude, rec.Distance = res.Changed, res.Magnitude, res.Distance
	default:
		// A version stored before digests existed: only the exact hash can be compared.
		rec.Changed = u.ContentHash != d.Hash
	}
	return strconv.FormatUint(d.Norm, 16)
}

// textKind is the kind of text a mode gives: the main content, or the whole visible text
// (archive.text = "full", or Main's fallback); "" when not known (not HTML, or a version stored
// before modes were recorded).
func textKind(mode string) string {
	switch mode {
	case "main":
		return "main"
	case "full", "fallback":
		return "whole"
	}
	return ""
}

// archive returns a new or changed version for the committer to store, or links an unchanged
// one into the run when snapshots are on.
func (s *stage) archive(rec *store.FetchRecord, u *store.DueURL, resp *fetch.Response, p page) *archive.Version {
	a := s.c.cfg.Archive
	if a == nil || rec.ContentHash == "" {
		return nil
	}
	if rec.ContentHash == u.ContentHash && u.ArchivePath != "" {
		if s.c.cfg.Snapshot {
			if _, err := a.Snapshot(s.run.Start, u.URL, u.ArchivePath); err != nil {
				s.c.cfg.Log.Warn("snapshot link failed", "url", u.URL, "error", err)
			}
		}
		return nil
	}
	v := &archive.Version{
		Meta: archive.Meta{
			URL: u.URL, FinalURL: resp.FinalURL, FetchedAt: rec.FetchedAt, Status: resp.Status,
			ContentType: resp.ContentType, Charset: resp.Charset, Size: int64(len(resp.Body)), Truncated: resp.Truncated,
			ContentHash: rec.ContentHash, ETag: resp.ETag, LastModified: resp.LastModified, RunID: s.run.ID,
			Level: u.Level, Title: p.title, Replaces: u.ArchivePath, TextMode: p.mode,
		},
		Body: resp.Body,
		Text: p.text,
	}
	if p.links != nil { // kept with the version, for the links stage
		v.Links = make([]archive.Link, len(p.links.Links))
		for i, l := range p.links.Links {
			v.Links[i] = archive.Link{URL: l.URL, NoFollow: l.NoFollow}
		}
		v.NoFollow = p.links.NoFollow
	}
	return v
}

// follow lets a redirect's target join the run as a URL of its own: the next hop is a separate,
// politely scheduled request that robots.txt and the filters judge like any other.
func (s *stage) follow(ctx context.Context, d *domain, u *store.DueURL, from *url.URL, resp *fetch.Response, rec *store.FetchRecord) error {
	loc := resp.Header.Get("Location")
	if resp.Status < 300 || resp.Status >= 400 || resp.Status == http.StatusNotModified || loc == "" || len(s.run.Only) > 0 {
		return nil // an immediate fetch records the redirect and goes no further
	}
	base, err := url.Parse(resp.FinalURL)
	if err != nil {
		return nil
	}
	target, err := urlnorm.Resolve(base, loc)
	if err != nil {
		rec.Error = fmt.Sprintf("redirect: %v", err)
		return nil
	}
	dec := s.decide(target, u.Level, false)
	if !dec.Accept {
		rec.Error = fmt.Sprintf("redirect to %s rejected by the URL filter: %s", target, dec.Reason)
		return nil
	}
	if dec.URL != nil {
		target = dec.URL
	}
	targetKey := s.c.gate.Key(target.Host)
	adm, ev := s.guard.Admit(targetKey, target, traps.Unit(from))
	if err := s.trapEvent(ctx, ev); err != nil {
		return err
	}
	if !adm.Admit {
		rec.Error = fmt.Sprintf("redirect to %s not followed: a trap defence refused it (see strata traps)", target)
		return nil
	}
	if adm.Hold != 0 {
		// The target's unit is throttled: it joins the table held, for a probe of a later run.
		added, err := s.c.store.Discover(ctx, []store.NewURL{{URL: target.String(), Host: target.Host, Level: u.Level,
			FrMax: u.FrMax, ParentID: u.ID, RootID: u.RootID, Hold: adm.Hold}})
		if err != nil {
			return err
		}
		if len(added) > 0 {
			s.guard.Added(targetKey, adm, u.Level)
			s.count(func(st *Stats) { st.NewURLs++ })
		}
		rec.Error = fmt.Sprintf("redirect to %s held: its URL pattern is throttled by a trap defence (see strata traps)", target)
		return nil
	}
	s.mu.Lock()
	hops := s.hops[u.ID] + 1
	s.mu.Unlock()
	if hops > maxRedirectHops {
		rec.Error = fmt.Sprintf("redirect chain longer than %d hops; not followed", maxRedirectHops)
		return nil
	}
	id, what, err := s.c.store.Enqueue(ctx, store.NewURL{URL: target.String(), Host: target.Host, Level: u.Level,
		FrMax: u.FrMax, ParentID: u.ID, RootID: u.RootID}, s.run.Start)
	if err != nil {
		return err
	}
	if what == store.EnqueuedNew {
		s.guard.Added(targetKey, adm, u.Level)
	}
	s.mu.Lock()
	if h, ok := s.hops[id]; !ok || hops < h {
		s.hops[id] = hops
	}
	s.mu.Unlock()
	s.count(func(st *Stats) {
		st.Redirects++
		if what != store.EnqueuedKnown {
			st.Due++
		}
		if what == store.EnqueuedNew {
			st.NewURLs++
		}
	})
	if what != store.EnqueuedKnown {
		s.sched.addHost(target.Host)
	}
	return nil
}

// decide asks the URL filter about u.
func (s *stage) decide(u *url.URL, level int, seed bool) filter.Decision {
	in := filterInput(u, level, s.seedDomains)
	in.Seed = seed
	return s.c.cfg.Filter.Decide(in)
}

func filterInput(u *url.URL, level int, seedDomains map[string]bool) filter.Input {
	return filter.Input{URL: u, Level: level, SeedDomains: seedDomains}
}

// followLinks lets the internal links of a page at level L > 0 join the run at level L−1, unless they
// are known already (Bouras et al., 3.2): the crawl goes down the levels within one run. Only a new
// or changed page's links are followed — an unchanged one has no links strata does not know. page
// is the page's links, nil when it has none to read (not HTML, or a final URL that does not
// normalise: the page is recorded, its links are not followed).
func (s *stage) followLinks(ctx context.Context, d *domain, u *store.DueURL, from *url.URL, resp *fetch.Response, rec *store.FetchRecord,
	page *linkextract.Page) (map[string]traps.Decision, error) {
	feeds := s.c.cfg.Docs != nil
	if len(s.run.Only) > 0 || (u.Level <= 0 && !feeds) || rec.ContentHash == "" || (!rec.Changed && u.ContentHash != "") ||
		page == nil {
		return nil, nil
	}
	if feeds {
		var fs []string
		for _, f := range page.Feeds() {
			fs = append(fs, f.URL)
		}
		if err := s.noteFeeds(ctx, d, from, fs); err != nil {
			return nil, err
		}
	}
	if u.Level <= 0 {
		return nil, nil
	}
	var found []store.NewURL
	for _, l := range page.Links {
		if !s.c.mayFollow(l.NoFollow, page.NoFollow) {
			continue
		}
		lu, err := url.Parse(l.URL)
		if err != nil || s.c.gate.Key(lu.Host) != d.key {
			continue // external links are the links stage's business
		}
		dec := s.decide(lu, u.Level-1, false)
		if !dec.Accept {
			continue
		}
		if dec.URL != nil {
			lu = dec.URL
		}
		found = append(found, store.NewURL{URL: lu.String(), Host: lu.Host, Level: u.Level - 1, FrMax: s.c.cfg.NewFrMax,
			ParentID: u.ID, RootID: u.RootID})
		if len(found) == discoverBatch {
			if err := s.discover(ctx, d, from, found); err != nil {
				return nil, err
			}
			found = found[:0]
		}
	}
	return s.discoverWith(ctx, d, from, found, rec)
}

// discoverBatch bounds how far a page full of links can overshoot the per-domain cap: the guard
// counts what was inserted after each batch. A page's batches but its last are written at once;
// the last goes with its fetch record and is counted once that is recorded, before its domain
// takes its next step, so no more than discoverBatch URLs of a domain are ever admitted uncounted.
const discoverBatch = 100

// discover lets the URLs found on a page (from; nil for a sitemap or feed) that the trap guard admits
// join the run; those of a throttled unit join the table held.
func (s *stage) discover(ctx context.Context, d *domain, from *url.URL, found []store.NewURL) error {
	admitted, decided, err := s.admit(ctx, d, from, found)
	if err != nil || len(admitted) == 0 {
		return err
	}
	added, err := s.c.store.Discover(ctx, admitted)
	if err != nil {
		return err
	}
	s.added(d, added, decided)
	return nil
}

// discoverWith is discover for a page's last batch of links, which go with its fetch record
// (rec.Found) to the committer rather than in a write transaction of their own; the trap guard
// and the scheduler hear of the URLs added (added) once the page is recorded, while its domain is
// still busy. Only the URLs the table does not hold at their level are handed over.
func (s *stage) discoverWith(ctx context.Context, d *domain, from *url.URL, found []store.NewURL, rec *store.FetchRecord) (map[string]traps.Decision, error) {
	admitted, decided, err := s.admit(ctx, d, from, found)
	if err != nil || len(admitted) == 0 {
		return nil, err
	}
	write, err := s.c.store.ToDiscover(ctx, admitted)
	if err != nil || len(write) == 0 {
		return nil, err
	}
	rec.Found = &store.Found{URLs: write}
	return decided, nil
}

// admit returns the URLs of found (on page from; nil for a sitemap or feed) the trap guard admits,
// each with the rule that holds it if any, and the guard's decisions by URL.
func (s *stage) admit(ctx context.Context, d *domain, from *url.URL, found []store.NewURL) ([]store.NewURL, map[string]traps.Decision, error) {
	fromUnit := ""
	if from != nil {
		fromUnit = traps.Unit(from)
	}
	admitted := found[:0:0]
	decided := make(map[string]traps.Decision, len(found))
	for _, f := range found {
		fu, err := url.Parse(f.URL)
		if err != nil {
			continue
		}
		dec, ev := s.guard.Admit(d.key, fu, fromUnit)
		if err := s.trapEvent(ctx, ev); err != nil {
			return nil, nil, err
		}
		if dec.Admit {
			f.Hold = dec.Hold
			admitted = append(admitted, f)
			decided[f.URL] = dec
		}
	}
	return admitted, decided, nil
}

// added tells the trap guard, the scheduler and the counts of the URLs the store inserted.
func (s *stage) added(d *domain, added []store.NewURL, decided map[string]traps.Decision) {
	due := 0
	for _, a := range added {
		s.guard.Added(d.key, decided[a.URL], a.Level)
		if a.Hold == 0 {
			due++
			s.sched.addHost(a.Host)
		}
	}
	s.count(func(st *Stats) { st.Links += len(added); st.NewURLs += len(added); st.Due += due })
}

// trapEvent records a trap defence that fired.
func (s *stage) trapEvent(ctx context.Context, ev *traps.Event) error {
	if ev == nil {
		return nil
	}
	s.c.cfg.Log.Warn("trap defence", "domain", ev.Domain, "kind", ev.Kind, "pattern", ev.Pattern, "detail", ev.Detail)
	s.count(func(st *Stats) { st.TrapEvents++ })
	return s.c.store.RecordTrap(ctx, store.TrapEvent{RunID: s.run.ID, At: s.c.cfg.Now(), Domain: ev.Domain, Kind: ev.Kind,
		Pattern: ev.Pattern, Detail: ev.Detail})
}

// selective applies the selective incremental rule (Bouras et al. 3.3) when a hub — a page above
// level 0 with known children — comes due. A hub that changed (or is new) is treated as unknown: its
// links were followed and its children are visited as their own fr allows; so are the children of a
// hub too few of whose children have been fetched twice, which gives no grounds to judge. A hub that
// did not change has its subtree opened when enough of its children changed lately (children made
// due now even if their fr has not reached 0), and otherwise the quiet due pages below it — those
// whose own history shows evidence and few changes — are left for a later run. The hub's threshold
// learns from every judgement made with evidence.
func (s *stage) selective(ctx context.Context, u *store.DueURL, rec *store.FetchRecord) error {
	if s.c.cfg.SelectiveOff || len(s.run.Only) > 0 || u.Level <= 0 || (rec.ContentHash == "" && !rec.NotModified) {
		return nil // not a hub, or no usable answer: no evidence about the hub itself
	}
	if ok, err := s.c.store.HasChildren(ctx, u.ID); err != nil || !ok {
		return err
	}
	kids, err := s.c.store.ChildRecords(ctx, u.ID, s.c.cfg.Limit)
	if err != nil {
		return err
	}
	rule, limit := s.c.cfg.Selective, s.c.cfg.Limit
	ev := frequency.ChildEvidence(FrequencyHistories(kids), limit)
	threshold := rule.Threshold(u.Threshold)
	changed := rec.Changed || u.ContentHash == ""
	verdict, reason := rule.Decide(changed, threshold, ev)
	next, ratio := threshold, -1.0 // -1: not judged with evidence, so no hub adjustment either
	if ev.Enough() {
		next, ratio = rule.NextThreshold(threshold, ev.Ratio()), ev.Ratio()
	}
	// Most hubs come due with nothing new to store (a first crawl's hubs have no evidence): the
	// write would take SQLite's write lock for nothing, and with a page's finish in a goroutine of
	// its own, dozens of them queued for it at once (issue 19).
	if !u.HubStored || next != u.Threshold || ratio != u.ChildRatio {
		if err := s.c.store.SetHub(ctx, u.ID, next, ratio); err != nil {
			return err
		}
	}
	skipped := 0
	switch verdict {
	case frequency.Open:
		hosts, err := s.c.store.ForceChildren(ctx, u.ID, s.run.Start)
		if err != nil {
			return err
		}
		for _, h := range hosts {
			s.sched.addHost(h)
		}
	case frequency.Skip:
		quiet := func(recs []store.Record) bool { return frequency.Quiet(FrequencyRecords(recs), limit, threshold) }
		if skipped, err = s.c.store.SkipSubtree(ctx, u.ID, s.run.ID, s.c.cfg.MaxSkips, quiet); err != nil {
			return err
		}
	}
	s.c.cfg.Log.Debug("selective rule", "hub", u.URL, "verdict", verdict, "reason", reason, "skipped", skipped)
	s.count(func(st *Stats) {
		st.Hubs++
		st.SkippedSelective += skipped
		if verdict == frequency.Open {
			st.Forced++
		}
	})
	return nil
}

// FrequencyHistories turns stored records into the frequency package's.
func FrequencyHistories(in [][]store.Record) [][]frequency.Record {
	out := make([][]frequency.Record, len(in))
	for i, h := range in {
		out[i] = FrequencyRecords(h)
	}
	return out
}

// FrequencyRecords turns stored records into the frequency package's.
func FrequencyRecords(in []store.Record) []frequency.Record {
	out := make([]frequency.Record, len(in))
	for i, r := range in {
		out[i] = frequency.Record{Run: r.Run, Changed: r.Changed, Failed: r.Failed}
	}
	return out
}

// fail records a URL that could not be crawled for a reason of strata's own.
func (s *stage) fail(ctx context.Context, u *store.DueURL, rec store.FetchRecord) error {
	rec.URLID, rec.RunID, rec.FetchedAt = u.ID, s.run.ID, s.c.cfg.Now()
	if err := s.c.store.RecordFetch(ctx, rec); err != nil {
		return err
	}
	s.count(func(st *Stats) { st.Errors++; st.Done++ })
	return nil
}

// dropDomain gives d up for the rest of the run.
func (s *stage) dropDomain(d *domain, host, why string) {
	s.sched.drop(d)
	s.c.cfg.Log.Warn("domain given up for this run; its URLs stay due", "domain", d.key, "host", host, "why", why)
}

// robotsFor returns what robots.txt says for u's origin: from memory, from the store's cache, or by
// fetching it — which is then this step's one request (requested = true). An entry with nil rules
// means the robots.txt was unreachable: the whole origin is off limits for this run.
func (s *stage) robotsFor(ctx context.Context, d *domain, u *url.URL) (e *robotsEntry, requested bool, err error) {
	o := origin(u)
	if e, ok := d.robots[o]; ok {
		return e, false, nil
	}
	now := s.c.cfg.Now()
	if c, err := s.c.store.RobotsCache(ctx, o); err == nil && now.Before(c.ExpiresAt) {
		rules := robots.FromStatus(c.Status, c.Body)
		s.applyCrawlDelay(u.Host, rules)
		e := &robotsEntry{rules: rules}
		d.robots[o] = e
		return e, false, nil
	} else if err != nil && !errors.Is(err, store.ErrNotFound) {
		return nil, false, err
	}

	s.requests.Add(1)
	res := s.c.robots(ctx, &url.URL{Scheme: u.Scheme, Host: u.Host})
	entry := &robotsEntry{}
	if ctx.Err() != nil && res.Outcome == robots.Unreachable {
		return entry, true, nil // stopping: the host is asked again next run
	}
	rec := store.Robots{Origin: o, Domain: d.key, Status: res.Status, Body: res.Body, FetchedAt: res.FetchedAt}
	switch {
	case errors.Is(res.Err, fetch.ErrPrivateAddress):
		entry.private = true
	case res.Outcome == robots.Unreachable:
		// RFC 9309 2.3.1.4: assume complete disallow; not cached, so a later run asks again — the
		// next one the first time, then after 2, 4, 8… runs while it stays unreachable.
		if _, err := s.backOff(ctx, d, u.Host, fmt.Sprintf("robots.txt unreachable: %v", res.Err)); err != nil {
			return nil, true, err
		}
	default:
		if err := s.reachable(ctx, u.Host); err != nil {
			return nil, true, err
		}
		s.captureRobots(&rec, res)
		entry.rules = res.Rules
		rec.ExpiresAt = res.FetchedAt.Add(s.c.cfg.RobotsTTL)
		rec.CrawlDelay = s.applyCrawlDelay(u.Host, res.Rules)
		if err := s.unblock(ctx, u.Host, res.Rules); err != nil {
			return nil, true, err
		}
	}
	if err := s.c.store.SaveRobots(ctx, rec); err != nil {
		return nil, true, err
	}
	d.robots[o] = entry
	return entry, true, nil
}

func (s *stage) applyCrawlDelay(host string, rules *robots.Rules) time.Duration {
	d, ok := rules.CrawlDelay(s.c.token)
	if ok && d > 0 {
		s.c.gate.SetCrawlDelay(host, d)
	}
	return d
}

// unblock makes URLs that an earlier robots.txt blocked active again when the new one allows them.
func (s *stage) unblock(ctx context.Context, host string, rules *robots.Rules) error {
	blocked, err := s.c.store.BlockedURLs(ctx, host)
	if err != nil {
		return err
	}
	for _, b := range blocked {
		u, err := url.Parse(b.URL)
		if err != nil || !rules.Allowed(s.c.token, u.RequestURI()) {
			continue
		}
		if err := s.c.store.SetState(ctx, b.ID, "active"); err != nil {
			return err
		}
	}
	return nil
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func allEqual(xs []int, v int) bool {
	for _, x := range xs {
		if x != v {
			return false
		}
	}
	return true
}

func joinErr(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}
