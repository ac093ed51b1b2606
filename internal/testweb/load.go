package testweb

import (
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// LoadRobots is the robots.txt of every load site: it disallows a prefix no page links to, so a
// crawler has to fetch and parse it but never finds a URL it forbids.
const LoadRobots = "User-agent: *\nDisallow: /private/\n"

// LoadWeb is the generated web of the load benchmarks, the same for every crawler measured on it.
// Each site serves LoadRobots, a seed "/" and Pages-1 more pages. In the web NewLoadWeb makes, the
// seed links to every other page and those pages are about 6 KB of text each; NewArticleWeb makes
// real-sized article pages instead. Pages are generated on each request, so a web of a million pages
// costs no memory.
type LoadWeb struct {
	Pages int            // pages per site, the seed included
	Links int            // article webs: distinct pages each page links to; 0: the seed links to all
	Size  int            // article webs: bytes per page, about
	paths map[string]int // path → page number, for pages 1…Pages-1
	fixed articleParts   // article webs: the markup every page shares
}

// NewLoadWeb returns a web of pages pages per site (at least 1: the seed).
func NewLoadWeb(pages int) *LoadWeb {
	pages = max(pages, 1)
	lw := &LoadWeb{Pages: pages, paths: make(map[string]int, pages)}
	for i := 1; i < pages; i++ {
		lw.paths[LoadPath(i)] = i
	}
	return lw
}

var loadWords = strings.Fields(`the council said on tuesday that proposal would go to vote with report showing costs
	rising across city district while residents asked questions about schools roads housing parks library
	budget plan river bridge museum market station harbour festival garden theatre hospital university
	research students teachers farmers workers drivers nurses doctors engineers artists writers readers`)

// LoadPath is the path of page i of a load site: "/" for the seed, and otherwise letters only,
// scrambled so that consecutive pages share no stepping number (which a trap guard could take for a
// counter).
func LoadPath(i int) string {
	if i == 0 {
		return "/"
	}
	n := uint32(i)*2654435761 + 12345
	var b [7]byte
	for k := range b {
		b[k] = byte('a' + n%26)
		n /= 26
	}
	return "/story/" + string(b[:]) + "-" + loadWords[i%len(loadWords)]
}

// Page generates page i of site.
func (lw *LoadWeb) Page(site string, i int) []byte {
	if lw.Links > 0 {
		return lw.article(site, i)
	}
	h := fnv.New64a()
	fmt.Fprintf(h, "%s/%d", site, i)
	r := rand.New(rand.NewPCG(h.Sum64(), uint64(i)))
	var b strings.Builder
	links := 0
	if i == 0 {
		links = lw.Pages - 1
	}
	b.Grow(7000 + 80*links)
	fmt.Fprintf(&b, `<!DOCTYPE html><html><head><meta charset="utf-8"><title>%s %s</title></head><body><nav><a href="/">Home</a></nav><main><article><h1>%s</h1>`,
		loadWords[r.IntN(len(loadWords))], loadWords[r.IntN(len(loadWords))], site)
	for p := 0; p < 12; p++ {
		b.WriteString("<p>")
		for w := 0; w < 70; w++ {
			b.WriteString(loadWords[r.IntN(len(loadWords))])
			b.WriteByte(' ')
		}
		b.WriteString("</p>")
	}
	if links > 0 {
		b.WriteString("<ul>")
		for k := 1; k <= links; k++ {
			l := LoadPath(k)
			fmt.Fprintf(&b, `<li><a href="%s">%s</a></li>`, l, l[len("/story/"):])
		}
		b.WriteString("</ul>")
	}
	b.WriteString("</article></main><footer>Example site</footer></body></html>")
	return []byte(b.String())
}

// Handler serves the site named site: robots.txt, the seed and its pages; anything else is 404.
func (lw *LoadWeb) Handler(site string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i, ok := lw.paths[r.URL.Path]
		switch {
		case r.URL.Path == "/robots.txt":
			w.Header().Set("Content-Type", "text/plain")
			w.Write([]byte(LoadRobots))
			return
		case r.URL.Path == "/":
			i = 0
		case !ok:
			http.NotFound(w, r)
			return
		}
		body := lw.Page(site, i)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.Write(body)
	})
}

// AddLoadSites starts n sites of lw on the web, with the web's request log and checks.
func (w *Web) AddLoadSites(tb testing.TB, lw *LoadWeb, n int) []*Site {
	tb.Helper()
	sites := w.AddSites(tb, n)
	for _, s := range sites {
		h := lw.Handler(s.Name)
		s.Robots(LoadRobots, "/private/")
		s.Handle("/", h)
		for p := range lw.paths {
			s.Handle(p, h)
		}
	}
	return sites
}

