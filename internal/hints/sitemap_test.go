package hints_test

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/strata-crawler/strata/internal/hints"
)

const (
	urlsetOpen  = `<?xml version="1.0" encoding="UTF-8"?>` + "\n" + `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">` + "\n"
	urlsetClose = "</urlset>\n"
)

// urlset returns a sitemap of n entries https://example.com/p0 … p(n-1).
func urlset(n int) string {
	var b strings.Builder
	b.WriteString(urlsetOpen)
	for i := range n {
		fmt.Fprintf(&b, "<url><loc>https://example.com/p%d</loc><lastmod>2024-05-01T10:00:00Z</lastmod></url>\n", i)
	}
	b.WriteString(urlsetClose)
	return b.String()
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// repeatReader serves unit n times without holding more than unit in memory.
type repeatReader struct {
	unit []byte
	n    int
	off  int
}

func (r *repeatReader) Read(p []byte) (int, error) {
	total := 0
	for len(p) > 0 && r.n > 0 {
		c := copy(p, r.unit[r.off:])
		p, total, r.off = p[c:], total+c, r.off+c
		if r.off == len(r.unit) {
			r.off, r.n = 0, r.n-1
		}
	}
	if total == 0 && r.n == 0 {
		return 0, io.EOF
	}
	return total, nil
}

func mustParseSitemap(tb testing.TB, r io.Reader, base string, lim hints.Limits) *hints.Sitemap {
	tb.Helper()
	sm, err := hints.ParseSitemap(r, mustURL(tb, base), lim)
	if err != nil {
		tb.Fatalf("ParseSitemap: %v", err)
	}
	return sm
}

func TestParseSitemapByteCap(t *testing.T) {
	doc := urlset(10)
	entry := strings.Index(doc, "</url>\n") + len("</url>\n") - len(urlsetOpen) // bytes per entry
	tests := []struct {
		name      string
		max       int64
		wantURLs  int
		truncated bool
	}{
		{"exactly the document", int64(len(doc)), 10, false},
		{"one byte short", int64(len(doc) - 1), 10, true}, // the cut falls in </urlset>
		{"cut inside the fourth entry", int64(len(urlsetOpen) + 3*entry + entry/2), 3, true},
		{"cut right after the third entry", int64(len(urlsetOpen) + 3*entry), 3, true},
		{"cut before the first entry", int64(len(urlsetOpen)), 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sm := mustParseSitemap(t, strings.NewReader(doc), "https://example.com/sitemap.xml",
				hints.Limits{MaxBytes: tt.max, SiteNow: siteNow})
			if len(sm.URLs) != tt.wantURLs || sm.Truncated != tt.truncated || sm.Err != nil {
				t.Errorf("%d URLs, Truncated %v, Err %v; want %d, %v, nil", len(sm.URLs), sm.Truncated, sm.Err,
					tt.wantURLs, tt.truncated)
			}
			for i, e := range sm.URLs {
				if want := fmt.Sprintf("https://example.com/p%d", i); e.URL != want {
					t.Errorf("URLs[%d] = %s, want %s", i, e.URL, want)
				}
			}
		})
	}
}

func TestParseSitemapEntryCap(t *testing.T) {
	for _, tt := range []struct {
		n, max    int
		want      int
		truncated bool
	}{
		{n: 3, max: 3, want: 3, truncated: false},
		{n: 5, max: 3, want: 3, truncated: true},
		{n: 5, max: 0, want: 5, truncated: false}, // 0 = the protocol's 50,000
	} {
		t.Run(fmt.Sprintf("%d entries cap %d", tt.n, tt.max), func(t *testing.T) {
			sm := mustParseSitemap(t, strings.NewReader(urlset(tt.n)), "https://example.com/s.xml",
				hints.Limits{MaxEntries: tt.max, SiteNow: siteNow})
			if len(sm.URLs) != tt.want || sm.Truncated != tt.truncated {
				t.Errorf("%d URLs, Truncated %v; want %d, %v", len(sm.URLs), sm.Truncated, tt.want, tt.truncated)
			}
		})
	}
	t.Run("text sitemap", func(t *testing.T) {
		src := "https://example.com/a\nhttps://example.com/b\nhttps://example.com/c\n"
		sm := mustParseSitemap(t, strings.NewReader(src), "https://example.com/s.txt", hints.Limits{MaxEntries: 2})
		if len(sm.URLs) != 2 || !sm.Truncated {
			t.Errorf("%d URLs, Truncated %v; want 2, true", len(sm.URLs), sm.Truncated)
		}
	})
	t.Run("index", func(t *testing.T) {
		src := `<sitemapindex><sitemap><loc>/a.xml</loc></sitemap><sitemap><loc>/b.xml</loc></sitemap></sitemapindex>`
		sm := mustParseSitemap(t, strings.NewReader(src), "https://example.com/i.xml", hints.Limits{MaxEntries: 1})
		if len(sm.Children) != 1 || !sm.Truncated || sm.Children[0].URL != "https://example.com/a.xml" {
			t.Errorf("Children %v, Truncated %v; want [a.xml], true", sm.Children, sm.Truncated)
		}
	})
}

