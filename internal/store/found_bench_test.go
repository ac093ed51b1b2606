package store_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/strata-crawler/strata/internal/store"
)

// BenchmarkPageLinks is the store's part of a crawled page on the article web (issue 19): 20 links,
// 19 of them known, one new; the fetch recorded in a group commit of 32 pages. "discover" writes
// the page's links in a transaction of their own (Discover), as the crawler did; "found" drops
// the known ones with the same read (ToDiscover) and writes the rest in the group commit
// (FetchRecord.Found).
//
//	go test ./internal/store/ -run '^$' -bench BenchmarkPageLinks -benchtime 20000x -benchmem
func BenchmarkPageLinks(b *testing.B) {
	for _, mode := range []string{"discover", "found"} {
		b.Run(mode, func(b *testing.B) {
			ctx := context.Background()
			db := mustOpen(b, filepath.Join(b.TempDir(), "strata.db"), store.Options{})
			page := func(i int) string { return fmt.Sprintf("http://a%d.test/story/%d", i%200, i) }
			// The pages crawled, in the table (ids 1..b.N) and seen by this handle.
			for i := 0; i < b.N; i += 1000 {
				var batch []store.NewURL
				for k := i; k < min(i+1000, b.N); k++ {
					batch = append(batch, store.NewURL{URL: page(k), Host: fmt.Sprintf("a%d.test", k%200), FrMax: 1})
				}
				if _, err := db.Discover(ctx, batch); err != nil {
					b.Fatal(err)
				}
			}
			links := func(i int) []store.NewURL {
				var l []store.NewURL
				for k := 1; k < 20; k++ {
					l = append(l, store.NewURL{URL: page((i + k*200) % b.N), Host: fmt.Sprintf("a%d.test", i%200), FrMax: 1, ParentID: int64(i + 1)})
				}
				return append(l, store.NewURL{URL: page(i) + "/new", Host: fmt.Sprintf("a%d.test", i%200), FrMax: 1, ParentID: int64(i + 1)})
			}
			const batch = 32
			var recs []store.FetchRecord
			at := time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				rec := store.FetchRecord{URLID: int64(i + 1), FetchedAt: at, Status: 200, Size: 50000, ContentType: "text/html",
					ContentHash: "h", Magnitude: 0, NextFr: 1, Origin: "http://" + fmt.Sprintf("a%d.test", i%200), Domain: fmt.Sprintf("a%d.test", i%200)}
				switch mode {
				case "discover":
					if added, err := db.Discover(ctx, links(i)); err != nil || len(added) != 1 {
						b.Fatalf("Discover = %d added, %v; want 1", len(added), err)
					}
				case "found":
					write, err := db.ToDiscover(ctx, links(i))
					if err != nil {
						b.Fatal(err)
					}
					rec.Found = &store.Found{URLs: write}
				}
				recs = append(recs, rec)
				if len(recs) == batch || i == b.N-1 {
					if err := db.RecordFetches(ctx, recs); err != nil {
						b.Fatal(err)
					}
					for _, r := range recs {
						if r.Found != nil && len(r.Found.Added) != 1 {
							b.Fatalf("Found.Added = %v; want the one new URL", r.Found.Added)
						}
					}
					recs = recs[:0]
				}
			}
		})
	}
}
