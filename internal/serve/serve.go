// Package serve is strata's read-only web window onto the database and the archive: server-rendered
// pages of the runs, the sites and their path trees, each page's history with its versions and
// diffs, what happened to pages in a run (changed, new, gone, no longer linked), full-text and URL
// search, and Atom feeds of the changes.
//
// It reads and never writes: the database (SQLite or PostgreSQL, through Reader) is opened
// read-only and the archive only read, so it runs beside a crawl. Archived pages are untrusted. Their text is shown escaped by
// html/template, and their HTML only inside an iframe with an empty sandbox attribute, loaded from
// /raw/, whose responses carry a Content-Security-Policy that sandboxes them and forbids every
// fetch; strata's own pages carry a policy that allows nothing but their own stylesheet and frames.
// Everything strata needs is embedded in the binary: templates, stylesheet and SVG charts drawn on
// the server, so the pages work offline.
package serve

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/strata-crawler/strata/archive"
	"github.com/strata-crawler/strata/internal/store"
)

// Explanation is the reasoning behind a page's schedule, as strata explain prints it.
type Explanation struct {
	Facts   []Fact
	NextRun []string // what the next run will do with the page, in sentences
}

// Fact is one labelled line of an explanation.
type Fact struct{ Name, Value string }

// Explainer returns the explanation of url (normalised), or an error wrapping store.ErrNotFound. It
// must only read the database; it is called concurrently.
type Explainer func(ctx context.Context, url string) (*Explanation, error)

// Options configure a Server.
type Options struct {
	DB      Reader       // opened read-only: store.OpenReadOnly, pgstore.OpenReadOnly
	Archive *archive.Dir // nil when the archive root does not exist yet
	Explain Explainer    // nil leaves the explanation out
	Log     *slog.Logger // nil: discard
	// Delay and LoopbackDelay are the configured politeness delays (politeness.delay and
	// politeness.loopback_delay), shown with each origin's robots.txt Crawl-delay.
	Delay, LoopbackDelay time.Duration
	// AllowedHosts are the host names a request's Host header may name (without the port). A
	// loopback server lists its own names here, so a web page cannot reach it through DNS
	// rebinding. Empty allows any.
	AllowedHosts []string
}

// Server is the http.Handler of strata serve.
type Server struct {
	opts  Options
	log   *slog.Logger
	pages map[string]*template.Template
	mux   *http.ServeMux
	sites siteCache
}

//go:embed templates/*.html
var templateFS embed.FS

//go:embed assets
var assetFS embed.FS

// Content security policies. Strata's pages load their stylesheet and frame /raw/, nothing else:
// no script at all. Archived bytes are sandboxed (no script, a unique origin) and may load nothing;
// inline styles are allowed so that pages stay readable.
const (
	pagePolicy = "default-src 'none'; style-src 'self'; img-src 'self'; frame-src 'self'; form-action 'self'; " +
		"base-uri 'none'; frame-ancestors 'none'"
	rawPolicy = "sandbox; default-src 'none'; img-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'self'"
)

