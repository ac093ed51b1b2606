package warc

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/strata-crawler/strata/internal/testweb"
)

// gowarcEncodePage is how EncodePage built a page's records before it wrote them itself: every
// record through gowarc's builder, its validation and its marshaler. It is the reference the
// direct encoder must match byte for byte.
func gowarcEncodePage(p Page) (Encoded, error) {
	var main Record
	var err error
	e := Encoded{Type: "response"}
	switch {
	case p.NotModified:
		ref := Ref{URL: p.URL}
		if p.Prior != nil {
			ref = *p.Prior
		}
		main, err = Revisit(p.Exchange, ProfileNotModified, ref)
		e.Type = "revisit"
	case p.Prior != nil && p.Truncated == "" && p.PriorDigest == PayloadDigest(p.Body):
		main, err = Revisit(p.Exchange, ProfileIdentical, *p.Prior)
		e.Type = "revisit"
	default:
		main, err = Response(p.Exchange)
	}
	if err != nil {
		return Encoded{}, err
	}
	e.ID = main.ID()
	recs := []Record{main}
	closeAll := func() {
		for _, r := range recs {
			r.Close()
		}
	}
	if len(p.Request) > 0 {
		req, err := Request(p.Exchange, e.ID)
		if err != nil {
			closeAll()
			return Encoded{}, err
		}
		recs = append(recs, req)
	}
	if len(p.Facts) > 0 {
		meta, err := Metadata(p.URL, p.Date, e.ID, p.Facts)
		if err != nil {
			closeAll()
			return Encoded{}, err
		}
		recs = append(recs, meta)
	}
	for _, r := range recs {
		if err == nil && indexed(r.WarcRecord) {
			var l Line
			if l, err = recordLine(r.WarcRecord, 0, 0); err == nil {
				e.Lines = append(e.Lines, &l)
			}
		} else if err == nil {
			e.Lines = append(e.Lines, nil)
		}
		if err == nil {
			var m []byte
			m, err = Encode(r)
			e.Members = append(e.Members, m)
		}
		r.Close()
	}
	if err != nil {
		return Encoded{}, fmt.Errorf("warc: %s: %w", p.URL, err)
	}
	return e, nil
}

// sequentialIDs makes both encoders draw the same record IDs: the n-th UUID of a sequence.
func sequentialIDs(t *testing.T) (reset func()) {
	t.Helper()
	n := 0
	old := recordID
	recordID = func() (string, error) {
		n++
		return fmt.Sprintf("urn:uuid:%08x-0000-4000-8000-%012x", n, n), nil
	}
	t.Cleanup(func() { recordID = old })
	return func() { n = 0 }
}

