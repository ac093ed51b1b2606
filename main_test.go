package main

import (
	"database/sql"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/strata-crawler/strata/internal/cli"
	"github.com/strata-crawler/strata/internal/crashpoint"
	"github.com/strata-crawler/strata/internal/pgtest"
	"github.com/strata-crawler/strata/internal/testweb"
)

// TestMain lets the test binary stand in for strata: with STRATA_TEST_MAIN=1 it runs main instead of
// the tests, so the subprocess tests below exercise the real exit codes and standard error.
func TestMain(m *testing.M) {
	if os.Getenv("STRATA_TEST_MAIN") == "1" {
		// STRATA_TEST_CRASH names the crash point at which this process kills itself, as kill -9
		// would (package crashpoint); STRATA_TEST_FSIZE caps the size of every file it writes, as a
		// full disk would (Linux only).
		if p := os.Getenv("STRATA_TEST_CRASH"); p != "" {
			crashpoint.Arm(p)
		}
		if err := limitFileSize(os.Getenv("STRATA_TEST_FSIZE")); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(99)
		}
		main()
		return
	}
	os.Exit(pgtest.Run(m)) // pgtest.Run stops the PostgreSQL cluster a migrate-db test may start
}

func strata(t *testing.T, dir string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return strataEnv(t, dir, nil, args...)
}

// strataCmd is the command that runs this test binary as strata with args in dir (see TestMain).
func strataCmd(dir string, args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "STRATA_TEST_MAIN=1")
	return cmd
}

// strataEnv is strata with more environment variables.
func strataEnv(t *testing.T, dir string, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := strataCmd(dir, args...)
	cmd.Env = append(cmd.Env, env...)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return out.String(), errb.String(), ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), 0
}

func TestProcessExitCodes(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name     string
		args     []string
		code     int
		stderrIs string // exact, "" means empty
	}{
		{"seed add", []string{"seed", "add", "https://example.org/"}, 0, ""},
		{"bad URL", []string{"seed", "add", "gopher://example.org/"},
			2, "strata: seed add: argument 1: invalid URL \"gopher://example.org/\": scheme \"gopher\" not supported (http and https only)\n"},
		{"missing config", []string{"--config", "nope.toml", "status"},
			2, "strata: invalid configuration: " + filepath.Join(dir, "nope.toml") + ": no such file: file does not exist\n"},
		{"status", []string{"status"}, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, stderr, code := strata(t, dir, tt.args...)
			if code != tt.code || stderr != tt.stderrIs {
				t.Errorf("exit %d, stderr %q; want exit %d, stderr %q", code, stderr, tt.code, tt.stderrIs)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "strata.db")); err != nil {
		t.Errorf("without a config file the database should default to ./strata.db: %v", err)
	}
}

