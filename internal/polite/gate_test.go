package polite_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/strata-crawler/strata/internal/polite"
)

// fakeServer is a RoundTripper that records when each request started and ended, and takes `took`
// to answer. Inside a synctest bubble its clock is the fake one, so gaps are exact.
type fakeServer struct {
	mu   sync.Mutex
	took map[string]time.Duration // per host; default 100ms
	log  []visit
	live map[string]int
	max  map[string]int // most requests in flight at once, per host
}

type visit struct {
	host       string
	start, end time.Time
}

func newFakeServer() *fakeServer {
	return &fakeServer{took: map[string]time.Duration{}, live: map[string]int{}, max: map[string]int{}}
}

func (f *fakeServer) RoundTrip(req *http.Request) (*http.Response, error) {
	h := req.URL.Host
	f.mu.Lock()
	took, ok := f.took[h]
	if !ok {
		took = 100 * time.Millisecond
	}
	f.live[h]++
	f.max[h] = max(f.max[h], f.live[h])
	f.mu.Unlock()
	start := time.Now()
	time.Sleep(took)
	f.mu.Lock()
	f.live[h]--
	f.log = append(f.log, visit{h, start, time.Now()})
	f.mu.Unlock()
	return &http.Response{StatusCode: 200, Body: io.NopCloser(strings.NewReader("ok")), Request: req}, nil
}

func get(t *testing.T, c *http.Client, url string) {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		t.Error(err)
		return
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
}

// gaps returns, for the visits to hosts in one domain in time order, the gap between each response's
// end and the next request's start.
func gaps(log []visit, hosts ...string) []time.Duration {
	var vs []visit
	for _, v := range log {
		for _, h := range hosts {
			if v.host == h {
				vs = append(vs, v)
			}
		}
	}
	var out []time.Duration
	for i := 1; i < len(vs); i++ {
		out = append(out, vs[i].start.Sub(vs[i-1].end))
	}
	return out
}

func loopbackHosts(hosts ...string) func(context.Context, string) bool {
	return func(_ context.Context, h string) bool {
		for _, x := range hosts {
			if x == h {
				return true
			}
		}
		return false
	}
}

func TestGateSpacesRequestsPerDomain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := newFakeServer()
		g := polite.New(polite.Options{Delay: 10 * time.Second, DelayFactor: 5})
		c := &http.Client{Transport: g.Transport(srv)}
		var wg sync.WaitGroup
		// Three workers hammer two hosts of one registrable domain and one other domain.
		for w := 0; w < 3; w++ {
			wg.Go(func() {
				for i := 0; i < 3; i++ {
					get(t, c, "http://a.example.co.uk/x")
					get(t, c, "http://b.example.co.uk/y")
					get(t, c, "http://other.example/z")
				}
			})
		}
		wg.Wait()
		if len(srv.log) != 27 {
			t.Fatalf("%d requests, want 27", len(srv.log))
		}
		for _, hs := range [][]string{{"a.example.co.uk", "b.example.co.uk"}, {"other.example"}} {
			for i, gap := range gaps(srv.log, hs...) {
				if gap < 10*time.Second {
					t.Errorf("%v: gap %d is %v, want >= 10s", hs, i, gap)
				}
			}
		}
		for h, m := range srv.max {
			if m > 1 {
				t.Errorf("%s had %d requests in flight at once", h, m)
			}
		}
		// The two domains are independent: both got their first request at time zero.
		if first := gaps(srv.log, "other.example"); len(first) != 8 {
			t.Errorf("other.example got %d gaps, want 8", len(first))
		}
	})
}

