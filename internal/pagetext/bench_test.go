package pagetext

// Speed of both extractors over the fixtures:
//
//	go test ./internal/pagetext/ -run '^$' -bench . -benchmem -count 5
//
// Each benchmark has a sub-benchmark per fixture and one, "all", that
// extracts all eight fixtures per operation; ns/page is its time divided by
// eight. MB/s counts input HTML bytes.

import (
	"os"
	"path/filepath"
	"testing"
)

func BenchmarkFull(b *testing.B) { benchExtract(b, Full) }

func BenchmarkMain(b *testing.B) { benchExtract(b, Main) }

func benchExtract(b *testing.B, mode Mode) {
	pages := make([][]byte, len(fixtureNames))
	total := 0
	for i, name := range fixtureNames {
		pages[i] = readFixture(b, name)
		total += len(pages[i])
	}
	b.Run("all", func(b *testing.B) {
		b.SetBytes(int64(total))
		b.ReportAllocs()
		for b.Loop() {
			for _, p := range pages {
				if _, err := Extract(p, "https://example.org/", mode); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(pages)), "ns/page")
	})
	for i, name := range fixtureNames {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(pages[i])))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Extract(pages[i], "https://example.org/", mode); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkRealPages extracts the pages of the real-page corpus between 40
// and 80 KB (about the size of a typical real page) in each mode:
//
//	go test ./internal/pagetext/ -run '^$' -bench RealPages -benchmem -count 5
func BenchmarkRealPages(b *testing.B) {
	var pages [][]byte
	total := 0
	for _, pg := range readCorpus(b) {
		p, err := os.ReadFile(filepath.Join("testdata", "realpages", pg.name+".html"))
		if err != nil {
			b.Fatal(err)
		}
		if len(p) >= 40_000 && len(p) <= 80_000 {
			pages = append(pages, p)
			total += len(p)
		}
	}
	for _, mode := range []Mode{Full, Main} {
		b.Run(string(mode), func(b *testing.B) {
			b.SetBytes(int64(total))
			b.ReportAllocs()
			for b.Loop() {
				for _, p := range pages {
					if _, err := Extract(p, "", mode); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(pages)), "ns/page")
			b.ReportMetric(float64(total)/float64(len(pages)), "bytes/page")
		})
	}
}
