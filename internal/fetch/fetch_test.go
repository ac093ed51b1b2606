package fetch

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/andybalholm/brotli"
)

// Politeness: every test talks to loopback only. Names resolve through
// fakeLookup; nothing here may reach a real resolver or a public address.

const (
	dripTimeout = 300 * time.Millisecond
	// dripFor is how long the slow servers would keep going; a fetch that
	// ends before it was cut by us, not by the server.
	dripFor = 5 * time.Second
)

var loopback4 = netip.MustParseAddr("127.0.0.1")

// fakeLookup maps test names to addresses without touching DNS.
func fakeLookup(ctx context.Context, host string) ([]netip.Addr, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	switch host {
	case "a.test", "b.test", "evil.example", "other.test":
		return []netip.Addr{loopback4}, nil
	case "mapped.test":
		return []netip.Addr{netip.MustParseAddr("::ffff:127.0.0.1")}, nil
	case "v6.test":
		return []netip.Addr{netip.MustParseAddr("::1")}, nil
	case "mixed.test":
		// Never dialled: the guard refuses the private address first.
		return []netip.Addr{netip.MustParseAddr("203.0.113.7"), loopback4}, nil
	case "public.test":
		// Only for LoopbackOnly, which never dials.
		return []netip.Addr{netip.MustParseAddr("198.51.100.9")}, nil
	case "tmp.test":
		return nil, &net.DNSError{Err: "server misbehaving", Name: host, IsTemporary: true}
	case "empty.test":
		return nil, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// allowTestHosts plays the crawler's seeded-host list.
func allowTestHosts(host string) bool { return host == "a.test" || host == "b.test" }

func testOptions() Options {
	return Options{
		UserAgent:    "strata-test",
		PageTimeout:  5 * time.Second,
		LookupNetIP:  fakeLookup,
		AllowPrivate: allowTestHosts,
	}
}

func newClient(t *testing.T, opts Options) *Client {
	t.Helper()
	c := New(opts)
	t.Cleanup(c.Close)
	return c
}

// server is a loopback test server counting requests per path.
type server struct {
	*httptest.Server
	port string
	mu   sync.Mutex
	hits map[string]int
}

func newServer(t *testing.T, h http.Handler) *server {
	t.Helper()
	s := &server{hits: map[string]int{}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.hits[r.URL.Path]++
		s.mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	_, s.port, _ = net.SplitHostPort(s.Listener.Addr().String())
	return s
}

func (s *server) url(host, pathQuery string) string {
	return "http://" + net.JoinHostPort(host, s.port) + pathQuery
}

func (s *server) hitCount(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hits[path]
}

func serveBytes(contentType, encoding string, body []byte) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if contentType == "" {
			w.Header()["Content-Type"] = nil // stop net/http from sniffing for us
		} else {
			w.Header().Set("Content-Type", contentType)
		}
		if encoding != "" {
			w.Header().Set("Content-Encoding", encoding)
		}
		w.Write(body)
	}
}

// serveLarge writes n bytes of 'a' until the client goes away.
func serveLarge(contentType string, n int) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", contentType)
		chunk := bytes.Repeat([]byte("a"), 64<<10)
		for sent := 0; sent < n; sent += len(chunk) {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}
}

// drip sends a valid header, then one body byte per 50ms for dripFor.
func drip(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	rc.Flush()
	deadline := time.After(dripFor)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-deadline:
			return
		case <-tick.C:
			if _, err := w.Write([]byte("x")); err != nil {
				return
			}
			rc.Flush()
		}
	}
}

// dripHeaders never finishes the header block.
func dripHeaders(w http.ResponseWriter, r *http.Request) {
	conn, buf, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return
	}
	defer conn.Close()
	buf.WriteString("HTTP/1.1 200 OK\r\n")
	buf.Flush()
	deadline := time.Now().Add(dripFor)
	for i := 0; time.Now().Before(deadline); i++ {
		time.Sleep(50 * time.Millisecond)
		if _, err := fmt.Fprintf(buf, "X-Drip-%d: x\r\n", i); err != nil {
			return
		}
		if err := buf.Flush(); err != nil {
			return
		}
	}
}

