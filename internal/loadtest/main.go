// Command loadtest measures a first full crawl of a generated loopback web by strata and by a plain
// colly crawler, each in a process of its own, so that CPU seconds and peak RSS are the crawler's
// alone and not the test web's:
//
//	go run ./internal/loadtest -hosts 1000 -pages 100 -delay 0
//	go run ./internal/loadtest -hosts 1000 -pages 10 -delay 1s -crawlers strata
//	go run ./internal/loadtest -hosts 10000 -pages 100 -crawlers strata -max-duration 5m
//	go run ./internal/loadtest -hosts 200 -pages 50 -size 50000 -links 20 -hints=false -keep /dev/shm/lt
//
// This process serves the web (internal/testweb.LoadWeb, every site on its own 127.0.x.y address;
// with -size and -links, real-sized article pages, testweb.NewArticleWeb) and counts what the sites
// served. strata's seeds get as many levels as the web needs; colly follows every link of the
// seeds' hosts (see collycrawl.Options.Depth). strata is the real binary (built from this module unless -strata
// names one), run as a user runs it: `strata seed add` for the sites' seeds at level 1, then the
// measured `strata crawl`. colly is this program again, started with -child colly
// (internal/loadtest/collycrawl). For each crawler it prints the pages served, pages per second over
// the servers' first-request-to-last-response window, CPU seconds per 1,000 pages and peak RSS of
// the crawler's process (wait4's rusage: user + system time, ru_maxrss), and with -delay the share
// of the politeness bound hosts/delay and the requests that came sooner than the delay after their
// site's previous response. Nothing here sends a request to anything but loopback.
//
// The crawler is measured as a separate process rather than in the test binary because strata's
// import rules let only internal/cli wire the crawler package, and because a crawler sharing its
// process with a thousand test servers has its CPU and memory mixed with theirs.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/strata-crawler/strata/internal/loadtest/collycrawl"
	"github.com/strata-crawler/strata/internal/store"
	"github.com/strata-crawler/strata/internal/testweb"
)

const userAgent = "strata-loadtest/1.0 (+https://lab.example/strata)"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintf(os.Stderr, "loadtest: %v\n", err)
		os.Exit(1)
	}
}