// New returns a server over o.DB and o.Archive.
func New(o Options) (*Server, error) {
	if o.DB == nil {
		return nil, errors.New("serve: no database")
	}
	s := &Server{opts: o, log: o.Log, mux: http.NewServeMux()}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if err := s.parseTemplates(); err != nil {
		return nil, err
	}
	assets, err := fs.Sub(assetFS, "assets")
	if err != nil {
		return nil, fmt.Errorf("serve: assets: %w", err)
	}
	static := http.FileServerFS(assets)
	s.mux.Handle("GET /assets/", http.StripPrefix("/assets/", cacheFor(24*time.Hour, static)))
	s.mux.Handle("GET /{$}", s.page(s.runs))
	s.mux.Handle("GET /runs", s.page(s.runs))
	s.mux.Handle("GET /changes", s.page(s.changes))
	s.mux.Handle("GET /sites", s.page(s.siteList))
	s.mux.Handle("GET /sites/{domain}", s.page(s.site))
	s.mux.Handle("GET /tree", s.page(s.tree))
	s.mux.Handle("GET /search", s.page(s.search))
	s.mux.Handle("GET /page/{id}", s.page(s.pageView))
	s.mux.Handle("GET /page/{id}/links", s.page(s.links))
	s.mux.Handle("GET /page/{id}/text", s.page(s.text))
	s.mux.Handle("GET /page/{id}/html", s.page(s.htmlView))
	s.mux.Handle("GET /page/{id}/diff", s.page(s.diff))
	s.mux.HandleFunc("GET /raw/{fetch}", s.raw)
	s.mux.HandleFunc("GET /feed.atom", s.feed)
	s.mux.Handle("GET /", s.page(func(*http.Request) (*view, error) { return nil, errNotFound }))
	return s, nil
}

// ServeHTTP checks the Host header, then dispatches.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !s.hostAllowed(r.Host) {
		http.Error(w, "strata serve: unexpected Host header", http.StatusMisdirectedRequest)
		return
	}
	s.mux.ServeHTTP(w, r)
}

func (s *Server) hostAllowed(hostport string) bool {
	if len(s.opts.AllowedHosts) == 0 {
		return true
	}
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	for _, a := range s.opts.AllowedHosts {
		if strings.EqualFold(a, host) {
			return true
		}
	}
	return false
}

// Serve serves h on ln until ctx is done, then shuts down gracefully: requests in flight get a few
// seconds to finish. log receives the server's own errors; nil discards them.
func Serve(ctx context.Context, ln net.Listener, h http.Handler, log *slog.Logger) error {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		// Requests outlive ctx's cancellation, so that Shutdown lets those in flight finish.
		BaseContext: func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return fmt.Errorf("serve on %s: %w", ln.Addr(), err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	err := srv.Shutdown(sctx)
	if e := <-done; !errors.Is(e, http.ErrServerClosed) && err == nil {
		err = e
	}
	if err != nil {
		return fmt.Errorf("shut down the server on %s: %w", ln.Addr(), err)
	}
	return nil
}

func cacheFor(d time.Duration, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age="+strconv.Itoa(int(d.Seconds())))
		w.Header().Set("X-Content-Type-Options", "nosniff")
		h.ServeHTTP(w, r)
	})
}

// Errors handlers return for the client's mistakes; anything else is a server error.
var (
	errNotFound = errors.New("no such page")
	errGone     = errors.New("the files of this version are gone from the archive")
)

// badRequest is a request that cannot be answered as asked.
type badRequest struct{ msg string }

func (e badRequest) Error() string { return e.msg }

func badRequestf(format string, args ...any) error { return badRequest{fmt.Sprintf(format, args...)} }

// view is what a handler asks the layout to render.
type view struct {
	Template string // the page template
	Title    string
	Nav      string // the section highlighted in the navigation
	Crumbs   []Crumb
	Feed     string // the Atom feed of what the view shows, "" if none
	Data     any
}

// Crumb is one step of the breadcrumbs above a view; the last has no link.
type Crumb struct{ Name, Href string }

// urlCrumbs are the breadcrumbs of a URL's place in its site: Sites, the site, each directory, and
// the page itself when page is set (without a link: it is the view). Handlers that know the
// politeness domain put it in with siteCrumb.
func urlCrumbs(u string, page bool) []Crumb {
	cs := []Crumb{{"Sites", "/sites"}}
	pu, err := url.Parse(u)
	if err != nil || pu.Host == "" {
		return cs
	}
	origin := pu.Scheme + "://" + pu.Host + "/"
	if !strings.HasPrefix(u, origin) {
		return cs
	}
	cs = append(cs, Crumb{origin, "/tree?p=" + url.QueryEscape(origin)})
	rest := u[len(origin):]
	acc := origin
	for {
		i := strings.IndexByte(rest, '/')
		if i < 0 {
			break
		}
		acc += rest[:i+1]
		cs = append(cs, Crumb{rest[:i+1], "/tree?p=" + url.QueryEscape(acc)})
		rest = rest[i+1:]
	}
	if page && rest != "" {
		cs = append(cs, Crumb{rest, ""}) // the view itself
	}
	if !page {
		cs[len(cs)-1].Href = ""
	}
	return cs
}