func gzipBytes(t testing.TB, p []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	w, _ := gzip.NewWriterLevel(&b, gzip.BestSpeed)
	w.Write(p)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// gzipBomb is 100 MiB of zeros as concatenated gzip members (which
// gzip.Reader reads as one stream): as big a bomb as one member, far
// cheaper to build under the race detector.
func gzipBomb(t testing.TB) []byte {
	member := gzipBytes(t, make([]byte, 1<<20))
	return bytes.Repeat(member, 100)
}

func brotliBytes(t testing.TB, p []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	w := brotli.NewWriterLevel(&b, 1)
	w.Write(p)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func asError(t *testing.T, err error) *Error {
	t.Helper()
	var fe *Error
	if !errors.As(err, &fe) {
		t.Fatalf("error %v (%T) is not a *fetch.Error", err, err)
	}
	return fe
}

func TestFetchBody(t *testing.T) {
	html := []byte("<!doctype html><html><body><p>hello</p></body></html>")
	bigSize := 20 << 20
	bomb := gzipBomb(t)
	var zl, raw bytes.Buffer
	zw := zlib.NewWriter(&zl)
	zw.Write(html)
	zw.Close()
	fw, _ := flate.NewWriter(&raw, flate.BestSpeed)
	fw.Write(html)
	fw.Close()
	pngHead := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01")

	mux := http.NewServeMux()
	mux.Handle("/html", serveBytes("text/html; charset=utf-8", "", html))
	mux.Handle("/big", serveLarge("text/html", bigSize))
	mux.Handle("/gzip", serveBytes("text/html", "gzip", gzipBytes(t, html)))
	mux.Handle("/gzipbomb", serveBytes("text/html", "gzip", bomb))
	mux.Handle("/br", serveBytes("text/html", "br", brotliBytes(t, html)))
	mux.Handle("/brbomb", serveBytes("text/plain", "br", brotliBytes(t, make([]byte, 8<<20))))
	mux.Handle("/zlib", serveBytes("text/html", "deflate", zl.Bytes()))
	mux.Handle("/rawdeflate", serveBytes("text/html", "deflate", raw.Bytes()))
	mux.Handle("/png", serveLarge("image/png", 4<<20))
	mux.Handle("/nosniff-html", serveBytes("", "", html))
	mux.Handle("/nosniff-png", serveBytes("", "", append(pngHead, make([]byte, 1<<20)...)))
	mux.Handle("/nosniff-gzip", serveBytes("", "gzip", gzipBytes(t, html)))
	mux.Handle("/xhtml", serveBytes("Application/XHTML+XML", "", html))
	mux.Handle("/404", func() http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(http.StatusNotFound)
			w.Write([]byte("<p>not here</p>"))
		}
	}())
	srv := newServer(t, mux)
	c := newClient(t, testOptions())

	tests := []struct {
		path        string
		status      int
		contentType string
		kept        bool
		bodyLen     int // -1: must equal html
		truncated   bool
		// maxWire bounds bytes read off the wire: proof that we stopped.
		maxWire int64
	}{
		{path: "/html", status: 200, contentType: "text/html", kept: true, bodyLen: -1},
		{path: "/big", status: 200, contentType: "text/html", kept: true, bodyLen: DefaultMaxBytes, truncated: true, maxWire: int64(bigSize) / 2},
		{path: "/gzip", status: 200, contentType: "text/html", kept: true, bodyLen: -1},
		{path: "/gzipbomb", status: 200, contentType: "text/html", kept: true, bodyLen: DefaultMaxBytes, truncated: true, maxWire: int64(len(bomb)) / 4},
		{path: "/br", status: 200, contentType: "text/html", kept: true, bodyLen: -1},
		{path: "/brbomb", status: 200, contentType: "text/plain", kept: true, bodyLen: DefaultMaxBytes, truncated: true},
		{path: "/zlib", status: 200, contentType: "text/html", kept: true, bodyLen: -1},
		{path: "/rawdeflate", status: 200, contentType: "text/html", kept: true, bodyLen: -1},
		{path: "/png", status: 200, contentType: "image/png", kept: false, maxWire: 0},
		{path: "/nosniff-html", status: 200, contentType: "text/html", kept: true, bodyLen: -1},
		{path: "/nosniff-png", status: 200, contentType: "image/png", kept: false, maxWire: 64 << 10},
		{path: "/nosniff-gzip", status: 200, contentType: "text/html", kept: true, bodyLen: -1},
		{path: "/xhtml", status: 200, contentType: "application/xhtml+xml", kept: true, bodyLen: -1},
		{path: "/404", status: 404, contentType: "text/html", kept: true, bodyLen: len("<p>not here</p>")},
	}
	for _, tt := range tests {
		t.Run(strings.TrimPrefix(tt.path, "/"), func(t *testing.T) {
			resp, err := c.Fetch(context.Background(), Request{URL: srv.url("a.test", tt.path)})
			if err != nil {
				t.Fatalf("Fetch: %v", err)
			}
			if resp.Status != tt.status || resp.ContentType != tt.contentType || resp.Kept != tt.kept || resp.Truncated != tt.truncated {
				t.Errorf("status %d type %q kept %v truncated %v, want %d %q %v %v",
					resp.Status, resp.ContentType, resp.Kept, resp.Truncated, tt.status, tt.contentType, tt.kept, tt.truncated)
			}
			switch {
			case !tt.kept:
				if len(resp.Body) != 0 || len(resp.Text) != 0 {
					t.Errorf("non-text body read: %d bytes", len(resp.Body))
				}
			case tt.bodyLen == -1:
				if !bytes.Equal(resp.Body, html) || !bytes.Equal(resp.Text, html) {
					t.Errorf("body %q, text %q, want %q", resp.Body, resp.Text, html)
				}
			case len(resp.Body) != tt.bodyLen:
				t.Errorf("body length %d, want %d", len(resp.Body), tt.bodyLen)
			}
			if tt.maxWire != 0 || !tt.kept {
				if resp.Bytes > tt.maxWire {
					t.Errorf("read %d bytes off the wire, want at most %d", resp.Bytes, tt.maxWire)
				}
			} else if resp.Bytes == 0 {
				t.Error("Bytes not counted")
			}
			if resp.URL != resp.FinalURL || len(resp.Redirects) != 0 {
				t.Errorf("URL %q FinalURL %q redirects %v", resp.URL, resp.FinalURL, resp.Redirects)
			}
			if resp.Duration <= 0 {
				t.Error("Duration not set")
			}
		})
	}
}

