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
	err := cli.Run(t.Context(), []string{"simulate", "--pages", "120", "--sites", "3", "--days", "4", "--budget", "25%",
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
	if res.Config.Budget != 30 || len(res.Policies) != 3 || res.Policies[2].Name != "oracle" || !(res.Policies[2].Freshness > 0) {
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
	if err := cli.Run(t.Context(), []string{"simulate", "--pages", "100", "--sites", "5", "--days", "3", "--budget", "20",
		"--policies", "uniform,nutch"}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	if s := out.String(); !strings.Contains(s, "POLICY") || !strings.Contains(s, "nutch") || !strings.Contains(s, "budget 20 pages/day") {
		t.Errorf("table output:\n%s", s)
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
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			err := cli.Run(t.Context(), append([]string{"simulate", "--pages", "100", "--sites", "2", "--days", "3"}, args...), io.Discard, io.Discard)
			if cli.ExitCode(err) != cli.ExitUsage {
				t.Errorf("exit code %d (%v), want %d", cli.ExitCode(err), err, cli.ExitUsage)
			}
		})
	}
}
