// Package polite enforces strata's promise to the sites it visits: at most one request in flight per
// domain, and a minimum gap between the end of one response and the start of the next request.
//
// The Gate sits in the HTTP transport (Gate.Transport), so every request strata sends — robots.txt,
// pages, each hop of a redirect — passes through it whatever the caller does. The crawler's scheduler
// asks the Gate when a domain is next ready so that workers pick domains that will not block, but
// correctness does not depend on that: a request that comes early simply waits.
//
// The gap after a response is the largest of: the configured delay (the loopback delay for hosts whose
// addresses are all loopback), the domain's robots.txt Crawl-delay however large, and DelayFactor
// times the last response's duration (slow servers get more room, as in Heritrix). Retry-After and
// error backoff push a domain further back with Defer.
package polite

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/publicsuffix"
)

// Options configure a Gate.
type Options struct {
	Delay         time.Duration // gap for ordinary hosts; the caller guarantees it is at least 10s
	LoopbackDelay time.Duration // gap for hosts whose addresses are all loopback
	DelayFactor   float64       // gap is at least this many times the last response's duration
	// Loopback reports whether host (no port) resolves only to loopback addresses. nil means no host is.
	Loopback func(ctx context.Context, host string) bool
	// ByHost makes each host name its own domain instead of grouping by registrable domain.
	ByHost bool
}

// Gate serialises and spaces requests per domain. It is safe for concurrent use.
type Gate struct {
	opts Options

	mu       sync.Mutex
	domains  map[string]*domain
	loopback map[string]bool // per host, decided once so the delay cannot flip within a run
}

type domain struct {
	slot       chan struct{} // one token: held from sending a request until its response body is closed
	next       time.Time     // earliest start of the next request
	lastEnd    time.Time     // end of the last response
	crawlDelay time.Duration // from robots.txt
	lastTook   time.Duration
	requests   int
}

// New returns a Gate.
func New(opts Options) *Gate {
	return &Gate{opts: opts, domains: map[string]*domain{}, loopback: map[string]bool{}}
}

// Key returns the politeness key of a host (with or without port): its registrable domain
// ("news.example.co.uk" → "example.co.uk"), the host name itself for IP addresses, for names the
// public suffix list cannot place, and when the Gate was built with ByHost.
func (g *Gate) Key(host string) string {
	h := hostOnly(host)
	if g.opts.ByHost || net.ParseIP(h) != nil {
		return h
	}
	d, err := publicsuffix.EffectiveTLDPlusOne(h)
	if err != nil {
		return h
	}
	return d
}

func hostOnly(host string) string {
	if h, _, err := net.SplitHostPort(host); err == nil {
		return strings.ToLower(h)
	}
	return strings.ToLower(strings.Trim(host, "[]"))
}

func (g *Gate) domain(key string) *domain {
	d, ok := g.domains[key]
	if !ok {
		d = &domain{slot: make(chan struct{}, 1)}
		g.domains[key] = d
	}
	return d
}

// ReadyAt returns the earliest time a request to host's domain may start. The zero time means now.
func (g *Gate) ReadyAt(host string) time.Time {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.domain(g.Key(host)).next
}

// SetCrawlDelay records a robots.txt Crawl-delay for host's domain. The largest one seen is kept:
// it is honoured however large it is.
func (g *Gate) SetCrawlDelay(host string, d time.Duration) {
	g.mu.Lock()
	defer g.mu.Unlock()
	dom := g.domain(g.Key(host))
	if d > dom.crawlDelay {
		dom.crawlDelay = d
	}
}

// Defer keeps host's domain idle until at least t (Retry-After, error backoff).
func (g *Gate) Defer(host string, t time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	dom := g.domain(g.Key(host))
	if t.After(dom.next) {
		dom.next = t
	}
}

// Seen tells the gate that a response from host ended at end, in an earlier process: the next request
// to its domain waits the gap after it, as if this process had made that request. The loopback delay
// is applied at once and the full delay, for hosts that are not loopback, when a request is made, so
// no name is resolved here.
func (g *Gate) Seen(host string, end time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	dom := g.domain(g.Key(host))
	if end.After(dom.lastEnd) {
		dom.lastEnd = end
	}
	if t := end.Add(g.opts.LoopbackDelay); t.After(dom.next) {
		dom.next = t
	}
}

