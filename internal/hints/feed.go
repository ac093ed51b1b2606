package hints

import (
	"bufio"
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/mmcdole/gofeed"
)

// Feed is what ParseFeed read from one feed.
type Feed struct {
	// Format is FormatRSS, FormatAtom or FormatJSON.
	Format Format `json:"format"`
	// URLs are the items' pages in document order, with the item's updated (else published) date
	// as LastMod. ChangeFreq is empty and Priority is DefaultPriority.
	URLs []Entry `json:"urls"`
	// Truncated reports that reading stopped at a limit; see Sitemap.Truncated.
	Truncated bool `json:"truncated,omitempty"`
	// Err is why the feed could not be read to its end; the entries are those of the items
	// complete before the break.
	Err error `json:"-"`
	// Dropped and BadDates count as in Sitemap; items without a link count as dropped.
	Dropped  int `json:"dropped,omitempty"`
	BadDates int `json:"bad_dates,omitempty"`
}

// ParseFeed reads the RSS (0.9x, 1.0, 2.0), Atom or JSON Feed document served at base from r,
// gzip-compressed or not, through github.com/mmcdole/gofeed. At most lim.MaxBytes (MaxFeedBytes by
// default) are read, which also bounds memory: gofeed needs the whole document.
//
// Broken input is tolerated the way ParseSitemap tolerates it: when gofeed refuses a document that
// was cut at the cap or breaks part way, the items complete before the break are kept (the document
// is cut after the last complete item, its open elements closed, and parsed again) and Err says why.
// The returned error is for documents that are no feed at all (wrapping ErrNotFeed), a corrupt gzip
// header, and a base or Limits.Hosts that is no usable URL or host.
func ParseFeed(r io.Reader, base *url.URL, lim Limits) (*Feed, error) {
	rd, err := newReader(base, lim, MaxFeedBytes)
	if err != nil {
		return nil, fmt.Errorf("parse feed: %w", err)
	}
	name := rd.base.String()
	br, cr, err := open(r, rd.lim.MaxBytes)
	if err != nil {
		return nil, fmt.Errorf("parse feed %s: %w", name, err)
	}
	f := rd.feed(br, cr)
	if f.Format == "" {
		if f.Err != nil {
			return nil, fmt.Errorf("parse feed %s: %w: %w", name, ErrNotFeed, f.Err)
		}
		return nil, fmt.Errorf("parse feed %s: %w", name, ErrNotFeed)
	}
	if f.Err != nil {
		f.Err = fmt.Errorf("parse feed %s: %w", name, f.Err)
	}
	return f, nil
}

// feed reads a capped document and parses it with gofeed. A zero Format means no feed was found;
// Err then holds the reason, unwrapped.
func (rd *reader) feed(br *bufio.Reader, cr *capReader) *Feed {
	f := &Feed{URLs: []Entry{}}
	data, readErr := io.ReadAll(br)
	f.Truncated = cr.over
	parsed, err := gofeed.NewParser().Parse(bytes.NewReader(data))
	if errors.Is(err, gofeed.ErrFeedTypeNotDetected) {
		f.Err = err
		return f
	}
	// gofeed's XML decoder is lenient: a stray end tag closes the channel early and the items after
	// it vanish without an error. A strict pass over the markup finds such a break; the items before
	// it are then read from the document cut after the last complete item, so a broken feed gives
	// the same items whether gofeed noticed the break or not.
	broken := err
	var cut []byte
	if isJSON(data) {
		if err != nil {
			cut = salvageJSON(data)
		}
	} else if c, serr := checkXML(data); serr != nil || err != nil {
		cut = c
		if serr != nil {
			broken = serr
		}
	}
	if broken != nil {
		parsed = nil
		if cut != nil {
			parsed, _ = gofeed.NewParser().Parse(bytes.NewReader(cut))
		}
	}
	switch {
	case readErr != nil:
		f.Err = readErr
	case broken != nil && !f.Truncated:
		f.Err = broken
	}
	f.Format = feedFormat(data)
	if f.Format == FormatJSON && (parsed == nil || parsed.FeedVersion == "") {
		// Any JSON object passes gofeed's detection; a JSON Feed names its version, and one broken
		// before any item cannot be told from other JSON.
		f.Format = ""
	}
	if parsed == nil {
		return f
	}
	for i, it := range parsed.Items {
		if i >= rd.lim.MaxEntries {
			f.Truncated = true
			break
		}
		link := it.Link
		if link == "" && len(it.Links) > 0 {
			link = it.Links[0]
		}
		u := rd.url(link)
		if u == "" {
			continue
		}
		lm := rd.itemDate(it.Updated, it.UpdatedParsed)
		if lm.IsZero() {
			lm = rd.itemDate(it.Published, it.PublishedParsed)
		}
		f.URLs = append(f.URLs, Entry{URL: u, LastMod: lm, Priority: DefaultPriority})
	}
	f.Dropped, f.BadDates = rd.dropped, rd.badDates
	return f
}

