package warc

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	kgzip "github.com/klauspost/compress/gzip"
	gowarc "github.com/nlnwa/gowarc/v3"
)

var day = time.Date(2026, 11, 22, 4, 38, 15, 0, time.UTC)

func exchange(url, body string) Exchange {
	return Exchange{
		URL: url, Date: day, IP: "127.0.0.1",
		Request:  []byte("GET /a HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nUser-Agent: strata-test\r\n\r\n"),
		Response: []byte("HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 31\r\nContent-Type: text/html; charset=utf-8\r\n\r\n"),
		Body:     []byte(body),
	}
}

func mustRecords(t *testing.T) []Record {
	t.Helper()
	x := exchange("http://127.0.0.1:8080/a", "<title>A</title>hello")
	resp, err := Response(x)
	if err != nil {
		t.Fatal(err)
	}
	req, err := Request(x, resp.ID())
	if err != nil {
		t.Fatal(err)
	}
	meta, err := Metadata(x.URL, x.Date, resp.ID(), [][2]string{{"level", "2"}, {"outlink", "http://127.0.0.1:8080/b"}})
	if err != nil {
		t.Fatal(err)
	}
	later := x
	later.Date = day.Add(24 * time.Hour)
	same, err := Revisit(later, ProfileIdentical, Ref{ID: resp.ID(), URL: x.URL, Date: x.Date})
	if err != nil {
		t.Fatal(err)
	}
	nm := later
	nm.Response = []byte("HTTP/1.1 304 Not Modified\r\nEtag: \"v1\"\r\n\r\n")
	nm.Body = nil
	notMod, err := Revisit(nm, ProfileNotModified, Ref{ID: resp.ID(), URL: x.URL, Date: x.Date})
	if err != nil {
		t.Fatal(err)
	}
	res, err := Resource("http://127.0.0.1:8080/old", day, "text/html", []byte("old"))
	if err != nil {
		t.Fatal(err)
	}
	return []Record{resp, req, meta, same, notMod, res}
}

func info(name string) (Record, error) {
	return Warcinfo(name, day, [][2]string{{"software", "strata test"}, {"format", "WARC File Format 1.1"}})
}

func readAll(t *testing.T, path string) []gowarc.Record {
	t.Helper()
	r, err := OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var out []gowarc.Record
	for rec, err := range r.Records() {
		if err != nil {
			t.Fatalf("%s: record at %d: %v", path, rec.Offset, err)
		}
		if _, err := rec.WarcRecord.ValidateDigest(); err != nil {
			t.Fatalf("%s: record at %d: digest: %v", path, rec.Offset, err)
		}
		out = append(out, rec)
	}
	return out
}

