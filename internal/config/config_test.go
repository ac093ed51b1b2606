package config_test

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/strata-crawler/strata/internal/config"
)

var update = flag.Bool("update", false, "rewrite config.example.toml from the schema")

func writeFile(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func noEnv(string) string { return "" }

func TestLoadDefaults(t *testing.T) {
	wd := t.TempDir()
	cfg, err := config.Load(config.Options{Getenv: noEnv, WorkDir: wd})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.File != "" {
		t.Errorf("File = %q, want none", cfg.File)
	}
	if want := filepath.Join(wd, "strata.db"); cfg.Database.Path != want {
		t.Errorf("Database.Path = %q, want %q", cfg.Database.Path, want)
	}
	if want := filepath.Join(wd, "archive"); cfg.Archive.Root != want {
		t.Errorf("Archive.Root = %q, want %q", cfg.Archive.Root, want)
	}
	if cfg.Politeness.Delay != 10*time.Second || cfg.Crawl.PageTimeout != 30*time.Second ||
		cfg.Crawl.MaxBytes != 1<<20 || cfg.Crawl.Workers != 32 || cfg.Seed.FrMax != 1 || cfg.Seed.Level != 2 {
		t.Errorf("unexpected defaults: %+v", cfg)
	}
	if !cfg.UserAgentIsPlaceholder() {
		t.Error("default user agent should be reported as the placeholder")
	}
}

func TestLoadPrecedence(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "s.toml", `
[database]
path = "data/s.db"
[crawl]
workers = 4
page_timeout = "20s"
[politeness]
delay = "15s"
`)
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	fs.Int("workers", 0, "")
	if err := fs.Parse([]string{"--workers=9"}); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"STRATA_CRAWL_PAGE_TIMEOUT": "45s", "STRATA_CRAWL_WORKERS": "7"}
	cfg, err := config.Load(config.Options{
		File:    file,
		Getenv:  func(k string) string { return env[k] },
		WorkDir: t.TempDir(),
		Flags:   []config.FlagBinding{{Key: "crawl.workers", Flag: fs.Lookup("workers")}},
	})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		key, source string
		got, want   any
	}{
		{"database.path", "file", cfg.Database.Path, filepath.Join(dir, "data", "s.db")},
		{"crawl.workers", "flag --workers", cfg.Crawl.Workers, 9},
		{"crawl.page_timeout", "env STRATA_CRAWL_PAGE_TIMEOUT", cfg.Crawl.PageTimeout, 45 * time.Second},
		{"politeness.delay", "file", cfg.Politeness.Delay, 15 * time.Second},
		{"archive.root", "default", cfg.Archive.Root, filepath.Join(dir, "archive")},
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			if tt.got != tt.want {
				t.Errorf("%s = %v, want %v", tt.key, tt.got, tt.want)
			}
			if s := cfg.Source(tt.key); s != tt.source {
				t.Errorf("Source(%s) = %q, want %q", tt.key, s, tt.source)
			}
		})
	}
}

func TestLoadFindsFile(t *testing.T) {
	wd := t.TempDir()
	writeFile(t, wd, "strata.toml", "[crawl]\nworkers = 3\n")
	cfg, err := config.Load(config.Options{Getenv: noEnv, WorkDir: wd})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Crawl.Workers != 3 || cfg.File != filepath.Join(wd, "strata.toml") {
		t.Errorf("./strata.toml not used: file %q, workers %d", cfg.File, cfg.Crawl.Workers)
	}

	other := writeFile(t, t.TempDir(), "x.toml", "[crawl]\nworkers = 5\n")
	cfg, err = config.Load(config.Options{WorkDir: wd, Getenv: func(k string) string {
		if k == "STRATA_CONFIG" {
			return other
		}
		return ""
	}})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Crawl.Workers != 5 {
		t.Errorf("STRATA_CONFIG not used: workers %d", cfg.Crawl.Workers)
	}
}

