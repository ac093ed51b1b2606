package hints

import (
	"bufio"
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
)

// Sitemap is what ParseSitemap read from one document.
type Sitemap struct {
	// Format is the kind of document read.
	Format Format `json:"format"`
	// URLs are the pages a urlset, text sitemap or feed lists, in document order.
	URLs []Entry `json:"urls"`
	// Children are the sitemaps a sitemap index lists. The protocol forbids indexes of indexes;
	// callers should fetch children but not follow an index found among them.
	Children []Child `json:"children"`
	// Truncated reports that reading stopped at a limit (bytes or entries): the entries are those
	// read before it.
	Truncated bool `json:"truncated,omitempty"`
	// Err is why reading stopped early (broken XML, a read error); the entries are those before
	// the break.
	Err error `json:"-"`
	// Dropped counts listed locations refused: unparseable, not http(s), or on a host the document
	// may not speak for.
	Dropped int `json:"dropped,omitempty"`
	// BadDates counts lastmod values dropped from their entries: unparseable, before 1991, or in
	// the site's future.
	BadDates int `json:"bad_dates,omitempty"`
}

// Child is one sitemap a sitemap index lists.
type Child struct {
	URL     string `json:"url"`
	LastMod Stamp  `json:"lastmod,omitzero"`
}

// ParseSitemap reads the sitemap served at base from r, streaming: memory stays bounded by one entry
// whatever the document's size. It reads the sitemaps.org formats — an XML <urlset>, a
// <sitemapindex>, a text file of one URL per line — gzip-compressed or not, in UTF-8 or any encoding
// the XML declaration names, and an RSS or Atom feed offered as a sitemap, as search engines accept
// (read like ParseFeed, with at most MaxFeedBytes).
//
// Locations are canonicalised with urlnorm; a relative <loc>, which the protocol forbids but
// generators emit, is resolved against base, while a text line must be an absolute URL (a relative
// line is more likely prose than a path). The cross-host rule compares host names only: http and https,
// and ports, count as the same site, because sites that moved to https keep old sitemaps.
//
// The returned error is for documents that hold no sitemap at all (wrapping ErrNotSitemap, for an
// HTML page or an empty body), a corrupt gzip header, a read error before anything could be read,
// and a base or Limits.Hosts that is no usable URL or host. A document cut by lim, broken part way or
// failing to read part way is not an error: the result keeps the entries read before that point and
// says why in Truncated or Err.
func ParseSitemap(r io.Reader, base *url.URL, lim Limits) (*Sitemap, error) {
	rd, err := newReader(base, lim, MaxSitemapBytes)
	if err != nil {
		return nil, fmt.Errorf("parse sitemap: %w", err)
	}
	name := rd.base.String()
	br, cr, err := open(r, rd.lim.MaxBytes)
	if err != nil {
		return nil, fmt.Errorf("parse sitemap %s: %w", name, err)
	}
	head, err := peek(br)
	if err != nil && len(head) == 0 {
		return nil, fmt.Errorf("parse sitemap %s: %w", name, err)
	}
	sm := &Sitemap{URLs: []Entry{}, Children: []Child{}}
	switch sniff(head) {
	case kindURLSet:
		sm.Format = FormatURLSet
		err = rd.xmlSitemap(br, sm)
	case kindSitemapIndex:
		sm.Format = FormatSitemapIndex
		err = rd.xmlSitemap(br, sm)
	case kindText:
		sm.Format = FormatText
		err = rd.textSitemap(br, cr, sm)
	case kindRSS, kindAtom, kindJSON:
		if consumed := rd.lim.MaxBytes - cr.left; rd.lim.MaxBytes > MaxFeedBytes {
			cr.left = max(MaxFeedBytes-consumed, 0)
		}
		f := rd.feed(br, cr)
		sm.Format, sm.URLs, err = f.Format, f.URLs, f.Err
		sm.Truncated = f.Truncated
		if f.Format == "" {
			if f.Err != nil {
				return nil, fmt.Errorf("parse sitemap %s: %w: %w", name, ErrNotSitemap, f.Err)
			}
			return nil, fmt.Errorf("parse sitemap %s: %w", name, ErrNotSitemap)
		}
	default:
		return nil, fmt.Errorf("parse sitemap %s: %w", name, ErrNotSitemap)
	}
	if cr.over {
		sm.Truncated = true
	}
	if err != nil && !sm.Truncated {
		sm.Err = fmt.Errorf("parse sitemap %s: %w", name, err)
	}
	sm.Dropped, sm.BadDates = rd.dropped, rd.badDates
	return sm, nil
}

// xmlEntry is a <url> or a <sitemap>. Fields match their element in any namespace: generators
// misspell the sitemaps.org namespace often enough that insisting on it would lose real sitemaps.
type xmlEntry struct {
	Loc        string `xml:"loc"`
	LastMod    string `xml:"lastmod"`
	ChangeFreq string `xml:"changefreq"`
	Priority   string `xml:"priority"`
}

