package cli_test

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-crawler/strata/internal/cli"
)

func TestSimulate(t *testing.T) {
	dir := t.TempDir()
	plot := filepath.Join(dir, "out.svg")
	var out, errb bytes.Buffer
	err := cli.Run(t.Context(), []string{"simulate", "--pages", "800", "--sites", "4", "--days", "8", "--budget", "25%",
		"--policies", "uniform,optimal,oracle", "--json", "--plot", plot}, &out, &errb)
	if err != nil {
		t.Fatalf("simulate: %v\n%s", err, errb.String())
	}
	var res struct {
		Config   struct{ Budget int } `json:"config"`
		Policies []struct {
			Name      string  `json:"name"`
			Freshness float64 `json:"freshness"`
		} `json:"policies"`
	}
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatalf("--json output: %v\n%s", err, out.String())
	}
	if res.Config.Budget != 200 || len(res.Policies) != 3 || res.Policies[2].Name != "oracle" || !(res.Policies[2].Freshness > 0) {
		t.Errorf("unexpected result: %+v", res)
	}
	svg, err := os.ReadFile(plot)
	if err != nil || !bytes.Contains(svg, []byte("<svg")) {
		t.Errorf("plot file: %v, %d bytes", err, len(svg))
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".strata-plot-*")); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}

	out.Reset()
	if err := cli.Run(t.Context(), []string{"simulate", "--pages", "500", "--sites", "5", "--days", "4", "--budget", "100",
		"--policies", "uniform,nutch"}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	if s := out.String(); !strings.Contains(s, "POLICY") || !strings.Contains(s, "nutch") || !strings.Contains(s, "budget 100 pages/day") {
		t.Errorf("table output:\n%s", s)
	}
}

// TestSimulateTooLarge asks for simulations that would need more memory than the stated limits
// allow: each must be refused at once, in one line naming the flag or the product that is too
// large. Before the limits, these ended in Go's out-of-memory crash after gigabytes.
func TestSimulateTooLarge(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--pages", "100000000"}, "--pages 100000000: must be between 1 and 2000000"},
		{[]string{"--days", "1000000000"}, "--days 1000000000: must be between 2"},
		{[]string{"--pages", "2000000", "--births", "0.01", "--days", "60"}, "more than the 2000000 strata simulates"},
		{[]string{"--pages", "1000000", "--births", "0", "--days", "3650"}, "page-days"},
		{[]string{"--pages", "100", "--sites", "1000000000"}, "--sites 1000000000: must be between 1 and --pages"},
		{[]string{"--pages", "-5"}, "--pages -5"},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var out bytes.Buffer
			err := cli.Run(t.Context(), append([]string{"simulate"}, tt.args...), &out, io.Discard)
			if cli.ExitCode(err) != cli.ExitUsage || err == nil || !strings.Contains(err.Error(), tt.want) ||
				strings.Contains(err.Error(), "\n") || out.Len() > 0 {
				t.Errorf("err %v (exit %d), want exit 2 and one line containing %q", err, cli.ExitCode(err), tt.want)
			}
		})
	}
}

func TestSimulateUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"--budget", "abc"},
		{"--budget", "150%"},
		{"--budget", "12.5"},
		{"--mix", "bogus"},
		{"--plot", "out.gif"},
		{"--policies", "lru"},
		{"--sites", "0"},
		{"--days", "1"},
		{"--budget", "inf"},
		{"--budget", "NaN"},
		{"--budget", "1e300"},
		{"--births", "NaN"},
		{"--deaths", "-Inf"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			err := cli.Run(t.Context(), append([]string{"simulate", "--pages", "100", "--sites", "2", "--days", "3"}, args...), io.Discard, io.Discard)
			if cli.ExitCode(err) != cli.ExitUsage {
				t.Errorf("exit code %d (%v), want %d", cli.ExitCode(err), err, cli.ExitUsage)
			}
		})
	}
}
