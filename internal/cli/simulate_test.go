package cli_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/strata-crawler/strata/internal/cli"
	"github.com/strata-crawler/strata/internal/simulate"
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

// TestSimulateTooLarge asks for simulations that would need more memory than the stated limits
// allow: each must be refused at once, in one line naming the flag or the product that is too
// large. Before the limits, these ended in Go's out-of-memory crash after gigabytes.
func TestSimulateTooLarge(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--pages", "100000000"}, "--pages 100000000: must be between 1 and 20000"},
		{[]string{"--days", "1000000000"}, "--days 1000000000: must be between 2"},
		// Past the simulator's own limits, the flag is named and the limit stated is the one that
		// holds (before, the command promised 2,000,000 pages and 3,650 days, and the simulator
		// refused 20,001 pages or 366 days in words that named no flag).
		{[]string{"--pages", "20001"}, "--pages 20001: must be between 1 and 20000"},
		{[]string{"--days", "366"}, "--days 366: must be between 2 (the initial crawl and one run) and 365"},
		{[]string{"--pages", "20000", "--sites", "2001"}, "--sites 2001: must be between 1 and --pages (20000), at most 2000"},
		{[]string{"--pages", "20000", "--births", "1", "--days", "200"}, "more than the 2000000 strata simulates"},
		{[]string{"--pages", "20000", "--births", "0.1", "--days", "365"}, "page-days"},
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

// TestSimulateMakesTheChoicesOfStrataRun is issue 17's check that the simulator is strata: on one
// small web, strata simulate (the web in memory, a simulated clock) and strata run (the same web on
// loopback sockets, once per day, through the command line and its configuration) fetch the same
// pages in every run, for the policy without a budget and for every budgeted one.
func TestSimulateMakesTheChoicesOfStrataRun(t *testing.T) {
	mix, err := simulate.ParseMix("cho")
	if err != nil {
		t.Fatal(err)
	}
	cfg := simulate.Config{Pages: 60, Sites: 3, Days: 5, Seed: 5, Mix: mix, Budget: 12, Births: 0.03, Deaths: 0.02}
	for _, policy := range []string{"bouras", "uniform", "nutch", "hybrid", "optimal"} {
		t.Run(policy, func(t *testing.T) {
			t.Parallel() // each on its own addresses' port and directory; runs wait a second between them
			c := cfg
			c.Policies = []string{policy}
			web, err := simulate.NewWeb(c)
			if err != nil {
				t.Fatal(err)
			}
			srv, port := serveWeb(t, web, c.Sites)
			c.Port = port // the same URLs in memory as on the sockets
			res, err := simulate.Run(t.Context(), c)
			if err != nil {
				t.Fatal(err)
			}
			want := res.Policies[0].Fetched

			dir := t.TempDir()
			conf := filepath.Join(dir, "strata.toml")
			budget := c.Budget
			if policy == "bouras" {
				budget = 0
			}
			writeFile(t, conf, fmt.Sprintf(`[crawl]
user_agent = "strata-test/1 (+https://example.org/strata-test)"
workers = 8
[politeness]
loopback_delay = "0s"
[seed]
level = 1
[frequency]
policy = %q
[optimizer]
budget = %d
[hybrid] # as strata simulate sets it for 12 pages a run out of 60 on 3 sites
normal = 4
slow = 8
sample_size = 2
`, policy, budget))
			strata := func(args ...string) {
				t.Helper()
				var errb bytes.Buffer
				if err := cli.Run(t.Context(), append([]string{"--config", conf, "--log-level", "error"}, args...), io.Discard, &errb); err != nil {
					t.Fatalf("strata %v: %v\n%s", args, err, errb.String())
				}
			}
			strata(append([]string{"seed", "add"}, srv.Seeds()...)...)
			for d := range c.Days {
				srv.SetTime(float64(d))
				strata("run")
			}
			got := srv.Fetched(c.Days)
			for d := range c.Days {
				if !slices.Equal(got[d], want[d]) {
					t.Errorf("run %d: strata run fetched pages %v, strata simulate %v", d+1, got[d], want[d])
				}
			}
		})
	}
}

// serveWeb serves the simulated web on loopback: each site on its own address, all on one port.
func serveWeb(t *testing.T, web *simulate.Web, sites int) (*simulate.Server, int) {
	t.Helper()
	for range 20 {
		first, err := net.Listen("tcp", net.JoinHostPort(simulate.Site(0, 0), "0"))
		if err != nil {
			t.Fatal(err)
		}
		port := first.Addr().(*net.TCPAddr).Port
		lns := []net.Listener{first}
		for s := 1; s < sites; s++ {
			ln, err := net.Listen("tcp", simulate.Site(s, port))
			if err != nil {
				break
			}
			lns = append(lns, ln)
		}
		if len(lns) < sites { // the port was taken on one of the addresses: try another
			for _, ln := range lns {
				ln.Close()
			}
			continue
		}
		srv := web.NewServer(port)
		hs := &http.Server{Handler: srv, ReadHeaderTimeout: 5 * time.Second}
		for _, ln := range lns {
			go hs.Serve(ln)
		}
		t.Cleanup(func() { hs.Close() })
		return srv, port
	}
	t.Fatal("no port free on every site's address")
	return nil, 0
}

func writeFile(t *testing.T, path, body string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}
