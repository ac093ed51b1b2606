package cli_test

import (
	"strings"
	"testing"

	"github.com/strata-crawler/strata/internal/cli"
)

// TestRunWithoutSeeds: run and crawl on a database with nothing active in it exit 2 with one line
// that says so, instead of succeeding every night having crawled nothing, and record no run.
func TestRunWithoutSeeds(t *testing.T) {
	e := newEnv(t, loopbackConfig)
	e.mustRun("seed", "add", "https://only.example/")
	e.mustRun("seed", "remove", "https://only.example/")
	for _, cmd := range []string{"run", "crawl"} {
		out, errs, code := e.run(cmd)
		want := "strata: nothing to crawl: " + e.db + " has no seeds (add one with strata seed add URL)\n"
		if code != cli.ExitUsage || errs != want || out != "" {
			t.Errorf("%s without seeds: exit %d, stdout %q, stderr %q; want exit 2 and %q", cmd, code, out, errs, want)
		}
	}
	if out := e.mustRun("status"); !strings.Contains(out, "no runs yet") {
		t.Errorf("a run was recorded:\n%s", out)
	}
}