func TestFetchBadEncoding(t *testing.T) {
	valid := gzipBytes(t, bytes.Repeat([]byte("<p>ok</p>"), 1000))
	corruptMid := bytes.Clone(valid)
	for i := 20; i < len(corruptMid)-8; i += 7 {
		corruptMid[i] ^= 0x5a
	}
	badChecksum := bytes.Clone(valid)
	badChecksum[len(badChecksum)-6] ^= 0xff

	tests := []struct {
		name, encoding string
		body           []byte
	}{
		{"gzip-header", "gzip", []byte("this is not gzip at all")},
		{"gzip-mid-stream", "gzip", corruptMid},
		{"gzip-checksum", "gzip", badChecksum},
		{"gzip-cut-short", "gzip", valid[:len(valid)/2]},
		{"brotli", "br", []byte("\xff\xff\xff not brotli \x00\x01")},
		{"deflate", "deflate", []byte("\xff\xff\xff\xff\xff")},
		{"empty-deflate", "deflate", nil},
		{"empty-gzip", "gzip", nil},
		{"unknown", "compress", []byte("x")},
		{"stacked", "gzip, gzip, gzip, gzip", []byte("x")},
	}
	mux := http.NewServeMux()
	for _, tt := range tests {
		mux.Handle("/"+tt.name, serveBytes("text/html", tt.encoding, tt.body))
	}
	srv := newServer(t, mux)
	c := newClient(t, testOptions())
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := c.Fetch(context.Background(), Request{URL: srv.url("a.test", "/"+tt.name)})
			if err == nil {
				t.Fatalf("no error, body %q", resp.Body)
			}
			if fe := asError(t, err); fe.Kind != Protocol || fe.Transient() {
				t.Errorf("kind %v transient %v, want protocol, permanent: %v", fe.Kind, fe.Transient(), err)
			}
		})
	}
}

func TestFetchTimeout(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/drip", drip)
	mux.HandleFunc("/drip-headers", dripHeaders)
	mux.HandleFunc("/to-drip", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/drip", http.StatusFound)
	})
	srv := newServer(t, mux)
	opts := testOptions()
	opts.PageTimeout = dripTimeout
	c := newClient(t, opts)

	for _, path := range []string{"/drip", "/drip-headers", "/to-drip"} {
		t.Run(strings.TrimPrefix(path, "/"), func(t *testing.T) {
			start := time.Now()
			u := srv.url("a.test", path)
			_, err := c.Fetch(context.Background(), Request{URL: u})
			if elapsed := time.Since(start); elapsed >= dripFor {
				t.Fatalf("fetch ran %v: the server finished, we never cut it", elapsed)
			}
			if !errors.Is(err, ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("error %v, want ErrTimeout wrapping context.DeadlineExceeded", err)
			}
			fe := asError(t, err)
			if fe.Kind != Timeout || !fe.Transient() {
				t.Errorf("kind %v transient %v", fe.Kind, fe.Transient())
			}
			want := "fetch " + u + ": timeout after 300ms"
			if path == "/to-drip" {
				want = "fetch " + u + ": redirect to " + srv.url("a.test", "/drip") + ": timeout after 300ms"
			}
			if err.Error() != want {
				t.Errorf("message\n %q, want\n %q", err.Error(), want)
			}
		})
	}
}

func TestFetchCanceled(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/drip", drip)
	srv := newServer(t, mux)
	c := newClient(t, testOptions()) // 5s page timeout: cancellation must come first

	t.Run("during-body", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(100*time.Millisecond, cancel)
		start := time.Now()
		_, err := c.Fetch(ctx, Request{URL: srv.url("a.test", "/drip")})
		if time.Since(start) >= dripFor {
			t.Fatal("cancellation did not abort the fetch")
		}
		fe := asError(t, err)
		if fe.Kind != Canceled || !errors.Is(err, context.Canceled) || errors.Is(err, ErrTimeout) || fe.Transient() {
			t.Errorf("kind %v, error %v", fe.Kind, err)
		}
	})
	t.Run("before-start", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := c.Fetch(ctx, Request{URL: srv.url("a.test", "/drip")})
		if fe := asError(t, err); fe.Kind != Canceled {
			t.Errorf("kind %v, error %v", fe.Kind, err)
		}
	})
	t.Run("caller-deadline", func(t *testing.T) {
		// The caller's own deadline is the caller's business, not ours.
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		_, err := c.Fetch(ctx, Request{URL: srv.url("a.test", "/drip")})
		if fe := asError(t, err); fe.Kind != Canceled || errors.Is(err, ErrTimeout) {
			t.Errorf("kind %v, error %v", fe.Kind, err)
		}
	})
}

