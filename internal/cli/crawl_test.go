package cli_test

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/strata-crawler/strata/internal/cli"
	"github.com/strata-crawler/strata/internal/runlock"
	"github.com/strata-crawler/strata/internal/testweb"
)

const loopbackConfig = "[politeness]\nloopback_delay = \"20ms\"\n[crawl]\nuser_agent = \"strata-test/1 (+https://lab.example/contact)\"\n"

func TestCrawlCommand(t *testing.T) {
	web := testweb.New(t)
	sites := web.AddSites(t, 3)
	e := newEnv(t, loopbackConfig)
	for i, s := range sites {
		s.Robots("User-agent: *\nDisallow: /no\n", "/no")
		s.Page("/", fmt.Sprintf("<p>home %d</p>", i))
		s.Page("/no", "<p>forbidden</p>")
		e.mustRun("seed", "add", s.URL("/"), s.URL("/no"))
	}
	out := e.mustRun("crawl")
	for _, want := range []string{"run 1: crawled 6 of 6 due URLs on 3 domains", "3 fetched (0 changed, 0 unchanged, 0 not modified, 3 new)",
		"3 blocked by robots.txt", "0 errors"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	if v := web.Violations(testweb.CheckOptions{MinGap: 20e6, RobotsFirst: true}); len(v) > 0 {
		t.Errorf("violations: %v", v)
	}
	status := e.mustRun("status")
	if !strings.Contains(status, "completed") || !strings.Contains(status, "blocked            3") {
		t.Errorf("status after the crawl:\n%s", status)
	}
	// Second run: pages are due again (fr_max 1) and unchanged.
	if out := e.mustRun("crawl"); !strings.Contains(out, "3 fetched (0 changed, 3 unchanged") {
		t.Errorf("second crawl:\n%s", out)
	}
}

func TestCrawlLocked(t *testing.T) {
	e := newEnv(t, loopbackConfig)
	e.mustRun("seed", "add", "https://a.example/") // creates the database
	l, err := runlock.Acquire(e.db)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	_, errs, code := e.run("crawl")
	if code != cli.ExitLocked || !strings.Contains(errs, fmt.Sprintf("pid %d", os.Getpid())) {
		t.Errorf("crawl while locked: exit %d, stderr %q; want exit 3 naming the holder", code, errs)
	}
}

func TestCrawlBadMaxDuration(t *testing.T) {
	e := newEnv(t, loopbackConfig)
	_, errs, code := e.run("crawl", "--max-duration", "soon")
	if code != cli.ExitUsage || !strings.Contains(errs, "crawl.max_duration") {
		t.Errorf("exit %d, stderr %q", code, errs)
	}
}

func TestRunCycle(t *testing.T) {
	web := testweb.New(t)
	s := web.AddSite(t)
	s.Page("/", `<a href="/a">a</a> <a href="/b">b</a>`)
	s.Page("/a", "<p>a</p>")
	s.Page("/b", "<p>b</p>")
	e := newEnv(t, loopbackConfig)
	e.mustRun("seed", "add", "--level", "1", s.URL("/"))
	out := e.mustRun("run")
	for _, want := range []string{"run 1: crawled 3 of 3 due URLs", "recalc: 3 revisit intervals recalculated",
		"links: 2 links recorded from 3 stored versions"} {
		if !strings.Contains(out, want) {
			t.Errorf("run output lacks %q:\n%s", want, out)
		}
	}
	// The stages on their own, for the last run.
	if out := e.mustRun("recalc"); !strings.Contains(out, "run 1: 3 revisit intervals recalculated") {
		t.Errorf("recalc: %s", out)
	}
	if out := e.mustRun("links"); !strings.Contains(out, "run 1: 2 links recorded") {
		t.Errorf("links: %s", out)
	}
	fresh := newEnv(t, loopbackConfig)
	fresh.mustRun("seed", "add", "https://a.example/")
	if _, errs, code := fresh.run("recalc"); code != cli.ExitUsage || !strings.Contains(errs, "no run yet") {
		t.Errorf("recalc before any run: exit %d, %q", code, errs)
	}

	e.mustRun("run") // a second run: the hub / is unchanged, so is every child
	ex := e.mustRun("explain", s.URL("/"))
	for _, want := range []string{"seed, level 1", "fr / fr_max", "2 known, 2 of them fetched twice or more; of those 0% changed",
		"threshold", "next run:", "as a hub: if it is crawled and unchanged, its subtree will be skipped", "after its next crawl, fr_max becomes"} {
		if !strings.Contains(ex, want) {
			t.Errorf("explain / lacks %q:\n%s", want, ex)
		}
	}
	ex = e.mustRun("explain", s.URL("/a"))
	if !strings.Contains(ex, "found on "+s.URL("/")) || !strings.Contains(ex, "last 10 records") {
		t.Errorf("explain /a:\n%s", ex)
	}
	if _, errs, code := e.run("explain", s.URL("/never")); code != cli.ExitUsage || !strings.Contains(errs, "does not know") {
		t.Errorf("explain of an unknown URL: exit %d, %q", code, errs)
	}
	rep := e.mustRun("status", "--seeds")
	if !strings.Contains(rep, "LINKS/CRAWL") || !strings.Contains(rep, s.URL("/")+"  2.0") || !strings.Contains(rep, "0 of 2") {
		t.Errorf("status --seeds:\n%s", rep)
	}
}

func TestDemo(t *testing.T) {
	var out, errb strings.Builder
	keep := filepath.Join(t.TempDir(), "demo")
	err := cli.Run(t.Context(), []string{"demo", "--days", "3", "--keep", keep}, &out, &errb)
	if err != nil {
		t.Fatalf("demo: %v\n%s", err, errb.String())
	}
	for _, want := range []string{"A scripted web is up at http://127.0.0.1:", "DAY  KNOWN  FETCHED", "Revisit interval (fr_max",
		"front page: new headlines every day", "crawling everything every day would have fetched", "Explore it:"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("demo output lacks %q:\n%s", want, out.String())
		}
	}
	if _, err := os.Stat(filepath.Join(keep, "strata.db")); err != nil {
		t.Errorf("--keep did not keep the database: %v", err)
	}
	if err := cli.Run(t.Context(), []string{"demo", "--days", "1"}, io.Discard, io.Discard); cli.ExitCode(err) != cli.ExitUsage {
		t.Errorf("demo --days 1: %v, want a usage error", err)
	}
	// --keep never writes into a directory that holds something already (the kept demo, here).
	if err := cli.Run(t.Context(), []string{"demo", "--days", "2", "--keep", keep}, io.Discard, io.Discard); cli.ExitCode(err) != cli.ExitUsage ||
		!strings.Contains(err.Error(), "not empty") {
		t.Errorf("demo --keep into a non-empty directory: %v, want a usage error", err)
	}
}

