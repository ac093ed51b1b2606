package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/strata-crawler/strata/internal/pgtest"
	"github.com/strata-crawler/strata/internal/testweb"
)

// fleetGap is the loopback gap of the fleet tests: short, so a few dozen pages take seconds, and
// long enough that a worker ignoring another's requests would break it.
const fleetGap = 150 * time.Millisecond

// fleetWeb is sites sites of pages pages each, every page linked from the home page, each site on
// its own loopback address.
func fleetWeb(t testing.TB, sites, pages int) (*testweb.Web, []string) {
	t.Helper()
	web := testweb.New(t)
	var seeds []string
	for i, s := range web.AddSites(t, sites) {
		var links strings.Builder
		for p := 1; p < pages; p++ {
			fmt.Fprintf(&links, `<a href="/p%d">p%d</a> `, p, p)
			s.Page(fmt.Sprintf("/p%d", p), fmt.Sprintf("<p>site %d page %d</p>", i, p))
		}
		s.Page("/", "<p>home</p> "+links.String())
		seeds = append(seeds, s.URL("/"))
	}
	return web, seeds
}

// fleetDir writes n workers' configurations on one PostgreSQL database, each with its own archive
// root, and adds the seeds.
func fleetDir(t testing.TB, dbURL string, seeds []string, n int) (dir string, cfgs []string) {
	return fleetDirGap(t, dbURL, seeds, n, fleetGap)
}

func fleetDirGap(t testing.TB, dbURL string, seeds []string, n int, gap time.Duration) (dir string, cfgs []string) {
	t.Helper()
	dir = t.TempDir()
	for i := range n {
		cfg := filepath.Join(dir, fmt.Sprintf("worker%d.toml", i))
		body := fmt.Sprintf("[database]\nurl = %q\n[politeness]\nloopback_delay = %q\n[crawl]\nuser_agent = \"strata-test/1 (+https://lab.example/c)\"\n"+
			"page_timeout = \"2s\"\n[archive]\nroot = %q\nkeep = \"0s\"\n", dbURL, gap.String(), filepath.Join(dir, fmt.Sprintf("archive%d", i)))
		if err := os.WriteFile(cfg, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		cfgs = append(cfgs, cfg)
	}
	args := append([]string{"--config", cfgs[0], "seed", "add", "--level", "1"}, seeds...)
	if out, err := strataCmd(dir, args...).CombinedOutput(); err != nil {
		t.Fatalf("seed add: %v\n%s", err, out)
	}
	return dir, cfgs
}

// startWorkers starts one strata run --worker per configuration.
func startWorkers(t testing.TB, dir string, cfgs []string, extra ...string) []*exec.Cmd {
	t.Helper()
	var cmds []*exec.Cmd
	for _, cfg := range cfgs {
		cmd := strataCmd(dir, append([]string{"--config", cfg, "run", "--worker", "--lease", "2s"}, extra...)...)
		out, err := os.Create(strings.TrimSuffix(cfg, ".toml") + ".out")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { out.Close() })
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if cmd.ProcessState == nil {
				cmd.Process.Kill()
				cmd.Wait()
			}
		})
		cmds = append(cmds, cmd)
	}
	return cmds
}

// waitWorker waits for a worker to exit, for at most a minute: a fleet that cannot finish (a
// domain never taken over) fails the test rather than hanging it.
func waitWorker(t testing.TB, cmd *exec.Cmd) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(time.Minute):
		cmd.Process.Kill()
		<-done
		return fmt.Errorf("still running after a minute; killed")
	}
}

func workerOutput(t testing.TB, dir string, i int) string {
	b, _ := os.ReadFile(filepath.Join(dir, fmt.Sprintf("worker%d.out", i)))
	return string(b)
}

// fetchedTwice lists the pages the server was asked for more than once (robots.txt aside).
func fetchedTwice(web *testweb.Web) []string {
	n := map[string]int{}
	for _, r := range web.Requests() {
		if r.Path != "/robots.txt" {
			n[r.Host+r.Path]++
		}
	}
	var out []string
	for k, c := range n {
		if c > 1 {
			out = append(out, fmt.Sprintf("%s ×%d", k, c))
		}
	}
	slices.Sort(out)
	return out
}