// TestKillDuringCrawl kills three crawls with SIGKILL at different points while they fetch and write
// versions (every page changes on every visit), then runs a fourth to the end, and checks what a cron
// user relies on: the database is intact, the killed runs are marked interrupted, every page got
// crawled and nothing is left due, every recorded version is complete on disk, no temporary file and
// no unrecorded version survives, and no site saw a politeness violation across the kills.
func TestKillDuringCrawl(t *testing.T) {
	web := testweb.New(t)
	sites := web.AddSites(t, 4)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "strata.toml")
	const gap = 30 * time.Millisecond
	os.WriteFile(cfg, []byte("[politeness]\nloopback_delay = \"30ms\"\n[crawl]\nuser_agent = \"strata-test/1 (+https://lab.example/c)\"\n"), 0o644)
	var seeds []string
	var visits atomic.Int64
	for i, s := range sites {
		s.Robots("User-agent: *\nAllow: /\n")
		for p := 0; p < 25; p++ {
			path := fmt.Sprintf("/p%02d", p)
			s.Handle(path, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/html")
				fmt.Fprintf(w, "<html><body><p>site %d page %d visit %d</p></body></html>", i, p, visits.Add(1))
			}))
			seeds = append(seeds, s.URL(path))
		}
	}
	seedFile := filepath.Join(dir, "seeds.txt")
	os.WriteFile(seedFile, []byte(strings.Join(seeds, "\n")), 0o644)
	if _, errs, code := strata(t, dir, "--config", cfg, "seed", "add", "--level", "0", "--file", seedFile); code != 0 {
		t.Fatalf("seed add: %s", errs)
	}

	for _, killAt := range []int{12, 47, 81} {
		cmd := strataCmd(dir, "--config", cfg, "crawl")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(30 * time.Second)
		for pages(web) < killAt && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		cmd.Process.Kill()
		cmd.Wait()
		t.Logf("killed a crawl after %d page requests in all", pages(web))
	}

	out, errs, code := strata(t, dir, "--config", cfg, "crawl")
	if code != 0 {
		t.Fatalf("crawl after the kills: exit %d\n%s", code, errs)
	}
	if !strings.Contains(errs, "an earlier run was cut off") {
		t.Errorf("the last crawl did not notice the killed run: %s", errs)
	}
	t.Logf("the crawl after the kills: %s", strings.TrimSpace(out))

	db, err := sql.Open("sqlite", filepath.Join(dir, "strata.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var integrity string
	db.QueryRow("PRAGMA integrity_check").Scan(&integrity)
	var due, neverFetched, orphans int
	db.QueryRow("SELECT count(*) FROM due").Scan(&due)
	db.QueryRow("SELECT count(*) FROM urls u WHERE NOT EXISTS (SELECT 1 FROM fetches f WHERE f.url_id = u.id)").Scan(&neverFetched)
	db.QueryRow("SELECT count(*) FROM fetches f WHERE NOT EXISTS (SELECT 1 FROM urls u WHERE u.id = f.url_id)").Scan(&orphans)
	if integrity != "ok" || due != 0 || neverFetched != 0 || orphans != 0 {
		t.Errorf("after the kills: integrity %q, %d still due, %d never fetched, %d orphan fetches", integrity, due, neverFetched, orphans)
	}
	var statuses string
	db.QueryRow("SELECT group_concat(status, ',') FROM (SELECT status FROM runs ORDER BY id)").Scan(&statuses)
	if statuses != "interrupted,interrupted,interrupted,completed" {
		t.Errorf("run statuses %q", statuses)
	}

	// The archive: every recorded version complete, nothing else left.
	root := filepath.Join(dir, "archive")
	recorded := map[string]bool{}
	rows, err := db.Query("SELECT archive_path FROM fetches WHERE archive_path IS NOT NULL")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var p string
		rows.Scan(&p)
		recorded[p] = true
		for _, f := range []string{"page.html", "page.txt", "page.json"} {
			if _, err := os.Stat(filepath.Join(root, p, f)); err != nil {
				t.Errorf("recorded version %s lacks %s", p, f)
			}
		}
	}
	rows.Close()
	if len(recorded) < 100 {
		t.Errorf("only %d versions recorded", len(recorded))
	}
	filepath.WalkDir(root, func(p string, e os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(p))
		switch {
		case strings.HasPrefix(e.Name(), ".strata-tmp-"):
			t.Errorf("temporary file survived: %s", p)
		case strings.HasPrefix(e.Name(), "page.") && !recorded[filepath.ToSlash(rel)]:
			t.Errorf("unrecorded version file survived: %s", p)
		}
		return nil
	})
	for _, v := range web.Violations(testweb.CheckOptions{MinGap: gap}) {
		t.Error(v)
	}
	checkArchive(t, dir) // and every killed run got its manifest
}

func pages(w *testweb.Web) int {
	n := 0
	for _, r := range w.Requests() {
		if r.Path != "/robots.txt" {
			n++
		}
	}
	return n
}