func TestFetchRedirects(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/chain", func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		if n <= 0 {
			serveBytes("text/html", "", []byte("<p>end</p>"))(w, r)
			return
		}
		// Relative Location: each hop resolves against the previous URL.
		w.Header().Set("Location", fmt.Sprintf("chain?n=%d", n-1))
		w.WriteHeader(http.StatusMovedPermanently)
	})
	mux.HandleFunc("/loop-a", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/loop-b", http.StatusFound)
	})
	mux.HandleFunc("/loop-b", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/loop-a", http.StatusTemporaryRedirect)
	})
	mux.HandleFunc("/to", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", r.URL.Query().Get("url"))
		w.WriteHeader(http.StatusFound)
	})
	mux.HandleFunc("/no-location", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusFound)
	})
	mux.Handle("/target", serveBytes("text/plain", "", []byte("target")))
	srv := newServer(t, mux)
	c := newClient(t, testOptions())

	t.Run("five-ok", func(t *testing.T) {
		resp, err := c.Fetch(context.Background(), Request{URL: srv.url("a.test", "/chain?n=5")})
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Redirects) != 5 || resp.FinalURL != srv.url("a.test", "/chain?n=0") ||
			resp.Redirects[0] != srv.url("a.test", "/chain?n=4") || string(resp.Body) != "<p>end</p>" {
			t.Errorf("redirects %v final %q body %q", resp.Redirects, resp.FinalURL, resp.Body)
		}
		if resp.Bytes == 0 {
			t.Error("Bytes not counted")
		}
	})
	t.Run("cross-host", func(t *testing.T) {
		u := srv.url("a.test", "/to?url="+url.QueryEscape(srv.url("b.test", "/target")))
		resp, err := c.Fetch(context.Background(), Request{URL: u})
		if err != nil {
			t.Fatal(err)
		}
		if resp.URL != u || resp.FinalURL != srv.url("b.test", "/target") || len(resp.Redirects) != 1 {
			t.Errorf("URL %q final %q redirects %v", resp.URL, resp.FinalURL, resp.Redirects)
		}
	})
	t.Run("no-location-is-final", func(t *testing.T) {
		resp, err := c.Fetch(context.Background(), Request{URL: srv.url("a.test", "/no-location")})
		if err != nil || resp.Status != http.StatusFound {
			t.Fatalf("resp %+v err %v", resp, err)
		}
	})

	fails := []struct {
		name, path string
		max        int
		check      func(ctx context.Context, next *url.URL) error
		kind       Kind
		is         error
		msg        string // substring
	}{
		{name: "six-fail", path: "/chain?n=6", kind: Redirect, is: ErrTooManyRedirects, msg: "too many redirects (limit 5)"},
		{name: "loop", path: "/loop-a", kind: Redirect, is: ErrTooManyRedirects},
		{name: "limit-1", path: "/chain?n=2", max: 1, kind: Redirect, is: ErrTooManyRedirects, msg: "(limit 1)"},
		{name: "ftp", path: "/to?url=ftp://a.test/file", kind: Redirect, msg: `redirect to ftp://a.test/file: unsupported scheme "ftp"`},
		{name: "javascript", path: "/to?url=javascript:alert(1)", kind: Redirect, msg: "unsupported scheme"},
		{name: "bad-location", path: "/to?url=" + url.QueryEscape("http://[::1"), kind: Redirect, msg: "bad Location"},
		{
			name: "check-rejects", path: "/to?url=/target", kind: Redirect,
			check: func(ctx context.Context, next *url.URL) error {
				if next.Path == "/target" {
					return errDisallowed
				}
				return nil
			},
			is: errDisallowed, msg: "redirect to " + srv.url("a.test", "/target") + ": disallowed by robots.txt",
		},
	}
	for _, tt := range fails {
		t.Run(tt.name, func(t *testing.T) {
			opts := testOptions()
			opts.MaxRedirects = tt.max
			opts.CheckRedirect = tt.check
			c := newClient(t, opts)
			before := srv.hitCount("/target")
			resp, err := c.Fetch(context.Background(), Request{URL: srv.url("a.test", tt.path)})
			if err == nil {
				t.Fatalf("no error; final %q", resp.FinalURL)
			}
			fe := asError(t, err)
			if fe.Kind != tt.kind || (tt.is != nil && !errors.Is(err, tt.is)) || !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("kind %v error %q; want %v, %v, containing %q", fe.Kind, err, tt.kind, tt.is, tt.msg)
			}
			if srv.hitCount("/target") != before {
				t.Error("rejected redirect target was requested")
			}
		})
	}
}

var errDisallowed = errors.New("disallowed by robots.txt")

