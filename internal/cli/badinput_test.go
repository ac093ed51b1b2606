package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/strata-crawler/strata/internal/cli"
	"github.com/strata-crawler/strata/internal/store"
	"github.com/strata-crawler/strata/internal/testweb"
)

// TestMissingDatabase runs every command that needs an existing database at a path where there is
// none — a mistyped database.path — and checks that each refuses in one line that says how to start
// one, and that nothing is created: no database, no directory, no archive.
func TestMissingDatabase(t *testing.T) {
	const u = "https://a.example/"
	for _, args := range [][]string{
		{"status"}, {"status", "--seeds"}, {"history", u}, {"show", u}, {"diff", u}, {"explain", u},
		{"plan", "--budget", "10"}, {"traps"}, {"seed", "list"}, {"seed", "remove", u}, {"export", "jsonl"},
		{"serve", "--addr", "127.0.0.1:0"}, {"run"}, {"crawl"}, {"recalc"}, {"links"}, {"prune"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			e := newEnv(t, "[archive]\nroot = \"data/archive\"\nkeep = \"8760h\"\n")
			out, errs, code := e.run(args...)
			if code != cli.ExitUsage || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "no database at "+e.db) ||
				!strings.Contains(errs, "database.path in "+e.config) || !strings.Contains(errs, "strata seed add") || out != "" {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 2 and one line naming the path, where it came from, and how to start one",
					code, out, errs)
			}
			if _, err := os.Stat(filepath.Dir(e.db)); !os.IsNotExist(err) {
				t.Errorf("the command created %s", filepath.Dir(e.db))
			}
		})
	}
}

// TestUserAgentWithNewline gives crawl.user_agent a CR LF: every request would fail in net/http
// before leaving, every host would be skipped and the run would exit 0. It must be a usage error
// before anything is fetched or written.
func TestUserAgentWithNewline(t *testing.T) {
	web := testweb.New(t)
	s := web.AddSite(t)
	s.Page("/", "<p>home</p>")
	e := newEnv(t, "[politeness]\nloopback_delay = \"10ms\"\n")
	e.mustRun("seed", "add", s.URL("/"))
	before := hashFile(t, e.db)
	for name, set := range map[string]func(){
		"file": func() {
			appendConfig(t, e, "[crawl]\nuser_agent = \"strata-test/1 (+https://lab.example/c)\\r\\nX-Injected: 1\"\n")
		},
		"env": func() { t.Setenv("STRATA_CRAWL_USER_AGENT", "strata-test/1\n(+https://lab.example/c)") },
	} {
		t.Run(name, func(t *testing.T) {
			set()
			out, errs, code := e.run("run")
			if code != cli.ExitUsage || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "crawl.user_agent") ||
				!strings.Contains(errs, "control character") || out != "" {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 2 and one line about crawl.user_agent", code, out, errs)
			}
		})
	}
	if n := len(web.Requests()); n != 0 {
		t.Errorf("the site got %d requests", n)
	}
	if hashFile(t, e.db) != before {
		t.Error("the database changed")
	}
}