// TestCrawlDelayAcrossProcesses is issue 18's first defect as its black-box run saw it: two crawls
// back to back against a host whose robots.txt says Crawl-delay: 1. The host must see at least a
// second between the end of each response and the next request — robots.txt, the sitemap, the page —
// from the first process and from the second, which starts right after the first has exited. The
// page fails with a 503 in the first run, which doubles the gap after it: the second process must
// keep that too.
func TestCrawlDelayAcrossProcesses(t *testing.T) {
	web := testweb.New(t)
	s := web.AddSite(t)
	s.Robots("User-agent: *\nCrawl-delay: 1\n")
	s.Handle("/", testweb.Flaky(1, http.StatusServiceUnavailable, testweb.Text("text/html", "<p>home</p>")))
	dir := t.TempDir()
	cfg := filepath.Join(dir, "strata.toml")
	os.WriteFile(cfg, []byte("[politeness]\nloopback_delay = \"20ms\"\n[crawl]\nuser_agent = \"strata-test/1 (+https://lab.example/c)\"\n"), 0o644)
	if _, errs, code := strata(t, dir, "--config", cfg, "seed", "add", s.URL("/")); code != 0 {
		t.Fatalf("seed add: %s", errs)
	}
	for run := 1; run <= 2; run++ {
		if _, errs, code := strata(t, dir, "--config", cfg, "crawl"); code != 0 {
			t.Fatalf("crawl %d: exit %d\n%s", run, code, errs)
		}
	}
	reqs := web.RequestsTo(s)
	var paths []string
	for _, r := range reqs {
		paths = append(paths, r.Path)
	}
	// Sitemaps are read once per run; robots.txt is trusted for a day.
	if got := strings.Join(paths, " "); got != "/robots.txt /sitemap.xml / /sitemap.xml /" {
		t.Errorf("requests %q; want robots.txt, the sitemap and the page, then the sitemap and the page again", got)
	}
	for _, v := range web.Violations(testweb.CheckOptions{MinGap: time.Second, RobotsFirst: true}) {
		t.Error(v)
	}
	if len(reqs) == 5 {
		if gap := reqs[3].Start.Sub(reqs[2].End); gap < 2*time.Second {
			t.Errorf("the second process came back %v after the 503, want at least the doubled gap, 2s", gap)
		}
	}
}

