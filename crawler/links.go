package crawler

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"time"

	"golang.org/x/net/html/charset"

	"github.com/strata-crawler/strata/archive"
	"github.com/strata-crawler/strata/internal/robots"
	"github.com/strata-crawler/strata/internal/store"
	"github.com/strata-crawler/strata/linkextract"
)

// LinkStore is what the links stage needs from the database.
type LinkStore interface {
	RunPages(ctx context.Context, run int64) ([]store.RunPage, error)
	SaveLinks(ctx context.Context, fromID, run int64, links []store.Link) error
	CarryLinks(ctx context.Context, fromID, run int64) error
	AddURLs(ctx context.Context, urls []store.NewURL, state string) (int, error)
	RobotsCache(ctx context.Context, origin string) (*store.Robots, error)
	SeedHosts(ctx context.Context) ([]string, error)
}

var _ LinkStore = (*store.DB)(nil)

// VersionReader reads stored versions. *archive.Dir implements it.
type VersionReader interface {
	ReadMeta(rel string) (*archive.Meta, error)
	ReadRaw(rel string) ([]byte, error)
}

var _ VersionReader = (*archive.Dir)(nil)

// LinkStats counts what a links stage did.
type LinkStats struct {
	Pages    int // pages of the run whose links were recorded or carried forward
	Read     int // stored versions whose links were recorded
	Reparsed int // of them, versions stored without their links (before strata kept them), parsed again
	Links    int // links recorded
	External int // external links seen
	Added    int // external URLs added to the table (filter and robots.txt permitting)
	Blocked  int // external URLs added as blocked: robots.txt forbids them
	Missing  int // stored versions whose files were gone
	Elapsed  time.Duration
}

// LinksConfig tunes the links stage. Nofollow links are recorded in the graph but, unless
// Config.IgnoreNofollow, not admitted.
type LinksConfig struct {
	ExternalLevel int // level of admitted external URLs
	NewFrMax      int // their revisit interval
}

// mayFollow is strata's one nofollow rule, for the links the crawl follows and the external links
// the links stage admits alike: a link whose rel says nofollow (or sponsored, ugc), or any link of
// a page whose meta robots says nofollow, is not followed, unless the configuration ignores both.
func (c *Crawler) mayFollow(linkNoFollow, pageNoFollow bool) bool {
	return c.cfg.IgnoreNofollow || !(linkNoFollow || pageNoFollow)
}