// encodeCases are pages of every kind strata writes, with the heads, bodies, URLs and facts that
// could make the two encoders part: sizes from empty to real pages, encodings and lengths that get
// the head rewritten, every status class, both revisit profiles with and without a known prior,
// truncation of both kinds, IPv4, IPv6 and no address, odd URLs and odd fact values.
func encodeCases(t *testing.T) map[string]Page {
	t.Helper()
	lw := testweb.NewArticleWeb(50, 20, 50_000)
	date := time.Date(2026, 11, 22, 4, 38, 15, 123456789, time.FixedZone("CET", 3600))
	req := []byte("GET /story/x?a=1 HTTP/1.1\r\nHost: site1-1.test\r\nUser-Agent: strata-test (+https://example.org/bot)\r\nAccept-Encoding: gzip\r\n\r\n")
	ok := func(body []byte, ct string) []byte {
		return []byte("HTTP/1.1 200 OK\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\nContent-Type: " + ct + "\r\nDate: Sun, 22 Nov 2026 03:38:15 GMT\r\nEtag: \"v1\"\r\n\r\n")
	}
	page := func(url string, head, body []byte) Page {
		return Page{Exchange: Exchange{URL: url, Date: date, IP: "127.0.0.1", Request: req, Response: head, Body: body},
			Facts: [][2]string{{"strata-run", "7"}, {"level", "2"}, {"change", "new"}}}
	}
	prior := &Ref{ID: "<urn:uuid:11111111-2222-4333-8444-555555555555>", URL: "https://site1-1.test/story/x", Date: date.Add(-24 * time.Hour)}
	cases := map[string]Page{}
	for i := range 6 {
		body := lw.Page("site1-1.test", i)
		p := page(fmt.Sprintf("https://site1-1.test/story/%d", i), ok(body, "text/html; charset=utf-8"), body)
		for j := range 20 {
			p.Facts = append(p.Facts, [2]string{"outlink", fmt.Sprintf("https://site1-1.test/story/%d", (i+j)%50)})
		}
		cases[fmt.Sprintf("article %d", i)] = p
	}
	real, _ := filepath.Glob(filepath.Join("..", "pagetext", "testdata", "realpages", "*.html"))
	for i, n := range real {
		if i >= 12 {
			break
		}
		body, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		cases["real "+filepath.Base(n)] = page("https://docs.test/"+filepath.Base(n), ok(body, "text/html"), body)
	}
	body := []byte("<html><title>T</title><p>hello, world</p></html>")
	add := func(name string, f func(p *Page)) {
		p := page("https://a.test/p", ok(body, "text/html; charset=utf-8"), body)
		f(&p)
		cases[name] = p
	}
	add("plain", func(p *Page) {})
	add("no request head", func(p *Page) { p.Request = nil })
	add("no facts", func(p *Page) { p.Facts = nil })
	add("no IP", func(p *Page) { p.IP = "" })
	add("IPv6", func(p *Page) { p.IP = "::1" })
	add("bad IP", func(p *Page) { p.IP = "not-an-ip" })
	add("empty body", func(p *Page) { p.Body = nil; p.Response = ok(nil, "text/plain") })
	add("gzip decoded", func(p *Page) {
		p.Response = []byte("HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 31\r\nContent-Type: text/html\r\n\r\n")
	})
	add("chunked", func(p *Page) {
		p.Response = []byte("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nTransfer-Encoding: chunked\r\n\r\n")
	})
	add("length wrong", func(p *Page) { p.Response = ok(body[:10], "text/html") })
	add("no length", func(p *Page) { p.Response = []byte("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n") })
	add("truncated length", func(p *Page) { p.Truncated = "length"; p.Body = body[:20] })
	add("truncated unspecified", func(p *Page) { p.Truncated = "unspecified"; p.Body = nil })
	add("HTTP/1.0", func(p *Page) { p.Response = bytes.Replace(p.Response, []byte("HTTP/1.1"), []byte("HTTP/1.0"), 1) })
	add("HTTP/2", func(p *Page) {
		p.Response = bytes.Replace(p.Response, []byte("HTTP/1.1 200 OK"), []byte("HTTP/2 200 OK"), 1)
	})
	add("no content type", func(p *Page) { p.Response = []byte("HTTP/1.1 200 OK\r\nContent-Length: 49\r\n\r\n") })
	add("content type upper", func(p *Page) {
		p.Response = []byte("HTTP/1.1 200 OK\r\ncontent-type:  TEXT/HTML ;charset=x\r\nContent-Type: text/plain\r\n\r\n")
	})
	add("404", func(p *Page) { p.Response = bytes.Replace(p.Response, []byte("200 OK"), []byte("404 Not Found"), 1) })
	add("301", func(p *Page) {
		p.Body = nil
		p.Response = []byte("HTTP/1.1 301 Moved Permanently\r\nContent-Length: 0\r\nLocation: https://a.test/q\r\n\r\n")
		p.Facts = append(p.Facts, [2]string{"outlink", "https://a.test/q"})
	})
	add("204", func(p *Page) { p.Body = nil; p.Response = []byte("HTTP/1.1 204 No Content\r\n\r\n") })
	add("status without reason", func(p *Page) { p.Response = bytes.Replace(p.Response, []byte("200 OK"), []byte("200"), 1) })
	add("bad status", func(p *Page) { p.Response = []byte("HTTP/1.1 2x0 OK\r\n\r\n") })
	add("head without end", func(p *Page) { p.Response = []byte("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n") })
	add("no head", func(p *Page) { p.Response = nil })
	add("bad request head", func(p *Page) { p.Request = []byte("NOT A REQUEST\r\n\r\n") })
	add("request HTTP/2", func(p *Page) {
		p.Request = []byte("GET /p HTTP/2\r\nHost: a.test\r\n\r\n")
		p.Response = bytes.Replace(p.Response, []byte("HTTP/1.1"), []byte("HTTP/2.0"), 1)
	})
	add("request with body", func(p *Page) {
		p.Request = []byte("POST /form HTTP/1.1\r\nHost: a.test\r\nContent-Length: 3\r\n\r\na=1")
	})
	add("binary body", func(p *Page) {
		b := make([]byte, 3000)
		for i := range b {
			b[i] = byte(i * 7)
		}
		p.Body, p.Response = b, ok(b, "application/octet-stream")
	})
	add("304 with prior", func(p *Page) {
		p.NotModified, p.Prior, p.Body = true, prior, nil
		p.Response = []byte("HTTP/1.1 304 Not Modified\r\nEtag: \"v1\"\r\n\r\n")
	})
	add("304 without prior", func(p *Page) {
		p.NotModified, p.Body = true, nil
		p.Response = []byte("HTTP/1.1 304 Not Modified\r\nEtag: \"v1\"\r\n\r\n")
	})
	add("304 truncated unspecified", func(p *Page) {
		p.NotModified, p.Prior, p.Body, p.Truncated = true, prior, nil, "unspecified"
		p.Response = []byte("HTTP/1.1 304 Not Modified\r\n\r\n")
	})
	add("identical payload", func(p *Page) { p.Prior, p.PriorDigest = prior, PayloadDigest(body) })
	add("identical payload, digest given", func(p *Page) {
		p.Prior, p.PriorDigest, p.PayloadDigest = prior, PayloadDigest(body), PayloadDigest(body)
	})
	add("identical payload, prior without ID", func(p *Page) {
		p.Prior, p.PriorDigest = &Ref{URL: prior.URL, Date: prior.Date}, PayloadDigest(body)
	})
	add("identical payload, prior ID bare", func(p *Page) {
		p.Prior, p.PriorDigest = &Ref{ID: "urn:uuid:11111111-2222-4333-8444-555555555555", URL: prior.URL}, PayloadDigest(body)
	})
	add("identical payload, gzip decoded", func(p *Page) {
		p.Prior, p.PriorDigest = prior, PayloadDigest(body)
		p.Response = []byte("HTTP/1.1 200 OK\r\nContent-Encoding: br\r\nContent-Length: 31\r\nContent-Type: text/html\r\n\r\n")
	})
	add("other payload", func(p *Page) { p.Prior, p.PriorDigest = prior, PayloadDigest([]byte("before")) })
	add("same payload, truncated", func(p *Page) {
		p.Prior, p.PriorDigest, p.Truncated = prior, PayloadDigest(body), "length"
	})
	add("digest given", func(p *Page) { p.PayloadDigest = PayloadDigest(body) })
	for name, url := range map[string]string{
		"URL with query":      "https://a.test/search?q=a%20b&x=%E2%82%AC&y",
		"URL with port":       "http://127.0.0.2:8080/a/b/../c",
		"URL IDN":             "https://xn--bcher-kva.test/%C3%BC",
		"URL IPv6 host":       "http://[::1]:9000/",
		"URL userinfo":        "https://user:pw@a.test/",
		"URL with space":      "https://a.test/a b",
		"URL without scheme":  "/relative/path",
		"URL bad percent":     "https://a.test/%zz",
		"URL unicode path":    "https://a.test/ünï/çødé",
		"URL fragment":        "https://a.test/p#frag",
		"URL odd scheme":      "ftp://a.test/file",
		"URL very long query": "https://a.test/?" + strings.Repeat("k=v&", 500),
		"URL space in host":   "https://a b.test/",
		"URL open bracket":    "http://[::1/",
		"URL no host":         "https:///nohost",
		"URL port too big":    "http://a.test:99999/",
		"URL port not number": "http://a.test:port/",
		"URL bad IPv4":        "http://999.1.1.1/",
		"URL empty":           "",
	} {
		add(name, func(p *Page) { p.URL = url })
	}
	for name, facts := range map[string][][2]string{
		"fact unicode title": {{"title", "Ünïcödé — “quotes” 漢字 🙂"}},
		"fact newline":       {{"title", "a\r\nb\nc\rd"}},
		"fact tab":           {{"title", "a\tb"}},
		"fact empty value":   {{"title", ""}},
		"fact control":       {{"title", "a\x00b\x07c"}},
		"fact invalid utf-8": {{"title", "a\xff\xfeb"}},
		"fact colon value":   {{"outlink", "https://a.test/x:y"}},
		"fact bad name":      {{"bad name", "x"}},
		"fact name colon":    {{"a:b", "x"}},
		"fact empty name":    {{"", "x"}},
		"fact leading space": {{"title", "  padded  "}},
	} {
		add(name, func(p *Page) { p.Facts = append(p.Facts, facts...) })
	}
	return cases
}