// xmlSitemap streams the children of a <urlset> or <sitemapindex> root, decoding one entry element
// at a time. A truncated document ends in a syntax error; ParseSitemap tells that from a broken one
// by the cap.
func (rd *reader) xmlSitemap(br *bufio.Reader, sm *Sitemap) error {
	d := xml.NewDecoder(br)
	d.Strict = false // unknown entities (&nbsp;), unquoted attributes: keep reading
	d.CharsetReader = charsetReader
	index := sm.Format == FormatSitemapIndex
	want := "url"
	if index {
		want = "sitemap"
	}
	depth, read := 0, 0
	for {
		tok, err := d.Token()
		if err != nil {
			if errors.Is(err, io.EOF) {
				if depth > 0 {
					return io.ErrUnexpectedEOF
				}
				return nil
			}
			return err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			depth++
			if depth == 1 {
				continue // the root, recognised by sniff
			}
			if depth != 2 || !strings.EqualFold(t.Name.Local, want) {
				if err := d.Skip(); err != nil {
					return err
				}
				depth--
				continue
			}
			if read >= rd.lim.MaxEntries {
				sm.Truncated = true
				return nil
			}
			read++
			var e xmlEntry
			if err := d.DecodeElement(&e, &t); err != nil {
				return err
			}
			depth--
			u := rd.url(e.Loc)
			if u == "" {
				continue
			}
			if index {
				sm.Children = append(sm.Children, Child{URL: u, LastMod: rd.date(e.LastMod)})
				continue
			}
			cf, _ := ParseChangeFreq(e.ChangeFreq)
			sm.URLs = append(sm.URLs, Entry{URL: u, LastMod: rd.date(e.LastMod), ChangeFreq: cf,
				Priority: priority(e.Priority)})
		case xml.EndElement:
			depth--
			if depth == 0 {
				return afterRoot(d)
			}
		}
	}
}

// afterRoot checks that nothing but comments, processing instructions and white space follows the
// root element. The lenient decoder closes elements that a stray end tag names, so a broken document
// can seem to end early: what follows is then the rest of it, and the break is reported.
func afterRoot(d *xml.Decoder) error {
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		switch t := tok.(type) {
		case xml.StartElement, xml.EndElement:
			line, _ := d.InputPos()
			return fmt.Errorf("broken XML: the root element ends before line %d", line)
		case xml.CharData:
			if len(bytes.TrimSpace(t)) > 0 {
				line, _ := d.InputPos()
				return fmt.Errorf("broken XML: text after the root element on line %d", line)
			}
		}
	}
}

// priority reads a sitemap priority; absent or invalid values get the protocol's default.
func priority(s string) float64 {
	s = strings.TrimSpace(s)
	if s == "" {
		return DefaultPriority
	}
	p, err := strconv.ParseFloat(s, 64)
	if err != nil || !(p >= 0 && p <= 1) {
		return DefaultPriority
	}
	return p
}

// maxLine is the longest text sitemap line read; longer lines cannot hold a URL strata accepts.
const maxLine = 4096

// textSitemap reads one URL per line. Lines that are not http(s) URLs on an allowed host are
// counted in Dropped; blank lines are skipped. When the document is cut at the byte cap, its last
// line, which may be a URL cut short, is dropped.
func (rd *reader) textSitemap(br *bufio.Reader, cr *capReader, sm *Sitemap) error {
	read := 0
	var line []byte
	long := false
	if bom, _ := br.Peek(3); bytes.Equal(bom, []byte("\xef\xbb\xbf")) {
		_, _ = br.Discard(3)
	}
	for {
		chunk, err := br.ReadSlice('\n')
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			if len(line)+len(chunk) <= maxLine {
				line = append(line, chunk...)
			} else {
				long = true
			}
			continue
		case err != nil && !errors.Is(err, io.EOF):
			return err
		}
		complete := err == nil // ended by a newline
		if len(line)+len(chunk) <= maxLine {
			line = append(line, chunk...)
		} else {
			long = true
		}
		if !complete && cr.over {
			return nil // the cut line
		}
		if s := string(bytes.TrimSpace(line)); s != "" || long {
			if read >= rd.lim.MaxEntries {
				sm.Truncated = true
				return nil
			}
			read++
			switch {
			case long || !hasHTTPPrefix(s): // a relative line is no URL in a text sitemap
				rd.dropped++
			default:
				if u := rd.url(s); u != "" {
					sm.URLs = append(sm.URLs, Entry{URL: u, Priority: DefaultPriority})
				}
			}
		}
		if !complete {
			return nil
		}
		line, long = line[:0], false
	}
}
