package robots

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

const testUA = "strata/0.1 (+https://example.org/bot)"

// newServer starts a loopback test server that is closed when the test ends.
func newServer(t *testing.T, h http.Handler) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

func mustURL(t *testing.T, raw string) *url.URL {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// checkResult asserts the outcome of a fetch and the invariants every Result keeps.
func checkResult(t *testing.T, res Result, outcome Outcome, status int) {
	t.Helper()
	if res.Outcome != outcome || res.Status != status {
		t.Errorf("Outcome, Status = %v, %d; want %v, %d (Err: %v)", res.Outcome, res.Status, outcome, status, res.Err)
	}
	if (res.Err != nil) != (outcome == Unreachable) {
		t.Errorf("Err = %v for outcome %v", res.Err, outcome)
	}
	if res.Rules == nil {
		t.Fatal("Rules is nil")
	}
	if res.FetchedAt.IsZero() {
		t.Error("FetchedAt not set")
	}
	if len(res.Body) > MaxSize {
		t.Errorf("len(Body) = %d > MaxSize", len(res.Body))
	}
	// The cache contract: Status and Body rebuild the same policy.
	rebuilt := FromStatus(res.Status, res.Body)
	for _, p := range []string{"/", "/private", "/public", "/late"} {
		if got, want := rebuilt.Allowed("strata", p), res.Rules.Allowed("strata", p); got != want {
			t.Errorf("FromStatus(Status, Body).Allowed(%q) = %v, but Rules says %v", p, got, want)
		}
	}
}

func TestFetchStatus(t *testing.T) {
	const body = "User-agent: *\nDisallow: /private\nSitemap: https://a.test/s.xml\n"
	tests := []struct {
		status  int
		outcome Outcome
		private bool // whether /private is allowed afterwards
		public  bool
	}{
		{200, Parsed, false, true},
		{203, Parsed, false, true},
		{404, Unavailable, true, true},
		{403, Unavailable, true, true}, // RFC 9309: every 4xx, even 401 and 403
		{401, Unavailable, true, true},
		{410, Unavailable, true, true},
		{429, Unreachable, false, false},
		{500, Unreachable, false, false},
		{503, Unreachable, false, false},
		{304, Unreachable, false, false},
	}
	for _, tc := range tests {
		t.Run(strconv.Itoa(tc.status), func(t *testing.T) {
			var gotUA, gotPath atomic.Value
			srv := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Header.Get("Authorization") != "" {
					t.Error("the origin's user information was sent")
				}
				gotUA.Store(r.UserAgent())
				gotPath.Store(r.URL.RequestURI())
				w.WriteHeader(tc.status)
				fmt.Fprint(w, body)
			}))
			// The origin's path, query and user information must not leak into the request.
			origin := mustURL(t, strings.Replace(srv.URL, "http://", "http://user:pw@", 1)+"/some/page?x=1#f")
			res := Fetch(context.Background(), srv.Client(), origin, testUA)
			checkResult(t, res, tc.outcome, tc.status)
			if got := res.Rules.Allowed("strata", "/private"); got != tc.private {
				t.Errorf("Allowed(/private) = %v, want %v", got, tc.private)
			}
			if got := res.Rules.Allowed("strata", "/public"); got != tc.public {
				t.Errorf("Allowed(/public) = %v, want %v", got, tc.public)
			}
			if gotUA.Load() != testUA {
				t.Errorf("server saw User-Agent %q, want %q", gotUA.Load(), testUA)
			}
			if gotPath.Load() != "/robots.txt" {
				t.Errorf("server saw request for %q, want /robots.txt", gotPath.Load())
			}
			if tc.outcome == Parsed {
				if string(res.Body) != body {
					t.Errorf("Body = %q, want %q", res.Body, body)
				}
				if s := res.Rules.Sitemaps(); len(s) != 1 {
					t.Errorf("Sitemaps() = %q", s)
				}
			} else if res.Body != nil {
				t.Errorf("Body = %q for a %d, want nil", res.Body, tc.status)
			}
			if tc.outcome == Unreachable {
				want := fmt.Sprintf("robots %s/robots.txt: %d %s", srv.URL, tc.status, http.StatusText(tc.status))
				if res.Err.Error() != want {
					t.Errorf("Err = %q, want %q", res.Err, want)
				}
			}
		})
	}
}

func TestFetchConnectionRefused(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	origin := mustURL(t, srv.URL)
	srv.Close() // nothing listens on the port any more
	res := Fetch(context.Background(), &http.Client{}, origin, testUA)
	checkResult(t, res, Unreachable, 0)
	if res.Rules.Allowed("strata", "/x") {
		t.Error("an unreachable host allows crawling")
	}
	if !strings.HasPrefix(res.Err.Error(), "robots "+srv.URL+"/robots.txt: ") {
		t.Errorf("Err = %q does not name the operation and URL", res.Err)
	}
}

