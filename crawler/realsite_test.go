package crawler_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/strata-crawler/strata/archive"
	"github.com/strata-crawler/strata/crawler"
	"github.com/strata-crawler/strata/internal/config"
	"github.com/strata-crawler/strata/internal/store"
	"github.com/strata-crawler/strata/internal/testweb"
)

// pydocDefault is where Debian's python3-doc package puts its HTML.
const pydocDefault = "/usr/share/doc/python3-doc/html"

// pydocRoot returns the directory of the python3-doc HTML the real-site test serves.
// STRATA_TEST_PYDOC=1 says the package is installed, a path names its html directory; either way
// the pages must be there (.ci/run sets it after installing the package, so that there the test
// fails instead of skipping). Unset, the test skips when the package is missing.
func pydocRoot(t *testing.T) string {
	t.Helper()
	env := os.Getenv("STRATA_TEST_PYDOC")
	dir := pydocDefault
	if env != "" && env != "1" {
		dir = env
	}
	if _, err := os.Stat(filepath.Join(dir, "library", "index.html")); err != nil {
		if env != "" {
			t.Fatalf("STRATA_TEST_PYDOC=%s, but the python3-doc HTML is not there: %v", env, err)
		}
		t.Skipf("the real-site test needs Debian's python3-doc (apt-get install python3-doc), or STRATA_TEST_PYDOC naming its html directory: %v", err)
	}
	// The Debian path is a symbolic link to python3.X-doc, which a walk would not enter.
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	return real
}

// pydocScope is the part of the documentation the test serves and strata crawls: the front page,
// the library reference and the tutorial, 335 pages and 29 MB in python3.11-doc. Under the race
// detector, which makes the crawler's HTML parsing about ten times slower, the library is cut to its
// index and the modules whose names start with a to c (83 pages, 6 MB): the same site shape, hubs
// and depth, with fewer leaves. The same expression is the crawl's URL filter, so strata requests
// nothing the site does not serve (a link to /c-api/ or /_sources/ is rejected, as a researcher
// studying the library would configure it).
func pydocScope() string {
	if raceEnabled {
		return `^/$|^/tutorial/[^/]+\.html$|^/library/(index|[a-c][^/]*)\.html$`
	}
	return `^/$|^/tutorial/[^/]+\.html$|^/library/[^/]+\.html$`
}

// pydocPage is one page of the served copy.
type pydocPage struct {
	body []byte
	mod  time.Time // Last-Modified
	tag  string    // ETag
}

// pydocSite serves a copy of part of the Python documentation on a loopback host as a static file
// server does — Last-Modified and ETag, and 304 to a conditional request whose validator still
// holds — and lets the test edit pages between runs.
type pydocSite struct {
	site *testweb.Site
	mu   sync.Mutex
	page map[string]*pydocPage // by URL path; "/" is the package's index.html
}

