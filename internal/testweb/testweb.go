// Package testweb serves webs of test sites on distinct loopback addresses and logs every request
// they receive, so that crawler tests can check politeness and robots.txt compliance from the
// servers' side, where it counts.
//
// Each Site listens on its own address in 127.0.0.0/8 (127.0.1.1, 127.0.1.2, …), so it is a separate
// host to the crawler, and has a name under .test that Web.Resolver resolves, for tests that need
// names (registrable domains, the private-address guard). Nothing here ever listens on or contacts a
// non-loopback address.
package testweb

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// nextIP hands out loopback addresses across all webs of a test binary, so parallel tests never share
// a politeness domain by accident.
var nextIP atomic.Uint32

func allocIP() netip.Addr {
	n := nextIP.Add(1) // 1, 2, … → 127.0.1.1 … 127.0.1.254, 127.0.2.1 …
	hi, lo := 1+(n-1)/254, 1+(n-1)%254
	return netip.AddrFrom4([4]byte{127, 0, byte(hi), byte(lo)})
}

// Request is one request a site received.
type Request struct {
	Site      string // the site's name, e.g. "site3.test"
	Host      string // Host header
	Path      string // path and query as requested
	UserAgent string
	Start     time.Time // when the handler began
	End       time.Time // when the handler returned; for a response the client hung up on, when its last delivered write began
	Status    int
}

// Web is a set of sites with one request log.
type Web struct {
	mu    sync.Mutex
	log   []Request
	sites []*Site
}

// New returns an empty web; its sites are closed when the test ends.
func New(tb testing.TB) *Web {
	w := &Web{}
	tb.Cleanup(w.Close)
	return w
}

// Close stops every site.
func (w *Web) Close() {
	w.mu.Lock()
	sites := append([]*Site(nil), w.sites...)
	w.mu.Unlock()
	for _, s := range sites {
		s.server.Close()
	}
}

// Site is one host of the web.
type Site struct {
	Name string     // e.g. "site3.test"
	IP   netip.Addr // its loopback address
	Port int

	web    *Web
	server *http.Server

	mu        sync.Mutex
	handlers  map[string]http.Handler // by exact path (no query)
	prefixes  map[string]http.Handler // by path prefix, for URL spaces without end (traps)
	forbidden []string                // path prefixes the site's robots.txt disallows, for checks
}

// AddSite starts a new site with no pages: every path is 404 until added.
func (w *Web) AddSite(tb testing.TB) *Site {
	tb.Helper()
	ip := allocIP()
	ln, err := net.Listen("tcp", netip.AddrPortFrom(ip, 0).String())
	if err != nil {
		tb.Fatalf("testweb: listen on %s: %v", ip, err)
	}
	s := &Site{
		IP:       ip,
		Port:     ln.Addr().(*net.TCPAddr).Port,
		web:      w,
		handlers: map[string]http.Handler{},
		prefixes: map[string]http.Handler{},
	}
	s.Name = fmt.Sprintf("site%d-%d.test", ip.As4()[2], ip.As4()[3])
	s.server = &http.Server{Handler: http.HandlerFunc(s.serve), ReadHeaderTimeout: 10 * time.Second}
	go s.server.Serve(ln)
	w.mu.Lock()
	w.sites = append(w.sites, s)
	w.mu.Unlock()
	return s
}

// AddSites starts n sites.
func (w *Web) AddSites(tb testing.TB, n int) []*Site {
	out := make([]*Site, n)
	for i := range out {
		out[i] = w.AddSite(tb)
	}
	return out
}

// Close stops the site: from then on a connection to its address is refused, like a server that
// went away.
func (s *Site) Close() { s.server.Close() }

// Host returns the site's address as a URL host, "127.0.1.3:41234".
func (s *Site) Host() string { return netip.AddrPortFrom(s.IP, uint16(s.Port)).String() }

// URL returns the absolute URL of path on the site, by address.
func (s *Site) URL(path string) string { return "http://" + s.Host() + path }

// NamedURL returns the absolute URL of path on the site, by name (see Web.Resolver).
func (s *Site) NamedURL(path string) string {
	return fmt.Sprintf("http://%s:%d%s", s.Name, s.Port, path)
}

// Handle serves h at exactly path (the query is ignored for matching).
func (s *Site) Handle(path string, h http.Handler) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.handlers[path] = h
}

// HandlePrefix serves h at every path that starts with prefix and has no handler of its own; the
// longest such prefix wins. Trap sites use it for URL spaces without end.
func (s *Site) HandlePrefix(prefix string, h http.Handler) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.prefixes[prefix] = h
}

// Page serves an HTML page at path.
func (s *Site) Page(path, html string) { s.Handle(path, Text("text/html; charset=utf-8", html)) }

// Remove makes path 404 again.
func (s *Site) Remove(path string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.handlers, path)
}

// Robots serves body as /robots.txt and remembers the path prefixes a compliant crawler must not
// request, for Violations.
func (s *Site) Robots(body string, forbidden ...string) {
	s.Handle("/robots.txt", Text("text/plain", body))
	s.mu.Lock()
	s.forbidden = append([]string(nil), forbidden...)
	s.mu.Unlock()
}