// TestParseSitemapProtocolCap streams a sitemap of more than 50 MB through the default limits: it is
// cut at the protocol's 50 MB, keeps the entries before the cut and reads little past it.
func TestParseSitemapProtocolCap(t *testing.T) {
	skipUnderRace(t, "parses 50 MB in one goroutine")
	// Entries padded to about 1.1 kB, so the byte cap comes before the 50,000-entry cap.
	unit := []byte("<url><loc>https://example.com/page</loc><!--" + strings.Repeat("x", 1050) + "--></url>\n")
	const n = 60 * 1024 * 1024 / 1100
	src := &countingReader{r: io.MultiReader(strings.NewReader(urlsetOpen), &repeatReader{unit: unit, n: n},
		strings.NewReader(urlsetClose))}
	sm := mustParseSitemap(t, src, "https://example.com/sitemap.xml", hints.Limits{})
	if !sm.Truncated || sm.Err != nil {
		t.Fatalf("Truncated %v, Err %v; want true, nil", sm.Truncated, sm.Err)
	}
	complete := (hints.MaxSitemapBytes - len(urlsetOpen)) / len(unit)
	if len(sm.URLs) != complete {
		t.Errorf("%d URLs, want the %d complete before the cap", len(sm.URLs), complete)
	}
	// The bufio buffers ahead of the cap hold a few kilobytes; reading the whole 60 MB would be a bug.
	if max := int64(hints.MaxSitemapBytes + 64<<10); src.n > max {
		t.Errorf("read %d bytes of the source, want at most %d", src.n, max)
	}
}

// TestParseSitemapGzipBomb feeds a small gzip stream that inflates far beyond the cap.
func TestParseSitemapGzipBomb(t *testing.T) {
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(zw, urlset(2)[:len(urlset(2))-len(urlsetClose)]); err != nil {
		t.Fatal(err)
	}
	const inflated = 16 << 20
	if _, err := io.Copy(zw, &repeatReader{unit: bytes.Repeat([]byte{' '}, 1<<16), n: inflated >> 16}); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	compressed := buf.Len()
	src := &countingReader{r: &buf}
	sm := mustParseSitemap(t, src, "https://example.com/sitemap.xml.gz", hints.Limits{MaxBytes: 1 << 20, SiteNow: siteNow})
	if len(sm.URLs) != 2 || !sm.Truncated {
		t.Errorf("%d URLs, Truncated %v; want 2, true", len(sm.URLs), sm.Truncated)
	}
	// The 16 MB bomb is about 16 kB compressed; 1 MB inflated needs about 1 kB of it, which the
	// gzip reader's 4 kB buffer reads in one go. Inflating it all would read every byte.
	if src.n > 8<<10 || src.n >= int64(compressed) {
		t.Errorf("read %d of %d compressed bytes; the cap should stop inflating early", src.n, compressed)
	}
}

