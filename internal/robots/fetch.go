package robots

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/strata-crawler/strata/internal/httpwire"
)

// maxRedirects is how many redirects Fetch follows; RFC 9309 §2.3.1.2 asks for at least five.
const maxRedirects = 5

// errTooManyRedirects is returned by the redirect check once maxRedirects have been followed.
var errTooManyRedirects = errors.New("stopped after " + strconv.Itoa(maxRedirects) + " redirects")

// Outcome classifies how a robots.txt fetch went (RFC 9309 §2.3.1).
type Outcome int

const (
	// Parsed: a 2xx status; the body was parsed.
	Parsed Outcome = iota + 1
	// Unavailable: a 4xx status other than 429; there is no policy, so everything is allowed.
	Unavailable
	// Unreachable: a 5xx or 429 status, a timeout, a network error, an error reading the body
	// or too many redirects; everything is disallowed for this run and the caller retries next
	// run.
	Unreachable
)

// String returns the outcome's name, for logs.
func (o Outcome) String() string {
	switch o {
	case Parsed:
		return "parsed"
	case Unavailable:
		return "unavailable"
	case Unreachable:
		return "unreachable"
	}
	return "Outcome(" + strconv.Itoa(int(o)) + ")"
}

// Result is what Fetch found out. FromStatus(Status, Body) always rebuilds an equivalent Rules,
// so a caller can cache Status and Body instead of Rules.
type Result struct {
	Rules     *Rules
	Outcome   Outcome
	Status    int       // final HTTP status; 0 on a network error or an error reading the body
	Body      []byte    // the 2xx body, at most MaxSize bytes; nil otherwise
	FetchedAt time.Time // when the fetch finished
	Err       error     // why the host is Unreachable; nil otherwise
	// Head is the last hop's request as sent and response head as received; empty when no
	// request was written.
	Head httpwire.Head
	// URL is the robots.txt URL that answered (the last hop of any redirects); "" before a request.
	URL string
}

// Fetch GETs scheme://host/robots.txt of origin with client (http.DefaultClient if nil),
// following at most 5 redirects, to any host, sending userAgent as the User-Agent header and
// reading at most MaxSize bytes of the body. It never fails: problems end in an Unreachable
// result with Err set. Deadlines come from ctx and the client's Timeout.
func Fetch(ctx context.Context, client *http.Client, origin *url.URL, userAgent string) Result {
	target, err := robotsURL(origin)
	if err != nil {
		return unreachable(0, fmt.Errorf("robots %v: %w", origin, err))
	}
	if client == nil {
		client = http.DefaultClient
	}
	// A copy, so that the caller's client, which may be shared, keeps its own redirect policy.
	c := *client
	c.CheckRedirect = checkRedirect

	ctx, rec := httpwire.WithRecorder(ctx)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return unreachable(0, fmt.Errorf("robots %s: %w", target, err))
	}
	if userAgent != "" {
		req.Header.Set("User-Agent", userAgent)
	}
	resp, err := c.Do(req)
	if err != nil {
		status := 0
		if resp != nil {
			// Too many redirects: the client returns the last redirect response, with its
			// body already closed, alongside the error.
			status = resp.StatusCode
		}
		return withHead(unreachable(status, fmt.Errorf("robots %s: %w", target, err)), rec, req, resp)
	}
	defer resp.Body.Close()

	switch outcomeOf(resp.StatusCode) {
	case Parsed:
		body, err := io.ReadAll(io.LimitReader(resp.Body, MaxSize))
		if err != nil {
			// A cut-off body could have lost the very rule that protects a path, so it is
			// not parsed; status 0 keeps FromStatus consistent with that.
			return unreachable(0, fmt.Errorf("robots %s: read body after %s: %w", target, resp.Status, err))
		}
		return withHead(Result{Rules: Parse(body), Outcome: Parsed, Status: resp.StatusCode, Body: body, FetchedAt: time.Now()}, rec, req, resp)
	case Unavailable:
		return withHead(Result{Rules: AllowAll(), Outcome: Unavailable, Status: resp.StatusCode, FetchedAt: time.Now()}, rec, req, resp)
	default:
		return withHead(unreachable(resp.StatusCode, fmt.Errorf("robots %s: %s", target, statusText(resp))), rec, req, resp)
	}
}

// withHead adds the exchange's head and the URL that answered to res.
func withHead(res Result, rec *httpwire.Recorder, req *http.Request, resp *http.Response) Result {
	if resp == nil {
		return res
	}
	res.Head = rec.Head(req, resp)
	res.URL = req.URL.String()
	if resp.Request != nil && resp.Request.URL != nil {
		res.URL = resp.Request.URL.String()
	}
	return res
}

// unreachable builds the Result for a host whose robots.txt could not be obtained.
func unreachable(status int, err error) Result {
	return Result{Rules: DisallowAll(), Outcome: Unreachable, Status: status, FetchedAt: time.Now(), Err: err}
}

// checkRedirect lets the client follow up to maxRedirects redirects, across hosts too, as
// RFC 9309 §2.3.1.2 asks. via holds the requests already made, so following redirect n means
// len(via) == n.
func checkRedirect(_ *http.Request, via []*http.Request) error {
	if len(via) > maxRedirects {
		return errTooManyRedirects
	}
	return nil
}

// robotsURL returns the robots.txt URL of origin's scheme and host, dropping any user
// information, path, query and fragment.
func robotsURL(origin *url.URL) (string, error) {
	if origin == nil {
		return "", errors.New("no origin URL")
	}
	scheme := strings.ToLower(origin.Scheme)
	if scheme != "http" && scheme != "https" {
		return "", fmt.Errorf("scheme %q is not http or https", origin.Scheme)
	}
	if origin.Host == "" {
		return "", errors.New("no host")
	}
	return (&url.URL{Scheme: scheme, Host: origin.Host, Path: robotsPath}).String(), nil
}

// statusText returns resp's status line, e.g. "503 Service Unavailable", even when the server
// sent no reason phrase.
func statusText(resp *http.Response) string {
	if resp.Status != "" {
		return resp.Status
	}
	return strconv.Itoa(resp.StatusCode) + " " + http.StatusText(resp.StatusCode)
}
