package store_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/strata-crawler/strata/internal/store"
)

// BenchmarkRecordFetches records batches of 8 fetches of new pages, each with its capture and its
// origin, as the committer does on the article web: one transaction per batch.
func BenchmarkRecordFetches(b *testing.B) {
	ctx := context.Background()
	db := mustOpen(b, filepath.Join(b.TempDir(), "bench.db"), store.Options{})
	at := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	run, err := db.BeginRun(ctx, at, 0)
	if err != nil {
		b.Fatal(err)
	}
	const urls, batch = 4000, 8
	ids := make([]int64, urls)
	for i := range ids {
		host := fmt.Sprintf("site%d.test", i%200)
		ids[i], _, err = db.Enqueue(ctx, store.NewURL{URL: fmt.Sprintf("http://%s/story/%d", host, i), Host: host, FrMax: 4}, at)
		if err != nil {
			b.Fatal(err)
		}
	}
	recs := make([]store.FetchRecord, batch)
	n := 0
	b.ReportAllocs()
	for b.Loop() {
		for i := range recs {
			k := n % urls
			n++
			host := fmt.Sprintf("site%d.test", k%200)
			recs[i] = store.FetchRecord{URLID: ids[k], RunID: run, FetchedAt: at.Add(time.Duration(n) * time.Millisecond),
				Status: 200, Size: 50000, ContentType: "text/html", ContentHash: fmt.Sprintf("%064x", n),
				Digest: make([]byte, 40), TextMode: "main", Changed: true, Magnitude: 1, Duration: time.Millisecond,
				ArchivePath: fmt.Sprintf("2026-11-26T120000Z/%s/story/%d", host, k), Origin: "http://" + host, Domain: host,
				Capture: &store.Capture{Request: []byte("GET / HTTP/1.1\r\n\r\n"), Response: []byte("HTTP/1.1 200 OK\r\n\r\n"),
					IP: "127.0.0.1", PayloadDigest: "sha1:AAAA", WARCID: "<urn:uuid:x>", WARCType: "response"},
				NextFr: 4, ETag: `"e"`}
		}
		if err := db.RecordFetches(ctx, recs); err != nil {
			b.Fatal(err)
		}
	}
}
