package linkextract

// Per-page cost of what the crawler does with every fetched HTML page besides storing it: text
// extraction (internal/pagetext, the default "main" mode) and link extraction, on the generated
// news-like pages of bench_test.go.
//
//	go test ./linkextract/ -run '^$' -bench 'BenchmarkPage' -benchmem -count 3

import (
	"testing"

	"github.com/strata-crawler/strata/internal/pagetext"
)

func benchmarkPage(b *testing.B, src []byte, text, links bool) {
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		if text {
			if _, err := pagetext.Extract(src, "https://news.example.com/index.html", pagetext.Main); err != nil {
				b.Fatal(err)
			}
		}
		if links {
			if _, err := Extract("https://news.example.com/index.html", src, Options{}); err != nil {
				b.Fatal(err)
			}
		}
	}
}

func BenchmarkPage(b *testing.B) {
	for _, size := range []struct {
		name string
		n    int
	}{{"50KB", 50 << 10}, {"1MiB", 1 << 20}} {
		src := genPage(size.n)
		b.Run(size.name+"/text", func(b *testing.B) { benchmarkPage(b, src, true, false) })
		b.Run(size.name+"/text+links", func(b *testing.B) { benchmarkPage(b, src, true, true) })
	}
}