// withSite puts the politeness domain of u's origin after "Sites" in cs, when strata knows it.
func (s *Server) withSite(ctx context.Context, u string, cs []Crumb) []Crumb {
	pu, err := url.Parse(u)
	if err != nil || len(cs) < 2 {
		return cs
	}
	d, err := s.opts.DB.OriginDomain(ctx, pu.Scheme+"://"+pu.Host)
	if err != nil || d == "" {
		return cs
	}
	return slices.Insert(cs, 1, Crumb{d, "/sites/" + url.PathEscape(d)})
}

// page adapts a handler that returns a view or an error to http.Handler, with strata's headers.
func (s *Server) page(h func(*http.Request) (*view, error)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hdr := w.Header()
		hdr.Set("Content-Security-Policy", pagePolicy)
		hdr.Set("X-Content-Type-Options", "nosniff")
		hdr.Set("X-Frame-Options", "DENY")
		hdr.Set("Referrer-Policy", "no-referrer")
		hdr.Set("Cache-Control", "no-cache")
		v, err := h(r)
		status := http.StatusOK
		if err != nil {
			v, status = s.errorView(r, err)
		}
		s.render(w, status, v)
	})
}

func (s *Server) errorView(r *http.Request, err error) (*view, int) {
	var br badRequest
	switch {
	case errors.Is(err, errNotFound), errors.Is(err, store.ErrNotFound):
		return &view{Template: "error", Title: "Not found", Data: "strata has no such page: " + r.URL.Path}, http.StatusNotFound
	case errors.As(err, new(heldElsewhere)):
		// Not a failure: the version exists, on another machine, and this is where.
		return &view{Template: "error", Title: "Held by another worker", Data: err.Error()}, http.StatusOK
	case errors.Is(err, errGone):
		return &view{Template: "error", Title: "Gone", Data: err.Error()}, http.StatusGone
	case errors.As(err, &br):
		return &view{Template: "error", Title: "Bad request", Data: br.msg}, http.StatusBadRequest
	case r.Context().Err() != nil:
		return &view{Template: "error", Title: "Cancelled", Data: "the request was cancelled"}, http.StatusServiceUnavailable
	}
	s.log.Error("serve: request failed", "path", r.URL.Path, "err", err)
	return &view{Template: "error", Title: "Error", Data: "strata could not answer: " + err.Error()}, http.StatusInternalServerError
}

// idParam reads a positive integer path value.
func idParam(r *http.Request, name string) (int64, error) {
	n, err := strconv.ParseInt(r.PathValue(name), 10, 64)
	if err != nil || n <= 0 {
		return 0, errNotFound
	}
	return n, nil
}

// intQuery reads an optional non-negative integer query parameter.
func intQuery(r *http.Request, name string) (int64, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, badRequestf("%s must be a non-negative whole number, got %q", name, v)
	}
	return n, nil
}

// siteCache keeps per-domain summaries until the database changes: counting a large site's URLs
// reads its whole stretch of the host index, which is worth doing once per run, not per request.
type siteCache struct {
	mu      sync.Mutex
	version string
	entries map[string]siteSummary
}

func (c *siteCache) get(version, domain string) (siteSummary, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.version != version {
		c.version, c.entries = version, map[string]siteSummary{}
	}
	e, ok := c.entries[domain]
	return e, ok
}

func (c *siteCache) put(version, domain string, e siteSummary) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.version == version && len(c.entries) < 10000 {
		c.entries[domain] = e
	}
}
