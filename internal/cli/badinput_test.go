package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-crawler/strata/internal/cli"
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
