package testweb_test

import (
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/strata-crawler/strata/internal/testweb"
)

func body(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

func TestLoadWebPages(t *testing.T) {
	for _, pages := range []int{1, 2, 50} {
		lw := testweb.NewLoadWeb(pages)
		seed := string(lw.Page("site1-1.test", 0))
		seen := map[string]bool{}
		for i := 1; i < pages; i++ {
			p := testweb.LoadPath(i)
			if strings.ContainsAny(p, "0123456789") {
				t.Errorf("pages=%d: path %s has a digit", pages, p)
			}
			if seen[p] {
				t.Errorf("pages=%d: path %s twice", pages, p)
			}
			seen[p] = true
			if !strings.Contains(seed, `href="`+p+`"`) {
				t.Errorf("pages=%d: the seed does not link to page %d (%s)", pages, i, p)
			}
			if pg := lw.Page("site1-1.test", i); strings.Contains(string(pg), "<ul>") {
				t.Errorf("pages=%d: page %d has links; only the seed should", pages, i)
			}
		}
		if n := strings.Count(seed, "<li>"); n != pages-1 {
			t.Errorf("pages=%d: the seed has %d links, want %d", pages, n, pages-1)
		}
	}
	lw := testweb.NewLoadWeb(3)
	if a, b := lw.Page("site1-1.test", 1), lw.Page("site1-2.test", 1); string(a) == string(b) {
		t.Error("two sites serve the same page 1")
	}
	if a, b := lw.Page("site1-1.test", 1), lw.Page("site1-1.test", 1); string(a) != string(b) {
		t.Error("page 1 differs between two requests")
	}
}

func TestServeLoad(t *testing.T) {
	lw := testweb.NewLoadWeb(4)
	ls, err := testweb.ServeLoad(lw, 3)
	if err != nil {
		t.Fatal(err)
	}
	ls.Gap = time.Hour // every request after the first to a site is too soon
	t.Cleanup(func() {
		if err := ls.Close(); err != nil {
			t.Error(err)
		}
	})
	if len(ls.Hosts) != 3 {
		t.Fatalf("%d hosts, want 3", len(ls.Hosts))
	}
	ips := map[netip.Addr]bool{}
	for _, h := range ls.Hosts {
		ap, err := netip.ParseAddrPort(h)
		if err != nil || !ap.Addr().IsLoopback() || ips[ap.Addr()] {
			t.Fatalf("host %s: want a distinct loopback address (%v)", h, err)
		}
		ips[ap.Addr()] = true
	}
	tests := []struct {
		path   string
		status int
		want   string
	}{
		{"/robots.txt", 200, "Disallow: /private/"},
		{"/", 200, `href="` + testweb.LoadPath(3) + `"`},
		{testweb.LoadPath(1), 200, "<p>"},
		{testweb.LoadPath(3), 200, "<p>"},
		{testweb.LoadPath(4), 404, ""},
		{"/private/x", 404, ""},
	}
	for _, tt := range tests {
		t.Run(strings.ReplaceAll(tt.path, "/", "_"), func(t *testing.T) {
			code, b := body(t, "http://"+ls.Hosts[1]+tt.path)
			if code != tt.status || !strings.Contains(b, tt.want) {
				t.Errorf("GET %s = %d, want %d with %q in:\n%.300s", tt.path, code, tt.status, tt.want, b)
			}
		})
	}
	st := ls.Stats()
	if st.Pages != 3 || st.Robots != 1 || st.Other != 2 || st.Overlaps != 0 || st.Early != 5 || st.Conns < 1 || st.First.IsZero() ||
		st.Last.Before(st.First) {
		t.Errorf("stats = %+v, want 3 pages, 1 robots.txt, 2 others, no overlap, 5 early, a connection, First <= Last", st)
	}
	ls.Reset()
	if st := ls.Stats(); st.Pages != 0 || st.Robots != 0 || st.Conns != 0 || st.Early != 0 || !st.First.IsZero() {
		t.Errorf("stats after Reset = %+v", st)
	}
	// A crawl after Reset is not held to the responses of the one before.
	body(t, "http://"+ls.Hosts[1]+"/")
	if st := ls.Stats(); st.Early != 0 {
		t.Errorf("the first request after Reset counted early: %+v", st)
	}
}

func TestAddLoadSites(t *testing.T) {
	w := testweb.New(t)
	lw := testweb.NewLoadWeb(3)
	sites := w.AddLoadSites(t, lw, 2)
	for _, s := range sites {
		for _, p := range []string{"/robots.txt", "/", testweb.LoadPath(1), testweb.LoadPath(2)} {
			if code, _ := body(t, s.URL(p)); code != 200 {
				t.Errorf("%s%s = %d", s.Name, p, code)
			}
		}
	}
	if n := len(w.Requests()); n != 8 {
		t.Errorf("the log has %d requests, want 8", n)
	}
}

func TestArticleWeb(t *testing.T) {
	tests := []struct{ pages, links, size int }{
		{1, 20, 50_000},
		{2, 20, 1_000},
		{50, 20, 50_000},
		{50, 20, 8_000},
		{30, 4, 20_000},
	}
	hrefs := regexp.MustCompile(`<a [^>]*href="([^"]*)"`)
	for _, tt := range tests {
		t.Run(fmt.Sprintf("pages=%d/links=%d/size=%d", tt.pages, tt.links, tt.size), func(t *testing.T) {
			lw := testweb.NewArticleWeb(tt.pages, tt.links, tt.size)
			paths := map[string]int{}
			for i := 0; i < tt.pages; i++ {
				paths[testweb.LoadPath(i)] = i
			}
			// Breadth first from the seed, Depth levels down: every page is reached, every link
			// leads to a page of the site, and no page links to more than links pages.
			level := map[int]int{0: 0}
			queue := []int{0}
			for len(queue) > 0 {
				i := queue[0]
				queue = queue[1:]
				pg := lw.Page("site1-1.test", i)
				if tt.size >= 50_000 && (len(pg) < tt.size*9/10 || len(pg) > tt.size*11/10) {
					t.Errorf("page %d is %d bytes, want about %d", i, len(pg), tt.size)
				}
				distinct := map[string]bool{}
				for _, m := range hrefs.FindAllStringSubmatch(string(pg), -1) {
					j, ok := paths[m[1]]
					if !ok {
						t.Fatalf("page %d links to %s, which the site does not serve", i, m[1])
					}
					distinct[m[1]] = true
					if _, seen := level[j]; !seen && level[i] < lw.Depth() {
						level[j] = level[i] + 1
						queue = append(queue, j)
					}
				}
				if want := min(tt.links, tt.pages); len(distinct) != want && len(distinct) != want-1 { // the seed's own link is a self-link
					t.Errorf("page %d links to %d distinct pages, want %d", i, len(distinct), want)
				}
			}
			if len(level) != tt.pages {
				t.Errorf("%d of %d pages reached within %d levels of the seed", len(level), tt.pages, lw.Depth())
			}
			if a, b := lw.Page("site1-1.test", 1%tt.pages), lw.Page("site1-1.test", 1%tt.pages); string(a) != string(b) {
				t.Error("a page differs between two requests")
			}
		})
	}
}