func TestGateGapRules(t *testing.T) {
	tests := []struct {
		name       string
		opts       polite.Options
		took       time.Duration
		crawlDelay time.Duration
		deferFor   time.Duration
		hosts      []string        // requested in this order
		want       []time.Duration // start of each request, from the start of the test
	}{
		{"delay", polite.Options{Delay: 10 * time.Second, DelayFactor: 5}, 100 * time.Millisecond, 0, 0,
			[]string{"a.test", "a.test"}, []time.Duration{0, 10100 * time.Millisecond}},
		{"slow server", polite.Options{Delay: 10 * time.Second, DelayFactor: 5}, 4 * time.Second, 0, 0,
			[]string{"a.test", "a.test"}, []time.Duration{0, 24 * time.Second}},
		{"crawl-delay larger than delay", polite.Options{Delay: 10 * time.Second, DelayFactor: 5}, 100 * time.Millisecond, 90 * time.Second, 0,
			[]string{"a.test", "a.test"}, []time.Duration{0, 90100 * time.Millisecond}},
		{"crawl-delay smaller than delay", polite.Options{Delay: 10 * time.Second, DelayFactor: 5}, 100 * time.Millisecond, 2 * time.Second, 0,
			[]string{"a.test", "a.test"}, []time.Duration{0, 10100 * time.Millisecond}},
		{"defer", polite.Options{Delay: 10 * time.Second, DelayFactor: 5}, 100 * time.Millisecond, 0, time.Hour,
			[]string{"a.test", "a.test"}, []time.Duration{time.Hour, time.Hour + 10100*time.Millisecond}},
		{"loopback", polite.Options{Delay: 10 * time.Second, LoopbackDelay: 200 * time.Millisecond, DelayFactor: 1, Loopback: loopbackHosts("lo.test")},
			100 * time.Millisecond, 0, 0, []string{"lo.test", "lo.test"}, []time.Duration{0, 300 * time.Millisecond}},
		{"loopback then public host of the same domain", polite.Options{Delay: 10 * time.Second, LoopbackDelay: 200 * time.Millisecond,
			DelayFactor: 1, Loopback: loopbackHosts("lo.site.test")},
			100 * time.Millisecond, 0, 0, []string{"lo.site.test", "www.site.test"}, []time.Duration{0, 10100 * time.Millisecond}},
		{"registrable domain shared", polite.Options{Delay: 10 * time.Second, DelayFactor: 1}, 100 * time.Millisecond, 0, 0,
			[]string{"a.site.test", "b.site.test"}, []time.Duration{0, 10100 * time.Millisecond}},
		{"by host", polite.Options{Delay: 10 * time.Second, DelayFactor: 1, ByHost: true}, 100 * time.Millisecond, 0, 0,
			[]string{"a.site.test", "b.site.test", "a.site.test"}, []time.Duration{0, 100 * time.Millisecond, 10100 * time.Millisecond}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				t0 := time.Now()
				srv := newFakeServer()
				for _, h := range tt.hosts {
					srv.took[h] = tt.took
				}
				g := polite.New(tt.opts)
				if tt.crawlDelay > 0 {
					g.SetCrawlDelay(tt.hosts[0], tt.crawlDelay)
				}
				if tt.deferFor > 0 {
					g.Defer(tt.hosts[0], t0.Add(tt.deferFor))
				}
				c := &http.Client{Transport: g.Transport(srv)}
				for _, h := range tt.hosts {
					get(t, c, "http://"+h+"/")
				}
				if len(srv.log) != len(tt.want) {
					t.Fatalf("%d requests, want %d", len(srv.log), len(tt.want))
				}
				for i, v := range srv.log {
					if got := v.start.Sub(t0); got != tt.want[i] {
						t.Errorf("request %d (%s) started at %v, want %v", i, v.host, got, tt.want[i])
					}
				}
			})
		})
	}
}

func TestGateKey(t *testing.T) {
	g := polite.New(polite.Options{})
	byHost := polite.New(polite.Options{ByHost: true})
	tests := []struct{ host, want, wantByHost string }{
		{"www.example.com", "example.com", "www.example.com"},
		{"news.bbc.co.uk:8080", "bbc.co.uk", "news.bbc.co.uk"},
		{"site3.test:41234", "site3.test", "site3.test"},
		{"127.0.0.2:8080", "127.0.0.2", "127.0.0.2"},
		{"[::1]:8080", "::1", "::1"},
		{"localhost", "localhost", "localhost"},
		{"co.uk", "co.uk", "co.uk"},
	}
	for _, tt := range tests {
		if got := g.Key(tt.host); got != tt.want {
			t.Errorf("Key(%q) = %q, want %q", tt.host, got, tt.want)
		}
		if got := byHost.Key(tt.host); got != tt.wantByHost {
			t.Errorf("ByHost Key(%q) = %q, want %q", tt.host, got, tt.wantByHost)
		}
	}
}

func TestGateCancelWhileWaiting(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := newFakeServer()
		g := polite.New(polite.Options{Delay: 10 * time.Second, DelayFactor: 1})
		c := &http.Client{Transport: g.Transport(srv)}
		get(t, c, "http://a.test/")
		ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, "GET", "http://a.test/", nil)
		if _, err := c.Do(req); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("request during the gap: %v, want deadline exceeded", err)
		}
		// The slot was given back: a later request goes through once the gap has passed.
		get(t, c, "http://a.test/")
		if len(srv.log) != 2 {
			t.Errorf("%d requests reached the server, want 2", len(srv.log))
		}
		if gap := gaps(srv.log, "a.test")[0]; gap != 10*time.Second {
			t.Errorf("gap %v, want 10s", gap)
		}
	})
}

func TestGateReleasesOnCloseWithoutRead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := newFakeServer()
		g := polite.New(polite.Options{Delay: 10 * time.Second, DelayFactor: 1})
		c := &http.Client{Transport: g.Transport(srv)}
		resp, err := c.Get("http://a.test/")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if ready := g.ReadyAt("a.test"); ready.Sub(time.Now()) != 10*time.Second+polite.AbortMargin { // closed before EOF
			t.Errorf("ReadyAt is %v from now, want 10s + AbortMargin", ready.Sub(time.Now()))
		}
		if n := g.Requests("a.test"); n != 1 {
			t.Errorf("Requests = %d, want 1", n)
		}
	})
}

func TestGateSeenFromAnEarlierProcess(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		t0 := time.Now()
		srv := newFakeServer()
		g := polite.New(polite.Options{Delay: 10 * time.Second, LoopbackDelay: time.Second, DelayFactor: 1,
			Loopback: loopbackHosts("lo.test")})
		g.Seen("pub.test", t0.Add(-3*time.Second))
		g.Seen("lo.test", t0)
		c := &http.Client{Transport: g.Transport(srv)}
		get(t, c, "http://pub.test/")
		get(t, c, "http://lo.test/")
		if got := srv.log[0].start.Sub(t0); got != 7*time.Second {
			t.Errorf("public host contacted %v after start, want 7s (10s after the earlier process's request)", got)
		}
		if got := srv.log[1].start.Sub(t0); got != 7*time.Second+100*time.Millisecond {
			t.Errorf("loopback host contacted at %v, want as soon as its 1s gap had passed (it was waiting behind pub.test)", got)
		}
	})
}
