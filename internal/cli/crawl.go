package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/strata-crawler/strata/archive"
	"github.com/strata-crawler/strata/crawler"
	"github.com/strata-crawler/strata/internal/outcome"
	"github.com/strata-crawler/strata/internal/runcycle"
	"github.com/strata-crawler/strata/internal/runlock"
	"github.com/strata-crawler/strata/internal/store"
)

func newCrawlCmd(a *app) *cobra.Command {
	var cron bool
	cmd := &cobra.Command{
		Use:   "crawl [--cron] [--max-duration D]",
		Short: "Run one crawl stage: fetch the due URLs politely and record every outcome",
		Long: `Run one crawl stage. Every fr > 0 counts down by one, then the URLs with fr = 0 are fetched,
many domains at once and each domain politely, robots.txt first. Every outcome is recorded.
A second crawl on the same database exits at once with code 3. SIGINT, SIGTERM and
--max-duration stop it gracefully: pages in flight finish, the rest stay due.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runCrawl(cmd.Context(), a, cron)
		},
	}
	cmd.Flags().BoolVar(&cron, "cron", false, "first wait the day's offset inside schedule.start_window")
	a.bind(cmd.Flags(), "crawl.max_duration", "max-duration", "", "stop handing out work after this long, e.g. 2h (default crawl.max_duration)")
	return cmd
}

// sessionMemoryLimit is the soft limit on the Go runtime's memory in a command that crawls or
// recalculates. By default Go lets the heap grow to twice what is live before it collects; a crawl of
// a million URLs then peaked at 317-319 MB of RSS with about 115 MB live (docs/performance.md,
// section 6). The limit makes the collector work earlier instead; GOMEMLIMIT, when set, wins.
const sessionMemoryLimit = 200 << 20

// sessionGCPercent is the collector's GOGC in the same commands. A crawl's live heap is small (7-20
// MB on 10,000 pages of 50 KB) while it allocates a few MB a page, so at Go's default of 100 it
// collected 7 times a second, and every cycle stops each goroutine to scan its stack: collection
// and preemption took 15 % of the crawl's CPU (docs/performance.md, section 10). At 400 the heap
// may grow to five times what is live, still under sessionMemoryLimit, which bounds a large crawl
// as before. GOGC, when set, wins.
const sessionGCPercent = 400

func limitMemory() {
	if _, set := os.LookupEnv("GOMEMLIMIT"); !set {
		debug.SetMemoryLimit(sessionMemoryLimit)
	}
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(sessionGCPercent)
	}
}

// session is one locked use of the database by a command that writes it: crawl, links, recalc, run.
type session struct {
	a       *app
	db      runStore
	sqlite  *store.DB // db when it is SQLite; nil with database.url
	release func()    // closes the database and lets go of the run lock
	arch    *archive.Dir
	crashed []store.Run // runs a killed process left behind, now marked interrupted
}

// openSession loads the configuration, takes the run lock, opens the database and the archive, and
// repairs what a killed run or prune left behind: its run is marked interrupted, and every run not
// sealed gets its archive directory sealed (see repair). Only a session that adds URLs (fetch) may
// create the database; the others refuse a missing one, which is a mistyped path or a crawl with no
// seeds.
func (a *app) openSession(ctx context.Context, create bool) (*session, error) {
	if err := a.setup(); err != nil {
		return nil, err
	}
	s, err := a.openSessionStore(ctx, create)
	if err != nil {
		return nil, err
	}
	if s.arch, err = archive.Open(a.cfg.Archive.Root); err != nil {
		s.Close()
		return nil, err
	}
	if s.crashed, err = runcycle.Recover(ctx, s.db, s.arch, a.log); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// openSessionStore opens the database, SQLite or PostgreSQL, under its run lock.
func (a *app) openSessionStore(ctx context.Context, create bool) (*session, error) {
	if a.postgres() {
		limitMemory()
		db, err := a.openPostgres(ctx)
		if err != nil {
			return nil, err
		}
		unlock, err := lockPostgres(ctx, db)
		if err != nil {
			db.Close()
			return nil, err
		}
		return &session{a: a, db: db, release: func() { unlock(); db.Close() }}, nil
	}
	if !create {
		if err := a.requireDatabase(); err != nil {
			return nil, err
		}
	}
	limitMemory()
	if err := os.MkdirAll(filepath.Dir(a.cfg.Database.Path), 0o755); err != nil {
		return nil, fmt.Errorf("database %s: %w", a.cfg.Database.Path, err)
	}
	lock, err := runlock.Acquire(a.cfg.Database.Path)
	if err != nil {
		return nil, err
	}
	db, err := a.openStore(ctx)
	if err != nil {
		lock.Release()
		return nil, err
	}
	return &session{a: a, db: db, sqlite: db, release: func() { db.Close(); lock.Release() }}, nil
}

func (s *session) Close() { s.release() }

func runCrawl(ctx context.Context, a *app, cron bool) error {
	return a.cycle(ctx, runcycle.Options{Cron: cron, CrawlOnly: true})
}

// runner is the run cycle of the session's database and archive, reporting to the terminal: the
// progress of the crawl stage, its summary, and recalc's and links'.
func (s *session) runner() *runcycle.Runner {
	a := s.a
	var p *progress
	return &runcycle.Runner{
		DB: s.db, SQLite: s.sqlite, Arch: s.arch, Config: a.cfg, Log: a.log, Software: "strata/" + Version,
		AfterCrash: len(s.crashed) > 0,
		Report: runcycle.Report{
			Starting: a.warnPlaceholder,
			Begun: func() func(crawler.Stats) {
				p = newProgress(a)
				return p.update
			},
			Crawled: func(c runcycle.Crawled) {
				if p != nil {
					p.finish(c.Stats)
				}
				if c.Stats != nil {
					fmt.Fprintln(a.stdout, summarize(c.Run, c.Stats, c.Outcomes, c.Fetched, c.Left))
				}
			},
			After: func(rs *crawler.RecalcStats, ls *crawler.LinkStats) { fmt.Fprintln(a.stdout, summarizeLater(rs, ls)) },
		},
	}
}

// summarize is the one paragraph a crawl prints at its end. Its first numbers count URLs, from the
// database: fetched, the distinct URLs with a record in the run, and left, those still due that it
// did not fetch (negative when they could not be counted). The stage's own Done and Due count
// events — a URL fetched again after a Retry-After, or made due again by a redirect loop, counts
// each time, and subtrees the selective rule re-enters are not added to Due — so "crawled Done of
// Due" could say 482 of 372, or 10 of 17 where 10 URLs exist.
func summarize(runID int64, st *crawler.Stats, c outcome.Counts, fetched, left int) string {
	var b strings.Builder
	took := st.Elapsed.Round(time.Second)
	if fetched < 0 {
		fmt.Fprintf(&b, "run %d: on %s in %v", runID, plural(st.Domains, "domain"), took)
	} else {
		// Blocked and filtered URLs leave the due set without a fetch record; each can do so once a run.
		reached := fetched + st.Blocked + st.Filtered
		fmt.Fprintf(&b, "run %d: crawled %d of %d due URLs on %s in %v", runID, reached, reached+left, plural(st.Domains, "domain"), took)
	}
	fmt.Fprintf(&b, " — %d fetched (%d changed, %d unchanged, %d not modified, %d new), %d blocked by robots.txt, %d errors",
		c.Fetched, c.Changed, c.Unchanged, c.NotModified, c.New, st.Blocked, c.Errors)
	if st.Filtered > 0 {
		fmt.Fprintf(&b, ", %d rejected by the URL filter", st.Filtered)
	}
	if c.NotFound > 0 || st.Gone > 0 {
		fmt.Fprintf(&b, ", %d not found (404 or 410), %s marked gone", c.NotFound, plural(st.Gone, "page"))
	}
	fmt.Fprintf(&b, "; %d not due (fr), %d skipped with their unchanged hub", st.SkippedFr, st.SkippedSelective)
	if st.Forced > 0 {
		fmt.Fprintf(&b, ", %s re-entered for their children", plural(st.Forced, "hub"))
	}
	if st.Links > 0 {
		fmt.Fprintf(&b, ", %s followed", plural(st.Links, "new link"))
	}
	if st.Redirects > 0 {
		fmt.Fprintf(&b, ", %s followed", plural(st.Redirects, "redirect"))
	}
	fmt.Fprintf(&b, "; %s, %s received.", plural(st.Requests, "request"), humanBytes(st.Bytes))
	if st.Dropped > 0 {
		fmt.Fprintf(&b, " %d hosts or domains were given up for this run (see the log).", st.Dropped)
	}
	if st.Budget > 0 {
		fmt.Fprintf(&b, " Budget %d pages: %d new, %d known.", st.Budget, st.NewFetched, st.KnownFetched)
	}
	if st.HintDocs > 0 {
		fmt.Fprintf(&b, " Hints: %d sitemaps and feeds read, %s made due by a newer lastmod, %d fetches spared by trusted ones.",
			st.HintDocs, plural(st.HintedDue, "page"), st.SkippedHint)
	}
	if st.Sampled > 0 {
		fmt.Fprintf(&b, " Hybrid: %s sampled, %d of them changed.", plural(st.Sampled, "page"), st.SampledChanged)
	}
	if st.Prioritized {
		b.WriteString(" More was due than the run could reach: due pages were taken by the cost of staleness (Xu et al.).")
	}
	if st.Estimated > 0 {
		fmt.Fprintf(&b, " Change model: of %s fetched with a rate estimate, %.1f expected to have changed, %d did.",
			plural(st.Estimated, "page"), st.ExpectedChanges, st.ObservedChanges)
	}
	if left > 0 {
		why := ""
		switch {
		case st.Stopped:
			why = " (the stage was stopped)"
		case st.Budget > 0 && st.NewFetched+st.KnownFetched >= st.Budget:
			why = " (the run's budget was spent)"
		}
		fmt.Fprintf(&b, " %d URLs stay due for the next run%s.", left, why)
	}
	return b.String()
}

// plural writes "1 domain", "2 domains".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func humanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