func TestWriteAndReadBackWithValidation(t *testing.T) {
	dir := t.TempDir()
	w := NewWriter(dir, "strata-test", 0, info)
	locs, err := w.Write(mustRecords(t)...)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	recs := readAll(t, filepath.Join(dir, "strata-test-00001.warc.gz"))
	wantTypes := []string{"warcinfo", "response", "request", "metadata", "revisit", "revisit", "resource"}
	if len(recs) != len(wantTypes) {
		t.Fatalf("read %d records, want %d", len(recs), len(wantTypes))
	}
	for i, r := range recs {
		if got := r.WarcRecord.Type().String(); got != wantTypes[i] {
			t.Errorf("record %d is %s, want %s", i, got, wantTypes[i])
		}
		if i > 0 && (locs[i-1].Offset != r.Offset || locs[i-1].Length != r.Size) {
			t.Errorf("record %d at %d+%d, writer said %d+%d", i, r.Offset, r.Size, locs[i-1].Offset, locs[i-1].Length)
		}
	}
	// The decoded payload is not announced as gzip, and the server's values are kept.
	block := recs[1].WarcRecord.Block().(gowarc.HttpResponseBlock)
	h := block.HttpHeader()
	if h.Get("Content-Encoding") != "" || h.Get(origContentEncoding) != "gzip" || h.Get("Content-Length") != "21" {
		t.Errorf("response head not made true to the stored payload: %v", *h)
	}
	if got := recs[4].WarcRecord.WarcHeader().Get(gowarc.WarcRefersTo); got != recs[1].WarcRecord.WarcHeader().Get(gowarc.WarcRecordID) {
		t.Errorf("revisit refers to %q, want the response", got)
	}
	if recs[4].WarcRecord.WarcHeader().Get(gowarc.WarcPayloadDigest) != recs[1].WarcRecord.WarcHeader().Get(gowarc.WarcPayloadDigest) {
		t.Error("identical-payload revisit has another payload digest")
	}
	if !strings.HasPrefix(recs[1].WarcRecord.WarcHeader().Get(gowarc.WarcPayloadDigest), "sha1:") {
		t.Error("payload digest is not sha1")
	}

	lines, err := collect(IndexFile, filepath.Join(dir, "strata-test-00001.warc.gz"), "strata-test-00001.warc.gz")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range lines {
		got = append(got, l.Key+" "+l.Mime+" "+l.Status)
	}
	want := []string{"1,0,0,127:8080)/a text/html 200", "1,0,0,127:8080)/a warc/revisit 200",
		"1,0,0,127:8080)/a warc/revisit 304", "1,0,0,127:8080)/old text/html "}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("index:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestRotation(t *testing.T) {
	dir := t.TempDir()
	w := NewWriter(dir, "r", 1, info) // every record after the warcinfo fills a file
	for range 3 {
		if _, err := w.Write(mustRecords(t)[0]); err != nil {
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
	if len(names) != 3 {
		t.Fatalf("files %v, want 3", names)
	}
	for _, n := range names {
		if recs := readAll(t, filepath.Join(dir, n)); len(recs) != 2 || recs[0].WarcRecord.Type() != gowarc.Warcinfo {
			t.Errorf("%s: %d records, want a warcinfo and a response", n, len(recs))
		}
	}
}

// TestSealCutsATornTail: whatever a kill leaves at the end of an open file — a member cut anywhere,
// or bytes that never were a record — Seal leaves the whole records before it and nothing else.
func TestSealCutsATornTail(t *testing.T) {
	src := t.TempDir()
	w := NewWriter(src, "t", 0, info)
	locs, err := w.Write(mustRecords(t)...)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Sync(); err != nil {
		t.Fatal(err)
	}
	whole, err := os.ReadFile(filepath.Join(src, "t-00001.warc.gz.open"))
	if err != nil {
		t.Fatal(err)
	}
	last := locs[len(locs)-1]
	cases := map[string]struct {
		data []byte
		keep int64 // bytes kept
	}{
		"cut inside the last member":   {whole[:last.Offset+last.Length/2], last.Offset},
		"cut one byte short":           {whole[:last.Offset+last.Length-1], last.Offset},
		"zeros after the last member":  {append(append([]byte{}, whole...), make([]byte, 4096)...), int64(len(whole))},
		"a corrupt byte in the last":   {corrupt(whole, last.Offset+last.Length-12), last.Offset},
		"nothing but part of warcinfo": {whole[:20], 0},
		"complete":                     {whole, int64(len(whole))},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, "t-00001.warc.gz.open")
			if err := os.WriteFile(p, c.data, 0o644); err != nil {
				t.Fatal(err)
			}
			names, err := Seal(dir)
			if err != nil {
				t.Fatal(err)
			}
			if c.keep == 0 {
				if len(names) != 0 {
					t.Fatalf("kept %v of a file with no whole record", names)
				}
				return
			}
			fi, err := os.Stat(filepath.Join(dir, "t-00001.warc.gz"))
			if err != nil {
				t.Fatal(err)
			}
			if fi.Size() != c.keep {
				t.Errorf("kept %d bytes, want %d", fi.Size(), c.keep)
			}
			readAll(t, filepath.Join(dir, "t-00001.warc.gz"))
		})
	}
}