func appendConfig(t *testing.T, e *env, extra string) {
	t.Helper()
	f, err := os.OpenFile(e.config, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(extra); err != nil {
		t.Fatal(err)
	}
}

// TestEnvTypoWarns sets a misspelled and an empty STRATA_ variable: each is ignored with one warning
// line naming it (and, for the typo, the variable meant), and the command still works.
func TestEnvTypoWarns(t *testing.T) {
	e := newEnv(t, "")
	t.Setenv("STRATA_CRAWL_WORKRS", "8")
	t.Setenv("STRATA_SEED_LEVEL", "")
	out, errs, code := e.run("config", "check")
	if code != 0 || !strings.Contains(out, "workers          = 32") {
		t.Fatalf("config check: exit %d\n%s%s", code, out, errs)
	}
	for _, want := range []string{
		"environment variable STRATA_CRAWL_WORKRS is not a strata setting and is ignored; did you mean STRATA_CRAWL_WORKERS?",
		"environment variable STRATA_SEED_LEVEL is set but empty",
	} {
		if n := strings.Count(errs, want); n != 1 {
			t.Errorf("stderr has %d lines with %q, want 1:\n%s", n, want, errs)
		}
	}
}

// TestByteOrderMark reads a seed file and a configuration file that start with a UTF-8 byte-order
// mark, as editors on Windows write them: the mark is not part of the first URL or key.
func TestByteOrderMark(t *testing.T) {
	e := newEnv(t, "")
	bom := "\uFEFF"
	os.WriteFile(e.config, []byte(bom+"[database]\npath = \"data/strata.db\"\n[seed]\nlevel = 1\n"), 0o644)
	seeds := filepath.Join(e.dir, "seeds.txt")
	os.WriteFile(seeds, []byte(bom+"https://a.example/\r\nhttps://b.example/\r\n"), 0o644)
	out, errs, code := e.run("seed", "add", "--file", seeds)
	if code != 0 || !strings.Contains(out, "added https://a.example/ (level 1") || !strings.Contains(out, "added https://b.example/") {
		t.Errorf("seed add --file with a byte-order mark: exit %d\n%s%s", code, out, errs)
	}
}

// TestArgumentsThatNameNothing gives commands arguments that name no run, no time yet, no URL the
// crawl would fetch, or a count below one. Each used to be accepted — the latest version shown, an
// empty run recorded, a report over nothing — and must now be one line, exit 2, changing nothing.
func TestArgumentsThatNameNothing(t *testing.T) {
	web := testweb.New(t)
	s := web.AddSite(t)
	elsewhere := web.AddSite(t)
	elsewhere.Page("/", "<p>not seeded</p>")
	s.Robots("User-agent: *\nDisallow: /private\n", "/private")
	s.Page("/", "<p>first</p>")
	s.Page("/private", "<p>private</p>")
	e := newEnv(t, loopbackConfig)
	e.mustRun("seed", "add", "--level", "0", s.URL("/"), s.URL("/private"))
	e.mustRun("run")
	s.Page("/", "<p>second</p>")
	e.mustRun("run")
	requests := len(web.Requests())
	before := hashFile(t, e.db)
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"show", "--at", "99999", s.URL("/")}, "--at 99999: there is no run 99999 (the last is run 2)"},
		{[]string{"show", "--at", "2999-01-01", s.URL("/")}, "--at 2999-01-01 is in the future"},
		{[]string{"show", "--at", "soon", s.URL("/")}, `--at "soon" is not a run id`},
		{[]string{"diff", "--to", "999", s.URL("/")}, "--to 999: there is no run 999"},
		{[]string{"diff", "--from", "999", s.URL("/")}, "--from 999: there is no run 999"},
		{[]string{"diff", "--to", "2999-01-01T00:00:00Z", s.URL("/")}, "is in the future"},
		{[]string{"export", "jsonl", "--run", "999"}, "--run 999: there is no run 999"},
		{[]string{"export", "jsonl", "--run", "-1"}, "--run -1"},
		{[]string{"fetch", elsewhere.URL("/")}, "the URL filter rejects " + elsewhere.URL("/")},
		{[]string{"fetch", s.URL("/"), elsewhere.URL("/other")}, "argument 2: the URL filter rejects"},
		{[]string{"fetch", s.URL("/private")}, "robots.txt forbids " + s.URL("/private")},
		{[]string{"plan", "--budget", "-1"}, "--budget -1: pages per run must be between 1 and"},
		{[]string{"plan", "--budget", "0"}, "--budget 0"},
		{[]string{"traps", "--runs", "-1"}, "--runs -1: must be 1 or more"},
		{[]string{"traps", "--runs", "0"}, "--runs 0"},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			out, errs, code := e.run(tt.args...)
			if code != cli.ExitUsage || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, tt.want) || out != "" {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 2 and one line containing %q", code, out, errs, tt.want)
			}
		})
	}
	if hashFile(t, e.db) != before {
		t.Error("the database changed")
	}
	if n := len(web.Requests()); n != requests {
		t.Errorf("%d requests were sent", n-requests)
	}
	// The same commands with arguments that name something still work.
	for _, args := range [][]string{{"show", "--at", "1", s.URL("/")}, {"diff", "--from", "1", "--to", "2", s.URL("/")},
		{"export", "jsonl", "--run", "2"}, {"plan", "--budget", "1"}, {"traps", "--runs", "1"}} {
		if out := e.mustRun(args...); out == "" {
			t.Errorf("strata %s printed nothing", strings.Join(args, " "))
		}
	}
	if out := e.mustRun("show", "--at", "1", s.URL("/")); !strings.Contains(out, "first") {
		t.Errorf("show --at 1: %q", out)
	}
}

