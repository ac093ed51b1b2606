package hints

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"

	"golang.org/x/net/html/charset"

	"github.com/strata-crawler/strata/internal/urlnorm"
)

// The protocol's limits for one sitemap file, which are also the defaults for feeds' entries.
const (
	// MaxSitemapBytes is the protocol's 50 MB, counted uncompressed.
	MaxSitemapBytes = 50 * 1024 * 1024
	// MaxEntries is the protocol's 50,000 URLs per sitemap (and sitemaps per index).
	MaxEntries = 50_000
	// MaxFeedBytes bounds a feed, uncompressed. Feeds carry whole articles but rarely reach a few
	// megabytes; gofeed holds the parsed feed in memory, so this also bounds memory to a few times
	// it. A feed found where a sitemap was expected gets this limit too.
	MaxFeedBytes = 10 * 1024 * 1024
)

// Limits bound what ParseSitemap and ParseFeed read and say which hosts a document may speak for.
// The zero value applies the defaults.
type Limits struct {
	// MaxBytes caps the document counted after decompression; 0 means MaxSitemapBytes for
	// sitemaps and MaxFeedBytes for feeds. Reading stops at the cap: the entries read so far are
	// kept and the result is marked Truncated.
	MaxBytes int64
	// MaxEntries caps the entries read (url, sitemap or item elements, dropped ones included);
	// 0 means MaxEntries.
	MaxEntries int
	// Hosts are host names besides the document's own whose URLs it may list: the host whose
	// robots.txt declared a sitemap, or the host of the page that linked a feed. Ports are ignored.
	Hosts []string
	// SiteNow is the site's clock when it served the document (the response's Date header). Dates
	// later than SiteNow plus a day are dropped as impossible; a zero SiteNow means our clock.
	SiteNow time.Time
}

// Format names the kind of document a result came from.
type Format string

// Formats ParseSitemap and ParseFeed recognise.
const (
	FormatURLSet       Format = "urlset"       // sitemaps.org <urlset>
	FormatSitemapIndex Format = "sitemapindex" // sitemaps.org <sitemapindex>
	FormatText         Format = "text"         // one URL per line
	FormatRSS          Format = "rss"          // RSS 0.9x, 1.0 (RDF) and 2.0
	FormatAtom         Format = "atom"
	FormatJSON         Format = "json" // JSON Feed
)

// ErrNotSitemap is wrapped by ParseSitemap's error when the document is none of the formats it
// reads (an HTML error page served with status 200, an empty body).
var ErrNotSitemap = errors.New("not a sitemap")

// ErrNotFeed is wrapped by ParseFeed's error when the document is not a feed.
var ErrNotFeed = errors.New("not a feed")

// Entry is one page a sitemap or feed lists.
type Entry struct {
	// URL is canonical (urlnorm) and on the document's host or one of Limits.Hosts.
	URL string `json:"url"`
	// LastMod is when the site says the page last changed, on the site's clock; zero if not given
	// or dropped as impossible. Feeds give the item's updated date, else its published date.
	LastMod Stamp `json:"lastmod,omitzero"`
	// ChangeFreq is the sitemap's changefreq, empty for feeds or when absent or unknown.
	ChangeFreq ChangeFreq `json:"changefreq,omitempty"`
	// Priority is the sitemap's priority in [0, 1]; the protocol's default 0.5 when absent, out of
	// range, or from a feed.
	Priority float64 `json:"priority"`
}

// DefaultPriority is the protocol's priority for a URL that gives none.
const DefaultPriority = 0.5

// earliestDate is the first plausible lastmod: nothing on the Web changed before the Web (1991).
// It catches year 0001 (an unset date), 1900 and the Unix epoch, which generators emit for "unknown".
var earliestDate = time.Date(1991, 1, 1, 0, 0, 0, 0, time.UTC)

// futureSlack is how far past the site's own now a date may be: generous for zoneless forms and for a
// sitemap written a little before it was served by another machine.
const futureSlack = 24 * time.Hour

// reader is one document being read: the hosts it may speak for, its limits, and the counts a
// result reports.
type reader struct {
	base     *url.URL
	hosts    map[string]bool
	lim      Limits
	siteNow  time.Time
	dropped  int
	badDates int
}

func newReader(base *url.URL, lim Limits, defaultBytes int64) (*reader, error) {
	if base == nil {
		return nil, errors.New("no document URL")
	}
	b, err := urlnorm.Parse(base.String())
	if err != nil {
		return nil, fmt.Errorf("document URL: %w", err)
	}
	if lim.MaxBytes <= 0 {
		lim.MaxBytes = defaultBytes
	}
	if lim.MaxEntries <= 0 {
		lim.MaxEntries = MaxEntries
	}
	rd := &reader{base: b, lim: lim, hosts: map[string]bool{b.Hostname(): true}, siteNow: lim.SiteNow}
	for _, h := range lim.Hosts {
		u, err := urlnorm.Parse("http://" + strings.TrimSpace(h))
		if err != nil {
			return nil, fmt.Errorf("allowed host %q: %w", h, err)
		}
		rd.hosts[u.Hostname()] = true
	}
	if rd.siteNow.IsZero() {
		rd.siteNow = time.Now()
	}
	return rd, nil
}

