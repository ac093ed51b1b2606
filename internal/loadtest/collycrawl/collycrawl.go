// Package collycrawl crawls a web with github.com/gocolly/colly/v2 set up as a plain polite crawler,
// the baseline that strata's load benchmarks are compared with. Only the load benchmarks and the
// load command import it; it is never part of strata's binary.
//
// The settings match strata's crawl stage where colly has an equivalent: Workers requests in flight
// at once across all hosts (strata's crawl.workers), one request at a time per host with Delay
// between the end of one response and the next request (colly's LimitRule per host, Parallelism 1),
// robots.txt obeyed, every link on the seeds' hosts followed (strata's seeds are given the levels
// the web needs; colly is given no depth limit, because it counts the depth of the path it first
// found a page by, which in an asynchronous crawl is not always the shortest, and a limit lost 31
// of 10,000 pages of a web whose every page strata's levels reach). With a
// TextDir it also does the per-page work of a plain archiving crawler: it extracts each page's
// visible text (goquery's text of the body, scripts and styles removed) and writes it to a file of
// its own. What strata does beyond that (main-content text, change digests, WARC, the SQLite
// frontier and records) it does not do. One difference in colly's favour stays: colly fetches
// robots.txt outside its LimitRules, so the first page of a host follows its robots.txt without the
// delay (strata waits the delay after robots.txt too).
package collycrawl

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/gocolly/colly/v2"
	"golang.org/x/net/html"
)

// Options set up the colly crawler.
type Options struct {
	UserAgent string
	// Workers bounds the requests in flight across all hosts, like strata's crawl.workers; default 32.
	Workers int
	// Delay is the gap after each response before the next request to the same host (LimitRule.Delay).
	Delay time.Duration
	// PageTimeout bounds one request; default 30s, strata's crawl.page_timeout.
	PageTimeout time.Duration
	// TextDir, when set, receives the visible text of every page, one file per page.
	TextDir string
}

// Stats is what a crawl did.
type Stats struct {
	Pages    int64 // responses handed to the callbacks (2xx)
	Errors   int64 // requests that failed, 4xx and 5xx included
	Links    int64 // links the callbacks saw (before colly's visited check)
	Requests int64 // HTTP requests sent, robots.txt included
	Texts    int64 // text files written to Options.TextDir
}

