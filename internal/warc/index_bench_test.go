package warc

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"testing"
	"time"
)

// BenchmarkWriteIndex sorts the index of a run the size of a 5-minute crawl of the 1 M-URL web
// (400,000 lines in 4 WARC files' kept lines) with the seal's memory budget, which spills sorted
// runs to scratch files, and with all of it in memory, as the seal did before. The WARC files are
// stand-ins: their kept lines describe them, so they are never read. peak-heap-MB is the most the
// heap's objects took (live and not yet collected) in samples every 5 ms.
//
//	go test ./internal/warc -run '^$' -bench WriteIndex -benchtime 3x
func BenchmarkWriteIndex(b *testing.B) {
	const files, perFile = 4, 100_000
	dir := b.TempDir()
	var names []string
	for i := range files {
		name := fmt.Sprintf("bench-%05d.warc.gz", i+1)
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("a stand-in"), 0o644); err != nil {
			b.Fatal(err)
		}
		lf, err := createLines(p + LinesSuffix + OpenSuffix)
		if err != nil {
			b.Fatal(err)
		}
		for j := range perFile {
			// Hosts and paths in the crawl's order, not the index's.
			u := fmt.Sprintf("http://127.0.%d.%d:8080/site/page-%d.html", j%40, (j*7)%250, (j*37+i)%perFile)
			l := Line{Key: SURT(u), Timestamp: "20261126170857", URL: u, Mime: "text/html", Status: "200",
				Digest: "NG7LDVXAV2ZC7YRP2W4JFS2HVDJNMF2Q", Length: 2100 + int64(j%900), Offset: int64(j) * 2500}
			if err := lf.add(l); err != nil {
				b.Fatal(err)
			}
		}
		if err := lf.finish(p, int64(len("a stand-in"))); err != nil {
			b.Fatal(err)
		}
		names = append(names, name)
	}
	for _, bc := range []struct {
		name   string
		budget int
	}{{"bounded", sortBudget}, {"in-memory", 1 << 40}} {
		b.Run(bc.name, func(b *testing.B) {
			var peak uint64
			for b.Loop() {
				runtime.GC()
				stop := sampleHeap(&peak)
				err := writeIndex(io.Discard, dir, names, bc.budget)
				stop()
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*files*perFile), "ns/line")
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
		})
	}
}

// sampleHeap keeps in peak the most the heap's objects take until stop is called.
func sampleHeap(peak *uint64) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	go func() {
		defer close(finished)
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(sample)
			*peak = max(*peak, sample[0].Value.Uint64())
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() { close(done); <-finished }
}