func TestFetchCheckRedirectArgs(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/from", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/target#frag", http.StatusSeeOther)
	})
	mux.Handle("/target", serveBytes("text/plain", "", []byte("t")))
	srv := newServer(t, mux)
	var seen []string
	opts := testOptions()
	opts.CheckRedirect = func(ctx context.Context, next *url.URL) error {
		if _, ok := ctx.Deadline(); !ok {
			t.Error("CheckRedirect got a context without the page deadline")
		}
		seen = append(seen, next.String())
		return nil
	}
	c := newClient(t, opts)
	resp, err := c.Fetch(context.Background(), Request{URL: srv.url("a.test", "/from")})
	if err != nil {
		t.Fatal(err)
	}
	want := srv.url("a.test", "/target#frag")
	if len(seen) != 1 || seen[0] != want || resp.Redirects[0] != want {
		t.Errorf("CheckRedirect saw %v, redirects %v, want [%s]", seen, resp.Redirects, want)
	}
}

func TestFetchConditional(t *testing.T) {
	const etag = `"v1"`
	lastMod := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC).Format(http.TimeFormat)
	mux := http.NewServeMux()
	mux.HandleFunc("/page", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("ETag", etag)
		w.Header().Set("Last-Modified", lastMod)
		if r.Header.Get("If-None-Match") == etag && r.Header.Get("If-Modified-Since") == lastMod {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		serveBytes("text/html", "", []byte("<p>fresh</p>"))(w, r)
	})
	srv := newServer(t, mux)
	c := newClient(t, testOptions())

	tests := []struct {
		name        string
		req         Request
		notModified bool
		body        string
	}{
		{"unconditional", Request{}, false, "<p>fresh</p>"},
		{"stale-etag", Request{ETag: `"v0"`, LastModified: lastMod}, false, "<p>fresh</p>"},
		{"both-match", Request{ETag: etag, LastModified: lastMod}, true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.req.URL = srv.url("a.test", "/page")
			resp, err := c.Fetch(context.Background(), tt.req)
			if err != nil {
				t.Fatal(err)
			}
			if resp.NotModified != tt.notModified || string(resp.Body) != tt.body || len(resp.Text) != len(tt.body) {
				t.Errorf("status %d notModified %v body %q", resp.Status, resp.NotModified, resp.Body)
			}
			if tt.notModified && (resp.Status != http.StatusNotModified || resp.Kept) {
				t.Errorf("status %d kept %v", resp.Status, resp.Kept)
			}
			if resp.ETag != etag || resp.LastModified != lastMod {
				t.Errorf("validators %q %q", resp.ETag, resp.LastModified)
			}
		})
	}
}

func TestFetchCharset(t *testing.T) {
	const bom = "\xef\xbb\xbf"
	tests := []struct {
		name, contentType string
		body              string
		charset           string
		text              string
	}{
		{"latin1-header", "text/html; charset=ISO-8859-1", "<p>caf\xe9</p>", "windows-1252", "<p>café</p>"},
		{"latin1-meta", "text/html", `<meta charset="iso-8859-1"><p>caf` + "\xe9</p>", "windows-1252", `<meta charset="iso-8859-1"><p>café</p>`},
		{"http-equiv", "text/html", `<meta http-equiv="Content-Type" content="text/html; charset=koi8-r"><p>` + "\xc1</p>", "koi8-r",
			`<meta http-equiv="Content-Type" content="text/html; charset=koi8-r"><p>а</p>`},
		{"bom-beats-header", "text/html; charset=iso-8859-1", bom + "<p>café</p>", "utf-8", "<p>café</p>"},
		{"utf16-bom", "text/html", "\xff\xfe<\x00p\x00>\x00\xe9\x00", "utf-16le", "<p>é"},
		{"header-utf8", "text/html; charset=UTF-8", "<p>café</p>", "utf-8", "<p>café</p>"},
		{"invalid-label-utf8-body", "text/html; charset=x-no-such-charset", "<p>café</p>", "utf-8", "<p>café</p>"},
		{"invalid-label-latin-body", "text/html; charset=x-no-such-charset", "<p>caf\xe9</p>", "windows-1252", "<p>café</p>"},
		{"invalid-meta-label", "text/html", `<meta charset="bogus"><p>caf` + "\xe9</p>", "windows-1252", `<meta charset="bogus"><p>café</p>`},
		{"invalid-utf8-declared", "text/html; charset=utf-8", "<p>caf\xe9</p>", "utf-8", "<p>caf\uFFFD</p>"},
		{"utf8-after-long-ascii-head", "text/html", strings.Repeat(" ", 2000) + "<p>café</p>", "utf-8", strings.Repeat(" ", 2000) + "<p>café</p>"},
		{"plain-no-meta-prescan", "text/plain", `<meta charset="koi8-r">caf` + "\xe9", "windows-1252", `<meta charset="koi8-r">café`},
		{"plain-utf8", "text/plain", "café", "utf-8", "café"},
		{"plain-ascii", "text/plain", "plain", "windows-1252", "plain"},
		{"malformed-params", "text/html; charset=", "<p>café</p>", "utf-8", "<p>café</p>"},
	}
	mux := http.NewServeMux()
	for _, tt := range tests {
		mux.Handle("/"+tt.name, serveBytes(tt.contentType, "", []byte(tt.body)))
	}
	srv := newServer(t, mux)
	c := newClient(t, testOptions())
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := c.Fetch(context.Background(), Request{URL: srv.url("a.test", "/"+tt.name)})
			if err != nil {
				t.Fatal(err)
			}
			if resp.Charset != tt.charset || string(resp.Text) != tt.text {
				t.Errorf("charset %q text %q, want %q %q", resp.Charset, resp.Text, tt.charset, tt.text)
			}
			if string(resp.Body) != tt.body {
				t.Errorf("Body %q is not the bytes as served", resp.Body)
			}
		})
	}
}