// TestShowControlBytes archives a text/plain page full of terminal escape sequences. On a terminal,
// show and diff must print them harmlessly (no control byte but tab and newline reaches it, ESC
// shows as ␛); piped, show writes the text as stored, byte for byte.
func TestShowControlBytes(t *testing.T) {
	web := testweb.New(t)
	s := web.AddSite(t)
	// Served as UTF-8, with a C1 CSI (U+009B) and a byte that is not UTF-8.
	hostile := "title\x1b]0;pwned\x07 clear\x1b[2J\x1b[31mred\x1b[0m\r\nover\rwrite bell\x07 del\x7f c1\u009b6n bad\xff end\n"
	s.Handle("/plain", testweb.Text("text/plain; charset=utf-8", "first\n"))
	e := newEnv(t, loopbackConfig)
	e.mustRun("seed", "add", "--level", "0", s.URL("/plain"))
	e.mustRun("run")
	s.Handle("/plain", testweb.Text("text/plain; charset=utf-8", hostile))
	e.mustRun("run")

	var hist []struct {
		Version string `json:"version"`
	}
	if err := json.Unmarshal([]byte(e.mustRun("history", "--json", s.URL("/plain"))), &hist); err != nil || len(hist) != 2 {
		t.Fatalf("history: %v %v", hist, err)
	}
	stored, err := os.ReadFile(filepath.Join(e.dir, "archive", hist[1].Version, "page.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(stored), "\x1b]0;pwned\x07") {
		t.Fatalf("the archived text lost its escapes, so this test tests nothing: %q", stored)
	}
	if out := e.mustRun("show", s.URL("/plain")); out != string(stored) {
		t.Errorf("piped, show should write the stored text unchanged:\n got %q\nwant %q", out, stored)
	}
	cli.PretendTerminal(t, true)
	for _, args := range [][]string{{"show", s.URL("/plain")}, {"diff", "--color", "never", s.URL("/plain")}} {
		out := e.mustRun(args...)
		for i, c := range []byte(out) {
			if c < 0x20 && c != '\n' && c != '\t' || c == 0x7f {
				t.Errorf("%s on a terminal wrote control byte %#x at %d: %q", args[0], c, i, out)
				break
			}
		}
		if strings.ContainsRune(out, '\u009b') || !utf8.ValidString(out) {
			t.Errorf("%s on a terminal wrote a C1 control or invalid UTF-8: %q", args[0], out)
		}
		if !strings.Contains(out, "title␛]0;pwned␇") || !strings.Contains(out, "red␛[0m\n") || !strings.Contains(out, "over␍write") {
			t.Errorf("%s on a terminal does not show the escapes visibly: %q", args[0], out)
		}
	}
}

// TestReaderUpgradesOlderSchema opens a database of an older schema with a reading command: it is
// upgraded first where it can be written, as every command did before, while serve refuses it and
// changes nothing.
func TestReaderUpgradesOlderSchema(t *testing.T) {
	e := newEnv(t, "")
	if err := os.MkdirAll(filepath.Dir(e.db), 0o755); err != nil {
		t.Fatal(err)
	}
	old, err := store.Open(t.Context(), e.db, store.Options{MaxVersion: 3})
	if err != nil {
		t.Fatal(err)
	}
	old.Close()
	before := hashFile(t, e.db)
	if _, errs, code := e.run("serve", "--addr", "127.0.0.1:0"); code != cli.ExitUsage || !strings.Contains(errs, "schema is older") ||
		strings.Count(errs, "\n") != 1 {
		t.Errorf("serve on an older schema: exit %d, stderr %q", code, errs)
	}
	if hashFile(t, e.db) != before {
		t.Error("serve changed the database")
	}
	if out := e.mustRun("status"); !strings.Contains(out, "no runs yet") {
		t.Errorf("status on an older schema:\n%s", out)
	}
	db, err := store.OpenReadOnly(t.Context(), e.db)
	if err != nil {
		t.Fatalf("after status, the schema is still not current: %v", err)
	}
	db.Close()
}
