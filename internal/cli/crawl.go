package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/strata-crawler/strata/archive"
	"github.com/strata-crawler/strata/crawler"
	"github.com/strata-crawler/strata/internal/crashpoint"
	"github.com/strata-crawler/strata/internal/outcome"
	"github.com/strata-crawler/strata/internal/runcycle"
	"github.com/strata-crawler/strata/internal/runlock"
	"github.com/strata-crawler/strata/internal/schedule"
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

// requireWork refuses a scheduled crawl of a database with nothing active in it — no seed, and no
// URL strata fetch added — which would otherwise "succeed" every night having crawled nothing.
func (s *session) requireWork(ctx context.Context) error {
	seeds, urls, err := s.db.Active(ctx)
	if err != nil || seeds > 0 || urls > 0 {
		return err
	}
	return usagef("nothing to crawl: %s has no seeds (add one with strata seed add URL)", s.a.databaseName())
}

func (s *session) Close() { s.release() }

func runCrawl(ctx context.Context, a *app, cron bool) error {
	s, err := a.openSession(ctx, false)
	if err != nil {
		return err
	}
	defer s.Close()
	if err := s.requireWork(ctx); err != nil {
		return err
	}
	a.warnPlaceholder()
	res, err := s.crawl(ctx, cron, nil)
	if res == nil {
		return err
	}
	return s.finish(ctx, res, err)
}

// crawlResult is a crawl stage's run and outcome.
type crawlResult struct {
	run   store.Run
	start time.Time
	stats *crawler.Stats
	c     *crawler.Cycle
}

// crawl waits the cron offset if asked, begins a run and runs the crawl stage — over only the URLs
// with the given ids, if any, for an immediate fetch. A nil result means no run was begun.
func (s *session) crawl(ctx context.Context, cron bool, only []int64) (*crawlResult, error) {
	a := s.a
	var offset time.Duration
	if cron {
		offset = schedule.Offset(time.Now(), a.cfg.Schedule.StartWindow)
		if offset > 0 {
			a.log.Info("waiting for today's start offset", "offset", offset, "window", a.cfg.Schedule.StartWindow)
			select {
			case <-time.After(offset):
			case <-ctx.Done():
				return nil, fmt.Errorf("crawl: interrupted while waiting for the start offset")
			}
		}
	}
	start, err := distinctRunStart(ctx, s.db)
	if err != nil {
		return nil, err
	}
	runID, err := s.db.BeginRun(ctx, start, offset)
	if err != nil {
		return nil, err
	}
	progress := newProgress(a)
	c, err := a.openCycle(ctx, s.db, s.arch, progress.update, len(s.crashed) > 0)
	if err != nil {
		return nil, err
	}
	st, cerr := c.Crawl(ctx, crawler.Run{ID: runID, Start: start, Only: only})
	progress.finish(st)
	res := &crawlResult{run: store.Run{ID: runID, StartedAt: start, StartOffset: offset, Status: "completed"},
		start: start, stats: st, c: c}
	switch {
	case errors.Is(cerr, crawler.ErrStopped):
		res.run.Status = "interrupted"
	case cerr != nil:
		res.run.Status = "failed"
	}
	if st != nil {
		st.Fill(&res.run)
		// The outcomes are counted from the run's fetches, as every other report of the run counts
		// them (package outcome): the stage's own tallies are for its progress.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		counts, err := s.db.RunOutcomes(rctx, runID)
		if err != nil {
			a.log.Warn("the run's outcomes cannot be counted from its fetches; the crawl's own tallies stand in", "error", err)
			counts = outcome.Counts{Fetched: st.Fetched, New: st.New, Changed: st.Changed, Unchanged: st.Unchanged,
				NotModified: st.NotModified, NotFound: st.NotFound, Errors: st.Errors}
		}
		res.run.SetOutcomes(counts)
		fetched, left, err := s.db.Reach(rctx, runID, only)
		cancel()
		if err != nil {
			a.log.Warn("the run's summary cannot count the URLs it reached", "error", err)
			fetched, left = -1, -1
		}
		fmt.Fprintln(a.stdout, summarize(runID, st, counts, fetched, left))
	}
	return res, cerr
}

// finish seals the run's archive directory (orphans removed, manifest written), then records the
// run's end — even when the stage was interrupted, rather than under the cancelled context — and
// prunes the archive after a completed run. Sealing comes first, so that no run is marked ended,
// let alone completed, without its manifest: a kill before the end is recorded leaves a run that
// the next session marks interrupted and seals. A run whose seal failed (a full disk refusing its
// manifest) is marked failed and sealed by the next session.
func (s *session) finish(ctx context.Context, res *crawlResult, cerr error) error {
	defer res.c.Close()
	crashpoint.Hit("crawled")
	removed, err := runcycle.Seal(context.WithoutCancel(ctx), s.db, s.arch, res.run.ID, res.start)
	if removed > 0 {
		s.a.log.Warn("removed versions that were written but could not be recorded", "run", res.run.ID, "versions", removed)
	}
	if err != nil {
		if res.run.Status == "completed" {
			res.run.Status = "failed"
		}
		if cerr == nil {
			cerr = err
		}
	}
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	res.run.EndedAt = time.Now()
	if err := s.db.FinishRun(fctx, res.run); err != nil && cerr == nil {
		cerr = err
	}
	crashpoint.Hit("finished")
	// With database.url, openPostgres refused archive.keep: pruning reads the SQLite store.
	if keep := s.a.cfg.Archive.Keep; keep > 0 && cerr == nil && s.sqlite != nil {
		n, err := runcycle.Prune(ctx, s.sqlite, s.arch, keep)
		if err != nil {
			return err
		}
		if n > 0 {
			s.a.log.Info("pruned versions older than archive.keep", "versions", n, "keep", runcycle.FormatKeep(keep))
		}
	}
	if errors.Is(cerr, crawler.ErrStopped) && ctx.Err() == nil {
		return nil // the configured time window closed: a normal end under cron
	}
	return cerr
}

// openCycle wires the run cycle the configuration describes.
func (a *app) openCycle(ctx context.Context, db crawler.CycleStore, arch *archive.Dir, progress func(crawler.Stats), afterCrash bool) (*crawler.Cycle, error) {
	return crawler.Open(ctx, db, arch, a.cycleSetup(progress, afterCrash))
}

// cycleSetup is the setup of the run cycle the configuration describes.
func (a *app) cycleSetup(progress func(crawler.Stats), afterCrash bool) crawler.Setup {
	s := crawler.SetupOf(a.cfg)
	s.Software = "strata/" + Version
	s.Crawl.Log, s.Crawl.Progress, s.Crawl.AfterCrash = a.log, progress, afterCrash
	return s
}

// distinctRunStart returns now, after waiting if needed until the second after the last run's start:
// run directories are named to the second, and two runs must never share one.
func distinctRunStart(ctx context.Context, db crawler.RunStore) (time.Time, error) {
	runs, err := db.RecentRuns(ctx, 1)
	if err != nil {
		return time.Time{}, err
	}
	if len(runs) > 0 {
		next := runs[0].StartedAt.Truncate(time.Second).Add(time.Second)
		if wait := time.Until(next); wait > 0 {
			select {
			case <-time.After(wait):
			case <-ctx.Done():
				return time.Time{}, ctx.Err()
			}
		}
	}
	return time.Now(), nil
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
