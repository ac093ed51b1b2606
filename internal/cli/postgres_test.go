package cli_test

import (
	"errors"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/strata-crawler/strata/internal/cli"
	"github.com/strata-crawler/strata/internal/pgstore"
	"github.com/strata-crawler/strata/internal/pgtest"
	"github.com/strata-crawler/strata/internal/store"
	"github.com/strata-crawler/strata/internal/testweb"
)

// TestRunIntoPostgres: with database.url, seed add and strata run keep the history in PostgreSQL —
// crawl, recalc and links, politely, with the archive sealed — and no SQLite file is made; a
// second run finds the pages unchanged; each run's index step indexes it; the run lock holds across processes; plan, seed
// list and traps read PostgreSQL.
func TestRunIntoPostgres(t *testing.T) {
	dbURL := pgtest.URL(t)
	web := testweb.New(t)
	s := web.AddSite(t)
	s.Page("/", `<a href="/a">a</a> <a href="/b">b</a>`)
	s.Page("/a", "<p>a</p>")
	s.Page("/b", "<p>b</p>")
	e := newEnv(t, "url = \""+dbURL+"\"\n"+loopbackConfig)
	e.mustRun("seed", "add", "--level", "1", s.URL("/"))
	out := e.mustRun("run")
	for _, want := range []string{"run 1: crawled 3 of 3 due URLs", "3 fetched (0 changed, 0 unchanged, 0 not modified, 3 new)",
		"recalc: 3 revisit intervals recalculated", "links: 2 links recorded from 3 stored versions"} {
		if !strings.Contains(out, want) {
			t.Errorf("run output lacks %q:\n%s", want, out)
		}
	}
	if v := web.Violations(testweb.CheckOptions{MinGap: 20e6, RobotsFirst: true}); len(v) > 0 {
		t.Errorf("violations: %v", v)
	}
	if _, err := os.Stat(e.db); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("SQLite database %s: %v; want none made", e.db, err)
	}
	if out := e.mustRun("run"); !strings.Contains(out, "run 2:") || !strings.Contains(out, "0 changed") {
		t.Errorf("second run:\n%s", out)
	}

	db, err := pgstore.Open(t.Context(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	runs, err := db.RecentRuns(t.Context(), 5)
	if err != nil || len(runs) != 2 || runs[1].Status != "completed" || runs[1].Fetched != 3 || runs[1].New != 3 {
		t.Errorf("runs in PostgreSQL = %+v, %v; want 2, the first completed with 3 new pages", runs, err)
	}
	if unsealed, err := db.UnsealedRuns(t.Context()); err != nil || len(unsealed) != 0 {
		t.Errorf("unsealed runs = %+v, %v; want none", unsealed, err)
	}

	// Each run's index step indexed its versions and summarised it, as with SQLite.
	if state, err := db.TextIndexState(t.Context()); err != nil || state.RunUpto != runs[0].ID {
		t.Errorf("text index state = %+v, %v; want both runs summarised", state, err)
	}
	if hits, err := db.SearchText(t.Context(), store.TextQuery{Match: store.TextMatch{All: [][]store.SearchTerm{{{Text: "a"}}}}, Limit: 5}); err != nil || len(hits) == 0 {
		t.Errorf("search for a word of /a = %+v, %v; want its version", hits, err)
	}

	unlock, ok, err := db.LockRuns(t.Context())
	if err != nil || !ok {
		t.Fatalf("LockRuns = %v, %v", ok, err)
	}
	if _, errs, code := e.run("run"); code != cli.ExitLocked || !strings.Contains(errs, "already crawling") {
		t.Errorf("run while another holds the lock: exit %d, %q; want exit %d", code, errs, cli.ExitLocked)
	}
	unlock()
	if out := e.mustRun("plan"); !strings.Contains(out, "policy's current intervals") || !strings.Contains(out, "3 pages") {
		t.Errorf("plan with database.url:\n%s\nwant the current intervals of the 3 pages", out)
	}
	if out := e.mustRun("seed", "list"); !strings.Contains(out, s.URL("/")) || !strings.Contains(out, "3") {
		t.Errorf("seed list with database.url:\n%s\nwant the seed and its 3 pages", out)
	}
	if out := e.mustRun("traps"); !regexp.MustCompile(`1\s+` + regexp.QuoteMeta(strings.Split(s.Host(), ":")[0]) + `\s+3\s`).MatchString(out) {
		t.Errorf("traps with database.url:\n%s\nwant the site's 3 URLs", out)
	}
	if _, errs, code := e.run("traps", "--clear", "nosuch.test"); code == 0 || !strings.Contains(errs, "no trap evidence for that domain") {
		t.Errorf("traps --clear of nothing with database.url: exit %d, %q; want the error saying there is none", code, errs)
	}

	// filter test reads the seeds' domains from PostgreSQL, as a crawl does.
	if out := e.mustRun("filter", "test", s.URL("/elsewhere")); !strings.HasPrefix(out, "accept") {
		t.Errorf("filter test of a page of the seed's site with database.url:\n%s\nwant accept", out)
	}

	// STRATA_DATABASE_URL selects PostgreSQL as the key does.
	envURL := pgtest.URL(t)
	t.Setenv("STRATA_DATABASE_URL", envURL)
	e2 := newEnv(t, loopbackConfig)
	e2.mustRun("seed", "add", s.URL("/"))
	if _, err := os.Stat(e2.db); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("SQLite database %s: %v; want none made", e2.db, err)
	}
	db2, err := pgstore.Open(t.Context(), envURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	if hosts, err := db2.SeedHosts(t.Context()); err != nil || len(hosts) != 1 {
		t.Errorf("seed hosts in STRATA_DATABASE_URL's database = %v, %v; want the one seed's", hosts, err)
	}
}

// TestPostgresRefusals: a database.url that is not PostgreSQL's, and archive.keep for a fleet
// worker (each keeps its versions under its own root), are refused in one line before anything is
// connected to or written.
func TestPostgresRefusals(t *testing.T) {
	for _, tc := range []struct {
		name, config string
		args         []string
		want         string
	}{
		{"not postgres", "url = \"mysql://u@127.0.0.1/db\"\n", []string{"run"}, "database.url"},
		{"archive.keep for a fleet", "url = \"postgres://u@127.0.0.1:1/db\"\n[archive]\nkeep = \"720h\"\n", []string{"run", "--worker"}, "archive.keep"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, tc.config)
			_, errs, code := e.run(tc.args...)
			if code != cli.ExitUsage || !strings.Contains(errs, tc.want) || strings.Count(strings.TrimSpace(errs), "\n") > 0 {
				t.Errorf("exit %d, stderr %q; want exit %d, one line naming %s", code, errs, cli.ExitUsage, tc.want)
			}
			if _, err := os.Stat(e.db); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("SQLite database %s: %v; want none made", e.db, err)
			}
		})
	}
}