// url resolves a listed location and applies the cross-host rule; "" means dropped.
func (rd *reader) url(loc string) string {
	loc = strings.TrimSpace(loc)
	if loc == "" || len(loc) > urlnorm.MaxLength {
		rd.dropped++
		return ""
	}
	u, err := urlnorm.Resolve(rd.base, loc)
	if err != nil || !rd.hosts[u.Hostname()] {
		rd.dropped++
		return ""
	}
	return u.String()
}

// plausible keeps a date only if it can be right. Year 1 is Go's zero time and counts as wrong, not
// as absent: a site wrote it.
func (rd *reader) plausible(st Stamp) Stamp {
	earliest, _ := st.Bounds()
	if st.At.Before(earliestDate) || earliest.After(rd.siteNow.Add(futureSlack)) {
		rd.badDates++
		return Stamp{}
	}
	return st
}

// date parses a written lastmod and keeps it if plausible.
func (rd *reader) date(s string) Stamp {
	if strings.TrimSpace(s) == "" {
		return Stamp{}
	}
	st, err := ParseStamp(s)
	if err != nil {
		rd.badDates++
		return Stamp{}
	}
	return rd.plausible(st)
}

// capReader reads at most left bytes and records whether the source had more: a document cut at
// the cap reports Truncated, one that ends exactly there does not.
type capReader struct {
	r    io.Reader
	left int64
	over bool
}

func (c *capReader) Read(p []byte) (int, error) {
	if c.left <= 0 {
		if !c.over {
			var one [1]byte
			n, _ := io.ReadFull(c.r, one[:])
			c.over = n > 0
		}
		return 0, io.EOF
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	return n, err
}

// sniffLen is how much of a document is examined to tell its format: enough for an XML
// declaration, a doctype, a long comment and the root element.
const sniffLen = 64 << 10

// open undoes gzip (recognised by its magic bytes, whatever the file is called or served as), caps
// the decompressed stream and returns it buffered with its first bytes available to Peek. Only one
// layer of gzip is undone: a server that compresses a .gz file again on the wire has had that layer
// removed by the HTTP client already, and a second inner layer is no format this package reads.
func open(r io.Reader, maxBytes int64) (*bufio.Reader, *capReader, error) {
	br := bufio.NewReader(r)
	magic, err := br.Peek(2)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, nil, err
	}
	var src io.Reader = br
	if len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, nil, fmt.Errorf("gzip: %w", err)
		}
		// The cap below is what stops a gzip bomb: at most maxBytes+1 bytes are ever inflated.
		src = zr
	}
	cr := &capReader{r: src, left: maxBytes}
	return bufio.NewReaderSize(cr, sniffLen), cr, nil
}

// peek returns up to sniffLen leading bytes without consuming them.
func peek(br *bufio.Reader) ([]byte, error) {
	head, err := br.Peek(sniffLen)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
		return head, err
	}
	return head, nil
}

// kind is what a document's first bytes say it is.
type kind int

const (
	kindUnknown kind = iota
	kindURLSet
	kindSitemapIndex
	kindText
	kindRSS
	kindAtom
	kindJSON
)

// sniff tells a document's kind from its first bytes. XML is recognised by its root element
// (namespaces are not checked: generators get them wrong and the element names are unambiguous).
func sniff(head []byte) kind {
	h := bytes.TrimLeft(bytes.TrimPrefix(head, []byte("\xef\xbb\xbf")), " \t\r\n")
	switch {
	case len(h) == 0:
		return kindUnknown
	case h[0] == '{':
		return kindJSON
	case h[0] != '<':
		line, _, _ := bytes.Cut(h, []byte("\n"))
		if hasHTTPPrefix(string(bytes.TrimSpace(line))) {
			return kindText
		}
		return kindUnknown
	}
	d := xml.NewDecoder(bytes.NewReader(h))
	d.Strict = false
	d.CharsetReader = identityCharset
	for {
		tok, err := d.RawToken()
		if err != nil {
			return kindUnknown
		}
		if se, ok := tok.(xml.StartElement); ok {
			switch strings.ToLower(se.Name.Local) {
			case "urlset":
				return kindURLSet
			case "sitemapindex":
				return kindSitemapIndex
			case "rss", "rdf":
				return kindRSS
			case "feed":
				return kindAtom
			}
			return kindUnknown
		}
	}
}

// identityCharset lets a decoder that only looks at markup read documents in any ASCII-compatible
// encoding.
func identityCharset(_ string, r io.Reader) (io.Reader, error) { return r, nil }

// charsetReader converts the encodings real sitemaps declare (ISO-8859-1, windows-1252 …) to UTF-8.
func charsetReader(label string, r io.Reader) (io.Reader, error) {
	return charset.NewReaderLabel(label, r)
}

func hasHTTPPrefix(s string) bool {
	return len(s) >= 7 && strings.EqualFold(s[:7], "http://") ||
		len(s) >= 8 && strings.EqualFold(s[:8], "https://")
}
