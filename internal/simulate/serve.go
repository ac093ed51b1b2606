package simulate

import (
	"bufio"
	"bytes"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Epoch is the simulation's day 0: runs happen at midnight UTC of each day after it. It is a Monday,
// as the quasi-deterministic processes assume.
var Epoch = time.Date(2026, time.January, 5, 0, 0, 0, 0, time.UTC)

// dayTime is the wall time of day d (fractional days allowed).
func dayTime(d float64) time.Time { return Epoch.Add(time.Duration(d * 24 * float64(time.Hour))) }

// Site returns the host[:port] of site s: its own loopback address, 127.1.x.y, so that each site is a
// politeness domain of its own and the address is one strata may contact. port 0 leaves the port out.
func Site(s int, port int) string {
	n := s + 1
	host := fmt.Sprintf("127.1.%d.%d", n/250, 1+n%250)
	if port > 0 {
		return net.JoinHostPort(host, strconv.Itoa(port))
	}
	return host
}

// Server is the synthetic web seen from the network at one moment of its history: each site on its
// own loopback host, its hub at / linking the pages that exist at that moment, every page at
// /p/N.html with a text that changes exactly at the page's change times, 404 for pages that have not
// appeared or have gone. It logs every request with the time it was answered at. A Server is safe
// for concurrent use; the web behind it is shared and never modified.
type Server struct {
	w     *Web
	port  int
	sites map[string]int32 // host (without port) → site

	mu  sync.Mutex
	now float64 // days since Epoch
	log []Hit

	once      sync.Once
	siteTimes [][]float64 // per site, every time one of its pages changed, appeared or went, ascending
}

// Hit is one page request a Server answered.
type Hit struct {
	Page   int32   // the page, -1 for anything else (robots.txt, sitemaps, trap pages, unknown paths)
	Trap   bool    // a page of a trap host
	At     float64 // days since Epoch
	Status int
}

// NewServer returns a server for the web, answering for hosts Site(s, port); port 0 means the
// default port (an in-memory transport needs none).
func (w *Web) NewServer(port int) *Server {
	s := &Server{w: w, port: port, sites: make(map[string]int32, len(w.roots))}
	for i := range w.roots {
		s.sites[Site(i, 0)] = int32(i)
	}
	return s
}

// SetTime moves the web to day d.
func (s *Server) SetTime(d float64) {
	s.mu.Lock()
	s.now = d
	s.mu.Unlock()
}

// Log returns the requests answered so far, in order.
func (s *Server) Log() []Hit {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Hit(nil), s.log...)
}

// URL returns the absolute URL of page i.
func (s *Server) URL(i int32) string {
	p := &s.w.pages[i]
	return "http://" + Site(int(p.site), s.port) + s.path(i)
}

func (s *Server) path(i int32) string {
	if s.w.pages[i].root {
		return "/"
	}
	return "/p/" + strconv.Itoa(int(i)) + ".html"
}

// ServeHTTP answers a request at the server's current time.
func (s *Server) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	host := r.Host
	if host == "" {
		host = r.URL.Host
	}
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	s.mu.Lock()
	t := s.now
	s.mu.Unlock()
	site, ok := s.sites[host]
	page, trap := int32(-1), false
	status := http.StatusNotFound
	var body []byte
	ctype := "text/html; charset=utf-8"
	switch {
	case !ok:
	case r.URL.Path == "/sitemap.xml" && s.w.sites[site].sitemap != NoSitemap:
		status, body, ctype = http.StatusOK, s.sitemap(site, t), "application/xml"
	case s.w.isTrap(site):
		if text, ok := trapPage(s.w.sites[site].trap, r.URL.Path, r.URL.RawQuery); ok {
			trap, status = true, http.StatusOK
			body = []byte("<!doctype html><html><head><title>Trap</title></head><body>" + text + "</body></html>")
		}
	default:
		if i, known := s.page(site, r.URL.Path); known && s.w.pages[i].born <= t && t < s.w.pages[i].died {
			page, status = i, http.StatusOK
			if lm, ok := s.lastModified(site, i, t); ok {
				rw.Header().Set("Last-Modified", lm.Format(http.TimeFormat))
				if since, err := http.ParseTime(r.Header.Get("If-Modified-Since")); err == nil && !lm.After(since) &&
					s.w.sites[site].dates == TrueDates {
					status = http.StatusNotModified
				}
			}
			if status == http.StatusOK {
				body = s.render(i, t)
			}
		} else if known {
			page = i
		}
	}
	s.mu.Lock()
	s.log = append(s.log, Hit{Page: page, Trap: trap, At: t, Status: status})
	s.mu.Unlock()
	rw.Header().Set("Date", dayTime(t).Format(http.TimeFormat))
	if status == http.StatusNotModified {
		rw.WriteHeader(status)
		return
	}
	if status != http.StatusOK {
		http.NotFound(rw, r)
		return
	}
	rw.Header().Set("Content-Type", ctype)
	rw.Write(body)
}