func TestParseSitemapHosts(t *testing.T) {
	// A sitemap on a CDN host, declared by example.com's robots.txt, lists example.com's pages.
	src := `<urlset><url><loc>https://example.com/a</loc></url><url><loc>https://cdn.example.net/b</loc></url>` +
		`<url><loc>https://www.example.com/c</loc></url><url><loc>https://EXAMPLE.com:8443/d</loc></url></urlset>`
	tests := []struct {
		name  string
		hosts []string
		want  []string
	}{
		{"own host only", nil, []string{"https://cdn.example.net/b"}},
		{"declared by example.com", []string{"example.com"},
			[]string{"https://example.com/a", "https://cdn.example.net/b", "https://example.com:8443/d"}},
		{"host names are normalised", []string{" Example.COM. "},
			[]string{"https://example.com/a", "https://cdn.example.net/b", "https://example.com:8443/d"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sm := mustParseSitemap(t, strings.NewReader(src), "https://cdn.example.net/sitemaps/example.xml",
				hints.Limits{Hosts: tt.hosts})
			got := urls(sm.URLs)
			if strings.Join(got, " ") != strings.Join(tt.want, " ") {
				t.Errorf("URLs %q, want %q", got, tt.want)
			}
			if sm.Dropped != 4-len(tt.want) {
				t.Errorf("Dropped %d, want %d", sm.Dropped, 4-len(tt.want))
			}
		})
	}
}

func urls(es []hints.Entry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.URL
	}
	return out
}

func TestParseSitemapDatePlausibility(t *testing.T) {
	now := time.Date(2024, 6, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		lastmod string
		keep    bool
	}{
		{"2024-06-01T11:00:00Z", true},
		{"2024-06-02T11:00:00Z", true},  // within a day of the site's now
		{"2024-06-02T13:00:00Z", false}, // more than a day ahead
		{"2024-06-02", true},            // could still be today somewhere
		{"2024-06-04", false},
		{"1991-01-01T00:00:00Z", true},
		{"1990-12-31T23:59:59Z", false},
		{"1970-01-01T00:00:00Z", false},
		{"0001-01-01T00:00:00Z", false},
		{"9999-12-31T23:59:59Z", false},
	}
	for _, tt := range tests {
		t.Run(tt.lastmod, func(t *testing.T) {
			src := urlsetOpen + "<url><loc>https://example.com/</loc><lastmod>" + tt.lastmod + "</lastmod></url>" + urlsetClose
			sm := mustParseSitemap(t, strings.NewReader(src), "https://example.com/s.xml", hints.Limits{SiteNow: now})
			if len(sm.URLs) != 1 {
				t.Fatalf("%d URLs, want the entry kept whatever its date", len(sm.URLs))
			}
			if kept := !sm.URLs[0].LastMod.IsZero(); kept != tt.keep || sm.BadDates != map[bool]int{true: 0, false: 1}[tt.keep] {
				t.Errorf("date kept %v (BadDates %d), want %v", kept, sm.BadDates, tt.keep)
			}
		})
	}
}

func TestParseSitemapTextCut(t *testing.T) {
	src := "https://example.com/one\nhttps://example.com/two\nhttps://example.com/three-is-long\n"
	cut := int64(strings.Index(src, "three") + 2) // "https://example.com/th"
	sm := mustParseSitemap(t, strings.NewReader(src), "https://example.com/s.txt", hints.Limits{MaxBytes: cut})
	if got := urls(sm.URLs); len(got) != 2 || !sm.Truncated {
		t.Errorf("URLs %q, Truncated %v; want one and two (the cut line dropped), true", got, sm.Truncated)
	}
	long := "https://example.com/" + strings.Repeat("a", 5000) + "\nhttps://example.com/after\n"
	sm = mustParseSitemap(t, strings.NewReader(long), "https://example.com/s.txt", hints.Limits{})
	if got := urls(sm.URLs); len(got) != 1 || got[0] != "https://example.com/after" || sm.Dropped != 1 {
		t.Errorf("URLs %q, Dropped %d; want the over-long line dropped and the next one read", got, sm.Dropped)
	}
}

// failingReader returns its data, then err.
type failingReader struct {
	data []byte
	err  error
}

func (f *failingReader) Read(p []byte) (int, error) {
	if len(f.data) == 0 {
		return 0, f.err
	}
	n := copy(p, f.data)
	f.data = f.data[n:]
	return n, nil
}