// archived returns the run's archived versions as "url content-hash", and checks that each lives
// in exactly one of the roots.
func archived(t *testing.T, dbURL string, run int64, roots []string) []string {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT u.url, coalesce(u.content_hash, ''), f.archive_path, coalesce(w.archive_root, '')
		FROM fetches f JOIN urls u ON u.id = f.url_id
		LEFT JOIN fleet_versions v ON v.fetch_id = f.id LEFT JOIN fleet_workers w ON w.run_id = f.run_id AND w.worker = v.worker
		WHERE f.run_id = $1 AND f.archive_path IS NOT NULL ORDER BY u.url`, run)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	var u, hash, path, home string
	_, err = pgx.ForEachRow(rows, []any{&u, &hash, &path, &home}, func() error {
		// PostgreSQL knows the root that holds each version, whichever machine asks.
		if _, err := os.Stat(filepath.Join(home, path)); home == "" || err != nil {
			t.Errorf("version %s of %s: recorded home %q does not hold it", path, u, home)
		}
		in := 0
		for _, root := range roots {
			if _, err := os.Stat(filepath.Join(root, path)); err == nil {
				in++
			}
		}
		if in != 1 {
			t.Errorf("version %s of %s is in %d archive roots, want 1", path, u, in)
		}
		// The two webs' sites differ in address only: a version is its path and content.
		_, rest, _ := strings.Cut(strings.TrimPrefix(u, "http://"), "/")
		out = append(out, "/"+rest+" "+hash)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

func queryInt(t testing.TB, dbURL, q string, args ...any) int64 {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int64
	if err := conn.QueryRow(ctx, q, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

// TestFleetThreeWorkers crawls a loopback web of 6 sites × 10 pages with 3 workers on one PostgreSQL
// frontier: the server sees no politeness violation and no page twice, one worker records the
// run's end after recalc and links, and the archive holds the same versions as one worker's crawl
// of the same web, each in exactly one worker's root.
func TestFleetThreeWorkers(t *testing.T) {
	// Enough pages that the crawl outlasts the workers' starts (1.5 s at the gap), so that all three
	// join the one run even on a loaded machine.
	const sites, pages = 6, 10
	// One worker: the reference.
	oneURL := pgtest.URL(t)
	oneWeb, oneSeeds := fleetWeb(t, sites, pages)
	oneDir, oneCfg := fleetDir(t, oneURL, oneSeeds, 1)
	for _, cmd := range startWorkers(t, oneDir, oneCfg) {
		if err := waitWorker(t, cmd); err != nil {
			t.Fatalf("one worker: %v\n%s", err, workerOutput(t, oneDir, 0))
		}
	}
	if v := oneWeb.Violations(testweb.CheckOptions{MinGap: fleetGap}); len(v) > 0 {
		t.Errorf("one worker: violations: %v", v)
	}
	want := archived(t, oneURL, 1, []string{filepath.Join(oneDir, "archive0")})
	if len(want) != sites*pages {
		t.Fatalf("one worker archived %d versions, want %d", len(want), sites*pages)
	}

	dbURL := pgtest.URL(t)
	web, seeds := fleetWeb(t, sites, pages)
	dir, cfgs := fleetDir(t, dbURL, seeds, 3)
	cmds := startWorkers(t, dir, cfgs)
	finished := 0
	for i, cmd := range cmds {
		if err := waitWorker(t, cmd); err != nil {
			t.Fatalf("worker %d: %v\n%s", i, err, workerOutput(t, dir, i))
		}
		out := workerOutput(t, dir, i)
		if strings.Contains(out, "run 1 finished by worker") {
			finished++
		}
	}
	if finished != 1 {
		t.Errorf("%d workers recorded the run's end, want 1", finished)
	}
	if v := web.Violations(testweb.CheckOptions{MinGap: fleetGap, RobotsFirst: true}); len(v) > 0 {
		t.Errorf("3 workers: politeness violations: %v", v)
	}
	if twice := fetchedTwice(web); len(twice) > 0 {
		t.Errorf("3 workers fetched pages twice: %v", twice)
	}
	if n := queryInt(t, dbURL, `SELECT count(*) FROM runs`); n != 1 {
		t.Errorf("%d runs, want the 3 workers' one", n)
	}
	if n := queryInt(t, dbURL, `SELECT count(*) FROM runs WHERE status = 'completed' AND ended_at IS NOT NULL`); n != 1 {
		t.Errorf("run not completed")
	}
	if n := queryInt(t, dbURL, `SELECT count(DISTINCT worker) FROM fleet_workers WHERE run_id = 1 AND done_at IS NOT NULL`); n != 3 {
		t.Errorf("%d workers done in run 1, want 3", n)
	}
	var roots []string
	for i := range cfgs {
		roots = append(roots, filepath.Join(dir, fmt.Sprintf("archive%d", i)))
	}
	got := archived(t, dbURL, 1, roots)
	if !slices.Equal(got, want) {
		t.Errorf("3 workers archived\n%v\nwant one worker's\n%v", got, want)
	}
}

// TestFleetWorkerKilled kills one of 3 workers with SIGKILL in the middle of a run: its leases
// expire, the others take its domains over, and every page is fetched in the run, none twice but
// perhaps the one the dead worker had in flight, with no politeness violation.
func TestFleetWorkerKilled(t *testing.T) {
	const sites, pages = 6, 8
	dbURL := pgtest.URL(t)
	web, seeds := fleetWeb(t, sites, pages)
	dir, cfgs := fleetDir(t, dbURL, seeds, 3)
	// Worker 0 starts first and is killed once it holds domains and the others are crawling too.
	cmds := startWorkers(t, dir, cfgs[:1])
	deadline := time.Now().Add(time.Minute)
	held := fmt.Sprintf("SELECT count(*) FROM fleet_leases WHERE worker LIKE '%%/%d'", cmds[0].Process.Pid)
	for queryInt(t, dbURL, held) < 1 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	cmds = append(cmds, startWorkers(t, dir, cfgs[1:])...)
	for len(web.Requests()) < sites*2 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if queryInt(t, dbURL, held) == 0 {
		t.Fatal("worker 0 never held a domain")
	}
	if err := cmds[0].Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmds[0].Wait()
	for i, cmd := range cmds[1:] {
		if err := waitWorker(t, cmd); err != nil {
			t.Fatalf("worker %d: %v\n%s", i+1, err, workerOutput(t, dir, i+1))
		}
	}
	if v := web.Violations(testweb.CheckOptions{MinGap: fleetGap}); len(v) > 0 {
		t.Errorf("politeness violations across the kill: %v", v)
	}
	// The dead worker may have had a page in flight, fetched but not yet recorded, on each domain
	// it held: those, and only those, are fetched again, at most one per site.
	perSite := map[string]int{}
	for _, r := range fetchedTwice(web) {
		host, _, _ := strings.Cut(r, "/")
		perSite[host]++
		if perSite[host] > 1 || !strings.HasSuffix(r, " ×2") {
			t.Errorf("fetched again: %s; want at most one page per site, the one the dead worker had in flight", r)
		}
	}
	if n := queryInt(t, dbURL, `SELECT count(DISTINCT url_id) FROM fetches WHERE run_id = 1 AND status = 200`); n != sites*pages {
		t.Errorf("run 1 fetched %d pages, want all %d", n, sites*pages)
	}
	if n := queryInt(t, dbURL, `SELECT count(*) FROM runs WHERE id = 1 AND status = 'completed'`); n != 1 {
		t.Errorf("run 1 not completed by the surviving workers:\n%s\n%s", workerOutput(t, dir, 1), workerOutput(t, dir, 2))
	}
	// The dead worker's machine starts a worker again: it seals what the dead one left in its
	// archive root — no temporary file, a manifest in each run directory — and goes on.
	time.Sleep(2 * time.Second) // the dead worker's heartbeat is older than a lease by then
	again := startWorkers(t, dir, cfgs[:1])
	if err := waitWorker(t, again[0]); err != nil {
		t.Fatalf("worker 0 again: %v\n%s", err, workerOutput(t, dir, 0))
	}
	root := filepath.Join(dir, "archive0")
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") && strings.HasSuffix(e.Name(), "Z") {
			if _, err := os.Stat(filepath.Join(root, e.Name(), "manifest.jsonl")); err != nil {
				t.Errorf("run directory %s of the dead worker's root is not sealed: %v", e.Name(), err)
			}
		}
	}
	filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), ".strata-tmp-") {
			t.Errorf("temporary file left in the dead worker's root: %s", path)
		}
		return nil
	})

	// The survivors gave back every lease; the dead worker's may stay, expired, on domains nobody
	// needed after it (the next worker to need one takes it over).
	if n := queryInt(t, dbURL, `SELECT count(*) FROM fleet_leases WHERE worker IS NOT NULL AND worker NOT LIKE $1`,
		fmt.Sprintf("%%/%d", cmds[0].Process.Pid)); n != 0 {
		t.Errorf("%d leases of the surviving workers still held after the run", n)
	}
}
