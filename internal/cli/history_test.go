package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-crawler/strata/internal/cli"
	"github.com/strata-crawler/strata/internal/pgtest"
	"github.com/strata-crawler/strata/internal/testweb"
)

func TestHistoryShowDiffExport(t *testing.T) {
	web := testweb.New(t)
	s := web.AddSite(t)
	e := newEnv(t, loopbackConfig)
	news, about := s.URL("/news"), s.URL("/about")
	s.Page("/news", "<html><head><title>News</title></head><body><h1>News</h1><p>first story</p><p>weather: sunny</p></body></html>")
	s.Page("/about", "<html><body><p>about us</p></body></html>")
	e.mustRun("seed", "add", "--level", "0", news, about)
	e.mustRun("crawl") // run 1: both new
	e.mustRun("crawl") // run 2: unchanged
	s.Page("/news", "<html><head><title>News</title></head><body><h1>News</h1><p>second story</p><p>weather: sunny</p></body></html>")
	e.mustRun("crawl") // run 3: news changed

	hist := e.mustRun("history", news)
	for _, want := range []string{"3 fetches", "new", "unchanged", "changed"} {
		if !strings.Contains(hist, want) {
			t.Errorf("history lacks %q:\n%s", want, hist)
		}
	}
	var rows []map[string]any
	if err := json.Unmarshal([]byte(e.mustRun("history", "--json", news)), &rows); err != nil || len(rows) != 3 {
		t.Fatalf("history --json: %v, %v", rows, err)
	}

	if out := e.mustRun("show", news); !strings.Contains(out, "second story") {
		t.Errorf("show (latest):\n%s", out)
	}
	if out := e.mustRun("show", "--at", "2", news); !strings.Contains(out, "first story") {
		t.Errorf("show --at 2:\n%s", out)
	}
	if out := e.mustRun("show", "--html", news); !strings.Contains(out, "<p>second story</p>") {
		t.Errorf("show --html:\n%s", out)
	}
	if _, errs, code := e.run("show", "--at", "2001-01-01", news); code != cli.ExitRuntime || !strings.Contains(errs, "no version stored by then") {
		t.Errorf("show before the first version: exit %d, %q", code, errs)
	}
	if _, errs, code := e.run("show", "--at", "yesterday", news); code != cli.ExitUsage || !strings.Contains(errs, "not a run id") {
		t.Errorf("show with a bad --at: exit %d, %q", code, errs)
	}
	if _, errs, code := e.run("show", s.URL("/never-seen")); code != cli.ExitUsage || !strings.Contains(errs, "never seen") {
		t.Errorf("show of an unknown URL: exit %d, %q", code, errs)
	}

	diff := e.mustRun("diff", news)
	for _, want := range []string{"-first story", "+second story", " weather: sunny", "(run 1)", "(run 3)"} {
		if !strings.Contains(diff, want) {
			t.Errorf("diff lacks %q:\n%s", want, diff)
		}
	}
	if strings.Contains(diff, "\x1b[") {
		t.Error("diff coloured output that is not a terminal")
	}
	if out := e.mustRun("diff", "--color", "always", news); !strings.Contains(out, "\x1b[32m+second story") {
		t.Errorf("diff --color always:\n%q", out)
	}
	if _, errs, code := e.run("diff", "--color", "sometimes", news); code != cli.ExitUsage || !strings.Contains(errs, "--color must be auto, always or never") {
		t.Errorf("diff with a bad --color: exit %d, %q", code, errs)
	}
	if _, errs, code := e.run("diff", about); code != cli.ExitRuntime || !strings.Contains(errs, "only one version") {
		t.Errorf("diff of a page with one version: exit %d, %q", code, errs)
	}

	lines := strings.Split(strings.TrimSpace(e.mustRun("export", "jsonl")), "\n")
	if len(lines) != 3 {
		t.Fatalf("export wrote %d lines, want 3 versions:\n%s", len(lines), strings.Join(lines, "\n"))
	}
	var last map[string]any
	json.Unmarshal([]byte(lines[2]), &last)
	if last["url"] != news || last["title"] != "News" || last["changed"] != true || !strings.Contains(last["text"].(string), "second story") {
		t.Errorf("last export line: %v", last)
	}
	if out := strings.TrimSpace(e.mustRun("export", "jsonl", "--run", "1")); strings.Count(out, "\n") != 1 {
		t.Errorf("export --run 1:\n%s", out)
	}

	// A version file deleted by hand is reported as missing, not a crash.
	path := last["path"].(string)
	os.Remove(filepath.Join(e.dir, "archive", path, "page.txt"))
	if _, errs, code := e.run("show", news); code != cli.ExitRuntime || !strings.Contains(errs, "missing from the archive") {
		t.Errorf("show of a deleted version: exit %d, %q", code, errs)
	}
	if out := e.mustRun("history", news); !strings.Contains(out, "missing from the archive") {
		t.Errorf("history does not flag the deleted version:\n%s", out)
	}
	if out := e.mustRun("export", "jsonl"); !strings.Contains(out, `"missing":true`) {
		t.Errorf("export does not flag the deleted version:\n%s", out)
	}
}

// TestPrune prunes a page's older version, on SQLite and on PostgreSQL.
func TestPrune(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			config := loopbackConfig
			if backend == "postgres" {
				config = "url = \"" + pgtest.URL(t) + "\"\n" + loopbackConfig
			}
			testPrune(t, newEnv(t, config))
		})
	}
}

func testPrune(t *testing.T, e *env) {
	web := testweb.New(t)
	s := web.AddSite(t)
	page := s.URL("/p")
	s.Page("/p", "<p>one</p>")
	e.mustRun("seed", "add", "--level", "0", page)
	e.mustRun("crawl")
	s.Page("/p", "<p>two</p>")
	e.mustRun("crawl")

	if _, errs, code := e.run("prune"); code != cli.ExitUsage || !strings.Contains(errs, "archive.keep is not set") {
		t.Errorf("prune without archive.keep: exit %d, %q", code, errs)
	}
	f, _ := os.OpenFile(e.config, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("[archive]\nkeep = \"1ms\"\n")
	f.Close()

	dry := e.mustRun("prune", "--dry-run")
	if !strings.Contains(dry, "would remove 1 versions") || !strings.Contains(dry, page) {
		t.Errorf("prune --dry-run:\n%s", dry)
	}
	if out := e.mustRun("show", "--at", "1", page); !strings.Contains(out, "one") {
		t.Errorf("a dry run removed something: %q", out)
	}
	if out := e.mustRun("prune"); !strings.Contains(out, "removed 1 versions") {
		t.Errorf("prune: %s", out)
	}
	if out := e.mustRun("history", page); !strings.Contains(out, "pruned") {
		t.Errorf("history does not show the pruned version:\n%s", out)
	}
	if out := e.mustRun("show", page); !strings.Contains(out, "two") {
		t.Errorf("the current version must survive pruning: %q", out)
	}
	if out := e.mustRun("prune"); !strings.Contains(out, "removed 0 versions") {
		t.Errorf("second prune: %s", out)
	}
}
