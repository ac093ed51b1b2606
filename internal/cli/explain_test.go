package cli_test

import (
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/strata-crawler/strata/crawler"
	"github.com/strata-crawler/strata/internal/config"
	"github.com/strata-crawler/strata/internal/store"
	"github.com/strata-crawler/strata/internal/testweb"
)

// TestExplainNamesWhoLeftAPageOut crawls a site whose seed / links a hub /news/ that changes every
// day, a hub /archive/ that never does, and four pages that never do; /news/ links /news/story and
// /archive/ links /archive/old, which never change either. The runs are the whole cycle on the
// default configuration, one a virtual day. After each run, for every page the selective rule left
// out of it, strata explain must name the hub that decided so: the nearest page above it that the
// run fetched and found unchanged, since a hub that changed never skips and a hub left out was not
// judged. For /news/story that is the seed, two levels up, and never its parent /news/ (issue 17:
// explain named the parent of a page the seed had hidden).
func TestExplainNamesWhoLeftAPageOut(t *testing.T) {
	web := testweb.New(t)
	s := web.AddSite(t)
	parent := map[string]string{"/news/": "/", "/archive/": "/", "/news/story": "/news/", "/archive/old": "/archive/"}
	home := []string{"/news/", "/archive/"}
	for i := range 4 {
		p := fmt.Sprintf("/about%d", i)
		parent[p] = "/"
		home = append(home, p)
		s.Page(p, "<p>A page that never changes.</p>")
	}
	s.Page("/", page("home", home...))
	s.Page("/archive/", page("archive", "/archive/old"))
	s.Page("/archive/old", "<p>An old story.</p>")
	s.Page("/news/story", "<p>A story that is done.</p>")
	var mu sync.Mutex
	day := 0
	s.Handle("/news/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		d := day
		mu.Unlock()
		fmt.Fprintf(w, "<p>News of day %s.</p>%s", strings.Repeat("again ", d), page("news", "/news/story"))
	}))

	e := newEnv(t, loopbackConfig)
	e.mustRun("seed", "add", "--level", "2", s.URL("/"))
	conf, err := config.Load(config.Options{File: e.config, Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(t.Context(), conf.Database.Path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	setup := crawler.SetupOf(conf)
	setup.Crawl.Log = slog.New(slog.DiscardHandler)
	now := time.Date(2026, 3, 1, 3, 0, 0, 0, time.UTC)
	setup.Crawl.Now = func() time.Time { return now }
	cyc, err := crawler.Open(t.Context(), db, nil, setup)
	if err != nil {
		t.Fatal(err)
	}
	defer cyc.Close()

	logged, grandparent := 0, 0
	for run := 1; run <= 6; run++ {
		mu.Lock()
		day = run
		mu.Unlock()
		now = now.Add(24 * time.Hour)
		id, err := db.BeginRun(t.Context(), now, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := cyc.Crawl(t.Context(), crawler.Run{ID: id, Start: now}); err != nil {
			t.Fatal(err)
		}
		if _, _, err := cyc.After(t.Context(), id); err != nil {
			t.Fatal(err)
		}
		if err := db.FinishRun(t.Context(), store.Run{ID: id, EndedAt: now, Status: "completed"}); err != nil {
			t.Fatal(err)
		}
		reqs := web.RequestsTo(s)
		unchanged := map[string]bool{} // pages the run fetched and found unchanged
		for _, q := range reqs[logged:] {
			unchanged[q.Path] = q.Path != "/news/"
		}
		logged = len(reqs)
		for p, up := range parent {
			info, err := db.URLInfo(t.Context(), s.URL(p))
			if err != nil {
				t.Fatal(err)
			}
			if info.SkippedRun != id {
				continue
			}
			for up != "/" && !unchanged[up] {
				up = parent[up]
			}
			if up != parent[p] {
				grandparent++
			}
			out := e.mustRun("explain", s.URL(p))
			want := fmt.Sprintf("run %d, by the selective rule of %s (skipped", id, s.URL(up))
			if !strings.Contains(out, want) {
				t.Errorf("run %d left %s out; explain lacks %q:\n%s", run, p, want, out)
			}
		}
	}
	if grandparent == 0 {
		t.Fatal("no page was left out by a hub other than its parent: the test did not see what it checks")
	}
}

// page is an HTML page with a title and links.
func page(title string, links ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "<html><head><title>%s</title></head><body><h1>%s</h1>", title, title)
	for _, l := range links {
		fmt.Fprintf(&b, `<a href="%s">%s</a> `, l, l)
	}
	return b.String() + "</body></html>"
}
