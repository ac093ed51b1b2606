package cli_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/strata-crawler/strata/internal/cli"
	"github.com/strata-crawler/strata/internal/pgstore"
	"github.com/strata-crawler/strata/internal/pgtest"
	"github.com/strata-crawler/strata/internal/testweb"
)

// TestReadPostgres: a fleet worker crawls a loopback web into PostgreSQL under its own archive
// root; then, on "another machine" (a configuration with the same database.url and another
// archive root), status, history, show, export, explain and serve show the crawl, and say which
// worker and root hold each version instead of failing. On the worker's own root show, export and
// serve give the version's text as they do from SQLite. The worker's index step makes serve's
// full-text search and the run's new pages work on every machine.
func TestReadPostgres(t *testing.T) {
	dbURL := pgtest.URL(t)
	web := testweb.New(t)
	s := web.AddSite(t)
	s.Page("/", `<title>Home</title><a href="/a">a</a> <a href="/b">b</a>`)
	s.Page("/a", "<p>the text of page a</p>")
	s.Page("/b", "<p>b</p>")
	worker := newEnv(t, "url = \""+dbURL+"\"\n"+loopbackConfig)
	worker.mustRun("seed", "add", "--level", "1", s.URL("/"))
	worker.mustRun("run", "--worker")

	there := newEnv(t, "url = \""+dbURL+"\"\n"+loopbackConfig)
	workerRoot := filepath.Join(worker.dir, "archive")

	out := there.mustRun("status")
	for _, want := range []string{pgstore.Redact(dbURL), "urls                 3", "seeds                1", "completed"} {
		if !strings.Contains(out, want) {
			t.Errorf("status lacks %q:\n%s", want, out)
		}
	}

	out = there.mustRun("history", s.URL("/a"))
	held := regexp.MustCompile(`\(held by worker [^ ]+/\d+, under ` + regexp.QuoteMeta(workerRoot) + `\)`)
	if !strings.Contains(out, s.URL("/a")+": 1 fetches") || !held.MatchString(out) || strings.Contains(out, "missing") {
		t.Errorf("history on another root:\n%s\nwant 1 fetch, held by the worker under %s", out, workerRoot)
	}
	if out := worker.mustRun("history", s.URL("/a")); strings.Contains(out, "held by") || strings.Contains(out, "missing") {
		t.Errorf("history on the worker's own root:\n%s\nwant the version, neither held elsewhere nor missing", out)
	}

	// show and export jsonl read the version where it is: on the worker's root its text, on
	// another root one line, or one JSON field, naming the worker and root that hold it.
	if out, errs, code := there.run("show", s.URL("/a")); code == 0 || !strings.Contains(errs, "held by worker") || !strings.Contains(errs, workerRoot) ||
		strings.Count(strings.TrimSpace(errs), "\n") > 0 {
		t.Errorf("show on another root: exit %d, %q, %q; want one line naming the worker and %s", code, out, errs, workerRoot)
	}
	if out := worker.mustRun("show", s.URL("/a")); !strings.Contains(out, "the text of page a") {
		t.Errorf("show on the worker's own root: %q; want the page's text", out)
	}
	if out := there.mustRun("export", "jsonl"); strings.Count(out, `"held_by":"`) != 3 || strings.Contains(out, `"missing"`) || strings.Contains(out, "the text of page a") {
		t.Errorf("export jsonl on another root:\n%s\nwant 3 versions held by the worker, without their text", out)
	}
	if out := worker.mustRun("export", "jsonl", "--host", s.Host()); !strings.Contains(out, "the text of page a") || strings.Contains(out, "held_by") {
		t.Errorf("export jsonl on the worker's own root:\n%s\nwant the texts", out)
	}
	// export warc: the worker's machine has the run's WARC file; another says where the run is.
	if out, errs, code := there.run("export", "warc", "--out", t.TempDir()); code != 0 || !strings.Contains(out, "wrote 0 WARC files") ||
		!strings.Contains(errs, "other archive roots") || !strings.Contains(errs, workerRoot) {
		t.Errorf("export warc on another root: exit %d, %q, %q; want no file and a warning naming %s", code, out, errs, workerRoot)
	}
	if out, errs, code := worker.run("export", "warc", "--out", t.TempDir()); code != 0 || !strings.Contains(out, "wrote 1 WARC files") || strings.Contains(errs, "other archive roots") {
		t.Errorf("export warc on the worker's root: exit %d, %q, %q; want its WARC file, no warning", code, out, errs)
	}

	out = there.mustRun("explain", s.URL("/"))
	for _, want := range []string{"role", "seed, level", "last crawled", "next run:"} {
		if !strings.Contains(out, want) {
			t.Errorf("explain lacks %q:\n%s", want, out)
		}
	}
	if _, errs, code := there.run("explain", s.URL("/nowhere")); code != cli.ExitUsage || !strings.Contains(errs, "does not know") {
		t.Errorf("explain of an unknown URL: exit %d, %q", code, errs)
	}

	db, err := pgstore.Open(t.Context(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	id, err := db.URLID(t.Context(), s.URL("/a"))
	if err != nil {
		t.Fatal(err)
	}
	vs, err := db.StoredVersions(t.Context(), id, 5)
	if err != nil || len(vs) != 1 {
		t.Fatalf("versions of /a = %+v, %v", vs, err)
	}

	base := serveOn(t, there)
	for _, tt := range []struct {
		path string
		want []string
	}{
		{"/", []string{"run 1", "3 pages"}},
		{"/sites", []string{s.Host()}},
		{"/tree?p=" + s.URL("/"), []string{"a", "b"}},
		{fmt.Sprintf("/page/%d", id), []string{s.URL("/a"), "found on " + s.URL("/"), "fr / fr_max"}},
		{fmt.Sprintf("/page/%d/text", id), []string{"Held by another worker", "held by worker", workerRoot}},
		{fmt.Sprintf("/raw/%d", vs[0].ID), []string{"held by worker", workerRoot}},
		// The worker indexed the text of the versions it archived, so search works on any machine.
		{"/search?q=text", []string{s.URL("/a"), "the <mark>text</mark> of page a"}},
		{"/search?q=home", []string{s.URL("/"), "Home"}},
		// The worker that recorded the run's end recorded its new pages.
		{"/changes?run=1&kind=new", []string{s.URL("/a"), s.URL("/b")}},
		{"/search?q=/a&in=urls", []string{s.URL("/a")}},
		{"/changes?run=1", []string{"run 1"}},
	} {
		code, body := get(t, base+tt.path)
		if code != http.StatusOK {
			t.Errorf("GET %s on another root: %d\n%s", tt.path, code, body)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(body, w) {
				t.Errorf("GET %s on another root lacks %q", tt.path, w)
			}
		}
	}
	for _, p := range []string{"/search?q=text", "/changes?run=1&kind=new"} {
		if _, body := get(t, base+p); strings.Contains(body, "SQLite-only") || strings.Contains(body, "not indexed yet") {
			t.Errorf("GET %s says the index is missing:\n%s", p, body)
		}
	}
	// strata index rebuilds: on another root nothing of the worker's is readable, on the worker's
	// own root its three versions are indexed again, and the run summarised.
	if out := there.mustRun("index", "--rebuild"); !strings.Contains(out, "index: 0 versions") || !strings.Contains(out, "1 run") {
		t.Errorf("strata index --rebuild on another root: %q; want no version, 1 run", out)
	}
	if out := worker.mustRun("index"); !strings.Contains(out, "index: 3 versions") {
		t.Errorf("strata index on the worker's root: %q; want its 3 versions", out)
	}
	if code, body := get(t, base+"/search?q=text"); code != http.StatusOK || !strings.Contains(body, "the <mark>text</mark> of page a") {
		t.Errorf("search after strata index: %d, want the hit again", code)
	}
	own := serveOn(t, worker)
	if code, body := get(t, fmt.Sprintf("%s/page/%d/text", own, id)); code != http.StatusOK || !strings.Contains(body, "the text of page a") || strings.Contains(body, "held by") {
		t.Errorf("GET the text on the worker's own root: %d, want 200 with the page's text:\n%s", code, body)
	}
}

// TestShowDiffOnPostgres: a PostgreSQL database strata has not written yet, read and fetched
// into; then a fetch (run 1) and two crawls (runs 2 and 3) of a page that changes in between,
// whose two versions show, diff and export jsonl read.
func TestShowDiffOnPostgres(t *testing.T) {
	dbURL := pgtest.URL(t)
	web := testweb.New(t)
	s := web.AddSite(t)
	var n atomic.Int64
	s.Handle("/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fruit := []string{"apples", "pears"}[(n.Add(1)-1)%2]
		fmt.Fprintf(w, "<title>News</title><p>The market sold %s today, and the news of the day is different from yesterday's.</p>", fruit)
	}))
	s.Page("/asked", "<p>a page a person asked for</p>")
	e := newEnv(t, "url = \""+dbURL+"\"\n"+loopbackConfig)
	// A database strata has not written yet: a reader says so in one line; fetch's check has no
	// URL to read there, so the filter alone decides.
	if _, errs, code := e.run("status"); code != cli.ExitUsage || !strings.Contains(errs, "holds no strata history yet; add seeds") {
		t.Errorf("status of an empty database: exit %d, %q; want one line saying it holds no history", code, errs)
	}
	if _, errs, code := e.run("fetch", s.URL("/photo.jpg")); code != cli.ExitUsage || !strings.Contains(errs, "the URL filter rejects") {
		t.Errorf("fetch of a .jpg into an empty database: exit %d, %q; want the filter's refusal", code, errs)
	}
	e.mustRun("seed", "add", s.URL("/"))
	e.mustRun("fetch", s.URL("/asked"))
	if out := e.mustRun("history", s.URL("/asked")); !strings.Contains(out, "1 fetches") {
		t.Errorf("history after fetch: %q; want its fetch", out)
	}
	e.mustRun("crawl")
	e.mustRun("crawl")
	if out := e.mustRun("show", s.URL("/")); !strings.Contains(out, "sold pears") {
		t.Errorf("show: %q; want the second edition", out)
	}
	if out := e.mustRun("show", "--at", "2", s.URL("/")); !strings.Contains(out, "sold apples") {
		t.Errorf("show --at 2: %q; want the first edition", out)
	}
	if _, errs, code := e.run("show", "--at", "9", s.URL("/")); code != cli.ExitUsage || !strings.Contains(errs, "there is no run 9 (the last is run 3)") {
		t.Errorf("show --at 9: exit %d, %q; want a usage error naming the last run", code, errs)
	}
	out := e.mustRun("diff", "--color", "never", s.URL("/"))
	if !strings.Contains(out, "-The market sold apples") || !strings.Contains(out, "+The market sold pears") {
		t.Errorf("diff:\n%s\nwant the first edition replaced by the second", out)
	}
	var front []string
	for line := range strings.Lines(e.mustRun("export", "jsonl")) {
		if strings.Contains(line, `"url":"`+s.URL("/")+`"`) {
			front = append(front, line)
		}
	}
	if len(front) != 2 || !strings.Contains(front[0], `"outcome":"new"`) || !strings.Contains(front[1], `"outcome":"changed"`) {
		t.Errorf("export jsonl, the front page's lines:\n%s\nwant its two versions, new then changed", strings.Join(front, ""))
	}
	// export warc copies the runs' WARC files, written during the crawls, with their index.
	warcs := t.TempDir()
	if out := e.mustRun("export", "warc", "--out", warcs); !strings.Contains(out, "wrote 3 WARC files") {
		t.Errorf("export warc: %q; want a WARC file for each of the 3 runs", out)
	}
	if index, err := os.ReadFile(filepath.Join(warcs, "index.cdxj")); err != nil || strings.Count(string(index), `"url":"`+s.URL("/")+`"`) != 2 {
		t.Errorf("export warc's index: %v\n%s\nwant the front page's two captures", err, index)
	}
	if out := e.mustRun("export", "wacz", "--out", filepath.Join(t.TempDir(), "all.wacz")); !strings.Contains(out, "3 WARC files") {
		t.Errorf("export wacz: %q; want the 3 runs' WARC files", out)
	}
}

// serveOn runs strata serve of e on a loopback port until t ends and returns its base URL.
func serveOn(t *testing.T, e *env) string {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- cli.Run(ctx, []string{"--config", e.config, "serve", "--addr", "127.0.0.1:0"}, pw, io.Discard)
		pw.Close()
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	br := bufio.NewReader(pr)
	line, err := br.ReadString('\n')
	go io.Copy(io.Discard, br)
	m := regexp.MustCompile(`http://127\.0\.0\.1:\d+`).FindString(line)
	if err != nil || m == "" {
		t.Fatalf("serve said %q, %v", line, err)
	}
	return m
}

func get(t *testing.T, u string) (int, string) {
	t.Helper()
	resp, err := http.Get(u)
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
