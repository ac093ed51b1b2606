package warc

import (
	"strconv"
	"strings"
	"testing"
)

// BenchmarkAppendPageSync appends the records of batches of 8 pages (response of a 50 KB body,
// request, metadata) and syncs each batch, as the committer does. The records are encoded once,
// outside the loop: this measures the writer alone. Run it with TMPDIR on tmpfs to leave out the
// disk's flushes.
func BenchmarkAppendPageSync(b *testing.B) {
	const batch = 8
	pages := make([]Encoded, batch)
	for i := range pages {
		x := exchange("http://127.0.0.1:8080/story/"+strconv.Itoa(i), strings.Repeat("<p>an article paragraph</p>\n", 50000/28))
		e, err := EncodePage(Page{Exchange: x, Facts: [][2]string{{"level", "2"}, {"outlink", "http://127.0.0.1:8080/b"}}})
		if err != nil {
			b.Fatal(err)
		}
		pages[i] = e
	}
	w := NewWriter(b.TempDir(), "bench", 1<<30, nil)
	defer w.Close()
	b.ReportAllocs()
	for b.Loop() {
		for _, e := range pages {
			if _, err := w.AppendPage(e); err != nil {
				b.Fatal(err)
			}
		}
		if err := w.Sync(); err != nil {
			b.Fatal(err)
		}
	}
}
