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
	mu     sync.Mutex
	took   map[string]time.Duration // per host; default 100ms
	status map[string]int           // per host; default 200. A 304 has no body, as net/http gives it
	log    []visit
	live   map[string]int
	max    map[string]int // most requests in flight at once, per host
}

type visit struct {
	host       string
	start, end time.Time
}

func newFakeServer() *fakeServer {
	return &fakeServer{took: map[string]time.Duration{}, status: map[string]int{}, live: map[string]int{}, max: map[string]int{}}
}

func (f *fakeServer) RoundTrip(req *http.Request) (*http.Response, error) {
	h := req.URL.Host
	f.mu.Lock()
	took, ok := f.took[h]
	if !ok {
		took = 100 * time.Millisecond
	}
	status := f.status[h]
	f.live[h]++
	f.max[h] = max(f.max[h], f.live[h])
	f.mu.Unlock()
	start := time.Now()
	time.Sleep(took)
	f.mu.Lock()
	f.live[h]--
	f.log = append(f.log, visit{h, start, time.Now()})
	f.mu.Unlock()
	if status == http.StatusNotModified {
		return &http.Response{StatusCode: status, Body: http.NoBody, Request: req}, nil
	}
	return &http.Response{StatusCode: 200, Body: io.NopCloser(strings.NewReader("ok")), ContentLength: 2, Request: req}, nil
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
		// A response cut at a 30 s page timeout: 5 × 30 s would be 150 s of silence.
		{"slow server capped", polite.Options{Delay: 10 * time.Second, DelayFactor: 5}, 30 * time.Second, 0, 0,
			[]string{"a.test", "a.test"}, []time.Duration{0, 30*time.Second + polite.DefaultMaxLatencyGap}},
		{"cap set", polite.Options{Delay: 10 * time.Second, DelayFactor: 5, MaxLatencyGap: 12 * time.Second}, 4 * time.Second, 0, 0,
			[]string{"a.test", "a.test"}, []time.Duration{0, 16 * time.Second}},
		{"the cap never shortens a crawl-delay", polite.Options{Delay: 10 * time.Second, DelayFactor: 5}, 30 * time.Second, 90 * time.Second, 0,
			[]string{"a.test", "a.test"}, []time.Duration{0, 120 * time.Second}},
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

// TestGateCrawlDelayLearntAfterTheResponse is issue 18's first defect: the gap after the robots.txt
// response was set before its Crawl-delay was read, so the next request (a sitemap) came after the
// ordinary delay. The Crawl-delay must count from the end of that very response.
func TestGateCrawlDelayLearntAfterTheResponse(t *testing.T) {
	tests := []struct {
		name       string
		opts       polite.Options
		host       string
		crawlDelay time.Duration
	}{
		{"loopback", polite.Options{Delay: 10 * time.Second, LoopbackDelay: 20 * time.Millisecond, DelayFactor: 5,
			Loopback: loopbackHosts("lo.test")}, "lo.test", 2 * time.Second},
		{"above the 10s floor", polite.Options{Delay: 10 * time.Second, DelayFactor: 5}, "a.test", 90 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				srv := newFakeServer()
				srv.took[tt.host] = time.Millisecond
				g := polite.New(tt.opts)
				c := &http.Client{Transport: g.Transport(srv)}
				get(t, c, "http://"+tt.host+"/robots.txt")
				g.SetCrawlDelay(tt.host, tt.crawlDelay) // read from the body just fetched
				if got := g.ReadyAt(tt.host).Sub(srv.log[0].end); got != tt.crawlDelay {
					t.Errorf("ReadyAt is %v after the robots.txt response, want the Crawl-delay %v", got, tt.crawlDelay)
				}
				get(t, c, "http://"+tt.host+"/sitemap.xml")
				get(t, c, "http://"+tt.host+"/page")
				for i, gap := range gaps(srv.log, tt.host) {
					if gap != tt.crawlDelay {
						t.Errorf("gap %d is %v, want the Crawl-delay %v", i, gap, tt.crawlDelay)
					}
				}
			})
		})
	}
}