// newPydocSite copies the pages under root whose URL paths match scope.
func newPydocSite(t *testing.T, web *testweb.Web, root, scope string) *pydocSite {
	t.Helper()
	in := regexp.MustCompile(scope)
	p := &pydocSite{site: web.AddSite(t), page: map[string]*pydocPage{}}
	built := time.Date(2025, 10, 7, 12, 35, 0, 0, time.UTC) // the package's files are dated so
	err := filepath.WalkDir(root, func(name string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		rel, err := filepath.Rel(root, name)
		if err != nil {
			return err
		}
		urlPath := "/" + filepath.ToSlash(rel)
		if urlPath == "/index.html" {
			urlPath = "/"
		}
		if !in.MatchString(urlPath) {
			return nil
		}
		b, err := os.ReadFile(name)
		if err != nil {
			return err
		}
		p.page[urlPath] = &pydocPage{body: b, mod: built, tag: etagOf(b)}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	p.site.HandlePrefix("/", http.HandlerFunc(p.serve))
	return p
}

func etagOf(b []byte) string {
	h := sha256.Sum256(b)
	return `"` + hex.EncodeToString(h[:8]) + `"`
}

func (p *pydocSite) serve(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	pg, ok := p.page[r.URL.Path]
	var cp pydocPage
	if ok {
		cp = *pg
	}
	p.mu.Unlock()
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("ETag", cp.tag)
	http.ServeContent(w, r, "", cp.mod, bytes.NewReader(cp.body))
}

// paths returns the served paths, sorted.
func (p *pydocSite) paths() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]string, 0, len(p.page))
	for k := range p.page {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// edit changes one sentence of the main text of the page at urlPath, as an editor of the
// documentation would: in the main content (Sphinx's role="main"), a paragraph chosen by rng whose
// text before its first tag ends a sentence gets a clause before that full stop, and the clause
// carries the word token. The page's Last-Modified becomes at and its ETag changes. It returns false
// when the page has no such paragraph.
func (p *pydocSite) edit(urlPath, token string, at time.Time, rng *rand.Rand) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	pg := p.page[urlPath]
	body := pg.body
	main := bytes.Index(body, []byte(`role="main"`))
	if main < 0 {
		return false
	}
	var stops []int
	for i := main; ; {
		k := bytes.Index(body[i:], []byte("<p>"))
		if k < 0 {
			break
		}
		start := i + k + len("<p>")
		end := bytes.IndexByte(body[start:], '<')
		if end < 0 {
			break
		}
		if stop := bytes.Index(body[start:start+end], []byte(". ")); stop >= 20 {
			stops = append(stops, start+stop)
		}
		i = start
	}
	if len(stops) == 0 {
		return false
	}
	at0 := stops[rng.IntN(len(stops))]
	clause := ", as the maintainers noted in revision " + token
	b := make([]byte, 0, len(body)+len(clause))
	b = append(append(append(b, body[:at0]...), clause...), body[at0:]...)
	pg.body, pg.mod, pg.tag = b, at, etagOf(b)
	return true
}

// editToken spells n in letters: the change detector sets numbers aside, so an edit is made of words.
func editToken(n int) string {
	s := "zq"
	for {
		s += string(rune('a' + n%26))
		if n /= 26; n == 0 {
			return s
		}
	}
}

// pydocEdit is one edit of a page.
type pydocEdit struct {
	path, token string
	run         int // the first run after the edit
	seen        int // the run that stored a version holding it; 0 while pending
}

// pydocRun is what one run did, from the server's log, the crawler's counts and the archive.
type pydocRun struct {
	day       time.Weekday
	edits     int // edits made before it
	fetched   int // page requests (robots.txt and sitemaps aside)
	notMod    int // of them, answered 304
	unchanged int // fetches whose page had not changed since its last fetch: 304 or the same text
	versions  int // new versions stored
	skipped   int // due pages the selective rule left out
	pending   int // edits not recorded after it
	twice     []string
	hidden    []string // pages the selective rule left out without the evidence for it (hiddenWithoutEvidence)
}

// pydocDays is how many daily runs the test plays: two weeks of a documentation team at work on
// weekdays, from a Monday's first crawl to the second Monday.
const pydocDays = 15

