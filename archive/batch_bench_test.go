package archive

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
)

// BenchmarkStageCommit stages and commits batches of 8 article-sized versions (a 50 KB page, its
// 20 KB text), each in a directory of its own below a shared host directory, as the committer does.
// Run it with TMPDIR on tmpfs to see the CPU and syscalls without the disk's flushes.
func BenchmarkStageCommit(b *testing.B) {
	d, err := Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	body := bytes.Repeat([]byte("<p>an article paragraph of some length</p>\n"), 50000/44)
	text := strings.Repeat("an article paragraph of some length\n", 20000/36)
	const batchSize = 8
	n := 0
	b.ReportAllocs()
	b.SetBytes(int64(batchSize * (len(body) + len(text))))
	for b.Loop() {
		batch := make([]*Pending, 0, batchSize)
		for range batchSize {
			n++
			v := batchVersion("https://a.example/story/" + strconv.Itoa(n))
			v.Body, v.Text = body, text
			p, err := d.Stage(batchRun, v)
			if err != nil {
				b.Fatal(err)
			}
			batch = append(batch, p)
		}
		for _, err := range d.Commit(batch) {
			if err != nil {
				b.Fatal(err)
			}
		}
	}
}