// sitemap writes site's sitemap at time t: every live page, with the lastmod its mode gives.
func (s *Server) sitemap(site int32, t float64) []byte {
	var b bytes.Buffer
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n" + `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">` + "\n")
	mode := s.w.sites[site].sitemap
	list := append([]int32{s.w.roots[site]}, s.w.children[site]...)
	for _, i := range list {
		p := &s.w.pages[i]
		if p.born > t || t >= p.died {
			continue
		}
		lastmod := p.born
		switch mode {
		case HonestSitemap:
			if v := s.w.version(i, t); v > 0 {
				lastmod = s.w.times[int(p.lo)+v-1]
			}
		case LyingSitemap:
			lastmod = math.Floor(t) // "everything changed today"
		}
		fmt.Fprintf(&b, "<url><loc>%s</loc><lastmod>%s</lastmod></url>\n", s.URL(i), dayTime(lastmod).Format(time.RFC3339))
	}
	b.WriteString("</urlset>\n")
	return b.Bytes()
}

// page finds the page of site at path.
func (s *Server) page(site int32, path string) (int32, bool) {
	if path == "/" {
		return s.w.roots[site], true
	}
	num, ok := strings.CutPrefix(path, "/p/")
	num, ok2 := strings.CutSuffix(num, ".html")
	if !ok || !ok2 {
		return 0, false
	}
	i, err := strconv.Atoi(num)
	if err != nil || i < 0 || i >= len(s.w.pages) || s.w.pages[i].site != site || s.w.pages[i].root {
		return 0, false
	}
	return int32(i), true
}

// pageOf finds the page of an absolute URL of the web.
func (s *Server) pageOf(rawURL string) (int32, bool) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return 0, false
	}
	site, ok := s.sites[u.Hostname()]
	if !ok {
		return 0, false
	}
	return s.page(site, u.Path)
}

// lastModified is the Last-Modified site's server sends for page i at time t, by the site's date
// mode (the second resolution of HTTP dates: a change and a request in the same second look alike).
func (s *Server) lastModified(site, i int32, t float64) (time.Time, bool) {
	var d float64
	switch s.w.sites[site].dates {
	case TrueDates:
		d = s.w.lastChange(i, t)
	case NowDates:
		d = t
	case BuildDates:
		d = s.siteChange(site, t)
	default:
		return time.Time{}, false
	}
	return dayTime(d).Truncate(time.Second), true
}

// siteChange is the last time at or before t that any page of site changed, appeared or went: when
// a site rebuilt whole was last built.
func (s *Server) siteChange(site int32, t float64) float64 {
	s.once.Do(func() {
		s.siteTimes = make([][]float64, len(s.w.roots))
		for i := range s.w.pages {
			p := &s.w.pages[i]
			ts := append(s.w.times[p.lo:p.hi:p.hi], p.born)
			if !math.IsInf(p.died, 1) {
				ts = append(ts, p.died)
			}
			s.siteTimes[p.site] = append(s.siteTimes[p.site], ts...)
		}
		for _, ts := range s.siteTimes {
			slices.Sort(ts)
		}
	})
	ts := s.siteTimes[site]
	k := sort.Search(len(ts), func(k int) bool { return ts[k] > t })
	if k == 0 {
		return s.w.lastChange(s.w.roots[site], t)
	}
	return ts[k-1]
}

// lastChange is when page i last changed at or before t: its last change, or, before the first, its
// birth — for the pages of day 0, a time before it drawn from the page's process (a page that
// changes daily last changed hours before the crawl began, a static one months or years before).
func (w *Web) lastChange(i int32, t float64) float64 {
	p := &w.pages[i]
	if v := w.version(i, t); v > 0 {
		return w.times[int(p.lo)+v-1]
	}
	if p.born > 0 {
		return p.born
	}
	// A hash of the page, as a uniform draw that does not disturb the web's random streams.
	h := fnv.New64a()
	fmt.Fprintf(h, "before %d", i)
	u := (float64(h.Sum64()>>11) + 0.5) / (1 << 53)
	if p.proc == Static || !(p.rate > 0) {
		return -(30 + 1000*u) // a month to three years old
	}
	return -min(-math.Log(u)/p.rate, 3*365)
}

// version is the number of changes of page i at or before t.
func (w *Web) version(i int32, t float64) int {
	p := &w.pages[i]
	ts := w.times[p.lo:p.hi]
	return sort.Search(len(ts), func(k int) bool { return ts[k] > t })
}

// render writes page i as it is at time t: a paragraph that is new at every change, and for a hub the
// links to the site's pages that exist at t.
func (s *Server) render(i int32, t float64) []byte {
	var b bytes.Buffer
	p := &s.w.pages[i]
	fmt.Fprintf(&b, "<!doctype html><html><head><title>Site %d page %d</title></head><body><main><h1>Site %d, page %d</h1>\n<p>",
		p.site, i, p.site, i)
	words(&b, uint64(i), uint64(s.w.version(i, t)))
	b.WriteString("</p>\n")
	if kids := s.w.kids[i]; len(kids) > 0 {
		b.WriteString("<ul>\n")
		for _, k := range kids {
			if c := &s.w.pages[k]; c.born <= t && t < c.died {
				fmt.Fprintf(&b, "<li><a href=\"%s\">%s</a></li>\n", s.path(k), pageName(k))
			}
		}
		b.WriteString("</ul>\n")
	}
	b.WriteString("</main></body></html>\n")
	return b.Bytes()
}

// pageName is a link's anchor text: words, not numbers, which change detection sets aside.
func pageName(k int32) string {
	var b bytes.Buffer
	words(&b, uint64(k)|1<<40, 0)
	return strings.Join(strings.Fields(b.String())[:3], " ")
}

// vocabulary is what the synthetic pages are written in.
var vocabulary = strings.Fields(`archive river signal harbor meadow lantern quarry velvet orbit cedar
	ember falcon glacier hollow island juniper kettle ledger marble nectar oyster prairie quartz raven
	saddle timber umber valley willow yarrow zephyr anchor beacon canyon delta estuary fjord grove heath
	inlet jetty knoll lagoon mesa notch outcrop plateau ravine summit tundra upland vista wharf atlas
	bramble copper dune ferry garnet hamlet ivory jasper kiln lichen mortar nickel onyx pewter quill
	rustic slate thistle urchin vellum walnut basalt citron dahlia fennel ginger hazel indigo lilac
	mango nutmeg olive pepper rosemary saffron tansy vanilla wasabi almond borage caraway`)

// words writes 48 words drawn for (page, version): every version of a page reads differently.
func words(w io.Writer, page, version uint64) {
	r := rand.New(rand.NewPCG(page, version))
	bw := bufio.NewWriter(w)
	for k := range 48 {
		if k > 0 {
			bw.WriteByte(' ')
		}
		bw.WriteString(vocabulary[r.IntN(len(vocabulary))])
	}
	bw.Flush()
}

// Transport answers requests in memory, without a connection: the simulator's network.
func (s *Server) Transport() http.RoundTripper { return transport{s} }

type transport struct{ s *Server }

func (t transport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		r.Body.Close()
	}
	rec := httptest.NewRecorder()
	t.s.ServeHTTP(rec, r)
	resp := rec.Result()
	resp.Request = r
	return resp, nil
}

// NewWeb draws the synthetic web of cfg: the web Run crawls with the same cfg.
func NewWeb(cfg Config) (*Web, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	return newWeb(webConfig{family: cfg.Web, pages: cfg.Pages, sites: cfg.Sites, days: cfg.Days, mix: cfg.Mix, births: cfg.Births,
		deaths: cfg.Deaths, siteCorrelation: cfg.SiteCorrelation, seed: cfg.Seed}), nil
}

// Seeds returns the URLs of the sites' hubs, the simulation's seeds (level 1, fr_max 1).
func (s *Server) Seeds() []string {
	out := make([]string, len(s.w.roots))
	for i, r := range s.w.roots {
		out[i] = s.URL(r)
	}
	return out
}

// Fetched returns, per day, the pages the server was asked for, ascending: a crawl's choices.
func (s *Server) Fetched(days int) [][]int32 {
	out := make([][]int32, days)
	for d, fs := range fetchesOf(s.Log(), days) {
		for _, f := range fs {
			out[d] = append(out[d], f.page)
		}
		slices.Sort(out[d])
	}
	return out
}