func TestLoadErrors(t *testing.T) {
	tests := []struct {
		name string
		toml string
		env  map[string]string
		want []string // substrings of the one-line error
	}{
		{"unknown key", "[crawl]\nworkerz = 3\n", nil, []string{"unknown key crawl.workerz", "keys in [crawl] are", "workers"}},
		{"unknown section", "[crawler]\nworkers = 3\n", nil, []string{"unknown key crawler.workers", "no section [crawler]"}},
		{"top-level key", "workers = 3\n", nil, []string{"unknown key workers"}},
		{"wrong type", "[crawl]\nworkers = \"many\"\n", nil, []string{"crawl.workers", "want a whole number", `"many"`}},
		{"fraction", "[crawl]\nworkers = 2.5\n", nil, []string{"crawl.workers", "whole number"}},
		{"out of range", "[crawl]\nworkers = 0\n", nil, []string{"crawl.workers", "0 is out of range", "allowed: 1 to 1024"}},
		{"delay floor", "[politeness]\ndelay = \"5s\"\n", nil, []string{"politeness.delay", "5s is out of range", "allowed: 10s to 24h"}},
		{"delay as number", "[politeness]\ndelay = 10\n", nil, []string{"politeness.delay", "want a duration string"}},
		{"bad duration", "[crawl]\npage_timeout = \"ten\"\n", nil, []string{"crawl.page_timeout", `got "ten"`}},
		{"enum", "[log]\nlevel = \"loud\"\n", nil, []string{"log.level", `"loud" is not one of "debug", "info", "warn", "error"`}},
		{"bool", "[crawl]\nallow_private = \"yes\"\n", nil, []string{"crawl.allow_private", "want true or false"}},
		{"empty path", "[database]\npath = \"\"\n", nil, []string{"database.path", "must not be empty"}},
		{"not toml", "[crawl\nworkers = 3\n", nil, []string{"not valid TOML"}},
		{"min above max", "[frequency]\nmin = 12\nmax = 6\n", nil, []string{"frequency.min (12) is above frequency.max (6)"}},
		{"rates inverted", "[optimizer]\nmin_rate = 5.0\nmax_rate = 1.0\n", nil, []string{"optimizer.min_rate (5) must be below optimizer.max_rate (1)"}},
		{"optimal without budget", "[frequency]\npolicy = \"optimal\"\n", nil, []string{"optimizer.budget", "needs a budget"}},
		{"env out of range", "", map[string]string{"STRATA_POLITENESS_DELAY": "1s"},
			[]string{"env STRATA_POLITENESS_DELAY", "politeness.delay", "allowed: 10s to 24h"}},
		{"env wrong type", "", map[string]string{"STRATA_SEED_LEVEL": "deep"},
			[]string{"env STRATA_SEED_LEVEL", "seed.level", "whole number"}},
		{"CR LF in user agent", "[crawl]\nuser_agent = \"strata (+https://lab.example/)\\r\\nX-Injected: 1\"\n", nil,
			[]string{"crawl.user_agent", "control character '\\r'", "HTTP header"}},
		{"LF in user agent from env", "", map[string]string{"STRATA_CRAWL_USER_AGENT": "strata\n(+https://lab.example/)"},
			[]string{"env STRATA_CRAWL_USER_AGENT", "crawl.user_agent", "control character '\\n'"}},
		{"NUL in user agent", "[crawl]\nuser_agent = \"strata\\u0000\"\n", nil, []string{"crawl.user_agent", "control character"}},
		{"blank user agent", "[crawl]\nuser_agent = \"  \"\n", nil, []string{"crawl.user_agent", "must not be empty"}},
		{"NaN delay factor", "[politeness]\ndelay_factor = nan\n", nil, []string{"politeness.delay_factor", "NaN is not a finite number", "allowed: 1 to 100"}},
		{"NaN from env", "", map[string]string{"STRATA_POLITENESS_DELAY_FACTOR": "NaN"},
			[]string{"env STRATA_POLITENESS_DELAY_FACTOR", "NaN is not a finite number"}},
		{"infinite share", "[optimizer]\nnew_share = inf\n", nil, []string{"optimizer.new_share", "+Inf is not a finite number"}},
		{"NaN step", "[hybrid]\nstep = -nan\n", nil, []string{"hybrid.step", "NaN is not a finite number"}},
		{"infinite rate from env", "", map[string]string{"STRATA_OPTIMIZER_MAX_RATE": "-Inf"},
			[]string{"optimizer.max_rate", "-Inf is not a finite number"}},
		{"infinite whole number", "[crawl]\nworkers = inf\n", nil, []string{"crawl.workers", "whole number"}},
		{"NaN whole number", "[crawl]\nmax_bytes = nan\n", nil, []string{"crawl.max_bytes", "whole number"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := writeFile(t, t.TempDir(), "bad.toml", tt.toml)
			_, err := config.Load(config.Options{File: file, WorkDir: t.TempDir(),
				Getenv: func(k string) string { return tt.env[k] }})
			if err == nil {
				t.Fatal("Load succeeded, want error")
			}
			if !errors.Is(err, config.ErrInvalid) {
				t.Errorf("error does not wrap ErrInvalid: %v", err)
			}
			msg := err.Error()
			if strings.Contains(msg, "\n") {
				t.Errorf("error is not one line: %q", msg)
			}
			if tt.env == nil && !strings.Contains(msg, file) {
				t.Errorf("error %q does not name the file %s", msg, file)
			}
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not mention %q", msg, w)
				}
			}
		})
	}
}

