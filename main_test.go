package main

import (
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/strata-crawler/strata/internal/testweb"
)

// TestMain lets the test binary stand in for strata: with STRATA_TEST_MAIN=1 it runs main instead of
// the tests, so the subprocess tests below exercise the real exit codes and standard error.
func TestMain(m *testing.M) {
	if os.Getenv("STRATA_TEST_MAIN") == "1" {
		main()
		return
	}
	os.Exit(m.Run())
}

func strata(t *testing.T, dir string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "STRATA_TEST_MAIN=1")
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

// TestKillDuringCrawl kills a crawl with SIGKILL while it is working, then runs the next crawl to the
// end, and checks what a cron user relies on: the database is intact, the killed run is marked
// interrupted, every page got crawled, nothing is left due, and no site saw a politeness violation
// across the kill.
func TestKillDuringCrawl(t *testing.T) {
	web := testweb.New(t)
	sites := web.AddSites(t, 4)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "strata.toml")
	const gap = 40 * time.Millisecond
	os.WriteFile(cfg, []byte("[politeness]\nloopback_delay = \"40ms\"\n[crawl]\nuser_agent = \"strata-test/1 (+https://lab.example/c)\"\n"), 0o644)
	var seeds []string
	for i, s := range sites {
		s.Robots("User-agent: *\nAllow: /\n")
		for p := 0; p < 25; p++ {
			path := fmt.Sprintf("/p%02d", p)
			s.Page(path, fmt.Sprintf("<p>site %d page %d</p>", i, p))
			seeds = append(seeds, s.URL(path))
		}
	}
	seedFile := filepath.Join(dir, "seeds.txt")
	os.WriteFile(seedFile, []byte(strings.Join(seeds, "\n")), 0o644)
	if _, errs, code := strata(t, dir, "--config", cfg, "seed", "add", "--level", "0", "--file", seedFile); code != 0 {
		t.Fatalf("seed add: %s", errs)
	}

	cmd := exec.Command(os.Args[0], "--config", cfg, "crawl")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "STRATA_TEST_MAIN=1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for pages(web) < 30 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	cmd.Process.Kill()
	cmd.Wait()
	killedAt := pages(web)
	if killedAt >= 100 {
		t.Fatalf("the first crawl finished (%d pages) before it could be killed", killedAt)
	}

	out, errs, code := strata(t, dir, "--config", cfg, "crawl")
	if code != 0 {
		t.Fatalf("crawl after kill: exit %d\n%s", code, errs)
	}
	if !strings.Contains(errs, "an earlier run was cut off") {
		t.Errorf("the second crawl did not notice the killed run: %s", errs)
	}
	t.Logf("killed after %d page requests; the next crawl: %s", killedAt, strings.TrimSpace(out))

	db, err := sql.Open("sqlite", filepath.Join(dir, "strata.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var integrity string
	db.QueryRow("PRAGMA integrity_check").Scan(&integrity)
	var due, neverFetched, orphans int
	db.QueryRow("SELECT count(*) FROM urls WHERE state = 'active' AND fr = 0").Scan(&due)
	db.QueryRow("SELECT count(*) FROM urls u WHERE NOT EXISTS (SELECT 1 FROM fetches f WHERE f.url_id = u.id)").Scan(&neverFetched)
	db.QueryRow("SELECT count(*) FROM fetches f WHERE NOT EXISTS (SELECT 1 FROM urls u WHERE u.id = f.url_id)").Scan(&orphans)
	if integrity != "ok" || due != 0 || neverFetched != 0 || orphans != 0 {
		t.Errorf("after kill and resume: integrity %q, %d still due, %d never fetched, %d orphan fetches", integrity, due, neverFetched, orphans)
	}
	var statuses string
	db.QueryRow("SELECT group_concat(status, ',') FROM (SELECT status FROM runs ORDER BY id)").Scan(&statuses)
	if statuses != "interrupted,completed" {
		t.Errorf("run statuses %q, want interrupted,completed", statuses)
	}
	for _, v := range web.Violations(testweb.CheckOptions{MinGap: gap}) {
		t.Error(v)
	}
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