func TestFetchRetryAfterAndDate(t *testing.T) {
	date := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC) // far from now: relative to Date, not to our clock
	mux := http.NewServeMux()
	serve := func(status int, retryAfter string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Date", date.Format(http.TimeFormat))
			w.Header().Set("Retry-After", retryAfter)
			w.Header().Set("Content-Type", "text/plain")
			w.WriteHeader(status)
		}
	}
	mux.Handle("/503-secs", serve(503, "120"))
	mux.Handle("/429-date", serve(429, date.Add(90*time.Second).Format(http.TimeFormat)))
	mux.Handle("/429-past", serve(429, date.Add(-time.Hour).Format(http.TimeFormat)))
	mux.Handle("/503-junk", serve(503, "soon"))
	mux.Handle("/200-ignored", serve(200, "120"))
	srv := newServer(t, mux)
	c := newClient(t, testOptions())

	tests := []struct {
		path   string
		status int
		want   time.Duration
	}{
		{"/503-secs", 503, 120 * time.Second},
		{"/429-date", 429, 90 * time.Second},
		{"/429-past", 429, 0},
		{"/503-junk", 503, 0},
		{"/200-ignored", 200, 0},
	}
	for _, tt := range tests {
		t.Run(strings.TrimPrefix(tt.path, "/"), func(t *testing.T) {
			resp, err := c.Fetch(context.Background(), Request{URL: srv.url("a.test", tt.path)})
			if err != nil {
				t.Fatal(err) // a 5xx is a response, not an error
			}
			if resp.Status != tt.status || resp.RetryAfter != tt.want || !resp.Date.Equal(date) {
				t.Errorf("status %d RetryAfter %v Date %v, want %d %v %v", resp.Status, resp.RetryAfter, resp.Date, tt.status, tt.want, date)
			}
		})
	}
}

func TestFetchPrivateGuard(t *testing.T) {
	mux := http.NewServeMux()
	mux.Handle("/ok", serveBytes("text/plain", "", []byte("ok")))
	mux.HandleFunc("/to", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", r.URL.Query().Get("url"))
		w.WriteHeader(http.StatusFound)
	})
	srv := newServer(t, mux)
	guarded := newClient(t, testOptions())
	noAllow := testOptions()
	noAllow.AllowPrivate = nil
	strict := newClient(t, noAllow)

	redirect := func(target string) string {
		return srv.url("a.test", "/to?url="+url.QueryEscape(target))
	}
	tests := []struct {
		name string
		c    *Client
		url  string
		msg  string // exact message, when set
	}{
		{name: "allow-nil-loopback-literal", c: strict, url: srv.url("127.0.0.1", "/ok"),
			msg: "fetch " + srv.url("127.0.0.1", "/ok") + ": private address 127.0.0.1 not allowed"},
		{name: "allow-nil-seeded-name", c: strict, url: srv.url("a.test", "/ok")},
		{name: "name-resolving-to-loopback", c: guarded, url: srv.url("evil.example", "/ok")},
		{name: "ipv4-mapped-resolved", c: guarded, url: srv.url("mapped.test", "/ok"),
			msg: "fetch " + srv.url("mapped.test", "/ok") + ": private address ::ffff:127.0.0.1 not allowed"},
		{name: "ipv4-mapped-literal", c: guarded, url: srv.url("::ffff:127.0.0.1", "/ok")},
		{name: "ipv6-loopback", c: guarded, url: srv.url("v6.test", "/ok")},
		{name: "one-private-among-public", c: guarded, url: srv.url("mixed.test", "/ok")},
		{name: "redirect-to-loopback-literal", c: guarded, url: redirect(srv.url("127.0.0.1", "/ok")),
			msg: "fetch " + redirect(srv.url("127.0.0.1", "/ok")) + ": redirect to " + srv.url("127.0.0.1", "/ok") + ": private address 127.0.0.1 not allowed"},
		{name: "redirect-to-unlisted-name", c: guarded, url: redirect(srv.url("other.test", "/ok"))},
		// 10.0.0.1 is refused before any dial, so nothing leaves loopback.
		{name: "redirect-to-rfc1918", c: guarded, url: redirect("http://10.0.0.1/"),
			msg: "fetch " + redirect("http://10.0.0.1/") + ": redirect to http://10.0.0.1/: private address 10.0.0.1 not allowed"},
		{name: "uppercase-host-not-smuggled", c: guarded, url: srv.url("EVIL.example", "/ok")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := srv.hitCount("/ok")
			resp, err := tt.c.Fetch(context.Background(), Request{URL: tt.url})
			if err == nil {
				t.Fatalf("fetched %q", resp.FinalURL)
			}
			fe := asError(t, err)
			if !errors.Is(err, ErrPrivateAddress) || fe.Kind != Private || fe.Transient() {
				t.Errorf("kind %v transient %v error %v", fe.Kind, fe.Transient(), err)
			}
			if tt.msg != "" && err.Error() != tt.msg {
				t.Errorf("message\n %q, want\n %q", err.Error(), tt.msg)
			}
			if srv.hitCount("/ok") != before {
				t.Error("the guarded address was contacted")
			}
		})
	}

	t.Run("allowed-hosts-fetch", func(t *testing.T) {
		for _, host := range []string{"a.test", "A.TEST", "b.test"} {
			if _, err := guarded.Fetch(context.Background(), Request{URL: srv.url(host, "/ok")}); err != nil {
				t.Errorf("%s: %v", host, err)
			}
		}
	})
}