// TestSyntaxErrorPosition: a TOML syntax error says file:line:col and what is wrong, so an editor
// can jump to it; a byte-order mark does not shift the columns of the first line.
func TestSyntaxErrorPosition(t *testing.T) {
	tests := []struct {
		name, toml, where, what string
	}{
		{"unclosed table name", "[crawl\nworkers = 3\n", ":1:7: ", "expected ']' to close table name"},
		{"missing value", "[crawl]\nworkers = \n", ":2:11: ", "at start of value"},
		{"newline in a string", "[crawl]\nuser_agent = \"abc\n", ":2:18: ", "basic strings cannot have new lines"},
		{"duplicate key", "[crawl]\nworkers = 3\nworkers = 4\n", ":3:1: ", "key workers is already defined"},
		{"two values", "[crawl]\nworkers = 3 4\n", ":2:13: ", "expected newline"},
		{"deep in a filter", "[filter]\nall = [ { default = true }, { not = { host = \"a\" } ]\n", ":2:52: ", "after inline table key-value"},
		{"after a byte-order mark", "\uFEFF[crawl\n", ":1:7: ", "expected ']'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := writeFile(t, t.TempDir(), "strata.toml", tt.toml)
			_, err := config.Load(config.Options{File: file, WorkDir: t.TempDir(), Getenv: func(string) string { return "" }})
			if err == nil || !errors.Is(err, config.ErrInvalid) {
				t.Fatalf("Load: %v, want an invalid configuration", err)
			}
			msg := err.Error()
			if !strings.Contains(msg, file+tt.where+"not valid TOML: ") || !strings.Contains(msg, tt.what) || strings.Contains(msg, "\n") {
				t.Errorf("error %q; want one line with %s%snot valid TOML: …%s", msg, file, tt.where, tt.what)
			}
		})
	}
}

