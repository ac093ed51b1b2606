// Package collycrawl crawls a web with github.com/gocolly/colly/v2 set up as a plain polite crawler,
// the baseline that strata's load benchmarks are compared with. Only the load benchmarks and the
// load command import it; it is never part of strata's binary.
//
// The settings match strata's crawl stage where colly has an equivalent: Workers requests in flight
// at once across all hosts (strata's crawl.workers), one request at a time per host with Delay
// between the end of one response and the next request (colly's LimitRule per host, Parallelism 1),
// robots.txt obeyed, links followed one level below the seeds. What colly does not do and strata
// does (text extraction, change digests, the archive, the SQLite frontier) it does not do here
// either: the comparison is strata's whole pipeline against colly's fetch-and-follow. One difference
// in colly's favour stays: colly fetches robots.txt outside its LimitRules, so the first page of a
// host follows its robots.txt without the delay (strata waits the delay after robots.txt too).
package collycrawl

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/gocolly/colly/v2"
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
}

// Stats is what a crawl did.
type Stats struct {
	Pages    int64 // responses handed to the callbacks (2xx)
	Errors   int64 // requests that failed, 4xx and 5xx included
	Links    int64 // links the callbacks saw (before colly's visited check)
	Requests int64 // HTTP requests sent, robots.txt included
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
	for _, s := range seeds {
		u, err := url.Parse(s)
		if err != nil {
			return st, fmt.Errorf("colly crawl: seed %q: %w", s, err)
		}
		hosts[u.Host] = true
	}

	c := colly.NewCollector(
		colly.Async(true),
		colly.MaxDepth(2), // the seeds are depth 1, the pages they link to depth 2
		colly.UserAgent(opts.UserAgent),
		colly.StdlibContext(ctx),
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
	c.OnHTML("a[href]", func(e *colly.HTMLElement) {
		atomic.AddInt64(&st.Links, 1)
		// Visit resolves the link against the page and refuses what was visited or is too deep.
		e.Request.Visit(e.Attr("href"))
	})
	c.OnResponse(func(*colly.Response) { atomic.AddInt64(&st.Pages, 1) })
	c.OnError(func(r *colly.Response, err error) {
		atomic.AddInt64(&st.Errors, 1)
		errMu.Lock()
		if firstErr == nil {
			firstErr = fmt.Errorf("colly crawl: %s: %w", r.Request.URL, err)
		}
		errMu.Unlock()
	})
	for _, s := range seeds {
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