func TestFetchNow(t *testing.T) {
	web := testweb.New(t)
	s := web.AddSite(t)
	s.Page("/", `<a href="/linked">linked</a>`)
	s.Page("/other", "<p>other</p>")
	s.Page("/linked", "<p>linked</p>")
	e := newEnv(t, loopbackConfig)
	e.mustRun("seed", "add", "--level", "1", s.URL("/"))
	e.mustRun("run")
	before := web.Count(s, "/")
	out := e.mustRun("fetch", s.URL("/other"))
	if !strings.Contains(out, "crawled 1 of 1 due URLs") {
		t.Errorf("fetch: %s", out)
	}
	if web.Count(s, "/other") != 1 || web.Count(s, "/") != before {
		t.Errorf("fetch requested /other %d times and / %d more times; want only the asked URL", web.Count(s, "/other"), web.Count(s, "/")-before)
	}
	if hist := e.mustRun("history", s.URL("/other")); !strings.Contains(hist, "1 fetches") {
		t.Errorf("the immediate fetch is not recorded:\n%s", hist)
	}
	if _, errs, code := e.run("fetch", s.URL("/x"), "not a url"); code != cli.ExitUsage || !strings.Contains(errs, "argument 2") {
		t.Errorf("fetch with a bad URL: exit %d, %q", code, errs)
	}
	if web.Count(s, "/x") != 0 {
		t.Error("a fetch with a bad URL still fetched the good one")
	}
	if v := web.Violations(testweb.CheckOptions{MinGap: 20e6}); len(v) > 0 {
		t.Errorf("violations: %v", v)
	}
}