func TestFetchErrorKinds(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, closedPort, _ := net.SplitHostPort(ln.Addr().String())
	ln.Close() // nobody listens there now: connection refused

	tlsSrv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	tlsSrv.Config.ErrorLog = log.New(io.Discard, "", 0) // the failed handshake is the point
	tlsSrv.StartTLS()
	t.Cleanup(tlsSrv.Close)
	_, tlsPort, _ := net.SplitHostPort(tlsSrv.Listener.Addr().String())

	mux := http.NewServeMux()
	mux.HandleFunc("/garbage", func(w http.ResponseWriter, r *http.Request) {
		conn, buf, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		buf.WriteString("SPEAK FRIEND\r\n\r\n")
		buf.Flush()
	})
	mux.HandleFunc("/hangup", func(w http.ResponseWriter, r *http.Request) {
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			conn.Close()
		}
	})
	mux.HandleFunc("/short", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("Content-Length", "1000")
		w.Write([]byte("only this"))
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			conn.Close()
		}
	})
	srv := newServer(t, mux)
	c := newClient(t, testOptions())

	tests := []struct {
		name      string
		url       string
		kind      Kind
		transient bool
		msg       string
	}{
		{"refused", "http://a.test:" + closedPort + "/", Refused, true, "connection refused"},
		{"dns-not-found", "http://nx.test/", DNS, false, "fetch http://nx.test/: lookup nx.test: no such host"},
		{"dns-temporary", "http://tmp.test/", DNS, true, "server misbehaving"},
		{"dns-empty", "http://empty.test/", DNS, false, "lookup empty.test: no addresses"},
		{"tls-unknown-authority", "https://a.test:" + tlsPort + "/", TLS, false, "certificate"},
		{"garbage-response", srv.url("a.test", "/garbage"), Protocol, false, "malformed HTTP"},
		{"hangup", srv.url("a.test", "/hangup"), Protocol, true, "EOF"},
		{"short-body", srv.url("a.test", "/short"), Protocol, false, "unexpected EOF"},
		{"not-http", "ftp://a.test/", Other, false, `fetch ftp://a.test/: unsupported scheme "ftp"`},
		{"relative", "/just/a/path", Other, false, "fetch /just/a/path: not an absolute URL"},
		{"unparsable", "http://a b.test/", Other, false, "invalid character"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := c.Fetch(context.Background(), Request{URL: tt.url})
			if err == nil {
				t.Fatalf("no error, status %d", resp.Status)
			}
			if resp != nil {
				t.Error("both a response and an error")
			}
			t.Log(err)
			fe := asError(t, err)
			if fe.Kind != tt.kind || fe.Transient() != tt.transient || fe.Op != "fetch" || fe.URL != tt.url {
				t.Errorf("got %+v transient %v; want kind %v transient %v", fe, fe.Transient(), tt.kind, tt.transient)
			}
			if !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("message %q lacks %q", err.Error(), tt.msg)
			}
		})
	}
}

func TestLoopbackOnly(t *testing.T) {
	c := newClient(t, testOptions())
	tests := []struct {
		host    string
		want    bool
		wantErr bool
	}{
		{host: "a.test", want: true},
		{host: "A.Test", want: true},
		{host: "v6.test", want: true},
		{host: "mapped.test", want: true},
		{host: "127.0.0.1", want: true},
		{host: "127.3.4.5", want: true},
		{host: "::1", want: true},
		{host: "[::1]", want: true},
		{host: "::ffff:127.0.0.1", want: true},
		{host: "public.test", want: false},
		{host: "mixed.test", want: false},
		{host: "10.0.0.1", want: false},
		{host: "192.168.1.1", want: false},
		{host: "nx.test", wantErr: true},
		{host: "empty.test", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.host, func(t *testing.T) {
			got, err := c.LoopbackOnly(context.Background(), tt.host)
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Fatalf("LoopbackOnly(%q) = %v, %v", tt.host, got, err)
			}
			if err != nil {
				if fe := asError(t, err); fe.Kind != DNS || fe.Op != "lookup" {
					t.Errorf("error %+v", fe)
				}
			}
		})
	}
}