// TestGateGapAfterABodilessResponse is issue 18's third defect: a 304 has no body, so strata closes
// it unread, and the gate took that for an abandoned response — the abort margin was added to its
// duration and then multiplied by the delay factor (161 ms on loopback instead of about 27 ms). A
// response with a body that strata does abandon still starts its gap a margin later, but the latency
// factor weighs the time it really took.
func TestGateGapAfterABodilessResponse(t *testing.T) {
	opts := polite.Options{Delay: 10 * time.Second, LoopbackDelay: 20 * time.Millisecond, DelayFactor: 5,
		Loopback: loopbackHosts("lo.test")}
	tests := []struct {
		name    string
		status  int
		took    time.Duration
		wantGap time.Duration // from the response's end on the server to the next request
	}{
		{"304", http.StatusNotModified, time.Millisecond, 20 * time.Millisecond},
		{"304 from a slow server", http.StatusNotModified, 10 * time.Millisecond, 50 * time.Millisecond},
		{"body abandoned", http.StatusOK, 10 * time.Millisecond, polite.AbortMargin + 50*time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				srv := newFakeServer()
				srv.took["lo.test"], srv.status["lo.test"] = tt.took, tt.status
				g := polite.New(opts)
				c := &http.Client{Transport: g.Transport(srv)}
				resp, err := c.Get("http://lo.test/")
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close() // unread, as the fetcher does with a 304
				get(t, c, "http://lo.test/")
				if gap := gaps(srv.log, "lo.test")[0]; gap != tt.wantGap {
					t.Errorf("gap %v, want %v", gap, tt.wantGap)
				}
			})
		})
	}
}

// TestGateRestore is the across-runs half of issue 18's first defect: a process that starts right
// after another must keep the gap the first one promised — its Crawl-delay, its latency-derived gap,
// its deferrals — and Changed hands over exactly what the next process needs.
func TestGateRestore(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		opts := polite.Options{Delay: 10 * time.Second, LoopbackDelay: 20 * time.Millisecond, DelayFactor: 5,
			Loopback: loopbackHosts("lo.test", "lo2.test")}
		// The first process: a robots.txt with a Crawl-delay, a page, and a deferral elsewhere.
		first := polite.New(opts)
		srv := newFakeServer()
		srv.took["lo.test"] = time.Millisecond
		c := &http.Client{Transport: first.Transport(srv)}
		get(t, c, "http://lo.test/robots.txt")
		first.SetCrawlDelay("lo.test", 2*time.Second)
		get(t, c, "http://lo.test/page")
		first.Defer("lo2.test", time.Now().Add(time.Minute))
		states := first.Changed()
		if len(states) != 2 {
			t.Fatalf("Changed returned %d states, want 2: %+v", len(states), states)
		}
		if again := first.Changed(); len(again) != 0 {
			t.Errorf("Changed returned %d states with nothing new, want none", len(again))
		}
		byHost := map[string]polite.State{}
		for _, s := range states {
			byHost[s.Host] = s
		}
		lo := byHost["lo.test"]
		if end := srv.log[1].end; !lo.LastEnd.Equal(end) || !lo.Next.Equal(end.Add(2*time.Second)) || lo.CrawlDelay != 2*time.Second {
			t.Errorf("state of lo.test %+v; want the page's end, the Crawl-delay after it, and the Crawl-delay", lo)
		}

		// The next process starts 300 ms later.
		time.Sleep(300 * time.Millisecond)
		second := polite.New(opts)
		for _, s := range states {
			second.Restore(s)
		}
		c = &http.Client{Transport: second.Transport(srv)}
		get(t, c, "http://lo.test/page")
		get(t, c, "http://lo2.test/")
		if gap := srv.log[2].start.Sub(srv.log[1].end); gap != 2*time.Second {
			t.Errorf("the next process contacted lo.test %v after the last response, want the Crawl-delay 2s", gap)
		}
		if at := srv.log[3].start; !at.Equal(byHost["lo2.test"].Next) {
			t.Errorf("the next process contacted lo2.test at %v, want its deferral %v", at, byHost["lo2.test"].Next)
		}

		// With nothing known but the end and the Crawl-delay (a crash before the state was saved),
		// the Crawl-delay still counts from that end.
		third := polite.New(opts)
		end := time.Now()
		third.Restore(polite.State{Host: "lo.test", LastEnd: end, CrawlDelay: 5 * time.Second})
		if got := third.ReadyAt("lo.test").Sub(end); got != 5*time.Second {
			t.Errorf("ReadyAt %v after the restored end, want the Crawl-delay 5s", got)
		}
	})
}

// TestGateReady checks that Ready includes the delay for hosts that are not loopback, which ReadyAt
// can only know once the host has been looked up.
func TestGateReady(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := polite.New(polite.Options{Delay: 10 * time.Second, LoopbackDelay: 20 * time.Millisecond, DelayFactor: 1,
			Loopback: loopbackHosts("lo.test")})
		now := time.Now()
		g.Seen("pub.test", now)
		if got := g.ReadyAt("pub.test").Sub(now); got != 20*time.Millisecond {
			t.Errorf("ReadyAt before the lookup: %v, want the loopback delay", got)
		}
		if got := g.Ready(t.Context(), "pub.test").Sub(now); got != 10*time.Second {
			t.Errorf("Ready: %v, want the 10s delay", got)
		}
		if got := g.ReadyAt("pub.test").Sub(now); got != 10*time.Second {
			t.Errorf("ReadyAt after the lookup: %v, want the 10s delay", got)
		}
	})
}