func TestFetchRedirects(t *testing.T) {
	const body = "User-agent: *\nDisallow: /private\n"
	// The chain starts on one host and continues on another: robots.txt on "first" redirects
	// to /hop/1 on "second", which redirects to /hop/2, and so on; /hop/n serves the file.
	for _, tc := range []struct {
		redirects int
		outcome   Outcome
		status    int
	}{
		{1, Parsed, 200},
		{5, Parsed, 200},
		{6, Unreachable, http.StatusFound},
	} {
		t.Run(strconv.Itoa(tc.redirects), func(t *testing.T) {
			var hops atomic.Int32
			second := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				hops.Add(1)
				if r.UserAgent() != testUA {
					t.Errorf("User-Agent %q lost on a redirect", r.UserAgent())
				}
				n, err := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/hop/"))
				if err != nil {
					http.NotFound(w, r)
					return
				}
				if n < tc.redirects {
					http.Redirect(w, r, "/hop/"+strconv.Itoa(n+1), http.StatusFound)
					return
				}
				fmt.Fprint(w, body)
			}))
			first := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, second.URL+"/hop/1", http.StatusMovedPermanently)
			}))
			// The caller's client must come back unchanged, with its own redirect policy unused.
			var callerPolicyCalls atomic.Int32
			client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error {
				callerPolicyCalls.Add(1)
				return http.ErrUseLastResponse
			}}
			res := Fetch(context.Background(), client, mustURL(t, first.URL), testUA)
			checkResult(t, res, tc.outcome, tc.status)
			if tc.outcome == Parsed && res.Rules.Allowed("strata", "/private") {
				t.Error("rules of the redirect target not applied")
			}
			if tc.outcome == Unreachable && !errors.Is(res.Err, errTooManyRedirects) {
				t.Errorf("Err = %v, want errTooManyRedirects", res.Err)
			}
			if got, want := int(hops.Load()), min(tc.redirects, maxRedirects); got != want {
				t.Errorf("second host got %d requests, want %d", got, want)
			}
			if callerPolicyCalls.Load() != 0 || client.CheckRedirect == nil {
				t.Error("Fetch used or changed the caller's CheckRedirect")
			}
		})
	}
}

func TestFetchTruncatesLargeBody(t *testing.T) {
	var b bytes.Buffer
	b.WriteString("User-agent: *\nDisallow: /private\n")
	for b.Len() < 2<<20 {
		b.WriteString("# filler, to make the file two mebibytes long\n")
	}
	b.WriteString("Disallow: /late\n")
	srv := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write(b.Bytes())
	}))
	res := Fetch(context.Background(), srv.Client(), mustURL(t, srv.URL), testUA)
	checkResult(t, res, Parsed, 200)
	if len(res.Body) != MaxSize {
		t.Errorf("len(Body) = %d, want MaxSize (%d)", len(res.Body), MaxSize)
	}
	if res.Rules.Allowed("strata", "/private") {
		t.Error("rule at the start of a truncated file lost")
	}
	if !res.Rules.Allowed("strata", "/late") {
		t.Error("rule after MaxSize applied")
	}
}

func TestFetchSlowServer(t *testing.T) {
	tests := []struct {
		name string
		// headers says whether the handler sends the status and part of the body before it
		// stalls until the client gives up.
		headers bool
	}{
		{"no response", false},
		{"body read error after 200", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			release := make(chan struct{})
			srv := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if tc.headers {
					fmt.Fprint(w, "User-agent: *\nAllow: /\n")
					w.(http.Flusher).Flush()
				}
				select {
				case <-r.Context().Done():
				case <-release:
				}
			}))
			t.Cleanup(func() { close(release) }) // runs before srv.Close, so the handler returns

			ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
			defer cancel()
			res := Fetch(ctx, srv.Client(), mustURL(t, srv.URL), testUA)
			checkResult(t, res, Unreachable, 0)
			if !errors.Is(res.Err, context.DeadlineExceeded) {
				t.Errorf("Err = %v, want one wrapping context.DeadlineExceeded", res.Err)
			}
			if res.Rules.Allowed("strata", "/x") {
				t.Error("a partial body allowed crawling")
			}
		})
	}
}

func TestFetchBadOrigin(t *testing.T) {
	for _, tc := range []struct {
		name   string
		origin *url.URL
	}{
		{"nil", nil},
		{"ftp", &url.URL{Scheme: "ftp", Host: "a.test"}},
		{"no host", &url.URL{Scheme: "https"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := Fetch(context.Background(), nil, tc.origin, testUA)
			checkResult(t, res, Unreachable, 0)
		})
	}
}

func TestFetchNilClient(t *testing.T) {
	srv := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "User-agent: strata\nDisallow: /private\n")
	}))
	res := Fetch(context.Background(), nil, mustURL(t, srv.URL), testUA)
	checkResult(t, res, Parsed, 200)
	if res.Rules.Allowed(ProductToken(testUA), "/private") {
		t.Error("group for our product token not applied")
	}
}

func TestOutcomeString(t *testing.T) {
	for o, want := range map[Outcome]string{Parsed: "parsed", Unavailable: "unavailable", Unreachable: "unreachable", 0: "Outcome(0)"} {
		if got := o.String(); got != want {
			t.Errorf("Outcome(%d).String() = %q, want %q", int(o), got, want)
		}
	}
}