// TestRealSitePydoc runs strata as a user does — seed add, then one strata run a day — against a
// real documentation site: Debian's copy of the Python documentation (python3-doc), served on a
// loopback host by a static file server that honours conditional requests. The seed is the site's
// front page at level 6, which covers the library and the tutorial (they are 3 links deep); the
// policy is the default (bouras with the selective rule, no budget). Every weekday the maintainers
// edit 5 % of the pages, chosen at random, each edit one sentence of the main text; a run at 03:00
// sees the previous day's edits, so the runs on Sunday and Monday follow quiet days.
//
// The test asserts, each as a named check:
//
//   - edits: at least 95 % of the edits are recorded — a version stored whose text holds the edit —
//     within the two runs that follow the edit;
//   - quiet-shrink: runs that follow quiet days fetch fewer pages over time: the second weekend's
//     two runs fetch fewer pages than the first weekend's;
//   - no run fetches more than it has to, which here means all of:
//     once: no page is requested twice in one run;
//     site: no run requests more pages than the site has (what the first, full crawl fetched);
//     unchanged-fall: fetches of pages that had not changed fall over time: the second week's
//     runs (9 to 15) make fewer of them than the first week's after the first crawl (2 to 8);
//     spike: no near-full recrawl right after near-empty runs: no run after the third fetches more
//     than 80 % of the site when the run before it fetched less than 10 % (the SciPy site's 1, 1,
//     5, then 4,052 of 4,051 pages);
//   - collapse: run 2 leaves nothing out on the selective rule's word, since no page has been
//     fetched twice: the SciPy site's run 2, in which / answered 304 and one URL was fetched;
//   - evidence: no run leaves out a page longer than the page's own history supports, the reading of
//     issue 17's rule that hiddenWithoutEvidence spells out: a page may wait, on a hub's word, as
//     many runs since its last fetch as it has been seen unchanged for.
//
// A per-run table shows the dynamics. The checks the default policy fails today are listed in
// pydocKnown with the defect behind each: the test then skips and says which and why, unless
// STRATA_TEST_STRICT is set, which makes them errors. Any other failed check fails the test.
func TestRealSitePydoc(t *testing.T) {
	root := pydocRoot(t)
	scope := pydocScope()
	web := testweb.New(t)
	site := newPydocSite(t, web, root, scope)
	paths := site.paths()
	if len(paths) < 50 {
		t.Fatalf("%d pages of %s match %s: not the python3-doc this test knows", len(paths), root, scope)
	}

	dir := t.TempDir()
	cfgFile := filepath.Join(dir, "strata.toml")
	// Loopback politeness is lowered so that a run takes seconds; nothing else differs from the
	// defaults but the URL filter, and WARC files, which nothing here reads.
	if err := os.WriteFile(cfgFile, []byte(`[crawl]
user_agent = "`+userAgent+`"
[politeness]
loopback_delay = "1ms"
delay_factor = 1.0
[archive]
warc = false
[filter]
all = [ { default = true }, { path_regex = '`+scope+`' } ]
`), 0o644); err != nil {
		t.Fatal(err)
	}
	conf, err := config.Load(config.Options{File: cfgFile, WorkDir: dir, Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	db, err := store.Open(ctx, conf.Database.Path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	arch, err := archive.Open(conf.Archive.Root)
	if err != nil {
		t.Fatal(err)
	}
	seed := site.site.URL("/")
	if _, err := db.AddSeeds(ctx, []store.NewSeed{{URL: seed, Host: site.site.Host(), Level: 6, FrMax: conf.Seed.FrMax}}); err != nil {
		t.Fatal(err)
	}
	setup := crawler.SetupOf(conf)
	setup.Crawl.Log = slog.New(slog.DiscardHandler)
	clock := &dayClock{t: time.Date(2026, 1, 4, 3, 0, 0, 0, time.UTC)} // the first run is on Monday 5 January
	setup.Crawl.Now = clock.Now
	cyc, err := crawler.Open(ctx, db, arch, setup)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cyc.Close)

	urls := make([]string, len(paths))
	for i, p := range paths {
		urls[i] = site.site.URL(p)
	}
	rng := rand.New(rand.NewPCG(17, 6))
	var edits []*pydocEdit
	runs := make([]pydocRun, 0, pydocDays)
	logged := 0
	for day := 1; day <= pydocDays; day++ {
		now := clock.next()
		r := pydocRun{day: now.Weekday()}
		if workday := now.Add(-24 * time.Hour).Weekday(); day > 1 && workday != time.Saturday && workday != time.Sunday {
			for _, i := range rng.Perm(len(paths))[:(len(paths)+10)/20] {
				tok := editToken(len(edits))
				if site.edit(paths[i], tok, now.Add(-8*time.Hour), rng) {
					edits = append(edits, &pydocEdit{path: paths[i], token: tok, run: day})
					r.edits++
				}
			}
		}
		id, err := db.BeginRun(ctx, now, 0)
		if err != nil {
			t.Fatal(err)
		}
		st, err := cyc.Crawl(ctx, crawler.Run{ID: id, Start: now})
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := cyc.After(ctx, id); err != nil {
			t.Fatal(err)
		}
		if err := db.FinishRun(ctx, store.Run{ID: id, EndedAt: now, Status: "completed"}); err != nil {
			t.Fatal(err)
		}
		r.unchanged, r.skipped = st.Unchanged+st.NotModified, st.SkippedSelective

		reqs := web.RequestsTo(site.site)
		times := map[string]int{}
		for _, q := range reqs[logged:] {
			if q.Path == "/robots.txt" || strings.HasPrefix(q.Path, "/sitemap") {
				continue
			}
			r.fetched++
			times[q.Path]++
			if q.Status == http.StatusNotModified {
				r.notMod++
			}
		}
		logged = len(reqs)
		for p, n := range times {
			if n > 1 {
				r.twice = append(r.twice, fmt.Sprintf("%s %d times", p, n))
			}
		}

		stored := map[string]string{}
		err = db.EachVersion(ctx, store.VersionFilter{RunID: id}, func(v store.Version) error {
			stored[v.URL] = v.Path
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		r.versions = len(stored)
		r.hidden = hiddenWithoutEvidence(t, db, id, urls)
		for _, e := range edits {
			if p, ok := stored[site.site.URL(e.path)]; ok && e.seen == 0 {
				text, err := arch.ReadText(p)
				if err != nil {
					t.Fatal(err)
				}
				if strings.Contains(text, e.token) {
					e.seen = day
				}
			}
			if e.seen == 0 {
				r.pending++
			}
		}
		runs = append(runs, r)
	}

	var tab strings.Builder
	fmt.Fprintf(&tab, "run day  edits fetched  304s unchanged versions skipped pending\n")
	for i, r := range runs {
		fmt.Fprintf(&tab, "%3d %s %6d %7d %5d %9d %8d %7d %7d\n", i+1, r.day.String()[:3], r.edits, r.fetched, r.notMod,
			r.unchanged, r.versions, r.skipped, r.pending)
	}
	t.Logf("%d pages of %s served on %s (filter %s), seed %s at level 6, default policy:\n%s", len(paths), root,
		site.site.Host(), scope, seed, tab.String())

	failed := pydocChecks(runs, edits, len(paths))
	knownFailures(t, failed, pydocKnown)
}

// pydocChecks runs the checks TestRealSitePydoc describes and returns the failed ones, each with
// what was seen, by name.
func pydocChecks(runs []pydocRun, edits []*pydocEdit, pages int) map[string]string {
	failed := map[string]string{}
	fail := func(check, format string, args ...any) {
		if failed[check] != "" {
			failed[check] += "; "
		}
		failed[check] += fmt.Sprintf(format, args...)
	}
	if runs[0].fetched != pages {
		fail("site", "the first run fetched %d pages of the %d served", runs[0].fetched, pages)
	}
	var late []string
	for _, e := range edits {
		switch {
		case e.seen == 0:
			late = append(late, fmt.Sprintf("%s (edited before run %d, not recorded)", e.path, e.run))
		case e.seen > e.run+1:
			late = append(late, fmt.Sprintf("%s (edited before run %d, recorded in run %d)", e.path, e.run, e.seen))
		}
	}
	if len(edits) == 0 {
		fail("edits", "no page could be edited")
	} else if in := 1 - float64(len(late))/float64(len(edits)); in < 0.95 {
		fail("edits", "%d of %d edits (%.0f %%) recorded within 2 runs, want at least 95 %%; late: %s",
			len(edits)-len(late), len(edits), 100*in, strings.Join(late[:min(len(late), 5)], ", "))
	}
	// Runs 7 and 8 are the first weekend's (Sunday and Monday, after quiet days), 14 and 15 the second's.
	if first, second := runs[6].fetched+runs[7].fetched, runs[13].fetched+runs[14].fetched; second >= first {
		fail("quiet-shrink", "the second weekend's runs fetched %d pages, the first's %d", second, first)
	}
	week := func(from, to int) (n int) {
		for _, r := range runs[from-1 : to] {
			n += r.unchanged
		}
		return n
	}
	if w1, w2 := week(2, 8), week(9, 15); w2 >= w1 {
		fail("unchanged-fall", "runs 9 to 15 fetched %d unchanged pages, runs 2 to 8 %d", w2, w1)
	}
	for i, r := range runs {
		run := i + 1
		if len(r.twice) > 0 {
			fail("once", "run %d requested %s", run, strings.Join(r.twice, ", "))
		}
		if r.fetched > pages {
			fail("site", "run %d requested %d pages of a site of %d", run, r.fetched, pages)
		}
		if run > 3 && 10*r.fetched > 8*pages && 10*runs[i-1].fetched < pages {
			fail("spike", "run %d fetched %d of %d pages after run %d fetched %d", run, r.fetched, pages, run-1, runs[i-1].fetched)
		}
		if run == 2 && r.skipped > 0 {
			fail("collapse", "run 2 fetched %d pages and the selective rule left out %d, though no page had been fetched twice", r.fetched, r.skipped)
		}
		if len(r.hidden) > 0 {
			fail("evidence", "run %d left out %d pages without the evidence for it, such as %s", run, len(r.hidden),
				strings.Join(r.hidden[:min(len(r.hidden), 3)], ", "))
		}
	}
	return failed
}

// pydocKnown are the checks of TestRealSitePydoc that the default policy fails today, each with the
// defect behind it, as the runs' table and the selective rule's debug log show it (reported on issue
// 17 by the branch that wrote this test). The two scopes fail the same checks but quiet-shrink, which
// only the smaller one fails.
var pydocKnown = map[string]string{
	"evidence": "frequency.Quiet takes two unchanged fetches as a page's own evidence for any number of skips up " +
		"to maxSkips (3): in run 3 the unchanged hub /library/index.html leaves out every page below it fetched twice " +
		"(304 of the 335, the SciPy collapse a run later), and hubs left out with them are due in the next run and " +
		"leave the same pages out again",
	"edits": "pages whose own fr_max (1) says due are hidden by their hub for up to 3 runs (maxSkips), so edits " +
		"made before runs 3 and 4 are recorded in run 5 or 6; and bouras backs unchanged pages off in lockstep " +
		"(fr_max 1, 1, 2, 3, 4, ...; b = x/counter barely moves for one change in x), so an edit to a page at " +
		"fr_max 3 or more waits up to fr_max runs: with the selective rule off, 61 % of the edits are recorded in time",
	"spike": "skipped pages stay due (fr 0) and are all fetched in the next run in which no hub above them is due; " +
		"an open verdict makes every child of /library/index.html due (285 pages) whenever their change share " +
		"reaches the hub's threshold, which the paper-direction average keeps just below a share that grows as " +
		"changes pile up in the children's 10-record windows (18.6 % >= 17.4 %, 21.4 % >= 17.7 %, 27.4 % >= 18.6 %); " +
		"and without the selective rule bouras's countdowns restart in lockstep, so runs fetch 335, 0, 335, 0, 0, 335",
	"quiet-shrink": "the same skips, opens and lockstep countdowns: the weekend runs fetch what the spikes leave",
}

// knownFailures fails the test for every failed check (by name, with what was seen) that known
// does not list. The listed ones are checks that fail today on a defect of the production code, each
// with that defect: their failures make the test skip, saying which and why, or fail when
// STRATA_TEST_STRICT is set. A listed check that passes is logged, so that its entry can go once it
// passes everywhere the test runs.
func knownFailures(t *testing.T, failed, known map[string]string) {
	t.Helper()
	strict := os.Getenv("STRATA_TEST_STRICT") != ""
	var names []string
	for check := range known {
		if failed[check] == "" {
			names = append(names, check)
		}
	}
	sort.Strings(names)
	for _, check := range names {
		t.Logf("check %s passes here, though it is listed as a known failure: remove it once it passes under -race and without", check)
	}
	names = names[:0]
	for check := range failed {
		names = append(names, check)
	}
	sort.Strings(names)
	var skipped []string
	for _, check := range names {
		if why, ok := known[check]; ok && !strict {
			skipped = append(skipped, fmt.Sprintf("%s: %s\n    known defect: %s", check, failed[check], why))
			continue
		}
		t.Errorf("check %s: %s", check, failed[check])
	}
	if len(skipped) > 0 && !t.Failed() {
		t.Skipf("checks that fail on known defects (STRATA_TEST_STRICT=1 makes them errors):\n  %s", strings.Join(skipped, "\n  "))
	}
}
