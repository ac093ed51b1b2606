package warc

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// sitePages writes n pages, in an order unlike the index's, to WARC files in dir of at most max
// bytes each, closes them whole and returns their names.
func sitePages(t *testing.T, dir string, n int, max int64) []string {
	t.Helper()
	w := NewWriter(dir, "p", max, info)
	for i := range n {
		body := fmt.Sprintf("<title>%d</title>%s", i, strings.Repeat("text ", i%7))
		x := exchange(fmt.Sprintf("http://127.0.0.%d:8080/p/%d?q=%d", 1+i%3, (i*37)%n, i), body)
		x.Response = fmt.Appendf(nil, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\nContent-Type: text/html\r\n\r\n", len(body))
		x.Date = day.Add(time.Duration(i) * time.Second)
		e, err := EncodePage(Page{Exchange: x})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.AppendPage(e); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	names, err := Seal(dir)
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// readBackIndex is the index of names in dir by reading every record back, sorted by hand.
func readBackIndex(t *testing.T, dir string, names []string) string {
	t.Helper()
	var lines []string
	for _, n := range names {
		err := IndexFile(filepath.Join(dir, n), n, func(l Line) error {
			lines = append(lines, l.String()+"\n")
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	slices.Sort(lines)
	return strings.Join(lines, "")
}

// scratchLeft lists the files in dir named as archive.CreateTemp names them.
func scratchLeft(t *testing.T, dir string) []string {
	t.Helper()
	left, err := filepath.Glob(filepath.Join(dir, ".strata-tmp-*"))
	if err != nil {
		t.Fatal(err)
	}
	return left
}

// The index is the same whether its lines fit the sort's memory or are sorted in runs on disk and
// merged, and no scratch file outlives the write.
func TestWriteIndexSortsInBoundedMemory(t *testing.T) {
	dir := t.TempDir()
	names := sitePages(t, dir, 150, 8<<10)
	if len(names) < 3 {
		t.Fatalf("%d files, want several", len(names))
	}
	want := readBackIndex(t, dir, names)
	if strings.Count(want, "\n") != 150 {
		t.Fatalf("%d lines, want 150", strings.Count(want, "\n"))
	}
	for _, tc := range []struct {
		name   string
		budget int
	}{
		{"in memory", sortBudget},
		{"a few runs", 8 << 10},
		{"a run a line", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := writeIndex(&b, dir, names, tc.budget); err != nil {
				t.Fatal(err)
			}
			if b.String() != want {
				t.Errorf("index differs from the read-back index:\n%s\nwant\n%s", b.String(), want)
			}
			if left := scratchLeft(t, dir); len(left) > 0 {
				t.Errorf("scratch files left: %v", left)
			}
		})
	}
}

// Kept lines damaged after their trailer was written are not half used: the file is read back,
// and no line is indexed twice.
func TestWriteIndexReadsBackDamagedLines(t *testing.T) {
	dir := t.TempDir()
	names := sitePages(t, dir, 40, 4<<10)
	want := readBackIndex(t, dir, names)
	p := filepath.Join(dir, names[len(names)/2]) + LinesSuffix
	kept, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	second := bytes.IndexByte(kept, '\n') + 1
	if second == 0 || bytes.Count(kept, []byte("\n")) < 3 {
		t.Fatalf("%s holds too few lines to damage one after the first:\n%s", p, kept)
	}
	kept[second] = 0xff // the second line's opening brace
	if err := os.WriteFile(p, kept, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, budget := range []int{sortBudget, 1} {
		var b bytes.Buffer
		if err := writeIndex(&b, dir, names, budget); err != nil {
			t.Fatal(err)
		}
		if b.String() != want {
			t.Errorf("budget %d: index differs from the read-back index:\n%s\nwant\n%s", budget, b.String(), want)
		}
		if left := scratchLeft(t, dir); len(left) > 0 {
			t.Errorf("budget %d: scratch files left: %v", budget, left)
		}
	}
}

// Merge interleaves sorted files by the bytes of their lines, prefixing each line's file name by
// its source's prefix, whatever the number of files, empty ones included.
func TestMerge(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, lines ...string) string {
		p := filepath.Join(dir, name)
		var b strings.Builder
		for _, l := range lines {
			b.WriteString(l + "\n")
		}
		if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	line := func(key, file string) string { return key + ` 20261122043815 {"url":"u","filename":"` + file + `"}` }
	srcs := []Source{
		{Path: write("a", line("a", "1.warc.gz"), line("d", "1.warc.gz"), line("g", "1.warc.gz")), Prefix: "r1/"},
		{Path: write("b"), Prefix: "r2/"},
		{Path: write("c", line("b", "3.warc.gz"), line("e", "3.warc.gz")), Prefix: "r3/"},
		{Path: write("d", line("c", "4.warc.gz"), line("f", "4.warc.gz"), line("h", "4.warc.gz"))},
	}
	var b bytes.Buffer
	if err := Merge(&b, srcs); err != nil {
		t.Fatal(err)
	}
	want := strings.Join([]string{line("a", "r1/1.warc.gz"), line("b", "r3/3.warc.gz"), line("c", "4.warc.gz"),
		line("d", "r1/1.warc.gz"), line("e", "r3/3.warc.gz"), line("f", "4.warc.gz"), line("g", "r1/1.warc.gz"),
		line("h", "4.warc.gz")}, "\n") + "\n"
	if b.String() != want {
		t.Errorf("merged:\n%s\nwant\n%s", b.String(), want)
	}
}
