package warc

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

// encodedPages are pages of every kind the crawl writes: a new HTML page, an identical-payload
// revisit, a 304 revisit, a 404 without a request head, a type whose body was not read, a
// robots.txt, each with strata's metadata.
func encodedPages(t *testing.T) []Encoded {
	t.Helper()
	x := exchange("http://127.0.0.1:8080/a?b=2&a=1", "<title>A</title>hello")
	facts := [][2]string{{"level", "2"}, {"outlink", "http://127.0.0.1:8080/b"}}
	first, err := EncodePage(Page{Exchange: x, Facts: facts})
	if err != nil {
		t.Fatal(err)
	}
	later := x
	later.Date = day.Add(24 * time.Hour)
	prior := &Ref{ID: first.ID, URL: x.URL, Date: x.Date}
	same, err := EncodePage(Page{Exchange: later, Prior: prior, PriorDigest: PayloadDigest(x.Body), Facts: facts})
	if err != nil {
		t.Fatal(err)
	}
	nm := later
	nm.Response, nm.Body = []byte("HTTP/1.1 304 Not Modified\r\nEtag: \"v1\"\r\n\r\n"), nil
	notMod, err := EncodePage(Page{Exchange: nm, NotModified: true, Prior: prior})
	if err != nil {
		t.Fatal(err)
	}
	gone := exchange("http://127.0.0.1:8080/gone", "no")
	gone.Request = nil
	gone.Response = []byte("HTTP/1.1 404 Not Found\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\n")
	missing, err := EncodePage(Page{Exchange: gone})
	if err != nil {
		t.Fatal(err)
	}
	pdf := exchange("http://127.0.0.1:8080/f.pdf", "")
	pdf.Response = []byte("HTTP/1.1 200 OK\r\nContent-Type: application/pdf\r\nContent-Length: 9000\r\n\r\n")
	pdf.Truncated = "unspecified"
	unread, err := EncodePage(Page{Exchange: pdf, Facts: facts})
	if err != nil {
		t.Fatal(err)
	}
	rb := exchange("http://127.0.0.1:8080/robots.txt", "User-agent: *\nDisallow: /x\n")
	rb.Response = []byte("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 26\r\n\r\n")
	robots, err := EncodePage(Page{Exchange: rb, Facts: [][2]string{{"robots", "parsed"}}})
	if err != nil {
		t.Fatal(err)
	}
	return []Encoded{first, same, notMod, missing, unread, robots}
}

// The lines a writer keeps are exactly those of reading its files back, in one file or across
// rotations; a file with a record appended without its lines gets none and is read back.
func TestAppendPageLinesAreTheReadBackIndex(t *testing.T) {
	for _, tc := range []struct {
		name  string
		max   int64
		plain bool // one page appended with Append, without its lines
	}{
		{"one file", 0, false},
		{"a file a page", 1, false},
		{"a page without lines", 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			w := NewWriter(dir, "p", tc.max, info)
			for i, e := range encodedPages(t) {
				var err error
				if tc.plain && i == 2 {
					_, err = w.Append(e.Members...)
				} else {
					_, err = w.AppendPage(e)
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if open, _ := filepath.Glob(filepath.Join(dir, "*"+LinesSuffix+OpenSuffix)); len(open) != 0 {
				t.Errorf("unfinished lines left by a writer that closed its files: %v", open)
			}
			names, err := Seal(dir)
			if err != nil {
				t.Fatal(err)
			}
			if tc.max == 1 && len(names) != 6 {
				t.Fatalf("%d files, want one a page: %v", len(names), names)
			}
			indexed := 0
			for _, n := range names {
				p := filepath.Join(dir, n)
				want, err := collect(IndexFile, p, n)
				if err != nil {
					t.Fatal(err)
				}
				err = keptLines(p)
				if tc.plain {
					if err == nil {
						t.Fatalf("%s has lines though a record was appended without its line", n)
					}
					continue
				}
				if err != nil {
					t.Fatalf("%s: no lines kept: %v", n, err)
				}
				got, err := collect(FileLines, p, n)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%s: kept lines\n%v\nread back\n%v", n, got, want)
				}
				indexed += len(want)
			}
			if !tc.plain && indexed != 6 {
				t.Errorf("%d lines, want one for each of the 6 responses and revisits", indexed)
			}
			if err := RemoveLines(dir); err != nil {
				t.Fatal(err)
			}
			left, _ := filepath.Glob(filepath.Join(dir, "*"+LinesSuffix+"*"))
			if len(left) != 0 {
				t.Errorf("lines files left after RemoveLines: %v", left)
			}
		})
	}
}

// A writer killed before closing its file leaves unfinished lines, which the seal does not use and
// RemoveLines removes.
func TestUnfinishedLinesAreNotUsed(t *testing.T) {
	dir := t.TempDir()
	w := NewWriter(dir, "p", 0, info)
	for _, e := range encodedPages(t) {
		if _, err := w.AppendPage(e); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Sync(); err != nil {
		t.Fatal(err)
	}
	// The kill: nothing closed. Seal makes the file final; its lines are not finished.
	names, err := Seal(dir)
	if err != nil || len(names) != 1 {
		t.Fatalf("Seal: %v %v", names, err)
	}
	p := filepath.Join(dir, names[0])
	if err := keptLines(p); err == nil {
		t.Fatal("the lines of a file its writer never closed were taken")
	}
	os.Rename(p+LinesSuffix+OpenSuffix, p+LinesSuffix) // even under the final name: no trailer
	if err := keptLines(p); err == nil {
		t.Fatal("lines without their trailer were taken")
	}
	if err := RemoveLines(dir); err != nil {
		t.Fatal(err)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*"+LinesSuffix+"*")); len(left) != 0 {
		t.Errorf("left: %v", left)
	}
}

// Lines that do not describe the file as it is are not used: the file is read back.
func TestFileLinesReadsBackAFileItsLinesDoNotDescribe(t *testing.T) {
	dir := t.TempDir()
	w := NewWriter(dir, "p", 0, info)
	pages := encodedPages(t)
	for _, e := range pages[:2] {
		if _, err := w.AppendPage(e); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "p-00001.warc.gz")
	want, err := collect(IndexFile, p, "f")
	if err != nil {
		t.Fatal(err)
	}
	// The lines of another file put in their place: a different size.
	w2 := NewWriter(t.TempDir(), "p", 0, info)
	if _, err := w2.AppendPage(pages[0]); err != nil {
		t.Fatal(err)
	}
	if err := w2.Close(); err != nil {
		t.Fatal(err)
	}
	other, err := os.ReadFile(filepath.Join(w2.dir, "p-00001.warc.gz"+LinesSuffix))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p+LinesSuffix, other, 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := collect(FileLines, p, "f")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("lines of another file used:\n%v\nwant\n%v", got, want)
	}
}

// collect gathers the lines read (IndexFile or FileLines) gives for the WARC file at path.
func collect(read func(path, filename string, fn func(Line) error) error, path, filename string) ([]Line, error) {
	var lines []Line
	err := read(path, filename, func(l Line) error { lines = append(lines, l); return nil })
	return lines, err
}

// keptLines reports why FileLines would not use the lines kept beside the WARC file at path, nil
// when it would.
func keptLines(path string) error {
	f, _, err := openLines(path)
	if err == nil {
		f.Close()
	}
	return err
}
