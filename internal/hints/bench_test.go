package hints_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/strata-crawler/strata/internal/hints"
)

// BenchmarkParseSitemap parses a full 50,000-URL sitemap (the protocol's limit), as XML, gzipped XML
// and text.
func BenchmarkParseSitemap(b *testing.B) {
	xmlDoc := []byte(urlset(hints.MaxEntries))
	var text strings.Builder
	for _, e := range strings.Split(string(xmlDoc), "<loc>")[1:] {
		loc, _, _ := strings.Cut(e, "</loc>")
		text.WriteString(loc + "\n")
	}
	docs := []struct {
		name string
		src  []byte
	}{
		{"xml", xmlDoc},
		{"gzip", mustGzip(b, xmlDoc)},
		{"text", []byte(text.String())},
	}
	base := mustURL(b, "https://example.com/sitemap.xml")
	for _, d := range docs {
		b.Run(d.name, func(b *testing.B) {
			b.SetBytes(int64(len(d.src)))
			b.ReportAllocs()
			for b.Loop() {
				sm, err := hints.ParseSitemap(bytes.NewReader(d.src), base, hints.Limits{SiteNow: siteNow})
				if err != nil || len(sm.URLs) != hints.MaxEntries || sm.Err != nil {
					b.Fatalf("%d URLs, %v, %v", len(sm.URLs), err, sm.Err)
				}
			}
		})
	}
}

// BenchmarkParseFeed parses an RSS feed of 1,000 items.
func BenchmarkParseFeed(b *testing.B) {
	src := []byte(rss(1000))
	base := mustURL(b, "https://example.com/feed")
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		f, err := hints.ParseFeed(bytes.NewReader(src), base, hints.Limits{SiteNow: siteNow})
		if err != nil || len(f.URLs) != 1000 {
			b.Fatalf("%v, %v", f, err)
		}
	}
}
