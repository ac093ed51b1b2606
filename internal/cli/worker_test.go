package cli_test

import (
	"strings"
	"testing"

	"github.com/strata-crawler/strata/internal/cli"
	"github.com/strata-crawler/strata/internal/pgtest"
)

// TestWorkerBadInput: strata run --worker refuses, in one line naming the problem, a SQLite
// database (one process), a lease under the minimum, --cron, and --lease without --worker; the
// SQLite quick start's run is untouched by the flags.
func TestWorkerBadInput(t *testing.T) {
	lite := newEnv(t, loopbackConfig)
	pg := newEnv(t, "url = \""+pgtest.URL(t)+"\"\n"+loopbackConfig)
	tests := []struct {
		name string
		e    *env
		args []string
		want string
	}{
		{"sqlite", lite, []string{"run", "--worker"}, "--worker needs database.url"},
		{"short lease", pg, []string{"run", "--worker", "--lease", "1s"}, "--lease 1s: a worker's lease must be at least 2s"},
		{"cron", pg, []string{"run", "--worker", "--cron"}, "--worker and --cron"},
		{"lease alone", lite, []string{"run", "--lease", "5s"}, "--lease is a worker's: add --worker"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errs, code := tt.e.run(tt.args...)
			if code != cli.ExitUsage || !strings.Contains(errs, tt.want) || strings.Count(strings.TrimSpace(errs), "\n") > 0 || out != "" {
				t.Errorf("strata %s: exit %d, stdout %q, stderr %q; want exit %d and one line with %q",
					strings.Join(tt.args, " "), code, out, errs, cli.ExitUsage, tt.want)
			}
		})
	}
}