// options are the command's flags.
type options struct {
	hosts, pages, workers int
	size, links           int  // article pages of about size bytes with links links each; 0: the 6 KB web
	hints                 bool // strata's hints.enabled
	delay, maxDuration    time.Duration
	crawlers              string
	strata                string // the strata binary; built from the module when empty
	keep                  string // keep the crawlers' working files here instead of a removed temp dir
	cpuProfile            string // strata --cpuprofile

	child, seeds string // internal: -child colly -seeds FILE runs the colly crawl in this process
	textDir      string // internal: where the child writes each page's text
	depth        int    // levels below the seed that reach the whole web: strata's seed level
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var o options
	fs := flag.NewFlagSet("loadtest", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.IntVar(&o.hosts, "hosts", 1000, "sites in the web, each on its own loopback address")
	fs.IntVar(&o.pages, "pages", 100, "pages per site, the seed included")
	fs.IntVar(&o.size, "size", 0, "bytes per page, about: real-sized article pages (with -links); 0 = the 6 KB pages whose seed links to every page")
	fs.IntVar(&o.links, "links", 20, "with -size: distinct pages of its site each page links to")
	fs.BoolVar(&o.hints, "hints", true, "strata's hints.enabled (sitemaps and feeds; a sitemap request per host)")
	fs.IntVar(&o.workers, "workers", 32, "strata's crawl.workers; colly's bound on requests in flight")
	fs.DurationVar(&o.delay, "delay", 0, "strata's politeness.loopback_delay; colly's LimitRule.Delay")
	fs.DurationVar(&o.maxDuration, "max-duration", 0, "stop strata's crawl after this long (crawl --max-duration); 0 = crawl everything")
	fs.StringVar(&o.crawlers, "crawlers", "strata,colly", "crawlers to measure, in order: strata, colly")
	fs.StringVar(&o.strata, "strata", "", "strata binary to run (default: go build the module's)")
	fs.StringVar(&o.keep, "keep", "", "keep the databases, archives and logs in this directory")
	fs.StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile of strata's crawl to this file (strata --cpuprofile)")
	fs.StringVar(&o.child, "child", "", "internal: run this crawler here (colly)")
	fs.StringVar(&o.seeds, "seeds", "", "internal: the child's seed file")
	fs.StringVar(&o.textDir, "text-dir", "", "internal: the child's directory for page texts")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if o.child != "" {
		return runChild(ctx, o, stdout)
	}
	if o.hosts < 1 || o.pages < 1 || o.workers < 1 {
		return errors.New("-hosts, -pages and -workers must be at least 1")
	}
	if o.size < 0 || (o.size > 0 && o.links < 2) {
		return errors.New("-size must be at least 0, and -links at least 2 with -size")
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))

	// A listener per site, and both ends of the crawler's connections: at most a few per worker in
	// flight plus the idle pools (100 in strata's fetch client and in collycrawl's transport).
	if err := raiseNoFile(uint64(o.hosts + 8*o.workers + 1024)); err != nil {
		return err
	}
	work := o.keep
	if work == "" {
		dir, err := os.MkdirTemp("", "strata-loadtest-")
		if err != nil {
			return fmt.Errorf("work directory: %w", err)
		}
		defer os.RemoveAll(dir)
		work = dir
	}
	if err := os.MkdirAll(work, 0o755); err != nil {
		return fmt.Errorf("work directory %s: %w", work, err)
	}

	start := time.Now()
	lw := testweb.NewLoadWeb(o.pages)
	if o.size > 0 {
		lw = testweb.NewArticleWeb(o.pages, o.links, o.size)
	}
	o.depth = max(lw.Depth(), 1)
	ls, err := testweb.ServeLoad(lw, o.hosts)
	if err != nil {
		return err
	}
	ls.Gap = o.delay
	defer func() {
		if err := ls.Close(); err != nil {
			log.Error("test web", "err", err)
		}
	}()
	log.Info("test web up", "hosts", o.hosts, "pages", o.pages, "first", ls.Hosts[0], "last", ls.Hosts[len(ls.Hosts)-1],
		"took", time.Since(start).Round(time.Millisecond))
	seeds := filepath.Join(work, "seeds.txt")
	var b strings.Builder
	for _, h := range ls.Hosts {
		b.WriteString("http://" + h + "/\n")
	}
	if err := os.WriteFile(seeds, []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("seed file: %w", err)
	}

	shape := "6 KB pages, the seed links to every page"
	if o.size > 0 {
		shape = fmt.Sprintf("article pages of about %d bytes with %d links each", o.size, o.links)
	}
	fmt.Fprintf(stdout, "web: %d hosts × %d pages = %d pages (%s; %d levels below the seed), workers %d, delay %v, max duration %v, strata hints %v\n",
		o.hosts, o.pages, o.hosts*o.pages, shape, o.depth, o.workers, o.delay, o.maxDuration, o.hints)
	for _, name := range strings.Split(o.crawlers, ",") {
		ls.Reset()
		webBefore := selfCPU()
		var m *measurement
		switch name = strings.TrimSpace(name); name {
		case "strata":
			m, err = measureStrata(ctx, o, filepath.Join(work, "strata"), seeds, log)
		case "colly":
			m, err = measureColly(ctx, o, filepath.Join(work, "colly"), seeds)
		default:
			return fmt.Errorf("unknown crawler %q (want strata or colly)", name)
		}
		if err != nil {
			return err
		}
		m.served = ls.Stats()
		m.webCPU = selfCPU() - webBefore
		m.print(stdout, o)
		if err := m.check(o); err != nil {
			return err
		}
	}
	return nil
}

// measurement is one crawler's run.
type measurement struct {
	name   string
	wall   time.Duration // the crawler's process, start to exit
	usage  usage
	served testweb.LoadStats
	urls   int           // URLs in strata's table afterwards (the frontier); 0 for colly
	webCPU time.Duration // this process's CPU during the run: the test web serving the crawler
	note   string        // the crawler's own summary
}