// LoadServer serves a LoadWeb on distinct loopback addresses without a request log, for webs too
// large to log and for programs that are not tests. It counts what it served, and checks the
// promises that need no log: never two requests at once to one site, and, with a Gap, never a
// request sooner than Gap after the site's previous response.
type LoadServer struct {
	Hosts []string // "127.0.1.1:41234", one per site, in order
	// Gap is the least time a polite crawler leaves between the end of a response and its next
	// request to the same site; requests sooner are counted in LoadStats.Early. Set it before
	// the first request; 0 counts none.
	Gap time.Duration

	servers []*http.Server
	errs    chan error

	pages, robots, other atomic.Int64
	overlaps             atomic.Int64   // requests that arrived while another to the same site was in flight
	early                atomic.Int64   // requests that arrived sooner than Gap after the site's last response
	lastEnd              []atomic.Int64 // by site, when its last response ended, in Unix nanoseconds; 0: none
	conns                atomic.Int64   // connections accepted
	mu                   sync.Mutex
	first, last          time.Time
}

// LoadStats is what a LoadServer served since it started or was last reset.
type LoadStats struct {
	Pages    int64     // seeds and pages answered 200
	Robots   int64     // robots.txt requests
	Other    int64     // anything else (404s)
	Overlaps int64     // requests that overlapped another to the same site
	Early    int64     // requests sooner than LoadServer.Gap after the previous response to the same site
	Conns    int64     // TCP connections accepted: requests/Conns is how well keep-alive worked
	First    time.Time // when the first request arrived
	Last     time.Time // when the last response was written
}

// ServeLoad starts n sites of lw, each on its own loopback address; Close stops them.
func ServeLoad(lw *LoadWeb, n int) (*LoadServer, error) {
	ls := &LoadServer{errs: make(chan error, n), lastEnd: make([]atomic.Int64, n)}
	for i := 0; i < n; i++ {
		ip := allocIP()
		ln, err := net.Listen("tcp", netip.AddrPortFrom(ip, 0).String())
		if err != nil {
			ls.Close()
			return nil, fmt.Errorf("serve load site %d of %d on %s: %w", i+1, n, ip, err)
		}
		name := fmt.Sprintf("site%d-%d.test", ip.As4()[2], ip.As4()[3])
		var inFlight atomic.Int32
		lastEnd := &ls.lastEnd[i]
		h := lw.Handler(name)
		srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, ConnState: func(_ net.Conn, st http.ConnState) {
			if st == http.StateNew {
				ls.conns.Add(1)
			}
		}, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			start := time.Now()
			if inFlight.Add(1) > 1 {
				ls.overlaps.Add(1)
			}
			if last := lastEnd.Load(); ls.Gap > 0 && last != 0 && start.UnixNano()-last < int64(ls.Gap) {
				ls.early.Add(1)
			}
			rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
			h.ServeHTTP(rec, r)
			inFlight.Add(-1)
			switch {
			case r.URL.Path == "/robots.txt":
				ls.robots.Add(1)
			case rec.status == http.StatusOK:
				ls.pages.Add(1)
			default:
				ls.other.Add(1)
			}
			end := time.Now()
			// The response ended no earlier than its last write began: a large write reaches the
			// client before the handler returns, and a server goroutine descheduled after it made
			// a polite crawler's next request look early by as much (up to 7 ms under load).
			// Small responses are sent after the handler returns, later than end.
			if w := rec.lastWrite; !w.IsZero() {
				lastEnd.Store(w.UnixNano())
			} else {
				lastEnd.Store(end.UnixNano())
			}
			ls.mu.Lock()
			if ls.first.IsZero() || start.Before(ls.first) {
				ls.first = start
			}
			if end.After(ls.last) {
				ls.last = end
			}
			ls.mu.Unlock()
		})}
		ls.servers = append(ls.servers, srv)
		ls.Hosts = append(ls.Hosts, ln.Addr().String())
		go func() {
			if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
				ls.errs <- fmt.Errorf("serve load site %s: %w", ln.Addr(), err)
			}
		}()
	}
	return ls, nil
}

// Stats returns the counts since the start or the last Reset.
func (ls *LoadServer) Stats() LoadStats {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	return LoadStats{Pages: ls.pages.Load(), Robots: ls.robots.Load(), Other: ls.other.Load(),
		Overlaps: ls.overlaps.Load(), Early: ls.early.Load(), Conns: ls.conns.Load(), First: ls.first, Last: ls.last}
}

// Reset zeroes the counts, between two crawls of the same web.
func (ls *LoadServer) Reset() {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	ls.pages.Store(0)
	ls.robots.Store(0)
	ls.other.Store(0)
	ls.overlaps.Store(0)
	ls.early.Store(0)
	for i := range ls.lastEnd {
		ls.lastEnd[i].Store(0)
	}
	ls.conns.Store(0)
	ls.first, ls.last = time.Time{}, time.Time{}
}

// Close stops every site and returns the first error a site's server failed with, if any.
func (ls *LoadServer) Close() error {
	for _, s := range ls.servers {
		s.Close()
	}
	select {
	case err := <-ls.errs:
		return err
	default:
		return nil
	}
}
