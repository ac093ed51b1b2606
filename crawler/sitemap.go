package crawler

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"sync"
	"time"

	"github.com/strata-crawler/strata/internal/fetch"
	"github.com/strata-crawler/strata/internal/hints"
	"github.com/strata-crawler/strata/internal/robots"
	"github.com/strata-crawler/strata/internal/store"
	"github.com/strata-crawler/strata/internal/urlnorm"
)

// SitemapPages is what Cycle.Sitemap found.
type SitemapPages struct {
	URLs      []string // the pages listed, canonical, each once, in document order
	Documents int      // sitemaps read: the one named, and an index's children
	Skipped   []string // an index's children not read, each with why (robots.txt, politeness, an error)
	Truncated bool     // a document was cut at the protocol's limits or broke part way
}

// ErrSitemap is wrapped by Sitemap's errors about the document the caller named: robots.txt forbids
// it, its site asks to be left alone for longer than a command waits, or it is no sitemap. They
// mean nothing was read, through no failure of strata's.
var ErrSitemap = errors.New("sitemap not read")

// maxSitemapChildren bounds the sitemaps of an index that Sitemap reads: each is a request the
// site's politeness gap spaces out.
const maxSitemapChildren = 50

// sitemapWait is the longest Sitemap waits for a site's politeness gap before a request: a
// Crawl-delay of an hour is honoured by refusing, not by a command that hangs for an hour.
const sitemapWait = 2 * time.Minute

// Sitemap reads the sitemap (or sitemap index, and then up to maxSitemapChildren of the sitemaps it
// lists) at rawURL and returns the pages it lists, as a crawl would read them: through the cycle's
// guarded client and politeness gate, with the gaps earlier processes left restored first and what
// these requests promise saved after, and each origin's robots.txt — cached, or fetched and cached
// — asked first. A private address is allowed for the named sitemap's host, as for a seed's, and
// refused for an index's children on other hosts unless crawl.allow_private. The pages a document
// lists are those on its own host (hints.ParseSitemap's cross-host rule).
func (c *Cycle) Sitemap(ctx context.Context, rawURL string) (pages *SitemapPages, err error) {
	if c.docs == nil {
		return nil, ErrNoNetwork
	}
	u, err := urlnorm.Parse(rawURL)
	if err != nil {
		return nil, err
	}
	cr := c.crawler
	if _, err := cr.restoreGaps(ctx, nil); err != nil {
		return nil, err
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		if serr := cr.saveGaps(sctx); serr != nil && err == nil {
			err = serr
		}
	}()
	c.allowed.add(u.Hostname())
	out := &SitemapPages{}
	seen := map[string]bool{}
	sm, err := c.readSitemap(ctx, u)
	if err != nil {
		return nil, err
	}
	out.Documents++
	add := func(sm *hints.Sitemap) {
		out.Truncated = out.Truncated || sm.Truncated || sm.Err != nil
		for _, e := range sm.URLs {
			if !seen[e.URL] {
				seen[e.URL] = true
				out.URLs = append(out.URLs, e.URL)
			}
		}
	}
	add(sm)
	if len(sm.Children) > 0 {
		c.log.Info("reading the sitemaps of an index, each after the site's politeness gap", "index", u.String(),
			"sitemaps", min(len(sm.Children), maxSitemapChildren))
	}
	for i, child := range sm.Children {
		if i == maxSitemapChildren {
			out.Skipped = append(out.Skipped, fmt.Sprintf("%d more sitemaps of the index (at most %d are read)", len(sm.Children)-i, maxSitemapChildren))
			break
		}
		cu, err := urlnorm.Parse(child.URL)
		if err != nil {
			out.Skipped = append(out.Skipped, fmt.Sprintf("%s: %v", child.URL, err))
			continue
		}
		csm, err := c.readSitemap(ctx, cu)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			out.Skipped = append(out.Skipped, err.Error())
			continue
		}
		out.Documents++
		add(csm) // an index among the children is not followed: the protocol has no nesting
	}
	return out, nil
}

// readSitemap reads one sitemap document after asking its origin's robots.txt.
func (c *Cycle) readSitemap(ctx context.Context, u *url.URL) (*hints.Sitemap, error) {
	cr := c.crawler
	rules, err := cr.robotsRules(ctx, u)
	if err != nil {
		return nil, err
	}
	if !rules.Allowed(cr.token, u.RequestURI()) {
		return nil, fmt.Errorf("%w: robots.txt of %s disallows %s for %s", ErrSitemap, origin(u), u.RequestURI(), cr.token)
	}
	if at := cr.gate.Ready(ctx, u.Host); time.Until(at) > sitemapWait {
		return nil, fmt.Errorf("%w: %s may not be contacted before %s (its politeness gap or Crawl-delay); a crawl reads its sitemap then",
			ErrSitemap, u.Host, at.Format(time.RFC3339))
	}
	c.log.Debug("reading a sitemap", "url", u.String())
	body, siteDate, err := c.docs(ctx, u.String())
	if err != nil {
		return nil, fmt.Errorf("sitemap %s: %w", u, err)
	}
	defer body.Close()
	sm, err := hints.ParseSitemap(body, u, hints.Limits{SiteNow: siteDate})
	if errors.Is(err, hints.ErrNotSitemap) {
		return nil, fmt.Errorf("%w: %v", ErrSitemap, err)
	}
	if err != nil {
		return nil, fmt.Errorf("sitemap %s: %w", u, err)
	}
	return sm, nil
}

// robotsRules returns the robots.txt rules of u's origin: the cached copy while it is fresh, else
// fetched through the gate and cached, as the crawl stage does. An origin whose robots.txt cannot be
// had is off limits (RFC 9309 2.3.1.4).
func (c *Crawler) robotsRules(ctx context.Context, u *url.URL) (*robots.Rules, error) {
	o := origin(u)
	now := c.cfg.Now()
	if cached, err := c.store.RobotsCache(ctx, o); err == nil && now.Before(cached.ExpiresAt) {
		rules := robots.FromStatus(cached.Status, cached.Body)
		if d, ok := rules.CrawlDelay(c.token); ok && d > 0 {
			c.gate.SetCrawlDelay(u.Host, d)
		}
		return rules, nil
	} else if err != nil && !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	res := c.robots(ctx, &url.URL{Scheme: u.Scheme, Host: u.Host})
	switch {
	case errors.Is(res.Err, fetch.ErrPrivateAddress):
		return nil, fmt.Errorf("%w: %s resolves to a private address (see crawl.allow_private)", ErrSitemap, u.Host)
	case res.Outcome == robots.Unreachable:
		return nil, fmt.Errorf("robots.txt of %s could not be had, so its sitemap is not read: %w", o, res.Err)
	}
	rec := store.Robots{Origin: o, Domain: c.gate.Key(u.Host), Status: res.Status, Body: res.Body, FetchedAt: res.FetchedAt,
		ExpiresAt: res.FetchedAt.Add(c.cfg.RobotsTTL)}
	if d, ok := res.Rules.CrawlDelay(c.token); ok && d > 0 {
		c.gate.SetCrawlDelay(u.Host, d)
		rec.CrawlDelay = d
	}
	if err := c.store.SaveRobots(ctx, rec); err != nil {
		return nil, err
	}
	return res.Rules, nil
}

// hostSet is a set of host names safe for concurrent use: the hosts a cycle's client may reach on a
// private address.
type hostSet struct {
	mu sync.RWMutex
	m  map[string]bool
}

func (s *hostSet) add(host string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string]bool{}
	}
	s.m[host] = true
}

func (s *hostSet) has(host string) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.m[host]
}
