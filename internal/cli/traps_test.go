package cli_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/strata-crawler/strata/internal/testweb"
)

// trapSite serves the traps of Bouras et al. section 4 and more: an endless calendar, a page that
// links to itself with ?time=N+1, session ids in links, and facet pages that are all the same.
func trapSite(s *testweb.Site) {
	page := func(f func(r *http.Request) string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, "<html><body>"+f(r)+"</body></html>")
		})
	}
	s.Handle("/", page(func(*http.Request) string {
		return `<a href="/cal/2026/11">calendar</a> <a href="/page?time=101">time</a>
			<a href="/shop">shop</a> <a href="/?sid=8f14e45fceea167a5a36dedd4bea2543">session</a>`
	}))
}

// wideSite serves a page with 5,000 links.
func wideSite(s *testweb.Site) {
	s.Handle("/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		for i := 1; i <= 5000; i++ {
			fmt.Fprintf(w, `<a href="/item/%d">%d</a> `, i*7919%100000, i)
		}
	}))
	for i := 1; i <= 5000; i++ {
		p := fmt.Sprintf("/item/%d", i*7919%100000)
		s.Page(p, "<p>item "+p+"</p>")
	}
}

func trapSiteRest(s *testweb.Site) {
	page := func(f func(r *http.Request) string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, "<html><body>"+f(r)+"</body></html>")
		})
	}
	s.Handle("/page", page(func(r *http.Request) string {
		n, _ := strconv.Atoi(r.URL.Query().Get("time"))
		return fmt.Sprintf(`<p>time %d</p><a href="/page?time=%d">next</a>`, n, n+1)
	}))
	for y := 2026; y < 2040; y++ {
		for m := 1; m <= 12; m++ {
			ny, nm := y, m+1
			if nm == 13 {
				ny, nm = y+1, 1
			}
			// Each month lists a different event, so only the stepping pattern gives the calendar away.
			event := []string{"choir concert", "book fair", "harbour festival", "open day", "chess tournament", "film night",
				"lecture on tides", "garden walk", "jazz evening", "science slam", "craft market"}[(y*12+m)%11]
			s.Page(fmt.Sprintf("/cal/%d/%d", y, m), fmt.Sprintf(`<p>%d-%02d: %s in the %s hall</p><a href="/cal/%d/%d">next month</a>`,
				y, m, event, []string{"north", "south", "east", "west", "old", "new", "main"}[(y+m)%7], ny, nm))
		}
	}
	s.Handle("/shop", page(func(*http.Request) string {
		var b strings.Builder
		for i := 1; i <= 40; i++ {
			fmt.Fprintf(&b, `<a href="/facet/%d">f%d</a> `, i, i)
		}
		return b.String()
	}))
	for i := 1; i <= 40; i++ { // the same page under 40 names; only the product count differs
		s.Page(fmt.Sprintf("/facet/%d", i), fmt.Sprintf("<p>All %d products, sorted the same way whatever the facet.</p>", 100+i))
	}
}

