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
// times the last response's duration, at most MaxLatencyGap (slow servers get more room, as in
// Heritrix, but a response cut at the page timeout does not buy minutes of silence). A Crawl-delay
// learnt after a response applies to the gap after it. Retry-After and error backoff push a domain
// further back with Defer.
//
// What a process learnt about a domain outlives it: Changed lists the domains' states for the caller
// to store, and Restore gives them to the next process's Gate, so that a run started right after
// another (or after a crash) keeps every gap.
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
	// MaxLatencyGap caps the part of the gap that DelayFactor derives from a response's duration;
	// 0 means DefaultMaxLatencyGap. The delay and the Crawl-delay are never capped.
	MaxLatencyGap time.Duration
}

// DefaultMaxLatencyGap is the longest gap a slow response earns through DelayFactor: Heritrix's
// default max-delay-ms. Without a cap, a slow-drip page cut at a 30 s page timeout would keep its
// domain idle for 150 s at the default factor of 5, holding up the end of every run that fetched it.
const DefaultMaxLatencyGap = 30 * time.Second

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
	lastHost   string        // host of the last request, deferral or Crawl-delay: the domain's name in State
	crawlDelay time.Duration // from robots.txt, in this process
	lastTook   time.Duration
	requests   int
	changed    bool // since the last call of Changed
}

