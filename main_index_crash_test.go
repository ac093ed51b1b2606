package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/strata-crawler/strata/internal/pgtest"
	"github.com/strata-crawler/strata/internal/testweb"
)

// TestKilledIndexStepIsResumed: the index step killed with a batch read and not committed leaves
// the database as it was, and the next step indexes every version once, on SQLite and PostgreSQL.
func TestKilledIndexStepIsResumed(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			extra := ""
			if backend == "postgres" {
				extra = fmt.Sprintf("[database]\nurl = %q\n", pgtest.URL(t))
			}
			web := testweb.New(t)
			dir, cfg := lossDir(t, changingSite(t, web, 6), extra)
			if _, errs, code := strata(t, dir, "--config", cfg, "crawl"); code != 0 { // the crawl stage only: nothing indexed
				t.Fatalf("crawl: exit %d\n%s", code, errs)
			}
			killedAt(t, dir, "indexing", "--config", cfg, "index")
			for i, want := range []string{"index: 6 versions", "index: 0 versions"} {
				out, errs, code := strata(t, dir, "--config", cfg, "index")
				if code != 0 {
					t.Fatalf("index %d after the kill: exit %d\n%s", i+1, code, errs)
				}
				if !strings.HasPrefix(out, want) {
					t.Errorf("index %d after the kill: %q, want it to begin %q", i+1, strings.TrimSpace(out), want)
				}
			}
		})
	}
}
