package crawler

// What the crawl stage does with the body of every new HTML page besides fetching and recording it,
// on real-sized pages: the article web's 50 KB pages (internal/testweb.NewArticleWeb) and the real
// documentation pages of pagetext's corpus between 40 and 80 KB.
//
//	go test ./crawler/ -run '^$' -bench 'BenchmarkPage' -benchmem -count 5
//
// read is the text function (one parse: links, then text), digest the change summary of the text,
// warc the page's WARC records (response, request, metadata with its outlinks), all three together
// with the version's page.json. ns/page is per page; MB/s counts HTML bytes.

import (
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/strata-crawler/strata/archive"
	"github.com/strata-crawler/strata/internal/change"
	"github.com/strata-crawler/strata/internal/pagetext"
	"github.com/strata-crawler/strata/internal/testweb"
	"github.com/strata-crawler/strata/internal/warc"
)

// benchPages returns the pages of one kind.
func benchPages(b *testing.B, kind string) [][]byte {
	b.Helper()
	var pages [][]byte
	switch kind {
	case "article":
		lw := testweb.NewArticleWeb(50, 20, 50_000)
		for i := range 8 {
			pages = append(pages, lw.Page("site1-1.test", i))
		}
	case "real":
		dir := filepath.Join("..", "internal", "pagetext", "testdata", "realpages")
		names, err := filepath.Glob(filepath.Join(dir, "*.html"))
		if err != nil {
			b.Fatal(err)
		}
		for _, n := range names {
			p, err := os.ReadFile(n)
			if err != nil {
				b.Fatal(err)
			}
			if len(p) >= 40_000 && len(p) <= 80_000 {
				pages = append(pages, p)
			}
		}
	}
	if len(pages) == 0 {
		b.Fatalf("no %s pages", kind)
	}
	return pages
}

func BenchmarkPage(b *testing.B) {
	read := textExtractor(pagetext.Main, slog.New(slog.DiscardHandler))
	const pageURL = "https://site1-1.test/story/x"
	head := []byte("HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: 50000\r\n\r\n")
	req := []byte("GET /story/x HTTP/1.1\r\nHost: site1-1.test\r\nUser-Agent: strata-bench\r\n\r\n")
	steps := map[string]func(b *testing.B, p []byte){
		"read": func(b *testing.B, p []byte) { read(p, "text/html", pageURL) },
		"digest": func(b *testing.B, p []byte) {
			b.StopTimer()
			t := read(p, "text/html", pageURL)
			b.StartTimer()
			change.Summarize(t.Body)
		},
		"warc": func(b *testing.B, p []byte) {
			b.StopTimer()
			t := read(p, "text/html", pageURL)
			b.StartTimer()
			encodePage(b, p, t, head, req, pageURL)
		},
		"all": func(b *testing.B, p []byte) {
			t := read(p, "text/html", pageURL)
			d := change.Summarize(t.Body)
			encodePage(b, p, t, head, req, pageURL)
			meta := archive.Meta{URL: pageURL, ContentHash: d.Hash, Title: t.Title, TextMode: t.Mode}
			for _, l := range t.Links.Links {
				meta.Links = append(meta.Links, archive.Link{URL: l.URL, NoFollow: l.NoFollow})
			}
			if _, err := json.MarshalIndent(meta, "", "  "); err != nil {
				b.Fatal(err)
			}
		},
	}
	for _, kind := range []string{"article", "real"} {
		pages := benchPages(b, kind)
		total := 0
		for _, p := range pages {
			total += len(p)
		}
		for _, step := range []string{"read", "digest", "warc", "all"} {
			b.Run(kind+"/"+step, func(b *testing.B) {
				b.SetBytes(int64(total))
				b.ReportAllocs()
				for b.Loop() {
					for _, p := range pages {
						steps[step](b, p)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(pages)), "ns/page")
			})
		}
	}
}

// encodePage builds the WARC records of a page as the crawl stage does, the payload digest of the
// captures table included.
func encodePage(b *testing.B, body []byte, t Text, head, req []byte, pageURL string) {
	facts := [][2]string{{"strata-run", "1"}, {"level", "2"}, {"change", "new"}, {"text-mode", t.Mode}, {"title", t.Title}}
	for _, l := range t.Links.Links {
		facts = append(facts, [2]string{"outlink", l.URL})
	}
	_, err := warc.EncodePage(warc.Page{Exchange: warc.Exchange{URL: pageURL, Date: time.Unix(1e9, 0), IP: "127.0.0.1",
		Request: req, Response: head, Body: body}, Facts: facts, PayloadDigest: warc.PayloadDigest(body)})
	if err != nil && !strings.Contains(err.Error(), "Content-Length") {
		b.Fatal(err)
	}
}