func (m *measurement) print(w io.Writer, o options) {
	window := m.served.Last.Sub(m.served.First)
	user, sys := m.usage.user, m.usage.sys
	pages := float64(m.served.Pages)
	rate := pages / window.Seconds()
	fmt.Fprintf(w, "%s: %d pages, %d robots.txt, %d other, %d connections, %d overlapping requests\n",
		m.name, m.served.Pages, m.served.Robots, m.served.Other, m.served.Conns, m.served.Overlaps)
	if o.delay > 0 {
		fmt.Fprintf(w, "%s: %d requests sooner than %v after the previous response to their site (politeness violations)\n",
			m.name, m.served.Early, o.delay)
	}
	fmt.Fprintf(w, "%s: %.0f pages/s (%v from first request to last response; process %v)\n",
		m.name, rate, window.Round(time.Millisecond), m.wall.Round(time.Millisecond))
	rss := "unknown on " + runtime.GOOS
	if m.usage.maxRSS > 0 {
		rss = fmt.Sprintf("%.0f MB", float64(m.usage.maxRSS)/(1<<20))
	}
	fmt.Fprintf(w, "%s: CPU %.2f s per 1,000 pages (user %v, sys %v), peak RSS %s\n",
		m.name, (user+sys).Seconds()/pages*1000, user.Round(time.Millisecond), sys.Round(time.Millisecond), rss)
	if m.webCPU > 0 {
		// The crawler and the web share this machine's cores: at these CPU costs per page, no
		// crawler can go faster than the cores divided by the two together.
		perPage := (user + sys + m.webCPU).Seconds() / pages
		fmt.Fprintf(w, "%s: the test web's CPU %.2f s per 1,000 pages; crawler and web together allow at most %.0f pages/s on %d cores\n",
			m.name, m.webCPU.Seconds()/pages*1000, float64(runtime.NumCPU())/perPage, runtime.NumCPU())
	}
	if o.delay > 0 {
		bound := float64(o.hosts) / o.delay.Seconds()
		fmt.Fprintf(w, "%s: %.1f %% of the politeness bound (%d hosts / %v = %.0f pages/s)\n",
			m.name, rate/bound*100, o.hosts, o.delay, bound)
	}
	if m.urls > 0 {
		fmt.Fprintf(w, "%s: %d URLs in the table after the crawl\n", m.name, m.urls)
	}
	if m.note != "" {
		fmt.Fprintf(w, "%s: %s\n", m.name, m.note)
	}
}

// check fails a run that did not crawl the whole web once, politely.
func (m *measurement) check(o options) error {
	s := m.served
	var problems []string
	if s.Overlaps > 0 {
		problems = append(problems, fmt.Sprintf("%d requests overlapped another to the same site", s.Overlaps))
	}
	if o.maxDuration == 0 {
		if want := int64(o.hosts * o.pages); s.Pages != want {
			problems = append(problems, fmt.Sprintf("%d of %d pages served", s.Pages, want))
		}
		if s.Robots != int64(o.hosts) {
			problems = append(problems, fmt.Sprintf("robots.txt served %d times for %d hosts", s.Robots, o.hosts))
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("%s: %s", m.name, strings.Join(problems, "; "))
	}
	return nil
}

// measureStrata builds (or takes) the strata binary, seeds a new database and measures `strata crawl`.
func measureStrata(ctx context.Context, o options, dir, seeds string, log *slog.Logger) (*measurement, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("strata directory: %w", err)
	}
	bin := o.strata
	if bin == "" {
		bin = filepath.Join(dir, "strata")
		log.Info("building strata", "to", bin)
		build := exec.CommandContext(ctx, "go", "build", "-o", bin, "github.com/strata-crawler/strata")
		if out, err := build.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("go build strata: %w\n%s", err, out)
		}
	}
	cfg := filepath.Join(dir, "strata.toml")
	// delay_factor 1 is the configuration's minimum: the gap after a response is at least as long
	// as the response took.
	toml := fmt.Sprintf(`[database]
path = "strata.db"
[archive]
root = "archive"
[seed]
level = %d
[crawl]
user_agent = %q
workers = %d
[politeness]
loopback_delay = %q
delay_factor = 1.0
[hints]
enabled = %v
`, o.depth, userAgent, o.workers, o.delay.String(), o.hints)
	if err := os.WriteFile(cfg, []byte(toml), 0o644); err != nil {
		return nil, fmt.Errorf("strata config: %w", err)
	}
	if _, _, err := runCmd(ctx, dir, "seed", bin, "--config", cfg, "seed", "add", "--file", seeds); err != nil {
		return nil, err
	}
	args := []string{"--config", cfg, "crawl"}
	if o.cpuProfile != "" {
		prof, err := filepath.Abs(o.cpuProfile)
		if err != nil {
			return nil, err
		}
		args = append(args, "--cpuprofile", prof)
	}
	if o.maxDuration > 0 {
		args = append(args, "--max-duration", o.maxDuration.String())
	}
	log.Info("strata crawl", "config", cfg)
	crawlCtx := ctx
	if o.maxDuration > 0 {
		// A backstop: should the crawl not stop at its --max-duration, it is interrupted a minute
		// later (and killed 30 s after that), and the run says so.
		var cancel context.CancelFunc
		crawlCtx, cancel = context.WithTimeout(ctx, o.maxDuration+time.Minute)
		defer cancel()
	}
	ps, wall, err := runCmd(crawlCtx, dir, "crawl", bin, args...)
	if err != nil && !(o.maxDuration > 0 && ps != nil) { // a stopped crawl exits non-zero
		return nil, err
	}
	m := &measurement{name: "strata", wall: wall, usage: usageOf(ps)}
	m.note = lastLine(filepath.Join(dir, "crawl.out"))
	if crawlCtx.Err() != nil && ctx.Err() == nil {
		m.note = fmt.Sprintf("did not stop at --max-duration %v: interrupted after %v (%s)", o.maxDuration, wall.Round(time.Second), ps)
	}
	db, err := store.Open(ctx, filepath.Join(dir, "strata.db"), store.Options{})
	if err != nil {
		return nil, err
	}
	defer db.Close()
	st, err := db.Status(ctx, 1)
	if err != nil {
		return nil, err
	}
	for _, n := range st.URLs {
		m.urls += n
	}
	return m, nil
}