// feedFormat names a feed by its first bytes: the root element for XML, JSON Feed for an object.
func feedFormat(data []byte) Format {
	if isJSON(data) {
		return FormatJSON
	}
	switch sniff(data[:min(len(data), sniffLen)]) {
	case kindRSS:
		return FormatRSS
	case kindAtom:
		return FormatAtom
	}
	return ""
}

func isJSON(data []byte) bool {
	h := bytes.TrimLeft(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")), " \t\r\n")
	return len(h) > 0 && h[0] == '{'
}

// itemDate reads an item's date: by ParseStamp when it is a form ParseStamp knows, which keeps its
// precision and zone, else as gofeed parsed it (gofeed knows many more real-world forms), taken as
// exact to the second.
func (rd *reader) itemDate(raw string, parsed *time.Time) Stamp {
	if strings.TrimSpace(raw) == "" {
		return Stamp{}
	}
	if st, err := ParseStamp(raw); err == nil {
		return rd.plausible(st)
	}
	if parsed == nil {
		rd.badDates++
		return Stamp{}
	}
	return rd.plausible(Stamp{At: parsed.UTC(), Precision: PrecisionSecond})
}

// checkXML reads the markup of an RSS or Atom document strictly (end tags must match, the document
// must end) and returns the first break, with the document cut after the last complete <item> or
// <entry> before it and the elements open there closed again; cut is nil when no item was complete.
func checkXML(data []byte) (cut []byte, err error) {
	d := xml.NewDecoder(bytes.NewReader(data))
	d.Strict = false                  // entities such as &nbsp; are the text's business, not a break
	d.CharsetReader = identityCharset // only markup matters here; gofeed decodes the text
	var open, closing []string
	end := int64(-1)
	for {
		tok, terr := d.RawToken()
		if errors.Is(terr, io.EOF) {
			if len(open) == 0 {
				return nil, nil
			}
			err = fmt.Errorf("unexpected end of document inside <%s>", open[len(open)-1])
			break
		}
		if terr != nil {
			err = terr
			break
		}
		if t, ok := tok.(xml.StartElement); ok {
			open = append(open, rawName(t.Name))
			continue
		}
		t, ok := tok.(xml.EndElement)
		if !ok {
			continue
		}
		name := rawName(t.Name)
		if len(open) == 0 || open[len(open)-1] != name {
			line, _ := d.InputPos()
			err = fmt.Errorf("XML syntax error on line %d: unexpected end element </%s>", line, name)
			break
		}
		open = open[:len(open)-1]
		if l := strings.ToLower(t.Name.Local); l == "item" || l == "entry" {
			end, closing = d.InputOffset(), slices.Clone(open)
		}
	}
	if end < 0 {
		return nil, err
	}
	cut = slices.Clip(data[:end])
	for i := len(closing) - 1; i >= 0; i-- {
		cut = append(cut, "</"+closing[i]+">"...)
	}
	return cut, err
}

func rawName(n xml.Name) string {
	if n.Space != "" {
		return n.Space + ":" + n.Local
	}
	return n.Local
}

// salvageJSON cuts a JSON Feed after the last complete object of its top-level "items" array and
// closes the array and the feed.
func salvageJSON(data []byte) []byte {
	type frame struct {
		obj     bool
		wantKey bool
		key     string // the last key read, in an object
	}
	d := json.NewDecoder(bytes.NewReader(data))
	var stack []frame
	cut := int64(-1)
	value := func() { // a complete value was read in the top frame
		if n := len(stack); n > 0 && stack[n-1].obj {
			stack[n-1].wantKey = true
		}
	}
	for {
		tok, err := d.Token()
		if err != nil {
			break
		}
		if n := len(stack); n > 0 && stack[n-1].obj && stack[n-1].wantKey {
			if k, ok := tok.(string); ok {
				stack[n-1].key, stack[n-1].wantKey = k, false
				continue
			}
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, frame{obj: true, wantKey: true})
		case json.Delim('['):
			stack = append(stack, frame{})
		case json.Delim('}'), json.Delim(']'):
			closedObj := len(stack) > 0 && stack[len(stack)-1].obj
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
			if closedObj && len(stack) == 2 && stack[0].obj && stack[0].key == "items" && !stack[1].obj {
				cut = d.InputOffset()
			}
			value()
		default:
			value()
		}
	}
	if cut < 0 {
		return nil
	}
	return append(slices.Clip(data[:cut]), "]}"...)
}