// TestEnvWarnings checks that a STRATA_ variable naming no setting, and a setting's variable set to
// the empty value, each get one warning line naming the variable (and, for a typo, the setting meant),
// while the variables strata's own test suite reads and correct ones get none.
func TestEnvWarnings(t *testing.T) {
	env := map[string]string{
		"STRATA_CRAWL_WORKRS":     "8",
		"STRATA_POLITENESS_DELY":  "20s",
		"STRATA_SEED_LEVEL":       "",
		"STRATA_CRAWL_WORKERS":    "4",
		"STRATA_TEST_MAIN":        "1",
		"STRATA_BENCH_URLS":       "1000",
		"STRATA_BROWSER_TEST":     "1",
		"STRATA_REQUIRE_POSTGRES": "1",
		"PATH":                    "/bin",
	}
	var environ []string
	for k, v := range env {
		environ = append(environ, k+"="+v)
	}
	cfg, err := config.Load(config.Options{WorkDir: t.TempDir(), Getenv: func(k string) string { return env[k] },
		Environ: func() []string { return environ }})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"environment variable STRATA_CRAWL_WORKRS is not a strata setting and is ignored; did you mean STRATA_CRAWL_WORKERS?",
		"environment variable STRATA_POLITENESS_DELY is not a strata setting and is ignored; did you mean STRATA_POLITENESS_DELAY?",
		"environment variable STRATA_SEED_LEVEL is set but empty, so it is ignored; unset it or give it a value",
	}
	if strings.Join(cfg.Warnings, "\n") != strings.Join(want, "\n") {
		t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(cfg.Warnings, "\n"), strings.Join(want, "\n"))
	}
	if cfg.Crawl.Workers != 4 || cfg.Seed.Level != 2 {
		t.Errorf("workers %d, level %d: the good variable should apply and the empty one leave the default", cfg.Crawl.Workers, cfg.Seed.Level)
	}
}

func TestLoadMissingExplicitFile(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope.toml")
	_, err := config.Load(config.Options{File: missing, Getenv: noEnv})
	if err == nil || !errors.Is(err, config.ErrInvalid) || !strings.Contains(err.Error(), missing) {
		t.Fatalf("want an ErrInvalid naming %s, got %v", missing, err)
	}
}

// TestExampleFile keeps config.example.toml equal to the schema's own example, and checks that the
// example loads and yields the defaults. Run with -update after changing the schema.
func TestExampleFile(t *testing.T) {
	var buf bytes.Buffer
	if err := config.WriteExample(&buf); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("..", "..", "config.example.toml")
	if *update {
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, buf.Bytes()) {
		t.Fatalf("config.example.toml is out of date with the schema; run go test ./internal/config -update")
	}
	for _, k := range config.Keys() {
		_, name, _ := strings.Cut(k, ".")
		if !bytes.Contains(got, []byte("\n"+name+" = ")) {
			t.Errorf("config.example.toml does not document %s", k)
		}
	}
	fromFile, err := config.Load(config.Options{File: path, Getenv: noEnv})
	if err != nil {
		t.Fatalf("the example does not load: %v", err)
	}
	defaults, err := config.Load(config.Options{Getenv: noEnv, WorkDir: filepath.Dir(fromFile.File)})
	if err != nil {
		t.Fatal(err)
	}
	var a, b bytes.Buffer
	fromFile.WriteTOML(&a)
	defaults.WriteTOML(&b)
	strip := func(s string) string { // drop the first line and the source comments
		var out []string
		for _, l := range strings.Split(s, "\n")[1:] {
			l, _, _ = strings.Cut(l, "#")
			out = append(out, strings.TrimSpace(l))
		}
		return strings.Join(out, "\n")
	}
	if strip(a.String()) != strip(b.String()) {
		t.Errorf("the example's values differ from the defaults:\n%s\nvs\n%s", a.String(), b.String())
	}
}

