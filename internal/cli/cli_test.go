package cli_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-crawler/strata/internal/cli"
)

// env is one test's strata installation: a config file whose database lives in a temp dir.
type env struct {
	t      *testing.T
	dir    string
	config string
	db     string
}

func newEnv(t *testing.T, extra string) *env {
	t.Helper()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "strata.toml")
	body := "[database]\npath = \"data/strata.db\"\n" + extra
	if err := os.WriteFile(cfg, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return &env{t: t, dir: dir, config: cfg, db: filepath.Join(dir, "data", "strata.db")}
}

// run calls the command line in-process and returns stdout, stderr and the exit code.
func (e *env) run(args ...string) (string, string, int) {
	e.t.Helper()
	var out, errb bytes.Buffer
	err := cli.Run(e.t.Context(), append([]string{"--config", e.config}, args...), &out, &errb)
	if err != nil {
		errb.WriteString("strata: " + err.Error() + "\n")
	}
	return out.String(), errb.String(), cli.ExitCode(err)
}

func (e *env) mustRun(args ...string) string {
	e.t.Helper()
	out, errs, code := e.run(args...)
	if code != 0 {
		e.t.Fatalf("strata %s: exit %d\n%s", strings.Join(args, " "), code, errs)
	}
	return out
}

func hashFile(t *testing.T, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

func TestSeedLifecycle(t *testing.T) {
	e := newEnv(t, "")
	out := e.mustRun("seed", "add", "HTTPS://Example.ORG/a/../b", "https://other.example/")
	if !strings.Contains(out, "added https://example.org/b (level 2, fr_max 1)") {
		t.Errorf("seed add printed %q", out)
	}
	out, errs, code := e.run("seed", "add", "https://example.org/b")
	if code != 0 || !strings.Contains(errs, "notice: https://example.org/b is already a seed") || out != "" {
		t.Errorf("duplicate seed: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	list := e.mustRun("seed", "list")
	if !strings.Contains(list, "https://example.org/b") || !strings.Contains(list, "https://other.example/") {
		t.Errorf("seed list:\n%s", list)
	}
	var seeds []map[string]any
	if err := json.Unmarshal([]byte(e.mustRun("seed", "list", "--json")), &seeds); err != nil || len(seeds) != 2 {
		t.Errorf("seed list --json: %v, %v", seeds, err)
	}
	if out := e.mustRun("seed", "remove", "https://EXAMPLE.org/b"); !strings.Contains(out, "removed https://example.org/b") {
		t.Errorf("seed remove printed %q", out)
	}
	if _, errs, code := e.run("seed", "remove", "https://example.org/b"); code != cli.ExitUsage || !strings.Contains(errs, "not found") {
		t.Errorf("removing a non-seed: exit %d, %q", code, errs)
	}
	status := e.mustRun("status")
	for _, want := range []string{"seeds                1", "due next run         1", "removed            1", "no runs yet"} {
		if !strings.Contains(status, want) {
			t.Errorf("status lacks %q:\n%s", want, status)
		}
	}
	var st map[string]any
	if err := json.Unmarshal([]byte(e.mustRun("status", "--json")), &st); err != nil || st["seeds"] != 1.0 {
		t.Errorf("status --json: %v, %v", st, err)
	}
}

func TestSeedLevelPrecedence(t *testing.T) {
	e := newEnv(t, "[seed]\nlevel = 3\nfr_max = 2\n")
	if out := e.mustRun("seed", "add", "https://a.example/"); !strings.Contains(out, "(level 3, fr_max 2)") {
		t.Errorf("file values not used: %q", out)
	}
	t.Setenv("STRATA_SEED_LEVEL", "4")
	if out := e.mustRun("seed", "add", "https://b.example/"); !strings.Contains(out, "(level 4, fr_max 2)") {
		t.Errorf("environment should beat the file: %q", out)
	}
	if out := e.mustRun("seed", "add", "--level", "0", "--fr-max", "7", "https://c.example/"); !strings.Contains(out, "(level 0, fr_max 7)") {
		t.Errorf("flags should beat the environment: %q", out)
	}
}

func TestSeedAddFile(t *testing.T) {
	e := newEnv(t, "")
	list := filepath.Join(e.dir, "seeds.txt")
	os.WriteFile(list, []byte("# my sites\nhttps://a.example/\n\n  https://b.example/x  \nhttps://a.example/\n"), 0o644)
	out := e.mustRun("seed", "add", "--file", list)
	if strings.Count(out, "added ") != 2 {
		t.Errorf("--file added:\n%s", out)
	}
	bad := filepath.Join(e.dir, "bad.txt")
	os.WriteFile(bad, []byte("https://c.example/\nnot a url\n"), 0o644)
	_, errs, code := e.run("seed", "add", "--file", bad)
	if code != cli.ExitUsage || !strings.Contains(errs, "bad.txt line 2") {
		t.Errorf("bad line: exit %d, %q", code, errs)
	}
	if strings.Contains(e.mustRun("seed", "list"), "c.example") {
		t.Error("a file with one bad line still added its good URLs")
	}
}

// TestBadInputChangesNothing checks each kind of bad input: one line on stderr naming the problem, the
// usage exit code, and a database left byte-for-byte as it was.
func TestBadInputChangesNothing(t *testing.T) {
	tests := []struct {
		name  string
		extra string // appended to the config file
		args  []string
		want  string
	}{
		{"malformed URL", "", []string{"seed", "add", "https://ok.example/", "http://exa mple.com/"}, `invalid URL "http://exa mple.com/"`},
		{"ftp scheme", "", []string{"seed", "add", "ftp://files.example/"}, `scheme "ftp" not supported`},
		{"relative URL", "", []string{"seed", "add", "example.com"}, "not absolute"},
		{"zero priority", "", []string{"seed", "add", "--priority", "0", "https://ok.example/"}, "--priority 0: must be a number above 0"},
		{"unknown config key", "[crawl]\nwokers = 2\n", []string{"seed", "add", "https://a.example/"}, "unknown key crawl.wokers"},
		{"delay under floor", "[politeness]\ndelay = \"1s\"\n", []string{"status"}, "10s"},
		{"NaN delay factor", "[politeness]\ndelay_factor = nan\n", []string{"status"}, "politeness.delay_factor: NaN is not a finite number"},
		{"bad level flag", "", []string{"seed", "add", "--level", "-1", "https://a.example/"}, "seed.level"},
		{"non-numeric level", "", []string{"seed", "add", "--level", "deep", "https://a.example/"}, "invalid argument"},
		{"unknown command", "", []string{"crawlx"}, `unknown command "crawlx"`},
		{"unknown flag", "", []string{"status", "--colour"}, "unknown flag"},
		{"extra argument", "", []string{"status", "now"}, "takes no arguments"},
		{"no URLs", "", []string{"seed", "add"}, "no URLs given"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, "")
			e.mustRun("seed", "add", "https://seeded.example/")
			before := hashFile(t, e.db)
			if tt.extra != "" {
				f, _ := os.OpenFile(e.config, os.O_APPEND|os.O_WRONLY, 0)
				f.WriteString(tt.extra)
				f.Close()
			}
			out, errs, code := e.run(tt.args...)
			if code != cli.ExitUsage {
				t.Errorf("exit %d, want %d (stderr %q)", code, cli.ExitUsage, errs)
			}
			if strings.Count(errs, "\n") != 1 || !strings.Contains(errs, tt.want) {
				t.Errorf("stderr should be one line mentioning %q, got %q", tt.want, errs)
			}
			if out != "" {
				t.Errorf("stdout should be empty, got %q", out)
			}
			if hashFile(t, e.db) != before {
				t.Error("the database changed")
			}
		})
	}
}

func TestNotADatabase(t *testing.T) {
	e := newEnv(t, "")
	os.MkdirAll(filepath.Dir(e.db), 0o755)
	os.WriteFile(e.db, []byte("these are my notes, not a database\n"), 0o644)
	before := hashFile(t, e.db)
	_, errs, code := e.run("status")
	if code != cli.ExitUsage || !strings.Contains(errs, "not an SQLite database") || !strings.Contains(errs, e.db) {
		t.Errorf("exit %d, stderr %q", code, errs)
	}
	if hashFile(t, e.db) != before {
		t.Error("the file changed")
	}
}

func TestConfigCheck(t *testing.T) {
	e := newEnv(t, "[crawl]\nworkers = 8\n")
	t.Setenv("STRATA_POLITENESS_DELAY", "20s")
	out, errs, code := e.run("config", "check", "--log-level", "warn")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"# effective configuration; file " + e.config, "workers          = 8", "# file",
		`delay            = "20s"`, "# env STRATA_POLITENESS_DELAY", `level            = "warn"`, "# flag --log-level"} {
		if !strings.Contains(out, want) {
			t.Errorf("config check output lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(errs, "crawl.user_agent still carries the example contact URL") {
		t.Errorf("no placeholder warning on stderr: %q", errs)
	}
}

func TestConfigCheckExample(t *testing.T) {
	var out, errb bytes.Buffer
	err := cli.Run(t.Context(), []string{"--config", filepath.Join("..", "..", "config.example.toml"), "config", "check"}, &out, &errb)
	if err != nil {
		t.Fatalf("config.example.toml does not pass config check: %v", err)
	}
}

func TestFilterTest(t *testing.T) {
	e := newEnv(t, "[filter]\nall = [ { default = true }, { name = \"calendar\", not = { path_glob = \"/calendar/**\" } } ]\n")
	e.mustRun("seed", "add", "https://www.example.edu/")
	out := e.mustRun("filter", "test", "https://news.example.edu/story?utm_source=x&id=3",
		"https://www.example.edu/calendar/2026/11", "https://elsewhere.example/", "https://www.example.edu/logo.png", "ftp://x/")
	for _, want := range []string{
		"accept  https://news.example.edu/story?utm_source=x&id=3", "crawled as https://news.example.edu/story?id=3",
		"reject  https://www.example.edu/calendar/2026/11", "[calendar]",
		"reject  https://elsewhere.example/", "seed",
		"reject  https://www.example.edu/logo.png",
		"reject  ftp://x/", "not supported",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("filter test output lacks %q:\n%s", want, out)
		}
	}
}

// TestPastedTrapFilter is issue 21's item 7: the filter strata traps suggests, pasted into a fresh
// [filter] table, used to replace the whole default rule — the crawl left the seeds' domains and
// fetched images — and config check did not show it. The pasted rule now narrows the default, says
// so on standard error until the table says extends, and config check prints the effective filter.
func TestPastedTrapFilter(t *testing.T) {
	suggestion := `{ not = { all = [ { host = "www.example.edu" }, { path_glob = "/calendar/**" } ] } }`
	e := newEnv(t, "[filter]\nall = [ "+suggestion+" ]\n")
	e.mustRun("seed", "add", "https://www.example.edu/")
	out, errs, code := e.run("filter", "test", "https://www.example.edu/news", "https://www.example.edu/calendar/2026/11",
		"https://elsewhere.example/", "https://www.example.edu/logo.png")
	if code != 0 {
		t.Fatalf("filter test: exit %d: %s", code, errs)
	}
	for _, want := range []string{"accept  https://www.example.edu/news", "reject  https://www.example.edu/calendar/2026/11",
		"reject  https://elsewhere.example/", "reject  https://www.example.edu/logo.png", "[default]"} {
		if !strings.Contains(out, want) {
			t.Errorf("filter test lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(errs, `has no extends key and no default = true: its rules narrow the default rule`) {
		t.Errorf("no warning about the implied extends: %q", errs)
	}
	check := e.mustRun("config", "check")
	for _, want := range []string{"\n[filter]\n", `extends          = "default"`, "# implied:", "path_glob = '/calendar/**'",
		"The default rule (default = true) is", "#   seed_domains = true", "#   deny_extensions = true"} {
		if !strings.Contains(check, want) {
			t.Errorf("config check lacks %q:\n%s", want, check)
		}
	}
	// Written out, the choice silences the warning; extends = "none" lets the rules decide alone.
	f, _ := os.OpenFile(e.config, os.O_WRONLY|os.O_TRUNC, 0)
	f.WriteString("[database]\npath = \"data/strata.db\"\n[filter]\nextends = \"none\"\nall = [ " + suggestion + " ]\n")
	f.Close()
	out, errs, _ = e.run("filter", "test", "https://elsewhere.example/")
	if !strings.Contains(out, "accept  https://elsewhere.example/") || strings.Contains(errs, "extends") {
		t.Errorf("extends = \"none\": stdout %q, stderr %q", out, errs)
	}
}
