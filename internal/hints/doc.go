// Package hints reads what sites say about their own updates — sitemaps and feeds — and turns it into
// crawl hints: which pages changed since our last fetch, how often a new page is likely to change,
// whether a host's hints deserve trust, and in which order to crawl when a run is short of budget.
//
// It is the provider side of Xu, Li, Qu and Labrinidis, Towards a content-provider-friendly web page
// crawler: sitemaps and feeds make a site a "smart user" whose past update times are known. The
// package parses and decides; it never fetches, stores or reads a clock of its own except as a
// default the caller can override, so every function is safe for concurrent use.
//
// # Sitemaps and feeds
//
// [ParseSitemap] reads the sitemaps.org protocol (urlset, sitemapindex, plain text; gzip detected
// by its magic bytes) and, as search engines do, an RSS or Atom feed offered where a sitemap was
// expected. [ParseFeed] reads RSS 0.9x/1.0/2.0, Atom and JSON Feed through github.com/mmcdole/gofeed.
// Both stream or cap what they read: a document is cut at [Limits] (the protocol's 50 MB
// uncompressed and 50,000 entries for sitemaps), keeping the entries read so far and reporting the
// cut; a document that breaks part way keeps the entries before the break and reports the error. A
// date that cannot be right (unparseable, before 1991, more than a day in the site's future) is
// dropped from its entry, not fatal. Entries on a host other than the document's own are dropped
// (the protocol's cross-host rule), except for hosts the caller vouches for in [Limits.Hosts] — the
// host whose robots.txt declared the sitemap, or the page that linked the feed.
//
// # Site clocks
//
// Dates in sitemaps and feeds are written by the site's clock, which can be minutes or months away
// from ours. [NewerThanFetch] therefore compares a lastmod with the Date header the site sent when
// we last fetched the page, never with our own clock, and says when it cannot tell. [Stamp] keeps
// the uncertainty of the written form (a date alone names a whole day somewhere on Earth).
//
// # Trust
//
// [Trust] counts, per host, how often a hint agreed with what the next fetch observed, and says when
// a host's "not modified" hints may be acted upon. [ChangeFreq.FrMax] turns a changefreq into a first
// revisit interval. How a hint weighs in a run that cannot fetch everything due — a page the site
// says changed since our fetch is certainly stale — is the crawler's choice (frequency.GainValue);
// docs/fidelity.md says where that departs from Xu et al.'s priority scores.
package hints