// Requests returns how many requests have passed the gate for host's domain.
func (g *Gate) Requests(host string) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.domain(g.Key(host)).requests
}

// Gap returns the gap that would follow a response from host that took took.
func (g *Gate) Gap(ctx context.Context, host string, took time.Duration) time.Duration {
	base := g.opts.Delay
	if g.isLoopback(ctx, hostOnly(host)) {
		base = g.opts.LoopbackDelay
	}
	g.mu.Lock()
	cd := g.domain(g.Key(host)).crawlDelay
	g.mu.Unlock()
	gap := max(base, cd)
	if f := time.Duration(g.opts.DelayFactor * float64(took)); f > gap {
		gap = f
	}
	return gap
}

func (g *Gate) isLoopback(ctx context.Context, host string) bool {
	if g.opts.Loopback == nil {
		return false
	}
	g.mu.Lock()
	lb, ok := g.loopback[host]
	g.mu.Unlock()
	if ok {
		return lb
	}
	lb = g.opts.Loopback(ctx, host)
	g.mu.Lock()
	g.loopback[host] = lb
	g.mu.Unlock()
	return lb
}

// Acquire waits until a request to host may start: the domain's slot is free and its gap has passed.
// It returns a release function to call with the time the response ended (its body was closed or the
// request failed); the next request to the domain may start a gap after that.
func (g *Gate) Acquire(ctx context.Context, host string) (release func(end time.Time), err error) {
	key := g.Key(host)
	g.mu.Lock()
	dom := g.domain(key)
	g.mu.Unlock()

	select {
	case dom.slot <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	// The gap already set after the last response used that response's host. A request to a host that
	// is not loopback must also be the full delay after it, whatever host came before.
	public := !g.isLoopback(ctx, hostOnly(host))
	for {
		g.mu.Lock()
		ready := dom.next
		if public {
			if t := dom.lastEnd.Add(g.opts.Delay); t.After(ready) {
				ready = t
			}
		}
		wait := time.Until(ready)
		g.mu.Unlock()
		if wait <= 0 {
			break
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			<-dom.slot
			return nil, ctx.Err()
		}
	}
	start := time.Now()
	g.mu.Lock()
	dom.requests++
	g.mu.Unlock()
	var once sync.Once
	return func(end time.Time) {
		once.Do(func() {
			took := end.Sub(start)
			gap := g.Gap(context.WithoutCancel(ctx), host, took)
			g.mu.Lock()
			dom.lastTook = took
			dom.lastEnd = end
			if n := end.Add(gap); n.After(dom.next) {
				dom.next = n
			}
			g.mu.Unlock()
			<-dom.slot
		})
	}, nil
}

// Transport wraps next so that every request waits for the gate and holds its domain's slot until the
// response body is closed.
func (g *Gate) Transport(next http.RoundTripper) http.RoundTripper {
	return &transport{gate: g, next: next}
}

type transport struct {
	gate *Gate
	next http.RoundTripper
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	release, err := t.gate.Acquire(req.Context(), req.URL.Host)
	if err != nil {
		if req.Body != nil {
			req.Body.Close() // RoundTripper contract: always close the request body
		}
		return nil, err
	}
	resp, err := t.next.RoundTrip(req)
	if err != nil {
		release(time.Now())
		return nil, err
	}
	resp.Body = &releasingBody{ReadCloser: resp.Body, release: release}
	return resp, nil
}

// AbortMargin is added to the end of a response that strata abandons before its end (a body over the
// size cap, say): the server learns of it only when its next write fails, a moment after our close,
// and the gap is a promise about the server's view.
const AbortMargin = 25 * time.Millisecond

// releasingBody frees the domain when the caller is done with the response: at EOF, on a read error,
// or at Close, whichever comes first.
type releasingBody struct {
	io.ReadCloser
	release func(time.Time)
	ended   bool
}

func (b *releasingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil {
		b.ended = true
		b.release(time.Now())
	}
	return n, err
}

func (b *releasingBody) Close() error {
	err := b.ReadCloser.Close()
	end := time.Now()
	if !b.ended {
		end = end.Add(AbortMargin)
	}
	b.release(end)
	return err
}