func TestHTTPClient(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/robots.txt", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "ua=%s", r.UserAgent())
	})
	mux.HandleFunc("/chain", func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		if n <= 0 {
			http.Redirect(w, r, "/robots.txt", http.StatusFound)
			return
		}
		http.Redirect(w, r, fmt.Sprintf("/chain?n=%d", n-1), http.StatusFound)
	})
	srv := newServer(t, mux)
	hc := newClient(t, testOptions()).HTTPClient()

	get := func(u string) (string, error) {
		resp, err := hc.Get(u)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<10))
		return string(b), err
	}
	t.Run("user-agent", func(t *testing.T) {
		body, err := get(srv.url("a.test", "/robots.txt"))
		if err != nil || body != "ua=strata-test" {
			t.Errorf("body %q err %v", body, err)
		}
	})
	t.Run("five-redirects-ok", func(t *testing.T) {
		if _, err := get(srv.url("a.test", "/chain?n=4")); err != nil {
			t.Error(err)
		}
	})
	t.Run("six-redirects-fail", func(t *testing.T) {
		if _, err := get(srv.url("a.test", "/chain?n=5")); !errors.Is(err, ErrTooManyRedirects) {
			t.Errorf("error %v", err)
		}
	})
	t.Run("guarded", func(t *testing.T) {
		before := srv.hitCount("/robots.txt")
		if _, err := get(srv.url("evil.example", "/robots.txt")); !errors.Is(err, ErrPrivateAddress) {
			t.Errorf("error %v", err)
		}
		if srv.hitCount("/robots.txt") != before {
			t.Error("guarded address contacted")
		}
	})
}

func TestFetchConcurrent(t *testing.T) {
	mux := http.NewServeMux()
	mux.Handle("/p", serveBytes("text/html", "gzip", gzipBytes(t, []byte("<p>same</p>"))))
	srv := newServer(t, mux)
	c := newClient(t, testOptions())
	var wg sync.WaitGroup
	var failures atomic.Int32
	for i := range 8 {
		wg.Go(func() {
			host := []string{"a.test", "b.test"}[i%2]
			resp, err := c.Fetch(context.Background(), Request{URL: srv.url(host, "/p")})
			if err != nil || string(resp.Text) != "<p>same</p>" {
				failures.Add(1)
			}
		})
	}
	wg.Wait()
	if n := failures.Load(); n != 0 {
		t.Errorf("%d of 8 concurrent fetches failed", n)
	}
}

func TestNewDefaults(t *testing.T) {
	c := New(Options{})
	defer c.Close()
	if c.opts.PageTimeout != DefaultPageTimeout || c.opts.MaxBytes != DefaultMaxBytes ||
		c.maxRedirects != DefaultMaxRedirects || c.opts.UserAgent != DefaultUserAgent || c.opts.LookupNetIP == nil {
		t.Errorf("defaults not applied: %+v, max redirects %d", c.opts, c.maxRedirects)
	}
	if c.transport.Proxy != nil || !c.transport.DisableCompression || c.transport.MaxIdleConnsPerHost != 1 {
		t.Error("transport not guarded as documented")
	}
	if New(Options{MaxRedirects: -1}).maxRedirects != 0 {
		t.Error("negative MaxRedirects should follow none")
	}
}

func TestFetchFollowNoneReturnsRedirect(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/old", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/new", http.StatusMovedPermanently)
	})
	mux.HandleFunc("/new", serveBytes("text/html", "", []byte("<p>new</p>")))
	s := newServer(t, mux)
	opts := testOptions()
	opts.MaxRedirects = -1
	resp, err := newClient(t, opts).Fetch(t.Context(), Request{URL: s.url("a.test", "/old")})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Status != http.StatusMovedPermanently || resp.Header.Get("Location") != "/new" || len(resp.Redirects) != 0 {
		t.Errorf("got status %d, Location %q, redirects %v; want the 301 itself", resp.Status, resp.Header.Get("Location"), resp.Redirects)
	}
	if n := s.hitCount("/new"); n != 0 {
		t.Errorf("the target was requested %d times, want 0", n)
	}
}

// countingTransport counts the requests that pass through it.
type countingTransport struct {
	next http.RoundTripper
	n    atomic.Int32
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return c.next.RoundTrip(r)
}

func TestFetchWrapSeesEveryRequest(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/r", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/p", http.StatusFound) })
	mux.HandleFunc("/p", serveBytes("text/html", "", []byte("<p>p</p>")))
	s := newServer(t, mux)
	var ct *countingTransport
	opts := testOptions()
	opts.Wrap = func(rt http.RoundTripper) http.RoundTripper {
		ct = &countingTransport{next: rt}
		return ct
	}
	c := newClient(t, opts)
	if _, err := c.Fetch(t.Context(), Request{URL: s.url("a.test", "/r")}); err != nil {
		t.Fatal(err)
	}
	resp, err := c.HTTPClient().Get(s.url("a.test", "/r"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := ct.n.Load(); got != 4 {
		t.Errorf("the wrapper saw %d requests, want 4 (two hops each for Fetch and HTTPClient)", got)
	}
}