func TestParseSitemapReadError(t *testing.T) {
	errNet := errors.New("connection reset")
	doc := urlset(3)
	cut := strings.Index(doc, "<url><loc>https://example.com/p2")
	sm := mustParseSitemap(t, &failingReader{data: []byte(doc[:cut]), err: errNet}, "https://example.com/s.xml",
		hints.Limits{SiteNow: siteNow})
	if len(sm.URLs) != 2 || !errors.Is(sm.Err, errNet) || sm.Truncated {
		t.Errorf("%d URLs, Err %v, Truncated %v; want 2, the read error, false", len(sm.URLs), sm.Err, sm.Truncated)
	}
	if _, err := hints.ParseSitemap(&failingReader{err: errNet}, mustURL(t, "https://example.com/s.xml"),
		hints.Limits{}); !errors.Is(err, errNet) {
		t.Errorf("error before any byte: %v, want the read error", err)
	}
}

func TestParseSitemapRefuses(t *testing.T) {
	base := mustURL(t, "https://example.com/sitemap.xml")
	tests := []struct {
		name string
		src  string
		base string
		lim  hints.Limits
		is   error
	}{
		{name: "empty", src: "", is: hints.ErrNotSitemap},
		{name: "white space", src: " \n\t ", is: hints.ErrNotSitemap},
		{name: "html", src: "<!DOCTYPE html><html><body>404</body></html>", is: hints.ErrNotSitemap},
		{name: "other xml", src: `<?xml version="1.0"?><kml><Document/></kml>`, is: hints.ErrNotSitemap},
		{name: "plain text", src: "Not found\n", is: hints.ErrNotSitemap},
		{name: "json not a feed", src: `{"error": "not found"}`, is: hints.ErrNotSitemap},
		{name: "binary", src: "\x00\x01\x02\xff", is: hints.ErrNotSitemap},
		{name: "corrupt gzip", src: "\x1f\x8b\x00garbage"},
		{name: "bad allowed host", src: urlset(1), lim: hints.Limits{Hosts: []string{"a b"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sm, err := hints.ParseSitemap(strings.NewReader(tt.src), base, tt.lim)
			if err == nil || sm != nil {
				t.Fatalf("ParseSitemap = %+v, %v; want an error", sm, err)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("error %v does not wrap %v", err, tt.is)
			}
			if !strings.Contains(err.Error(), "parse sitemap") {
				t.Errorf("error %q does not name the operation", err)
			}
		})
	}
	if _, err := hints.ParseSitemap(strings.NewReader(urlset(1)), nil, hints.Limits{}); err == nil {
		t.Error("nil base: no error")
	}
}

// TestParseSitemapFeedCap checks that a feed offered as a sitemap gets the feed's byte cap.
func TestParseSitemapFeedCap(t *testing.T) {
	skipUnderRace(t, "parses a 10 MB feed in one goroutine")
	item := []byte("<item><link>https://example.com/n</link><description>" + strings.Repeat("y", 1000) + "</description></item>\n")
	n := hints.MaxFeedBytes/len(item) + 100
	src := io.MultiReader(strings.NewReader(`<rss version="2.0"><channel><title>t</title>`+"\n"),
		&repeatReader{unit: item, n: n}, strings.NewReader("</channel></rss>\n"))
	sm := mustParseSitemap(t, src, "https://example.com/feed.xml", hints.Limits{SiteNow: siteNow})
	if sm.Format != hints.FormatRSS || !sm.Truncated {
		t.Fatalf("Format %q, Truncated %v; want rss, true", sm.Format, sm.Truncated)
	}
	if len(sm.URLs) == 0 || len(sm.URLs) >= n || len(sm.URLs) > hints.MaxFeedBytes/len(item) {
		t.Errorf("%d URLs of %d items; want the items within MaxFeedBytes", len(sm.URLs), n)
	}
}

// skipUnderRace skips a test that reads tens of megabytes in a single goroutine when the race
// detector is on: it has no data race to find there and makes the parse twenty-five times slower
// (50 s instead of 2 s for the 50 MB sitemap on the project's 2-core machine). Plain `go test` runs it.
func skipUnderRace(t *testing.T, why string) {
	t.Helper()
	if raceEnabled {
		t.Skipf("skipped under -race: %s; run without -race", why)
	}
}
