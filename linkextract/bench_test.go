package linkextract

import (
	"fmt"
	"strings"
	"testing"
)

// genPage builds a news-like page of about size bytes: a navigation block, then story teasers
// with headline links, inline relative and external links, some nofollow and some repeated, and a
// footer; roughly one link per 180 bytes, as on real index pages.
func genPage(size int) []byte {
	var b strings.Builder
	b.Grow(size + 4096)
	b.WriteString(`<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Index &mdash; Example News</title>` +
		`<meta name="robots" content="index, follow"><link rel="alternate" type="application/rss+xml" href="/feed.rss" title="Feed">` +
		`<link rel="stylesheet" href="/main.css"></head><body><header><nav><ul>`)
	for i := range 30 {
		fmt.Fprintf(&b, `<li><a class="nav" href="/section-%d/">Section %d</a></li>`, i, i)
	}
	b.WriteString(`</ul></nav></header><main>`)
	for i := 0; b.Len() < size-1024; i++ {
		fmt.Fprintf(&b, `<article class="teaser"><h2><a href="/2024/05/story-%d-headline-words">Story %d: council &amp; city agree on budget</a></h2>`+
			`<p class="meta">By <a rel="author" href="../authors/writer-%d">Writer %d</a> &middot; <time>14 May</time></p>`+
			`<p>The council said on Tuesday that the proposal would go to a vote, with <a href="https://external-%d.example.org/report?id=%d&amp;ref=news" rel="nofollow noopener">a report</a> `+
			`showing costs rising; see also <a href="/section-%d/">the section page</a> and <a href="?page=%d#top">page %d</a>.</p></article>`,
			i, i, i%40, i%40, i%25, i, i%30, i%50, i%50)
	}
	b.WriteString(`</main><footer><a href="/about/">About</a> <a href="mailto:news@example.com">Mail</a> <a href="javascript:void(0)">Top</a></footer></body></html>`)
	return []byte(b.String())
}

func benchmarkExtract(b *testing.B, src []byte) {
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	var links int
	for b.Loop() {
		p, err := Extract("https://news.example.com/index.html", src, Options{})
		if err != nil {
			b.Fatal(err)
		}
		links = len(p.Links)
	}
	b.ReportMetric(float64(links), "links/op")
}

func BenchmarkExtract50KB(b *testing.B) { benchmarkExtract(b, genPage(50<<10)) }
func BenchmarkExtract1MiB(b *testing.B) { benchmarkExtract(b, genPage(1<<20)) }
func BenchmarkExtractNews(b *testing.B) { benchmarkExtract(b, readFixture(b, "news.html")) }
func BenchmarkExtractTrap(b *testing.B) { benchmarkExtract(b, trapPage(50_000)) }
func BenchmarkExtractDeep(b *testing.B) {
	benchmarkExtract(b, []byte(strings.Repeat("<div>", 600)+string(genPage(50<<10))))
}
