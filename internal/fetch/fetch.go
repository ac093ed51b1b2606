// Package fetch fetches one URL safely for the crawler: a single page under
// one deadline, a byte cap counted after decompression, a bounded redirect
// chain and a dial-time guard against private network addresses, with every
// failure classified so the caller can decide whether to retry.
//
// Scheduling, politeness delays and robots.txt live in the crawler; this
// package only defends a single fetch against the traps a broken or hostile
// server can set.
package fetch

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"time"

	"github.com/strata-crawler/strata/internal/httpwire"
)

// Defaults applied by New to zero Options fields.
const (
	DefaultPageTimeout  = 30 * time.Second
	DefaultMaxBytes     = 1 << 20
	DefaultMaxRedirects = 5
	DefaultUserAgent    = "strata (+https://github.com/strata-crawler/strata)"
)

const (
	// acceptHeader prefers the types we keep; anything else is recorded
	// without reading its body, so we still accept it at low priority.
	acceptHeader = "text/html,application/xhtml+xml;q=0.9,text/plain;q=0.8,*/*;q=0.1"
	// acceptEncoding lists only codings decoded here, so the byte cap can be
	// applied to the decoded body.
	acceptEncoding = "gzip, deflate, br"
	// drainLimit bounds how much of an unwanted body (redirects, the tail
	// after a complete read) is read just to let the connection be reused.
	drainLimit = 4 << 10
	// maxHeaderBytes caps response headers: a header bomb must not eat memory
	// before the body cap can apply.
	maxHeaderBytes = 256 << 10
)

// Options configures a Client. The zero value is usable.
type Options struct {
	UserAgent string // default DefaultUserAgent
	// PageTimeout is one deadline covering DNS, connect, TLS, headers, every
	// redirect hop and the whole body, so a slow-drip server is cut.
	// Default 30s.
	PageTimeout time.Duration
	// MaxBytes caps the body, counted after decompression so a gzip or
	// brotli bomb stops at the cap. Default 1 MiB.
	MaxBytes int64
	// MaxRedirects is the number of redirect hops followed. 0 means the
	// default, 5; a negative value follows none and returns the redirect
	// response itself (its Location in Header), so a caller can schedule the
	// target as a request of its own.
	MaxRedirects int
	// CheckRedirect is asked before following each redirect hop (robots.txt
	// and URL filters live there); a non-nil error stops the fetch with that
	// error wrapped.
	CheckRedirect func(ctx context.Context, next *url.URL) error
	// AllowPrivate reports whether host (as written in the URL, lower-case,
	// no port, IPv6 without brackets, IDN in punycode) may resolve to a
	// non-public address; nil means never. The crawler says yes for hosts
	// the user seeded.
	AllowPrivate func(host string) bool
	// LookupNetIP resolves host names; nil means
	// net.DefaultResolver.LookupNetIP(ctx, "ip", host). Tests inject a fake.
	LookupNetIP func(ctx context.Context, host string) ([]netip.Addr, error)
	// Wrap, when set, decorates the guarded transport; every request of Fetch
	// and of HTTPClient passes through the result. The crawler's politeness
	// gate lives there.
	Wrap func(http.RoundTripper) http.RoundTripper
}

// Client fetches pages. It is safe for concurrent use.
type Client struct {
	opts         Options
	maxRedirects int
	followNone   bool              // redirects are returned, not followed
	transport    *http.Transport   // the guarded transport, for closing idle connections
	rt           http.RoundTripper // transport, wrapped by Options.Wrap
	httpClient   *http.Client
}