// TestEncodePageMatchesGowarc: the records EncodePage writes itself are byte for byte the ones
// gowarc built and serialised — each gzip member, what it inflates to, its index line, the ID and
// type — and the two agree on which pages cannot be written.
func TestEncodePageMatchesGowarc(t *testing.T) {
	reset := sequentialIDs(t)
	// What gowarc refused, and so must the direct encoder; every other case must be written.
	refused := map[string]bool{
		"bad IP": true, "bad status": true, "head without end": true, "no head": true,
		"bad request head": true, "HTTP/2": true, "URL without scheme": true, "URL space in host": true,
		"URL open bracket": true, "URL port too big": true, "URL port not number": true, "URL bad IPv4": true,
		// httpwire writes an HTTP/2 request line as "HTTP/2", which net/http's parser refuses. The
		// fetcher speaks HTTP/1.1 only for that reason (fetch's TestFetchSpeaksHTTP1ToAnHTTP2Server);
		// before, every page fetched over HTTP/2 lost its WARC records.
		"request HTTP/2": true,
	}
	for name, p := range encodeCases(t) {
		t.Run(name, func(t *testing.T) {
			reset()
			want, werr := gowarcEncodePage(p)
			reset()
			got, gerr := EncodePage(p)
			if (werr == nil) != (gerr == nil) {
				t.Fatalf("gowarc: %v; direct: %v", werr, gerr)
			}
			if (werr != nil) != refused[name] {
				t.Fatalf("gowarc: %v; refused: %v", werr, refused[name])
			}
			if werr != nil {
				return
			}
			if got.ID != want.ID || got.Type != want.Type {
				t.Errorf("ID, type %s %s, want %s %s", got.ID, got.Type, want.ID, want.Type)
			}
			if len(got.Members) != len(want.Members) || len(got.Lines) != len(want.Lines) {
				t.Fatalf("%d members, %d lines; want %d, %d", len(got.Members), len(got.Lines), len(want.Members), len(want.Lines))
			}
			for i := range want.Members {
				g, w := inflate(t, got.Members[i]), inflate(t, want.Members[i])
				if !bytes.Equal(g, w) {
					t.Errorf("record %d differs\ndirect:\n%s\ngowarc:\n%s", i, clip(g), clip(w))
				} else if !bytes.Equal(got.Members[i], want.Members[i]) {
					t.Errorf("record %d: same record, different gzip member", i)
				}
				switch gl, wl := got.Lines[i], want.Lines[i]; {
				case (gl == nil) != (wl == nil):
					t.Errorf("record %d: index line %v, want %v", i, gl, wl)
				case gl != nil && *gl != *wl:
					t.Errorf("record %d: index line\n%+v\nwant\n%+v", i, *gl, *wl)
				}
			}
			if wd := PayloadDigest(p.Body); got.PayloadDigest != wd {
				t.Errorf("payload digest %s, want %s", got.PayloadDigest, wd)
			}
		})
	}
}

