package cli_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/strata-crawler/strata/internal/cli"
	"github.com/strata-crawler/strata/internal/testweb"
)

// TestSeedFromSitemap is issue 21's item 8: seed add --sitemap adds the pages a sitemap index's
// sitemaps list, through the URL filter, reading them as politely as a crawl: robots.txt first and
// once, the configured gap between requests (also after a crawl in another process), nothing
// robots.txt forbids.
func TestSeedFromSitemap(t *testing.T) {
	web := testweb.New(t)
	s := web.AddSite(t)
	s.Robots("User-agent: *\nDisallow: /private\n", "/private")
	s.Page("/", "<p>home</p>")
	s.Handle("/sitemap_index.xml", testweb.Text("application/xml", `<?xml version="1.0" encoding="UTF-8"?>
<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <sitemap><loc>`+s.URL("/sitemap1.xml")+`</loc></sitemap>
  <sitemap><loc>`+s.URL("/private/sitemap2.xml")+`</loc></sitemap>
</sitemapindex>`))
	s.Handle("/sitemap1.xml", testweb.Text("application/xml", `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <url><loc>`+s.URL("/docs/a")+`</loc><lastmod>2026-11-01</lastmod></url>
  <url><loc>`+s.URL("/docs/b?utm_source=sitemap")+`</loc></url>
  <url><loc>`+s.URL("/docs/a")+`</loc></url>
  <url><loc>`+s.URL("/manual.pdf")+`</loc></url>
  <url><loc>http://elsewhere.example/x</loc></url>
</urlset>`))
	s.Handle("/private/sitemap2.xml", testweb.Text("application/xml", `<urlset><url><loc>`+s.URL("/secret")+`</loc></url></urlset>`))
	e := newEnv(t, loopbackConfig)
	e.mustRun("seed", "add", "--level", "0", s.URL("/"))
	e.mustRun("crawl") // a crawl just before, in another "process": its gap must be kept

	out, errs, code := e.run("seed", "add", "--sitemap", s.URL("/sitemap_index.xml"), "--level", "1")
	if code != 0 {
		t.Fatalf("seed add --sitemap: exit %d\n%s", code, errs)
	}
	for _, want := range []string{s.URL("/sitemap_index.xml") + ": 3 pages listed (2 sitemaps read), 1 rejected by the URL filter",
		"added 2 seeds from sitemaps (level 1, fr_max 1); 0 were seeds already"} {
		if !strings.Contains(out, want) {
			t.Errorf("seed add --sitemap printed %q, want %q", out, want)
		}
	}
	if !strings.Contains(errs, "a sitemap of the index was not read") || !strings.Contains(errs, "disallows /private/sitemap2.xml") {
		t.Errorf("no warning about the sitemap robots.txt forbids: %q", errs)
	}
	list := e.mustRun("seed", "list")
	for _, want := range []string{s.URL("/docs/a"), s.URL("/docs/b") + " "} {
		if !strings.Contains(list, want) {
			t.Errorf("seed list lacks %q:\n%s", want, list)
		}
	}
	for _, never := range []string{"/manual.pdf", "utm_source", "elsewhere.example", "/secret"} {
		if strings.Contains(list, never) {
			t.Errorf("seed list has %q:\n%s", never, list)
		}
	}
	for _, v := range web.Violations(testweb.CheckOptions{MinGap: 20 * time.Millisecond, RobotsFirst: true}) {
		t.Error(v)
	}
	var paths []string
	for _, r := range web.RequestsTo(s) {
		paths = append(paths, r.Path)
	}
	if got := strings.Join(paths, " "); !strings.HasSuffix(got, "/sitemap_index.xml /sitemap1.xml") {
		t.Errorf("requests %q; want the index and its one allowed sitemap after the crawl's", got)
	}

	// A sitemap robots.txt forbids, or a page that is no sitemap: exit 2, one line, nothing added,
	// the database as it was.
	before := hashFile(t, e.db)
	for _, tt := range []struct{ url, want string }{
		{s.URL("/private/sitemap2.xml"), "robots.txt of " + s.URL("") + " disallows /private/sitemap2.xml"},
		{s.URL("/"), "not a sitemap"},
	} {
		out, errs, code := e.run("seed", "add", "--sitemap", tt.url)
		if code != cli.ExitUsage || out != "" || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, tt.want) {
			t.Errorf("seed add --sitemap %s: exit %d, stdout %q, stderr %q; want exit 2 and %q", tt.url, code, out, errs, tt.want)
		}
	}
	if hashFile(t, e.db) != before {
		// The politeness state of the requests made is saved, and nothing else: compare the seeds.
		if list2 := e.mustRun("seed", "list"); list2 != list {
			t.Errorf("a refused sitemap changed the seeds:\n%s", list2)
		}
	}
}

// TestSeedSitemapPrivateChild: the host of a sitemap the user names may be on a private address,
// as a seed's may; an index's sitemap on another host is not its to list, and is not asked for.
func TestSeedSitemapPrivateChild(t *testing.T) {
	web := testweb.New(t)
	s, other := web.AddSite(t), web.AddSite(t)
	s.Handle("/sitemap.xml", testweb.Text("application/xml", `<sitemapindex><sitemap><loc>`+other.URL("/sitemap.xml")+
		`</loc></sitemap><sitemap><loc>`+s.URL("/pages.xml")+`</loc></sitemap></sitemapindex>`))
	s.Handle("/pages.xml", testweb.Text("text/plain", s.URL("/one")+"\n"+s.URL("/two")+"\n"))
	other.Handle("/sitemap.xml", testweb.Text("text/plain", other.URL("/x")+"\n"))
	e := newEnv(t, loopbackConfig)
	var out, errb bytes.Buffer
	err := cli.Run(t.Context(), []string{"--config", e.config, "seed", "add", "--sitemap", s.URL("/sitemap.xml")}, &out, &errb)
	if err != nil || !strings.Contains(out.String(), "2 pages listed (2 sitemaps read)") || !strings.Contains(out.String(), "added 2 seeds from sitemaps") {
		t.Errorf("err %v\nstdout %s\nstderr %s", err, out.String(), errb.String())
	}
	if n := web.Count(other, "/sitemap.xml") + web.Count(other, "/robots.txt"); n != 0 {
		t.Errorf("the other private host got %d requests", n)
	}
}