func TestTrapSite(t *testing.T) {
	web := testweb.New(t)
	trap, wide, normal := web.AddSite(t), web.AddSite(t), web.AddSite(t)
	trapSite(trap)
	trapSiteRest(trap)
	wideSite(wide)
	normal.Page("/", `<a href="/a">a</a> <a href="/b">b</a>`)
	normal.Page("/a", "<p>a</p>")
	normal.Page("/b", "<p>b</p>")
	e := newEnv(t, "[politeness]\nloopback_delay = \"1ms\"\n[traps]\nmax_new_per_domain = 400\n")
	e.mustRun("seed", "add", "--level", "80", trap.URL("/"), wide.URL("/"))
	e.mustRun("seed", "add", "--level", "2", normal.URL("/"))
	out := e.mustRun("run")
	t.Logf("%s", out)

	counts := map[string]int{}
	for _, r := range append(web.RequestsTo(trap), web.RequestsTo(wide)...) {
		switch {
		case strings.HasPrefix(r.Path, "/cal/"):
			counts["calendar"]++
		case strings.HasPrefix(r.Path, "/page"):
			counts["time"]++
		case strings.HasPrefix(r.Path, "/item/"):
			counts["items"]++
		case strings.Contains(r.Path, "sid="):
			counts["session"]++
		case strings.HasPrefix(r.Path, "/facet/"):
			counts["facets"]++
		}
	}
	t.Logf("requests to the trap sites: %d and %d, %v", len(web.RequestsTo(trap)), len(web.RequestsTo(wide)), counts)
	if counts["calendar"] > 70 || counts["time"] > 70 {
		t.Errorf("the calendar (%d) or the counter (%d) was followed too far: the stepping pattern or the duplicate check should stop it",
			counts["calendar"], counts["time"])
	}
	if n := len(web.RequestsTo(wide)); n > 400+3 { // the items, /, robots.txt and /sitemap.xml
		t.Errorf("%d requests to the 5,000-link site; the per-domain cap is 400 new URLs per run", n)
	}
	if counts["session"] != 0 {
		t.Errorf("a session-id URL was requested %d times: the default filter strips session ids", counts["session"])
	}
	if n := len(web.RequestsTo(normal)); n != 5 {
		t.Errorf("the normal site got %d requests, want robots.txt, /sitemap.xml and its 3 pages", n)
	}

	report := e.mustRun("traps")
	t.Logf("%s", report)
	lines := strings.Split(report, "\n")
	if len(lines) < 4 || !strings.Contains(lines[1]+lines[2], trap.IP.String()) || !strings.Contains(lines[1]+lines[2], wide.IP.String()) ||
		!strings.Contains(lines[3], normal.IP.String()) {
		t.Errorf("strata traps does not rank the two trap domains above the normal one:\n%s", report)
	}
	for _, want := range []string{"pattern", "duplicates", "max_new_per_domain", "suggested filter"} {
		if !strings.Contains(report, want) {
			t.Errorf("strata traps lacks %q", want)
		}
	}
	var reps []map[string]any
	if err := json.Unmarshal([]byte(e.mustRun("traps", "--json")), &reps); err != nil || len(reps) != 3 {
		t.Errorf("traps --json: %v, %v", reps, err)
	}
	facets := ""
	for _, r := range reps {
		rules, _ := r["trap_rules"].([]any)
		for _, x := range rules {
			if rule, _ := x.(map[string]any); rule["state"] == "throttled" && strings.HasSuffix(rule["pattern"].(string), "/facet/") {
				facets = rule["pattern"].(string)
			}
		}
	}
	if facets == "" {
		t.Fatalf("traps --json shows no throttled rule for the facets: %v", reps)
	}

	// The operator clears the facets' pattern: its held URLs are released (the 20 fetched and the 20
	// not fetched yet), and a name that matches nothing is an error that changes nothing.
	held := func() int {
		var reps []map[string]any
		if err := json.Unmarshal([]byte(e.mustRun("traps", "--json")), &reps); err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, r := range reps {
			n += int(r["held_urls"].(float64))
		}
		return n
	}
	before := held()
	if out := e.mustRun("traps", "--clear", facets); !strings.Contains(out, "forgot 1 trap rule(s)") || !strings.Contains(out, "40 held URL(s) released") {
		t.Errorf("traps --clear %s: %q; want the rule forgotten and the 40 facets released", facets, out)
	}
	if out := e.mustRun("traps"); strings.Contains(out, "throttled "+facets) {
		t.Errorf("the cleared pattern is still throttled:\n%s", out)
	}
	if after := held(); after != before-40 {
		t.Errorf("held URLs %d after --clear, want %d", after, before-40)
	}
	if _, errs, code := e.run("traps", "--clear", "nosuch.example"); code == 0 || !strings.Contains(errs, "no trap evidence") {
		t.Errorf("traps --clear of nothing: exit %d, %q", code, errs)
	}
	if after := held(); after != before-40 {
		t.Errorf("a failed --clear changed the held URLs: %d, want %d", after, before-40)
	}
}