// New returns a Gate.
func New(opts Options) *Gate {
	if opts.MaxLatencyGap <= 0 {
		opts.MaxLatencyGap = DefaultMaxLatencyGap
	}
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

// ReadyAt returns the earliest time a request to host's domain may start, without looking host up:
// the delay for hosts that are not loopback counts only once this gate knows host is not (Ready
// finds out). The zero time means now.
func (g *Gate) ReadyAt(host string) time.Time {
	h := hostOnly(host)
	g.mu.Lock()
	defer g.mu.Unlock()
	lb, known := g.loopback[h]
	return g.readyLocked(g.domain(g.Key(host)), known && !lb)
}

// Ready returns the earliest time a request to host may start, the delay for hosts that are not
// loopback included: a request made before then waits at the gate. Afterwards ReadyAt is exact for
// host too.
func (g *Gate) Ready(ctx context.Context, host string) time.Time {
	public := !g.isLoopback(ctx, hostOnly(host))
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.readyLocked(g.domain(g.Key(host)), public)
}

// readyLocked is when dom may next be contacted; public says the request goes to a host that is not
// loopback, which must be the full delay after the last response whatever host that came from.
func (g *Gate) readyLocked(dom *domain, public bool) time.Time {
	ready := dom.next
	if public {
		if t := dom.lastEnd.Add(g.opts.Delay); t.After(ready) {
			ready = t
		}
	}
	return ready
}

// SetCrawlDelay records a robots.txt Crawl-delay for host's domain. The largest one seen is kept:
// it is honoured however large it is, from the end of the last response on — including the
// response that carried the robots.txt, whose gap was set before anyone had read it.
func (g *Gate) SetCrawlDelay(host string, d time.Duration) {
	g.mu.Lock()
	defer g.mu.Unlock()
	dom := g.domain(g.Key(host))
	if d > dom.crawlDelay {
		dom.crawlDelay = d
		dom.lastHost, dom.changed = host, true
	}
	if !dom.lastEnd.IsZero() {
		if t := dom.lastEnd.Add(dom.crawlDelay); t.After(dom.next) {
			dom.next = t
			dom.lastHost, dom.changed = host, true
		}
	}
}

// Defer keeps host's domain idle until at least t (Retry-After, error backoff).
func (g *Gate) Defer(host string, t time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	dom := g.domain(g.Key(host))
	if t.After(dom.next) {
		dom.next = t
		dom.lastHost, dom.changed = host, true
	}
}

// State is what a Gate knows about one domain that the next process must know too.
type State struct {
	Host       string        // host[:port] last contacted in the domain; the domain is its Key
	LastEnd    time.Time     // end of the domain's last response
	Next       time.Time     // earliest start of the domain's next request (gap, Crawl-delay, deferral)
	CrawlDelay time.Duration // the largest robots.txt Crawl-delay seen for the domain
}

// Changed returns the state of every domain whose state changed since the last call, for the
// caller to store and give to the next process's Restore.
func (g *Gate) Changed() []State {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []State
	for _, d := range g.domains {
		if d.changed {
			d.changed = false
			out = append(out, State{Host: d.lastHost, LastEnd: d.lastEnd, Next: d.next, CrawlDelay: d.crawlDelay})
		}
	}
	return out
}

// Restore tells the gate what an earlier process left for s.Host's domain: the next request waits
// until s.Next, and at least s.CrawlDelay (or the loopback delay) after s.LastEnd, as if this process
// had made the earlier requests. The full delay for hosts that are not loopback is applied when a
// request is made, so no name is resolved here. The Crawl-delay is not kept beyond that gap: the
// robots.txt in force sets it again before the domain's next page.
func (g *Gate) Restore(s State) {
	g.mu.Lock()
	defer g.mu.Unlock()
	dom := g.domain(g.Key(s.Host))
	if s.LastEnd.After(dom.lastEnd) {
		dom.lastEnd = s.LastEnd
	}
	next := s.Next
	if !s.LastEnd.IsZero() {
		if t := s.LastEnd.Add(max(g.opts.LoopbackDelay, s.CrawlDelay)); t.After(next) {
			next = t
		}
	}
	if next.After(dom.next) {
		dom.next = next
	}
}

// Seen tells the gate that a response from host ended at end, in an earlier process: Restore with
// nothing known but that end.
func (g *Gate) Seen(host string, end time.Time) {
	g.Restore(State{Host: host, LastEnd: end})
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
	if f := min(time.Duration(g.opts.DelayFactor*float64(took)), g.opts.MaxLatencyGap); f > gap {
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
	r, err := g.acquire(ctx, host)
	if err != nil {
		return nil, err
	}
	return func(end time.Time) { r(end, end) }, nil
}

// releaseFunc ends a request: took is when the response ended on our side, what the latency factor
// weighs; end is when the server saw it end, where the gap starts. Only the first call counts.
type releaseFunc func(took, end time.Time)

func (g *Gate) acquire(ctx context.Context, host string) (releaseFunc, error) {
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
		wait := time.Until(g.readyLocked(dom, public))
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
	return func(took, end time.Time) {
		once.Do(func() {
			d := took.Sub(start)
			gap := g.Gap(context.WithoutCancel(ctx), host, d)
			g.mu.Lock()
			dom.lastTook = d
			dom.lastEnd = end
			if n := end.Add(gap); n.After(dom.next) {
				dom.next = n
			}
			dom.lastHost, dom.changed = host, true
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
	release, err := t.gate.acquire(req.Context(), req.URL.Host)
	if err != nil {
		if req.Body != nil {
			req.Body.Close() // RoundTripper contract: always close the request body
		}
		return nil, err
	}
	resp, err := t.next.RoundTrip(req)
	if err != nil {
		now := time.Now()
		release(now, now)
		return nil, err
	}
	if resp.Body == http.NoBody {
		// Nothing follows the header (a 304, a 204, an empty body): the response has ended, and
		// closing it later is no abort.
		now := time.Now()
		release(now, now)
		return resp, nil
	}
	resp.Body = &releasingBody{ReadCloser: resp.Body, release: release}
	return resp, nil
}

// AbortMargin is added to the end of a response that strata abandons before its end (a body over the
// size cap, say): the server learns of it only when its next write fails, a moment after our close,
// and the gap is a promise about the server's view. It moves where the gap starts, not its length:
// the latency factor weighs the time the response actually took.
const AbortMargin = 25 * time.Millisecond

// releasingBody frees the domain when the caller is done with the response: at EOF, on a read error,
// or at Close, whichever comes first.
type releasingBody struct {
	io.ReadCloser
	release releaseFunc
	ended   bool
}

func (b *releasingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil {
		b.ended = true
		now := time.Now()
		b.release(now, now)
	}
	return n, err
}

func (b *releasingBody) Close() error {
	err := b.ReadCloser.Close()
	now := time.Now()
	end := now
	if !b.ended {
		end = now.Add(AbortMargin)
	}
	b.release(now, end)
	return err
}

// State returns what the gate knows of host's domain, for a caller that shares it with other
// processes while they run (a fleet of workers), rather than after (Changed).
func (g *Gate) State(host string) State {
	g.mu.Lock()
	defer g.mu.Unlock()
	d := g.domain(g.Key(host))
	return State{Host: host, LastEnd: d.lastEnd, Next: d.next, CrawlDelay: d.crawlDelay}
}