func TestWriteTOMLRoundTrip(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "s.toml", "[crawl]\nworkers = 4\nuser_agent = \"bot/1 (+https://lab.example/bot)\"\n[schedule]\nstart_window = \"3h\"\n")
	cfg, err := config.Load(config.Options{File: file, Getenv: noEnv})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := cfg.WriteTOML(&buf); err != nil {
		t.Fatal(err)
	}
	out := writeFile(t, dir, "effective.toml", buf.String())
	again, err := config.Load(config.Options{File: out, Getenv: noEnv})
	if err != nil {
		t.Fatalf("printed configuration does not load: %v\n%s", err, buf.String())
	}
	if again.Crawl.Workers != 4 || again.Schedule.StartWindow != 3*time.Hour || again.Crawl.UserAgent != cfg.Crawl.UserAgent {
		t.Errorf("round trip lost values: %+v", again)
	}
	if !strings.Contains(buf.String(), `start_window     = "3h"`) {
		t.Errorf("durations should print as Go durations:\n%s", buf.String())
	}
}

func TestFilterSection(t *testing.T) {
	dir := t.TempDir()
	good := writeFile(t, dir, "good.toml", `
[filter]
all = [
  { default = true },
  { not = { path_glob = "/calendar/**" } },
  { expr = 'depth <= 6' },
]
`)
	cfg, err := config.Load(config.Options{File: good, Getenv: noEnv})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Filter == nil || cfg.Source("filter") != "file" {
		t.Fatalf("filter not loaded: %v %q", cfg.Filter, cfg.Source("filter"))
	}
	defaults, _ := config.Load(config.Options{Getenv: noEnv, WorkDir: dir})
	if defaults.Filter == nil {
		t.Error("no default filter without a [filter] table")
	}
	tests := []struct{ name, toml, want string }{
		{"bad expression", "[filter]\nexpr = 'host endsWith'\n", "filter.expr: 1:"},
		{"unknown filter", "[filter]\nall = [ { domian = \"example.edu\" } ]\n", "filter.all[0]"},
		{"bad regex", "[filter]\nurl_regex = \"a(b\"\n", "filter.url_regex"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := writeFile(t, t.TempDir(), "bad.toml", tt.toml)
			_, err := config.Load(config.Options{File: f, Getenv: noEnv})
			if err == nil || !errors.Is(err, config.ErrInvalid) || !strings.Contains(err.Error(), tt.want) ||
				!strings.Contains(err.Error(), f) || strings.Contains(err.Error(), "\n") {
				t.Errorf("error %v; want one line naming %s and %q", err, f, tt.want)
			}
		})
	}
}

// TestExampleFilters un-comments each [filter] example of config.example.toml and loads it.
func TestExampleFilters(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "config.example.toml"))
	if err != nil {
		t.Fatal(err)
	}
	var blocks []string
	var cur []string
	for _, line := range strings.Split(string(b), "\n") {
		switch {
		case line == "#[filter]":
			if cur != nil {
				blocks = append(blocks, strings.Join(cur, "\n"))
			}
			cur = []string{"[filter]"}
		case cur != nil && strings.HasPrefix(line, "#") && !(len(line) > 2 && line[1] == ' ' && line[2] != ' '):
			// commented-out TOML ("#all = [", "#  { ... },"), not prose ("# Example 2: ...")
			cur = append(cur, strings.TrimPrefix(line, "#"))
		case cur != nil && line == "#":
		case cur != nil:
			blocks = append(blocks, strings.Join(cur, "\n"))
			cur = nil
		}
	}
	if cur != nil {
		blocks = append(blocks, strings.Join(cur, "\n"))
	}
	if len(blocks) != 3 {
		t.Fatalf("found %d [filter] examples, want 3", len(blocks))
	}
	for i, block := range blocks {
		f := writeFile(t, t.TempDir(), "example.toml", block+"\n")
		cfg, err := config.Load(config.Options{File: f, Getenv: noEnv})
		if err != nil {
			t.Errorf("example %d does not load: %v\n%s", i+1, err, block)
		} else if len(cfg.Warnings) > 0 {
			t.Errorf("example %d loads with warnings: %q", i+1, cfg.Warnings)
		}
	}
}