// TestRunLockThroughSymlink starts a strata run and, while it holds the run lock (its one page is
// held back by the server), starts a second through a symbolic link to the same database: the second
// must exit 3 naming the first's pid, and the first must finish as the only run.
func TestRunLockThroughSymlink(t *testing.T) {
	web := testweb.New(t)
	s := web.AddSite(t)
	arrived, release := make(chan struct{}), make(chan struct{})
	var calls atomic.Int64
	s.Handle("/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			close(arrived)
			select {
			case <-release:
			case <-time.After(20 * time.Second):
			}
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<p>held</p>")
	}))
	dir := t.TempDir()
	common := "[politeness]\nloopback_delay = \"10ms\"\n[crawl]\nuser_agent = \"strata-test/1 (+https://lab.example/c)\"\n" +
		"[archive]\nroot = \"archive\"\n"
	cfg := filepath.Join(dir, "strata.toml")
	linked := filepath.Join(dir, "linked.toml")
	os.WriteFile(cfg, []byte("[database]\npath = \"data/strata.db\"\n"+common), 0o644)
	os.WriteFile(linked, []byte("[database]\npath = \"link.db\"\n"+common), 0o644)
	if _, errs, code := strata(t, dir, "--config", cfg, "seed", "add", "--level", "0", s.URL("/")); code != 0 {
		t.Fatalf("seed add: %s", errs)
	}
	if err := os.Symlink(filepath.Join(dir, "data", "strata.db"), filepath.Join(dir, "link.db")); err != nil {
		t.Skipf("symbolic links are not available here: %v", err)
	}

	first := strataCmd(dir, "--config", cfg, "run")
	var firstErr strings.Builder
	first.Stderr = &firstErr
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-arrived:
	case <-time.After(20 * time.Second):
		first.Process.Kill()
		first.Wait()
		t.Fatalf("the first run never requested its page: %s", firstErr.String())
	}
	_, stderr, code := strata(t, dir, "--config", linked, "run")
	close(release)
	if err := first.Wait(); err != nil {
		t.Errorf("the first run: %v\n%s", err, firstErr.String())
	}
	want := fmt.Sprintf("another strata (pid %d) is already crawling with this database", first.Process.Pid)
	if code != 3 || !strings.Contains(stderr, want) || strings.Count(stderr, "\n") != 1 {
		t.Errorf("second run through a symlink: exit %d, stderr %q; want exit 3 and one line containing %q", code, stderr, want)
	}
	db, err := sql.Open("sqlite", filepath.Join(dir, "data", "strata.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var runs string
	var fetches int
	db.QueryRow("SELECT group_concat(status, ',') FROM (SELECT status FROM runs ORDER BY id)").Scan(&runs)
	db.QueryRow("SELECT count(*) FROM fetches").Scan(&fetches)
	if runs != "completed" || fetches != 1 || calls.Load() != 1 {
		t.Errorf("runs %q, %d fetches recorded, %d page requests; want one completed run that fetched the page once", runs, fetches, calls.Load())
	}
}

// TestReadersDuringRuns reads the database without pause — strata status and history in-process,
// and plain SQL the way docs/schema.md tells sqlite3 and Datasette users to — while another process
// creates it (seed add) and then writes it with two runs of strata run. Every read must succeed,
// except that one may find no database before the first process has made it; none may see "database
// is locked" or a half-created schema ("no such table").
func TestReadersDuringRuns(t *testing.T) {
	web := testweb.New(t)
	sites := web.AddSites(t, 2)
	var visits atomic.Int64
	var seeds []string
	for i, s := range sites {
		for p := 0; p < 15; p++ {
			s.Handle(fmt.Sprintf("/p%d", p), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/html")
				fmt.Fprintf(w, "<p>site %d page %d, visit %d</p>", i, p, visits.Add(1))
			}))
			seeds = append(seeds, s.URL(fmt.Sprintf("/p%d", p)))
		}
	}
	dir := t.TempDir()
	cfg := filepath.Join(dir, "strata.toml")
	os.WriteFile(cfg, []byte("[politeness]\nloopback_delay = \"0s\"\n[crawl]\nuser_agent = \"strata-test/1 (+https://lab.example/c)\"\n"), 0o644)
	seedFile := filepath.Join(dir, "seeds.txt")
	os.WriteFile(seedFile, []byte(strings.Join(seeds, "\n")), 0o644)
	dbPath := filepath.Join(dir, "strata.db")

	done := make(chan struct{})
	writerErr := make(chan error, 1)
	go func() {
		defer close(done)
		for i, args := range [][]string{{"seed", "add", "--level", "0", "--file", seedFile}, {"run"}, {"run"}} {
			if i == 0 {
				time.Sleep(50 * time.Millisecond) // let the readers start on a directory without a database
			}
			cmd := strataCmd(dir, append([]string{"--config", cfg}, args...)...)
			if out, err := cmd.CombinedOutput(); err != nil {
				writerErr <- fmt.Errorf("strata %s: %v\n%s", strings.Join(args, " "), err, out)
				return
			}
		}
	}()

	type tally struct {
		ok, absent int
		failures   []string
	}
	readers := map[string]func() error{
		"status": func() error {
			return cli.Run(t.Context(), []string{"--config", cfg, "status", "--json"}, io.Discard, io.Discard)
		},
		"history": func() error {
			err := cli.Run(t.Context(), []string{"--config", cfg, "history", seeds[0]}, io.Discard, io.Discard)
			if err != nil && strings.Contains(err.Error(), "not found") {
				return nil // not seeded yet
			}
			return err
		},
		"sql": func() error {
			db, err := sql.Open("sqlite", "file:"+dbPath+"?mode=ro&_pragma=busy_timeout(5000)")
			if err != nil {
				return err
			}
			defer db.Close()
			var n int
			return db.QueryRow("SELECT count(*) FROM urls u JOIN fetches f ON f.url_id = u.id").Scan(&n)
		},
	}
	// One goroutine per reader, each with a tally of its own, read once they have all ended.
	results := make(map[string]*tally)
	var wg sync.WaitGroup
	for name, read := range readers {
		r := &tally{}
		results[name] = r
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				_, statErr := os.Stat(dbPath)
				switch err := read(); {
				case err == nil:
					r.ok++
				case os.IsNotExist(statErr) && (strings.Contains(err.Error(), "no database at") || strings.Contains(err.Error(), "unable to open database file")):
					r.absent++ // the database did not exist yet when this read began
				default:
					r.failures = append(r.failures, err.Error())
				}
			}
		}()
	}
	wg.Wait()
	select {
	case err := <-writerErr:
		t.Error(err)
	default:
	}
	for name, r := range results {
		t.Logf("%s: %d reads succeeded, %d found no database yet, %d failed", name, r.ok, r.absent, len(r.failures))
		if r.ok < 10 {
			t.Errorf("%s: only %d successful reads", name, r.ok)
		}
		for i, f := range r.failures {
			if i == 5 {
				t.Errorf("%s: … %d failures in all", name, len(r.failures))
				break
			}
			t.Errorf("%s: %s", name, f)
		}
	}
}
