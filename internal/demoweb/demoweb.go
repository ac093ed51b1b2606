// Package demoweb serves a small scripted web on a loopback address for strata demo: pages whose
// content is a function of the demo's day, so a newcomer can watch revisit intervals adapt and the
// selective rule skip quiet subtrees without touching anyone's real site.
package demoweb

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"time"
)

// Web is the demo site. Its content changes when Advance moves it to the next day.
type Web struct {
	server *http.Server
	base   string
	day    atomic.Int64
}

// Page describes one page of the demo site and how often it changes.
type Page struct {
	Path  string
	About string // what the page stands for, for the demo's report
	Level int    // seed level, for the seeds
	Seed  bool
}

// Pages lists the demo site's pages: the seeds and the pages below them.
var Pages = []Page{
	{Path: "/", About: "front page: new headlines every day", Level: 2, Seed: true},
	{Path: "/about", About: "about page: never changes", Level: 0, Seed: true},
	{Path: "/archive/", About: "archive index: a hub that never changes, with pages that never change", Level: 1, Seed: true},
	{Path: "/forum/", About: "forum index: a hub that never changes, with threads that change every day", Level: 1, Seed: true},
	{Path: "/weekly", About: "weekly column: changes every seventh day", Level: 0, Seed: true},
}

// Start serves the demo web on 127.0.0.1 at a free port.
func Start() (*Web, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("demo web: %w", err)
	}
	w := &Web{base: "http://" + ln.Addr().String()}
	w.day.Store(1)
	w.server = &http.Server{Handler: http.HandlerFunc(w.serve), ReadHeaderTimeout: 10 * time.Second}
	go w.server.Serve(ln)
	return w, nil
}

// URL returns the absolute URL of path.
func (w *Web) URL(path string) string { return w.base + path }

// Advance moves the web to the next day.
func (w *Web) Advance() { w.day.Add(1) }

// Close stops the server.
func (w *Web) Close() error { return w.server.Shutdown(context.Background()) }

func (w *Web) serve(rw http.ResponseWriter, r *http.Request) {
	day := int(w.day.Load())
	body, ok := w.page(r.URL.Path, day)
	if !ok {
		http.NotFound(rw, r)
		return
	}
	rw.Header().Set("Content-Type", "text/html; charset=utf-8")
	fmt.Fprintf(rw, "<!doctype html><html><head><title>Demo Gazette</title></head><body>%s</body></html>", body)
}

func (w *Web) page(path string, day int) (string, bool) {
	switch {
	case path == "/robots.txt":
		return "", false // no robots.txt: everything allowed
	case path == "/":
		return fmt.Sprintf(`<h1>Demo Gazette</h1><p>Headline of day %d: %s.</p>
			<a href="/about">About</a> <a href="/archive/">Archive</a> <a href="/forum/">Forum</a> <a href="/weekly">Weekly</a>`,
			day, headlines[day%len(headlines)]), true
	case path == "/about":
		return "<h1>About</h1><p>The Demo Gazette is a made-up newspaper served from your own machine.</p>", true
	case path == "/weekly":
		return fmt.Sprintf("<h1>Weekly column</h1><p>This week: %s.</p>", headlines[((day-1)/7)%len(headlines)]), true
	case path == "/archive/" || path == "/forum/":
		kind := strings.Trim(path, "/")
		var b strings.Builder
		fmt.Fprintf(&b, "<h1>%s</h1>", kind)
		for i := 1; i <= 6; i++ {
			fmt.Fprintf(&b, `<p><a href="%s%d">%s item %d</a></p>`, path, i, kind, i)
		}
		return b.String(), true
	case strings.HasPrefix(path, "/archive/"):
		return fmt.Sprintf("<h1>Archived story %s</h1><p>Written years ago and never touched since.</p>", path[len("/archive/"):]), true
	case strings.HasPrefix(path, "/forum/"):
		n := path[len("/forum/"):]
		return fmt.Sprintf("<h1>Thread %s</h1><p>%d replies so far; the latest says: %s.</p>", n, day*3,
			headlines[(day+int(n[0]))%len(headlines)]), true
	}
	return "", false
}

var headlines = []string{
	"harbour deepening approved", "library opens at night", "tram line extended to the coast",
	"record tomato harvest", "council adopts a four-day week", "bridge repainted blue", "museum finds a lost map",
}