// measureColly runs this program again as the colly crawler.
func measureColly(ctx context.Context, o options, dir, seeds string) (*measurement, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("colly directory: %w", err)
	}
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("colly: find this program: %w", err)
	}
	texts := filepath.Join(dir, "text")
	if err := os.MkdirAll(texts, 0o755); err != nil {
		return nil, fmt.Errorf("colly text directory: %w", err)
	}
	ps, wall, err := runCmd(ctx, dir, "colly", self, "-child", "colly", "-seeds", seeds,
		"-workers", fmt.Sprint(o.workers), "-delay", o.delay.String(), "-text-dir", texts)
	if err != nil {
		return nil, err
	}
	return &measurement{name: "colly", wall: wall, usage: usageOf(ps),
		note: lastLine(filepath.Join(dir, "colly.out"))}, nil
}

// usage is what a finished process used: CPU time, and its peak resident set in bytes where the
// platform reports it (0 otherwise).
type usage struct {
	user, sys time.Duration
	maxRSS    int64
}

func usageOf(ps *os.ProcessState) usage {
	return usage{user: ps.UserTime(), sys: ps.SystemTime(), maxRSS: peakRSS(ps)}
}

// runCmd runs name in dir with its output in dir/label.out and dir/label.err, and returns its
// process state (nil if it did not start) and how long it ran.
func runCmd(ctx context.Context, dir, label, name string, args ...string) (*os.ProcessState, time.Duration, error) {
	out, err := os.Create(filepath.Join(dir, label+".out"))
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %w", label, err)
	}
	defer out.Close()
	errf, err := os.Create(filepath.Join(dir, label+".err"))
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %w", label, err)
	}
	defer errf.Close()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, out, errf
	// Stopped early, a crawler gets an interrupt, as from Ctrl-C, to finish gracefully; 30 s later it
	// is killed.
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 30 * time.Second
	start := time.Now()
	err = cmd.Run()
	wall := time.Since(start)
	if err != nil {
		return cmd.ProcessState, wall, fmt.Errorf("%s: %s: %w (see %s)", label, strings.Join(cmd.Args, " "), err, errf.Name())
	}
	return cmd.ProcessState, wall, nil
}

// runChild is the colly crawler's process: it crawls the seeds and prints its stats as JSON.
func runChild(ctx context.Context, o options, stdout io.Writer) error {
	if o.child != "colly" {
		return fmt.Errorf("unknown child %q", o.child)
	}
	f, err := os.Open(o.seeds)
	if err != nil {
		return fmt.Errorf("colly: seeds: %w", err)
	}
	var seeds []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if s := strings.TrimSpace(sc.Text()); s != "" {
			seeds = append(seeds, s)
		}
	}
	f.Close()
	if err := sc.Err(); err != nil {
		return fmt.Errorf("colly: seeds %s: %w", o.seeds, err)
	}
	st, err := collycrawl.Crawl(ctx, seeds, collycrawl.Options{UserAgent: userAgent, Workers: o.workers, Delay: o.delay,
		TextDir: o.textDir})
	if err != nil {
		return err
	}
	b, err := json.Marshal(st)
	if err != nil {
		return fmt.Errorf("colly: stats: %w", err)
	}
	_, err = fmt.Fprintf(stdout, "colly stats %s\n", b)
	return err
}

func lastLine(name string) string {
	b, err := os.ReadFile(name)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return lines[len(lines)-1]
}