func corrupt(b []byte, at int64) []byte {
	c := append([]byte{}, b...)
	c[at] ^= 0xff
	return c
}

func TestSURT(t *testing.T) {
	for in, want := range map[string]string{
		"http://www.Example.com:8080/a/B?b=2&a=1": "com,example:8080)/a/b?a=1&b=2",
		"https://example.com":                     "com,example)/",
		"http://127.0.0.1:40639/forum/1":          "1,0,0,127:40639)/forum/1",
		"http://127.0.0.1:80/x%20y?":              "1,0,0,127)/x%20y",
		"https://www2.example.org:443/":           "org,example)/",
	} {
		if got := SURT(in); got != want {
			t.Errorf("SURT(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestPayloadDigestIsTheRecords: the digest strata keeps in the database decides revisits, so it
// must be the one gowarc writes.
func TestPayloadDigestIsTheRecords(t *testing.T) {
	x := exchange("http://127.0.0.1:8080/a", "<p>same bytes</p>")
	r, err := Response(x)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if got, want := PayloadDigest(x.Body), r.PayloadDigest(); got != want {
		t.Errorf("PayloadDigest = %s, record has %s", got, want)
	}
	e, err := EncodePage(Page{Exchange: x, Prior: &Ref{ID: "<urn:uuid:1>", URL: x.URL, Date: day}, PriorDigest: PayloadDigest(x.Body)})
	if err != nil {
		t.Fatal(err)
	}
	if e.Type != "revisit" || len(e.Members) != 2 {
		t.Errorf("same payload as the prior capture: %s with %d records, want a revisit and its request", e.Type, len(e.Members))
	}
	e, err = EncodePage(Page{Exchange: x, Prior: &Ref{ID: "<urn:uuid:1>", URL: x.URL, Date: day}, PriorDigest: "sha1:OTHER"})
	if err != nil {
		t.Fatal(err)
	}
	if e.Type != "response" {
		t.Errorf("another payload: %s, want a response", e.Type)
	}
}

// TestEncodeWithAReusedWriter: a gzip writer taken from the free list, after compressing other
// records, gives the same bytes as a new one: what is written never depends on what came before.
func TestEncodeWithAReusedWriter(t *testing.T) {
	page := func(i int) Exchange {
		body := bytes.Repeat([]byte(fmt.Sprintf("<p>Paragraph %d of a page that repeats itself.</p>\n", i)), 200+i)
		return Exchange{URL: fmt.Sprintf("http://a.test/%d", i), Date: time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC),
			Response: []byte("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n"), Body: body}
	}
	encodeFresh := func(r Record) []byte {
		var buf bytes.Buffer
		zw, _ := kgzip.NewWriterLevel(&buf, DefaultGzipLevel)
		if _, _, err := gowarc.NewMarshaler().Marshal(zw, r, 0); err != nil {
			t.Fatal(err)
		}
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	for i := range 2 * gzipKept {
		x := page(i)
		a, err := Response(x)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Encode(a)
		a.Close()
		if err != nil {
			t.Fatal(err)
		}
		// The same record again, for the new writer: its ID is the only field that differs.
		b, err := Response(x)
		if err != nil {
			t.Fatal(err)
		}
		want := encodeFresh(b)
		b.Close()
		got = bytes.Replace(inflate(t, got), []byte(a.ID()), []byte(b.ID()), 1)
		if !bytes.Equal(got, inflate(t, want)) {
			t.Fatalf("record %d: Encode with a reused writer inflates to other bytes than a new writer's", i)
		}
	}
}

func inflate(t *testing.T, member []byte) []byte {
	t.Helper()
	zr, err := kgzip.NewReader(bytes.NewReader(member))
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
