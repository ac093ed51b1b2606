package testweb_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/strata-crawler/strata/internal/testweb"
)

func get(t *testing.T, url string) int {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

func TestSitesAreDistinctLoopbackHosts(t *testing.T) {
	w := testweb.New(t)
	a, b := w.AddSite(t), w.AddSite(t)
	if a.IP == b.IP || !a.IP.IsLoopback() || !b.IP.IsLoopback() {
		t.Fatalf("sites at %s and %s: want distinct loopback addresses", a.IP, b.IP)
	}
	a.Page("/", "<p>a</p>")
	if code := get(t, a.URL("/")); code != 200 {
		t.Errorf("GET / = %d", code)
	}
	if code := get(t, b.URL("/")); code != 404 {
		t.Errorf("GET / on the empty site = %d, want 404", code)
	}
	addrs, err := w.Resolver()(t.Context(), a.Name)
	if err != nil || len(addrs) != 1 || addrs[0] != a.IP {
		t.Errorf("Resolver(%s) = %v, %v", a.Name, addrs, err)
	}
	if _, err := w.Resolver()(t.Context(), "example.com"); err == nil {
		t.Error("Resolver resolved a name outside the web")
	}
}

func TestViolations(t *testing.T) {
	w := testweb.New(t)
	s := w.AddSite(t)
	s.Robots("User-agent: *\nDisallow: /private\n", "/private")
	s.Page("/", "<p>home</p>")
	s.Page("/private/x", "<p>secret</p>")
	get(t, s.URL("/"))
	get(t, s.URL("/private/x"))
	time.Sleep(20 * time.Millisecond)
	get(t, s.URL("/robots.txt"))
	v := strings.Join(w.Violations(testweb.CheckOptions{MinGap: 10 * time.Millisecond, RobotsFirst: true}), "\n")
	for _, want := range []string{"first request was /", "requested /private/x, which robots.txt forbids", "only "} {
		if !strings.Contains(v, want) {
			t.Errorf("violations lack %q:\n%s", want, v)
		}
	}
	if n := w.Count(s, "/private/x"); n != 1 {
		t.Errorf("Count = %d", n)
	}
}