func (s *Site) serve(rw http.ResponseWriter, r *http.Request) {
	start := time.Now()
	s.mu.Lock()
	h := s.handlers[r.URL.Path]
	if h == nil {
		best := -1
		for p, ph := range s.prefixes {
			if len(p) > best && strings.HasPrefix(r.URL.Path, p) {
				h, best = ph, len(p)
			}
		}
	}
	s.mu.Unlock()
	rec := &statusRecorder{ResponseWriter: rw, status: http.StatusOK}
	if h == nil {
		http.NotFound(rec, r)
	} else {
		h.ServeHTTP(rec, r)
	}
	end := time.Now()
	if rec.failed {
		// The client hung up part way (a body past its size limit). The handler returns only after
		// a write fails, which under load came 8 ms after the client had moved on and made a polite
		// crawler look early; the last write that succeeded began at most one write after the
		// hang-up, before the socket saw it.
		end = start
		if !rec.lastOK.IsZero() {
			end = rec.lastOK
		}
	}
	s.web.mu.Lock()
	s.web.log = append(s.web.log, Request{Site: s.Name, Host: r.Host, Path: r.URL.RequestURI(),
		UserAgent: r.UserAgent(), Start: start, End: end, Status: rec.status})
	s.web.mu.Unlock()
}

type statusRecorder struct {
	http.ResponseWriter
	status    int
	wrote     bool
	lastWrite time.Time // when the last Write began; zero if none
	lastOK    time.Time // when the last Write that succeeded began
	failed    bool      // a Write failed: the client went away
}

func (r *statusRecorder) WriteHeader(code int) {
	if !r.wrote {
		r.status, r.wrote = code, true
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(p []byte) (int, error) {
	now := time.Now()
	r.wrote, r.lastWrite = true, now
	n, err := r.ResponseWriter.Write(p)
	if err != nil {
		r.failed = true
	} else {
		r.lastOK = now
	}
	return n, err
}

func (r *statusRecorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Requests returns a copy of the log, in the order the handlers finished.
func (w *Web) Requests() []Request {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]Request(nil), w.log...)
}

// RequestsTo returns the requests site received, in order of arrival.
func (w *Web) RequestsTo(s *Site) []Request {
	var out []Request
	for _, r := range w.Requests() {
		if r.Site == s.Name {
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Start.Before(out[j].Start) })
	return out
}

// Count returns how many requests site received for path (with query, exactly).
func (w *Web) Count(s *Site, path string) int {
	n := 0
	for _, r := range w.RequestsTo(s) {
		if r.Path == path {
			n++
		}
	}
	return n
}

// Resolver resolves the web's site names to their addresses, for fetch.Options.LookupNetIP. Other
// names do not resolve: a test can never reach a real host by mistake.
func (w *Web) Resolver() func(ctx context.Context, host string) ([]netip.Addr, error) {
	return func(_ context.Context, host string) ([]netip.Addr, error) {
		if ip, err := netip.ParseAddr(host); err == nil {
			return []netip.Addr{ip}, nil
		}
		w.mu.Lock()
		defer w.mu.Unlock()
		for _, s := range w.sites {
			if strings.EqualFold(s.Name, host) {
				return []netip.Addr{s.IP}, nil
			}
		}
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
}

// CheckOptions say what Violations checks.
type CheckOptions struct {
	MinGap time.Duration // least gap between the end of one response and the next request to a site
	// RobotsFirst requires /robots.txt to be each site's first request, and at most one robots.txt
	// request per site.
	RobotsFirst bool
}

// Violations checks the log against the promises a polite crawler makes to every site: one request
// at a time, MinGap between them, robots.txt first and once, no request under a forbidden prefix.
// It returns one line per violation.
func (w *Web) Violations(opts CheckOptions) []string {
	var out []string
	w.mu.Lock()
	sites := append([]*Site(nil), w.sites...)
	w.mu.Unlock()
	for _, s := range sites {
		reqs := w.RequestsTo(s)
		s.mu.Lock()
		forbidden := s.forbidden
		s.mu.Unlock()
		robots := 0
		for i, r := range reqs {
			if r.Path == "/robots.txt" {
				robots++
			}
			if opts.RobotsFirst && i == 0 && r.Path != "/robots.txt" {
				out = append(out, fmt.Sprintf("%s: first request was %s, not /robots.txt", s.Name, r.Path))
			}
			for _, p := range forbidden {
				if strings.HasPrefix(r.Path, p) {
					out = append(out, fmt.Sprintf("%s: requested %s, which robots.txt forbids", s.Name, r.Path))
				}
			}
			if i == 0 {
				continue
			}
			prev := reqs[i-1]
			if r.Start.Before(prev.End) {
				out = append(out, fmt.Sprintf("%s: %s started before %s ended (two requests at once)", s.Name, r.Path, prev.Path))
			} else if gap := r.Start.Sub(prev.End); gap < opts.MinGap {
				out = append(out, fmt.Sprintf("%s: only %v between %s and %s (want >= %v)", s.Name, gap, prev.Path, r.Path, opts.MinGap))
			}
		}
		if opts.RobotsFirst && robots > 1 {
			out = append(out, fmt.Sprintf("%s: robots.txt requested %d times", s.Name, robots))
		}
	}
	return out
}