func TestOptimalPolicyAndPlan(t *testing.T) {
	web := testweb.New(t)
	s := web.AddSite(t)
	for i := 0; i < 6; i++ {
		s.Page(fmt.Sprintf("/p%d", i), fmt.Sprintf("<p>page %d</p>", i))
	}
	e := newEnv(t, loopbackConfig+"[frequency]\npolicy = \"optimal\"\n[optimizer]\nbudget = 2\nperiod = 6\n")
	for i := 0; i < 6; i++ {
		e.mustRun("seed", "add", "--level", "0", s.URL(fmt.Sprintf("/p%d", i)))
	}
	// The budget caps every run at 2 fetches; the six new pages take three runs.
	crawled := regexp.MustCompile(`crawled (\d+) of \d+ due`)
	newFetched := regexp.MustCompile(`Budget 2 pages: (\d+) new`)
	fresh := 0
	for i := range 6 {
		out := e.mustRun("run")
		n := -1
		if m := crawled.FindStringSubmatch(out); m != nil {
			n, _ = strconv.Atoi(m[1])
		}
		if n < 0 || n > 2 {
			t.Errorf("run %d under a budget of 2:\n%s", i+1, out)
		}
		if m := newFetched.FindStringSubmatch(out); m != nil {
			n, _ := strconv.Atoi(m[1])
			fresh += n
		}
		if i == 1 && !strings.Contains(out, "recalc:") {
			t.Errorf("run with the optimal policy:\n%s", out)
		}
	}
	if fresh != 6 {
		t.Errorf("%d new pages fetched in six runs, want all 6", fresh)
	}
	// explain works under the optimal policy and shows what strata knows of the site's hints (it
	// asked for /sitemap.xml, which this site does not have).
	ex := e.mustRun("explain", s.URL("/p0"))
	for _, want := range []string{"optimal plan gives it its bucket's fr_max", "site's hints", "trust 0.50"} {
		if !strings.Contains(ex, want) {
			t.Errorf("explain lacks %q:\n%s", want, ex)
		}
	}
	plan := e.mustRun("plan")
	for _, want := range []string{"budget 2 pages per run, period 6 runs, 6 pages", "CRAWLS PER PERIOD", "expected:"} {
		if !strings.Contains(plan, want) {
			t.Errorf("plan lacks %q:\n%s", want, plan)
		}
	}
	bad := newEnv(t, "[frequency]\npolicy = \"optimal\"\n")
	if _, errs, code := bad.run("status"); code != cli.ExitUsage || !strings.Contains(errs, "optimizer.budget") {
		t.Errorf("optimal without a budget: exit %d, %q", code, errs)
	}
}

// TestPlanForAnyPolicy: without the optimal policy, strata plan describes the allocation the pages'
// current intervals make, on the same staleness scale.
func TestPlanForAnyPolicy(t *testing.T) {
	web := testweb.New(t)
	s := web.AddSite(t)
	for i := range 3 {
		s.Page(fmt.Sprintf("/p%d", i), fmt.Sprintf("<p>page %d</p>", i))
	}
	e := newEnv(t, loopbackConfig)
	for i := range 3 {
		e.mustRun("seed", "add", "--level", "0", "--fr-max", "2", s.URL(fmt.Sprintf("/p%d", i)))
	}
	e.mustRun("run")
	out := e.mustRun("plan")
	if !strings.Contains(out, "the bouras policy's current intervals") || !strings.Contains(out, "expected:") {
		t.Errorf("plan under bouras:\n%s", out)
	}
	var plan struct {
		Pages          int
		ExpectedPerRun float64
	}
	if err := json.Unmarshal([]byte(e.mustRun("plan", "--json")), &plan); err != nil {
		t.Fatal(err)
	}
	if plan.Pages != 3 || plan.ExpectedPerRun <= 0 || plan.ExpectedPerRun > 3 {
		t.Errorf("plan --json: %+v; want 3 pages and between 0 and 3 crawls per run", plan)
	}
}

// TestSummaryCounts crawls a site whose pages make the stage count events rather than URLs: a
// redirect loop (every hop makes a known URL due again) and a page that answers 429 with a
// Retry-After (crawled again in the same run). The summary's "crawled X of Y due URLs" must have
// X ≤ Y ≤ the URLs strata knows, and the URLs it says stay due must be the ones still due.
func TestSummaryCounts(t *testing.T) {
	web := testweb.New(t)
	s := web.AddSite(t)
	s.Page("/", "<p>home</p>")
	s.Handle("/loop-a", testweb.Redirect("/loop-b", 302))
	s.Handle("/loop-b", testweb.Redirect("/loop-a", 302))
	s.Handle("/busy", testweb.RetryAfter(429, time.Second))
	e := newEnv(t, loopbackConfig)
	e.mustRun("seed", "add", "--level", "0", s.URL("/"), s.URL("/loop-a"), s.URL("/busy"))
	out := e.mustRun("crawl")
	m := regexp.MustCompile(`crawled (\d+) of (\d+) due URLs`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no count in the summary:\n%s", out)
	}
	crawled, due := atoi(t, m[1]), atoi(t, m[2])
	var st struct {
		URLs       map[string]int `json:"urls"`
		DueNextRun int            `json:"due_next_run"`
	}
	if err := json.Unmarshal([]byte(e.mustRun("status", "--json")), &st); err != nil {
		t.Fatal(err)
	}
	known := 0
	for _, n := range st.URLs {
		known += n
	}
	if crawled > due || due > known {
		t.Errorf("summary says crawled %d of %d due URLs, and strata knows %d URLs:\n%s", crawled, due, known, out)
	}
	left := 0
	if m := regexp.MustCompile(`(\d+) URLs stay due`).FindStringSubmatch(out); m != nil {
		left = atoi(t, m[1])
	}
	if left != due-crawled {
		t.Errorf("summary says %d URLs stay due, want %d (%d due, %d crawled):\n%s", left, due-crawled, due, crawled, out)
	}
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