// Crawl crawls seeds and the pages they link to on their own hosts, and returns when every request
// has finished. Every connection goes to a loopback address: anything else is refused when dialled.
// When ctx is cancelled no new request starts.
func Crawl(ctx context.Context, seeds []string, opts Options) (Stats, error) {
	if opts.Workers <= 0 {
		opts.Workers = 32
	}
	if opts.PageTimeout <= 0 {
		opts.PageTimeout = 30 * time.Second
	}
	var st Stats
	hosts := map[string]bool{}
	var allowed []string
	for _, s := range seeds {
		u, err := url.Parse(s)
		if err != nil {
			return st, fmt.Errorf("colly crawl: seed %q: %w", s, err)
		}
		hosts[u.Host] = true
		allowed = append(allowed, u.Hostname())
	}

	c := colly.NewCollector(
		colly.Async(true),
		colly.UserAgent(opts.UserAgent),
		colly.StdlibContext(ctx),
		colly.AllowedDomains(allowed...),
	)
	c.IgnoreRobotsTxt = false
	c.SetRequestTimeout(opts.PageTimeout)
	c.WithTransport(&limited{sem: make(chan struct{}, opts.Workers), rt: loopbackTransport(), sent: &st.Requests})
	// One rule per host: a LimitRule's Parallelism is shared by every domain its pattern matches, so
	// "*" with Parallelism 1 would allow one request in all.
	for h := range hosts {
		if err := c.Limit(&colly.LimitRule{DomainGlob: h, Parallelism: 1, Delay: opts.Delay}); err != nil {
			return st, fmt.Errorf("colly crawl: limit %s: %w", h, err)
		}
	}

	var errMu sync.Mutex
	var firstErr error
	c.OnRequest(func(r *colly.Request) {
		if ctx.Err() != nil {
			r.Abort()
		}
	})
	var visited sync.Map // colly's own check is check-then-act: two pages can visit a URL at once
	c.OnHTML("a[href]", func(e *colly.HTMLElement) {
		atomic.AddInt64(&st.Links, 1)
		u := e.Request.AbsoluteURL(e.Attr("href"))
		if _, seen := visited.LoadOrStore(u, true); seen || u == "" {
			return
		}
		e.Request.Visit(u)
	})
	fail := func(err error) {
		errMu.Lock()
		if firstErr == nil {
			firstErr = err
		}
		errMu.Unlock()
	}
	if opts.TextDir != "" {
		c.OnHTML("body", func(e *colly.HTMLElement) {
			var b strings.Builder
			visibleText(e.DOM.Get(0), &b)
			text := strings.Join(strings.Fields(b.String()), " ")
			n := atomic.AddInt64(&st.Texts, 1)
			name := filepath.Join(opts.TextDir, strconv.FormatInt(n, 10)+".txt")
			if err := os.WriteFile(name, []byte(e.Request.URL.String()+"\n\n"+text+"\n"), 0o644); err != nil {
				atomic.AddInt64(&st.Errors, 1)
				fail(fmt.Errorf("colly crawl: text of %s: %w", e.Request.URL, err))
			}
		})
	}
	c.OnResponse(func(*colly.Response) { atomic.AddInt64(&st.Pages, 1) })
	c.OnError(func(r *colly.Response, err error) {
		atomic.AddInt64(&st.Errors, 1)
		fail(fmt.Errorf("colly crawl: %s: %w", r.Request.URL, err))
	})
	for _, s := range seeds {
		visited.Store(s, true)
		if err := c.Visit(s); err != nil {
			return st, fmt.Errorf("colly crawl: visit %s: %w", s, err)
		}
	}
	c.Wait()
	if st.Errors > 0 {
		return st, firstErr
	}
	return st, ctx.Err()
}

// visibleText appends the text under n, leaving out what a browser does not show as text.
func visibleText(n *html.Node, b *strings.Builder) {
	switch {
	case n.Type == html.TextNode:
		b.WriteString(n.Data)
		b.WriteByte(' ')
		return
	case n.Type == html.ElementNode:
		switch n.Data {
		case "script", "style", "noscript", "template", "svg":
			return
		}
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		visibleText(c, b)
	}
}

// loopbackTransport is colly's usual transport (http.DefaultTransport's settings, and strata's
// idle-connection limits) with a dialler that refuses anything but loopback.
func loopbackTransport() *http.Transport {
	d := &net.Dialer{Timeout: 30 * time.Second, Control: func(_, address string, _ syscall.RawConn) error {
		host, _, err := net.SplitHostPort(address)
		if err != nil {
			return err
		}
		if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
			return fmt.Errorf("colly crawl: %s is not a loopback address", address)
		}
		return nil
	}}
	return &http.Transport{
		DialContext:         d.DialContext,
		MaxIdleConns:        100,
		MaxIdleConnsPerHost: 2,
		IdleConnTimeout:     90 * time.Second,
	}
}

// limited bounds the requests in flight across all hosts: a slot is taken before the request is sent
// and given back when its body is closed.
type limited struct {
	sem  chan struct{}
	rt   http.RoundTripper
	sent *int64
}

func (l *limited) RoundTrip(req *http.Request) (*http.Response, error) {
	select {
	case l.sem <- struct{}{}:
	case <-req.Context().Done():
		return nil, req.Context().Err()
	}
	atomic.AddInt64(l.sent, 1)
	resp, err := l.rt.RoundTrip(req)
	if err != nil {
		<-l.sem
		return nil, err
	}
	resp.Body = &releaseBody{ReadCloser: resp.Body, release: func() { <-l.sem }}
	return resp, nil
}

type releaseBody struct {
	io.ReadCloser
	once    sync.Once
	release func()
}

func (b *releaseBody) Close() error {
	err := b.ReadCloser.Close()
	b.once.Do(b.release)
	return err
}