// Links is the paper's Link Extractor Manager: for every page fetched in run it records the page's
// links in the link graph (internal and external, first and last run seen) and admits the external
// links that the URL filter allows into the URL table, blocked if a cached robots.txt forbids them.
// Internal links were followed by the crawl stage already. The links of a new version are those the
// crawl stage read and kept in its page.json; a version stored without them is parsed again. A page
// that did not change keeps its links: they are marked seen again rather than read.
func (c *Crawler) Links(ctx context.Context, st LinkStore, versions VersionReader, run Run, cfg LinksConfig) (*LinkStats, error) {
	start := time.Now()
	pages, err := st.RunPages(ctx, run.ID)
	if err != nil {
		return nil, err
	}
	seeds, err := st.SeedHosts(ctx)
	if err != nil {
		return nil, err
	}
	seedDom := SeedDomains(seeds)
	stats := &LinkStats{}
	rules := map[string]*robots.Rules{} // cached robots.txt per origin, nil when unknown
	for _, p := range pages {
		if err := ctx.Err(); err != nil {
			return stats, err
		}
		stats.Pages++
		if p.Stored == "" {
			if err := st.CarryLinks(ctx, p.URLID, run.ID); err != nil {
				return stats, err
			}
			continue
		}
		page, reparsed, err := readLinks(versions, p)
		if errors.Is(err, errNotHTML) {
			continue
		}
		if err != nil {
			stats.Missing++
			c.cfg.Log.Warn("links: stored version unreadable", "url", p.URL, "version", p.Stored, "error", err)
			continue
		}
		stats.Read++
		if reparsed {
			stats.Reparsed++
		}
		from, _ := url.Parse(p.URL)
		fromKey := c.gate.Key(from.Host)
		links := make([]store.Link, 0, len(page.Links))
		var admit, blocked []store.NewURL
		for _, l := range page.Links {
			lu, err := url.Parse(l.URL)
			if err != nil {
				continue
			}
			internal := c.gate.Key(lu.Host) == fromKey
			links = append(links, store.Link{ToURL: l.URL, Internal: internal})
			if internal {
				continue
			}
			stats.External++
			if !c.mayFollow(l.NoFollow, page.NoFollow) {
				continue
			}
			dec := c.cfg.Filter.Decide(filterInput(lu, cfg.ExternalLevel, seedDom))
			if !dec.Accept {
				continue
			}
			if dec.URL != nil {
				lu = dec.URL
			}
			nu := store.NewURL{URL: lu.String(), Host: lu.Host, Level: cfg.ExternalLevel, FrMax: max(cfg.NewFrMax, 1),
				ParentID: p.URLID, RootID: p.RootID}
			r, err := c.cachedRules(ctx, st, rules, lu)
			if err != nil {
				return stats, err
			}
			if r != nil && !r.Allowed(c.token, lu.RequestURI()) {
				blocked = append(blocked, nu)
			} else {
				admit = append(admit, nu)
			}
		}
		if err := st.SaveLinks(ctx, p.URLID, run.ID, links); err != nil {
			return stats, err
		}
		stats.Links += len(links)
		n, err := st.AddURLs(ctx, admit, "active")
		if err != nil {
			return stats, err
		}
		stats.Added += n
		if n, err = st.AddURLs(ctx, blocked, "blocked"); err != nil {
			return stats, err
		}
		stats.Blocked += n
	}
	stats.Elapsed = time.Since(start)
	return stats, nil
}

var errNotHTML = errors.New("not HTML")

// readLinks returns the links of a stored version: those the crawl kept in its page.json, or, for
// a version stored without them (reparsed), those of its page parsed again, decoded with the
// charset recorded when it was fetched.
func readLinks(versions VersionReader, p store.RunPage) (page *linkextract.Page, reparsed bool, err error) {
	meta, err := versions.ReadMeta(p.Stored)
	if err != nil {
		return nil, false, err
	}
	if meta.RawFile != archive.HTMLFile {
		return nil, false, errNotHTML
	}
	if meta.Links != nil {
		page := &linkextract.Page{Links: make([]linkextract.Link, len(meta.Links)), NoFollow: meta.NoFollow}
		for i, l := range meta.Links {
			page.Links[i] = linkextract.Link{URL: l.URL, NoFollow: l.NoFollow}
		}
		return page, false, nil
	}
	raw, err := versions.ReadRaw(p.Stored)
	if err != nil {
		return nil, true, err
	}
	if meta.Charset != "" && meta.Charset != "utf-8" {
		if enc, _ := charset.Lookup(meta.Charset); enc != nil {
			if dec, err := io.ReadAll(enc.NewDecoder().Reader(bytes.NewReader(raw))); err == nil {
				raw = dec
			}
		}
	}
	base := meta.FinalURL
	if base == "" {
		base = p.URL
	}
	page, err = linkextract.Extract(base, raw, linkextract.Options{})
	if err != nil {
		return nil, true, fmt.Errorf("links of %s: %w", p.URL, err)
	}
	return page, true, nil
}

// cachedRules returns the cached robots.txt rules for u's origin, or nil when strata has none: the
// URL is then admitted, and robots.txt is asked before it is crawled.
func (c *Crawler) cachedRules(ctx context.Context, st LinkStore, cache map[string]*robots.Rules, u *url.URL) (*robots.Rules, error) {
	o := origin(u)
	if r, ok := cache[o]; ok {
		return r, nil
	}
	var r *robots.Rules
	cached, err := st.RobotsCache(ctx, o)
	switch {
	case errors.Is(err, store.ErrNotFound):
	case err != nil:
		return nil, err
	case c.cfg.Now().Before(cached.ExpiresAt):
		r = robots.FromStatus(cached.Status, cached.Body)
	}
	cache[o] = r
	return r, nil
}