// New returns a Client with defaults applied to opts.
func New(opts Options) *Client {
	if opts.UserAgent == "" {
		opts.UserAgent = DefaultUserAgent
	}
	if opts.PageTimeout <= 0 {
		opts.PageTimeout = DefaultPageTimeout
	}
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = DefaultMaxBytes
	}
	maxRedirects := opts.MaxRedirects
	followNone := maxRedirects < 0
	switch {
	case maxRedirects == 0:
		maxRedirects = DefaultMaxRedirects
	case maxRedirects < 0:
		maxRedirects = 0
	}
	if opts.LookupNetIP == nil {
		opts.LookupNetIP = func(ctx context.Context, host string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		}
	}
	g := &guard{
		dialer:       net.Dialer{Timeout: opts.PageTimeout, KeepAlive: 30 * time.Second},
		lookup:       opts.LookupNetIP,
		allowPrivate: opts.AllowPrivate,
	}
	t := &http.Transport{
		// No proxy, not even from the environment: a proxy would resolve and
		// connect on our behalf, so the private-address guard in DialContext
		// would only ever see the proxy's address.
		Proxy:       nil,
		DialContext: g.DialContext,
		// HTTP/1.1 only. The archive keeps each exchange as HTTP messages in WARC records, and
		// WARC 1.1 defines them for HTTP/1.x: an HTTP/2 exchange has no wire form to keep, and
		// a head written as "HTTP/2" is refused by net/http's parser and by the replay tools,
		// so every page fetched over HTTP/2 lost its WARC records. One request at a time per
		// host (politeness) leaves HTTP/2's multiplexing nothing to do. A non-nil empty map
		// keeps ALPN from offering h2.
		TLSNextProto: map[string]func(string, *tls.Conn) http.RoundTripper{},
		// The crawler rotates through every domain due in a run and comes
		// back to each after its politeness gap; a pool smaller than the
		// domains in rotation has evicted a host's connection by then, and
		// every request dials anew (measured: 9,500 connections for 9,000
		// pages on 300 hosts with a pool of 100).
		MaxIdleConns: 2048,
		// The crawler is polite per host, one request at a time; more idle
		// connections would only hold sockets open on servers we will not
		// hit in parallel.
		MaxIdleConnsPerHost: 1,
		IdleConnTimeout:     90 * time.Second,
		// These duplicate the per-fetch deadline for callers of HTTPClient
		// who use their own context; they never extend it.
		TLSHandshakeTimeout:    opts.PageTimeout,
		ResponseHeaderTimeout:  opts.PageTimeout,
		ExpectContinueTimeout:  time.Second,
		MaxResponseHeaderBytes: maxHeaderBytes,
		// We decode gzip/br/deflate ourselves so MaxBytes counts decoded
		// bytes; transparent decompression would hide the encoding from us.
		DisableCompression: true,
	}
	c := &Client{opts: opts, maxRedirects: maxRedirects, followNone: followNone, transport: t, rt: t}
	if opts.Wrap != nil {
		c.rt = opts.Wrap(t)
	}
	c.httpClient = &http.Client{
		Transport: &userAgentTransport{rt: c.rt, userAgent: opts.UserAgent},
		Timeout:   opts.PageTimeout,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			// len(via) is the number of the hop about to be followed.
			if len(via) > maxRedirects {
				return fmt.Errorf("%w (limit %d)", ErrTooManyRedirects, maxRedirects)
			}
			return nil
		},
	}
	return c
}

// HTTPClient returns an *http.Client sharing the guarded transport, for
// robots.txt fetches. It follows at most MaxRedirects redirects, has
// PageTimeout as its overall timeout and sends the configured User-Agent
// when the request has none. It does not cap or decode bodies: the caller
// must limit what it reads.
func (c *Client) HTTPClient() *http.Client { return c.httpClient }

// Close closes idle connections. The Client stays usable.
func (c *Client) Close() { c.transport.CloseIdleConnections() }

// Request is one page to fetch.
type Request struct {
	URL          string // absolute http(s) URL
	ETag         string // sent as If-None-Match when set
	LastModified string // sent as If-Modified-Since when set
}

// Response is the outcome of a fetch that got an HTTP response, whatever its
// status.
type Response struct {
	URL       string   // as requested
	FinalURL  string   // after redirects
	Redirects []string // the hops followed, in order
	Status    int
	Header    http.Header
	// ContentType is the media type only, lower-case, e.g. "text/html";
	// sniffed from the body when the server sent none or an unparsable one.
	ContentType string
	// Charset is the charset the body was decoded from, e.g. "utf-8",
	// "windows-1252"; empty when no body was kept.
	Charset string
	// Body is the bytes as served, decompressed, at most MaxBytes; empty for
	// 304 and for non-text content.
	Body []byte
	// Text is Body decoded to UTF-8 (BOM, header charset, <meta charset>).
	Text        []byte
	Truncated   bool // body was cut at MaxBytes
	NotModified bool // 304
	// Kept reports that the content type is text (text/html,
	// application/xhtml+xml, text/plain): only then is the body read.
	// False for 304, whose body is never read.
	Kept         bool
	ETag         string // validator from the response
	LastModified string // validator from the response
	// Date is the server's Date header, zero if absent or invalid.
	Date time.Time
	// RetryAfter comes from Retry-After on 429 and 503 (delta-seconds, or an
	// HTTP-date relative to Date, or to now without Date); 0 if absent.
	RetryAfter time.Duration
	Duration   time.Duration // wall time of the whole fetch
	// Bytes counts body bytes read off the wire (before decompression),
	// redirect bodies included, for accounting. Headers are not counted.
	Bytes int64
	// Head is the final hop's request as sent and response head as
	// received, for the archive's WARC records.
	Head httpwire.Head
}

// Fetch gets req.URL, following redirects. A response with any status,
// 4xx and 5xx included, is returned without error; an error (always an
// *Error) means no usable response was obtained, and then the Response is
// nil.
func (c *Client) Fetch(ctx context.Context, req Request) (*Response, error) {
	start := time.Now()
	pageCtx, cancel := context.WithTimeout(ctx, c.opts.PageTimeout)
	defer cancel()

	f := &fetchState{c: c, ctx: ctx, pageCtx: pageCtx, req: req}
	resp, err := f.run()
	if err != nil {
		return nil, err
	}
	resp.Duration = time.Since(start)
	return resp, nil
}

// fetchState carries one Fetch through its redirect hops.
type fetchState struct {
	c       *Client
	ctx     context.Context // the caller's: its end means Canceled
	pageCtx context.Context // ctx plus PageTimeout: its end means Timeout
	req     Request
	hop     string // current redirect target, for error messages
}