// clip is the head of a record: its header and the start of its block.
func clip(b []byte) string {
	if len(b) > 1500 {
		return string(b[:1500]) + "…"
	}
	return string(b)
}

// TestGzipLevel: a page's level changes only how small its members are; they inflate to the same
// records, and a level outside 1-9 is refused.
func TestGzipLevel(t *testing.T) {
	reset := sequentialIDs(t)
	var p Page
	for name, c := range encodeCases(t) {
		if strings.HasPrefix(name, "article") {
			p = c
			break
		}
	}
	if len(p.Body) < 10_000 {
		t.Fatalf("no article page among the cases: %d bytes", len(p.Body))
	}
	encode := func(level int) Encoded {
		t.Helper()
		reset()
		p.GzipLevel = level
		e, err := EncodePage(p)
		if err != nil {
			t.Fatalf("level %d: %v", level, err)
		}
		return e
	}
	def, fast, small := encode(0), encode(1), encode(9)
	for i := range def.Members {
		if !bytes.Equal(def.Members[i], fast.Members[i]) {
			t.Errorf("record %d: level 0 is not the default level 1", i)
		}
		if !bytes.Equal(inflate(t, small.Members[i]), inflate(t, fast.Members[i])) {
			t.Errorf("record %d: level 9 inflates to other bytes than level 1", i)
		}
	}
	if n9, n1 := len(small.Members[0]), len(fast.Members[0]); n9 >= n1 {
		t.Errorf("response member: %d bytes at level 9, %d at level 1; want it smaller", n9, n1)
	}
	for _, bad := range []int{-1, 10} {
		p.GzipLevel = bad
		if _, err := EncodePage(p); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("gzip level %d", bad)) {
			t.Errorf("level %d: error %v, want one naming the level", bad, err)
		}
	}
}
