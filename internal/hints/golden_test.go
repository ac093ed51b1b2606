package hints_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"flag"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/strata-crawler/strata/internal/hints"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// siteNow is the fixtures' "now" on the site's clock: dates after it plus a day are impossible.
var siteNow = time.Date(2024, 6, 1, 0, 0, 0, 0, time.UTC)

// goldenResult is what a golden file holds: the parse result, and the errors as text.
type goldenResult struct {
	Result any    `json:"result,omitempty"`
	Err    string `json:"err,omitempty"`
	Fatal  string `json:"fatal,omitempty"`
}

// TestGolden parses every fixture and compares the result with testdata/golden; run with -update
// after a deliberate change and review the diff.
func TestGolden(t *testing.T) {
	tests := []struct {
		name   string // golden file name
		file   string // fixture
		url    string // the document's URL
		feed   bool   // ParseFeed rather than ParseSitemap
		gzip   bool   // compress the fixture first
		golden string // golden file to compare with, if not name
	}{
		{name: "urlset", file: "sitemap.xml", url: "https://example.com/sitemap.xml"},
		{name: "urlset-gzip", file: "sitemap.xml", url: "https://example.com/sitemap.xml", gzip: true, golden: "urlset"},
		{name: "urlset-gz-name-plain-body", file: "sitemap.xml", url: "https://example.com/sitemap.xml.gz", golden: "urlset"},
		{name: "index", file: "index.xml", url: "https://example.com/sitemap_index.xml"},
		{name: "broken", file: "broken.xml", url: "https://example.com/sitemap.xml"},
		{name: "latin1", file: "latin1.xml", url: "https://example.com/sitemap.xml"},
		{name: "text", file: "sitemap.txt", url: "https://example.com/sitemap.txt"},
		{name: "text-gzip", file: "sitemap.txt", url: "https://example.com/sitemap.txt", gzip: true, golden: "text"},
		{name: "not-sitemap", file: "notsitemap.html", url: "https://example.com/sitemap.xml"},
		{name: "rss-as-sitemap", file: "rss2.xml", url: "https://example.com/feed"},
		{name: "rss2", file: "rss2.xml", url: "https://example.com/feed", feed: true},
		{name: "rss2-gzip", file: "rss2.xml", url: "https://example.com/feed", feed: true, gzip: true, golden: "rss2"},
		{name: "rss1", file: "rss1.rdf", url: "https://example.com/index.rdf", feed: true},
		{name: "atom", file: "atom.xml", url: "https://example.com/atom.xml", feed: true},
		{name: "json", file: "feed.json", url: "https://example.com/feed.json", feed: true},
		{name: "broken-rss", file: "broken-rss.xml", url: "https://example.com/feed", feed: true},
		{name: "broken-atom", file: "broken-atom.xml", url: "https://example.com/atom.xml", feed: true},
		{name: "broken-json", file: "broken.json", url: "https://example.com/feed.json", feed: true},
		{name: "html-as-feed", file: "notsitemap.html", url: "https://example.com/feed", feed: true},
		{name: "sitemap-as-feed", file: "sitemap.xml", url: "https://example.com/feed", feed: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := mustRead(t, filepath.Join("testdata", tt.file))
			if tt.gzip {
				src = mustGzip(t, src)
			}
			base := mustURL(t, tt.url)
			lim := hints.Limits{SiteNow: siteNow}
			var g goldenResult
			if tt.feed {
				f, err := hints.ParseFeed(bytes.NewReader(src), base, lim)
				g = result(f, err, func() error { return f.Err })
			} else {
				sm, err := hints.ParseSitemap(bytes.NewReader(src), base, lim)
				g = result(sm, err, func() error { return sm.Err })
			}
			got, err := json.MarshalIndent(g, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			name := tt.golden
			if name == "" {
				name = tt.name
			}
			path := filepath.Join("testdata", "golden", name+".json")
			if *update && tt.golden == "" {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if want := mustRead(t, path); !bytes.Equal(got, want) {
				t.Errorf("%s differs from %s (run with -update and review the diff):\n%s", tt.file, path, got)
			}
		})
	}
}

// result packs a parse result for a golden file; errFn is called only when res is non-nil.
func result[T any](res *T, err error, errFn func() error) goldenResult {
	if err != nil {
		return goldenResult{Fatal: err.Error()}
	}
	g := goldenResult{Result: res}
	if e := errFn(); e != nil {
		g.Err = e.Error()
	}
	return g
}

func mustRead(tb testing.TB, path string) []byte {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

func mustGzip(tb testing.TB, b []byte) []byte {
	tb.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		tb.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

func mustURL(tb testing.TB, s string) *url.URL {
	tb.Helper()
	u, err := url.Parse(s)
	if err != nil {
		tb.Fatal(err)
	}
	return u
}