func (f *fetchState) run() (*Response, error) {
	u, err := parseHTTPURL(f.req.URL)
	if err != nil {
		return nil, f.fail(err, Other)
	}
	resp := &Response{URL: f.req.URL}
	for {
		hr, rec, err := f.roundTrip(u)
		if err != nil {
			return nil, f.fail(err, kindUnknown)
		}
		loc := redirectLocation(hr)
		if loc == "" || f.c.followNone {
			resp.FinalURL = u.String()
			resp.Head = rec.Head(hr.Request, hr)
			if err := f.readResponse(resp, hr); err != nil {
				return nil, f.fail(err, kindUnknown)
			}
			return resp, nil
		}
		resp.Bytes += drainAndClose(hr.Body)

		if len(resp.Redirects) >= f.c.maxRedirects {
			return nil, f.fail(fmt.Errorf("%w (limit %d)", ErrTooManyRedirects, f.c.maxRedirects), Redirect)
		}
		next, err := u.Parse(loc)
		if err != nil {
			return nil, f.fail(fmt.Errorf("bad Location %q: %w", loc, err), Redirect)
		}
		f.hop = next.String()
		if next.Scheme != "http" && next.Scheme != "https" {
			return nil, f.fail(fmt.Errorf("unsupported scheme %q", next.Scheme), Redirect)
		}
		if next.Host == "" {
			return nil, f.fail(errors.New("no host"), Redirect)
		}
		if check := f.c.opts.CheckRedirect; check != nil {
			// A copy, so the hook cannot change where we go after it said yes.
			probe := *next
			if err := check(f.pageCtx, &probe); err != nil {
				return nil, f.fail(err, Redirect)
			}
		}
		resp.Redirects = append(resp.Redirects, f.hop)
		u = next
	}
}

func (f *fetchState) roundTrip(u *url.URL) (*http.Response, *httpwire.Recorder, error) {
	ctx, rec := httpwire.WithRecorder(f.pageCtx)
	r, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, nil, err
	}
	r.Header.Set("User-Agent", f.c.opts.UserAgent)
	r.Header.Set("Accept", acceptHeader)
	r.Header.Set("Accept-Encoding", acceptEncoding)
	// Validators are sent on every hop: they were taken from the final URL
	// of an earlier fetch, which usually sits behind the same redirects.
	if f.req.ETag != "" {
		r.Header.Set("If-None-Match", f.req.ETag)
	}
	if f.req.LastModified != "" {
		r.Header.Set("If-Modified-Since", f.req.LastModified)
	}
	// The transport directly, not an http.Client: redirects are followed
	// above, where each hop can be checked and counted.
	hr, err := f.c.rt.RoundTrip(r)
	return hr, rec, err
}

// fail turns err into an *Error. kind is used when the cause is known at the
// call site, except that the caller's context ending always means Canceled
// and the page deadline passing (say, inside CheckRedirect) means Timeout.
func (f *fetchState) fail(err error, kind Kind) error {
	switch {
	case f.ctx.Err() != nil:
		kind = Canceled
		err = context.Cause(f.ctx)
	case kind == kindUnknown, f.pageCtx.Err() != nil:
		kind = classify(f.pageCtx, err)
	}
	if kind == Timeout {
		err = &timeoutError{limit: f.c.opts.PageTimeout, cause: err}
	}
	if f.hop != "" {
		err = fmt.Errorf("redirect to %s: %w", f.hop, err)
	}
	return &Error{Op: "fetch", URL: f.req.URL, Kind: kind, Err: err}
}

// redirectLocation returns the Location to follow, or "" when hr is final.
// Like net/http, a redirect status without Location is a final response.
func redirectLocation(hr *http.Response) string {
	switch hr.StatusCode {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther,
		http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		return hr.Header.Get("Location")
	}
	return ""
}

func parseHTTPURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, err
	}
	switch {
	case !u.IsAbs():
		return nil, errors.New("not an absolute URL")
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, fmt.Errorf("unsupported scheme %q", u.Scheme)
	case u.Host == "":
		return nil, errors.New("no host")
	}
	return u, nil
}

// drainAndClose reads a little of body so the connection can be reused, then
// closes it, returning the bytes read.
func drainAndClose(body io.ReadCloser) int64 {
	n, _ := io.CopyN(io.Discard, body, drainLimit)
	body.Close()
	return n
}

// userAgentTransport sets the User-Agent on requests that have none, so
// robots.txt fetches through HTTPClient identify us too.
type userAgentTransport struct {
	rt        http.RoundTripper
	userAgent string
}

func (t *userAgentTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Header.Get("User-Agent") != "" {
		return t.rt.RoundTrip(r)
	}
	// A RoundTripper must not modify the caller's request.
	r2 := r.Clone(r.Context())
	r2.Header.Set("User-Agent", t.userAgent)
	return t.rt.RoundTrip(r2)
}

func (t *userAgentTransport) CloseIdleConnections() {
	if c, ok := t.rt.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}
