package runcycle

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/strata-crawler/strata/archive"
	"github.com/strata-crawler/strata/crawler"
	"github.com/strata-crawler/strata/internal/config"
	"github.com/strata-crawler/strata/internal/crashpoint"
	"github.com/strata-crawler/strata/internal/notify"
	"github.com/strata-crawler/strata/internal/outcome"
	"github.com/strata-crawler/strata/internal/schedule"
	"github.com/strata-crawler/strata/internal/store"
	"github.com/strata-crawler/strata/internal/textindex"
)

// ErrNoWork is returned by Run and Worker for a database with nothing active in it — no seed, and
// no URL strata fetch added — which would otherwise "succeed" every night having crawled nothing.
var ErrNoWork = errors.New("nothing to crawl")

// ErrNoRun is returned by Recalc and Links when no run has begun yet.
var ErrNoRun = errors.New("no run yet")

// Runner runs the runs of one database and archive as the configuration describes. The caller
// opens both (under the run lock, for a single process), calls Recover, and shows what Report hears.
type Runner struct {
	DB Store
	// SQLite is DB when it is the SQLite store; nil with PostgreSQL.
	SQLite *store.DB
	Arch   *archive.Dir
	Config *config.Config
	Log    *slog.Logger
	// Software names strata in the WARC files' warcinfo.
	Software string
	// AfterCrash tells the crawl stage that an earlier run was cut off (Recover returned it).
	AfterCrash bool
	Report     Report
}

// Report is what a run tells the command line, in the order it happens. Every field may be nil.
type Report struct {
	// Starting is called once the database has been found to hold work, before anything is written.
	Starting func()
	// Begun is called as the crawl stage is wired; it returns the stage's progress callback, or nil.
	Begun func() func(crawler.Stats)
	// Crawled is called when the crawl stage has ended, whether or not it started.
	Crawled func(Crawled)
	// After is called when recalc and links have run.
	After func(*crawler.RecalcStats, *crawler.LinkStats)
	// Finished is called when a fleet worker has recorded the run's end (Worker only).
	Finished func(run int64, worker string, fetched int)
}

// Crawled is what the crawl stage of a run did.
type Crawled struct {
	Run   int64
	Stats *crawler.Stats // nil when the stage did not start
	// Outcomes are counted from the run's fetches, as every other report of the run counts them
	// (package outcome); Fetched and Left count the distinct URLs with a record in the run and those
	// still due that it did not fetch, -1 when they could not be counted. A fleet worker leaves them
	// zero and -1: the run is the fleet's.
	Outcomes      outcome.Counts
	Fetched, Left int
	Worker        string // the fleet worker's name; "" for a single process
}

// Options are what the command asks of one run.
type Options struct {
	Cron bool // first wait the day's offset inside schedule.start_window
	// Only, when set, is crawled instead of the due URLs (strata fetch): added at level 0 if new, and
	// not refused for a database without seeds.
	Only []store.NewURL
	// CrawlOnly runs the crawl stage and records the run, but neither recalc and links nor the
	// after-run work (strata crawl).
	CrawlOnly bool
}

// Hooks are the notification hooks the configuration names.
func Hooks(cfg *config.Config) notify.Hooks {
	n := cfg.Notify
	return notify.Hooks{Webhook: n.Webhook, Command: n.Command, Timeout: n.Timeout, Always: n.When == "always"}
}

// Setup is the setup of the run cycle the configuration describes, with the crawl stage's progress
// callback.
func (r *Runner) Setup(progress func(crawler.Stats)) crawler.Setup {
	return r.setup(progress, r.AfterCrash)
}

func (r *Runner) setup(progress func(crawler.Stats), afterCrash bool) crawler.Setup {
	s := crawler.SetupOf(r.Config)
	s.Software = r.Software
	s.Crawl.Log, s.Crawl.Progress, s.Crawl.AfterCrash = r.Log, progress, afterCrash
	return s
}

// Open wires the run cycle the configuration describes, for a use of its client outside a run
// (reading a sitemap for seeds). The caller closes it. AfterCrash is not applied: it is about the
// requests a cut-off crawl stage had in flight, which concern the next crawl stage, not this use.
func (r *Runner) Open(ctx context.Context) (*crawler.Cycle, error) {
	return crawler.Open(ctx, r.DB, r.Arch, r.setup(nil, false))
}

// Run runs one whole run: the crawl stage, then recalc and links, then the run's record and its
// sealed archive directory, then the text index and the hooks. Recalc and links run on what the
// crawl did when it ended normally or its time window closed, not after a signal or a failure.
func (r *Runner) Run(ctx context.Context, o Options) error {
	if len(o.Only) == 0 {
		if err := r.requireWork(ctx); err != nil {
			return err
		}
	}
	r.Report.starting()
	var ids []int64
	if len(o.Only) > 0 {
		var err error
		if ids, err = r.DB.Immediate(ctx, o.Only); err != nil {
			return err
		}
	}
	res, cerr := r.crawl(ctx, o.Cron, ids)
	if res == nil {
		return cerr
	}
	if !o.CrawlOnly && ctx.Err() == nil && (cerr == nil || errors.Is(cerr, crawler.ErrStopped)) {
		rs, ls, err := res.c.After(ctx, res.run.ID)
		if err != nil {
			res.c.Close()
			return err
		}
		res.run.RecalcTime, res.run.LinksTime = rs.Elapsed, ls.Elapsed
		r.Report.after(rs, ls)
	}
	err := r.finish(ctx, res, cerr)
	if o.CrawlOnly {
		return err
	}
	return afterRun(ctx, r.index(), r.summaries(), r.Arch, r.Log, Hooks(r.Config), res.run.ID, err)
}

// Recalc runs the Frequency Manager on its own for the last run, and records how long it took.
func (r *Runner) Recalc(ctx context.Context) (int64, *crawler.RecalcStats, error) {
	run, c, err := r.later(ctx)
	if err != nil {
		return 0, nil, err
	}
	defer c.Close()
	rs, err := c.Recalc(ctx, run)
	if err != nil {
		return run, nil, err
	}
	return run, rs, r.DB.SetStageTimes(ctx, run, rs.Elapsed, 0)
}

// Links runs the Link Extractor Manager on its own for the last run, and records how long it took.
func (r *Runner) Links(ctx context.Context) (int64, *crawler.LinkStats, error) {
	run, c, err := r.later(ctx)
	if err != nil {
		return 0, nil, err
	}
	defer c.Close()
	ls, err := c.Links(ctx, run)
	if err != nil {
		return run, nil, err
	}
	return run, ls, r.DB.SetStageTimes(ctx, run, 0, ls.Elapsed)
}

// later finds the last run and wires a cycle for the stages that follow a crawl. They send no
// request: the cycle has no client.
func (r *Runner) later(ctx context.Context) (int64, *crawler.Cycle, error) {
	runs, err := r.DB.RecentRuns(ctx, 1)
	if err != nil {
		return 0, nil, err
	}
	if len(runs) == 0 {
		return 0, nil, ErrNoRun
	}
	c, err := crawler.OpenAfter(r.DB, r.Arch, r.Setup(nil))
	if err != nil {
		return 0, nil, err
	}
	return runs[0].ID, c, nil
}

// requireWork refuses a database with nothing active in it.
func (r *Runner) requireWork(ctx context.Context) error {
	seeds, urls, err := r.DB.Active(ctx)
	if err != nil || seeds > 0 || urls > 0 {
		return err
	}
	return ErrNoWork
}

// crawlResult is a crawl stage's run and outcome.
type crawlResult struct {
	run   store.Run
	start time.Time
	c     *crawler.Cycle
}

// crawl waits the cron offset if asked, begins a run and runs the crawl stage — over only the URLs
// with the given ids, if any, for an immediate fetch. A nil result means no run was begun.
func (r *Runner) crawl(ctx context.Context, cron bool, only []int64) (*crawlResult, error) {
	var offset time.Duration
	if cron {
		window := r.Config.Schedule.StartWindow
		offset = schedule.Offset(time.Now(), window)
		if offset > 0 {
			r.Log.Info("waiting for today's start offset", "offset", offset, "window", window)
			select {
			case <-time.After(offset):
			case <-ctx.Done():
				return nil, fmt.Errorf("crawl: interrupted while waiting for the start offset")
			}
		}
	}
	start, err := distinctRunStart(ctx, r.DB)
	if err != nil {
		return nil, err
	}
	runID, err := r.DB.BeginRun(ctx, start, offset)
	if err != nil {
		return nil, err
	}
	c, err := crawler.Open(ctx, r.DB, r.Arch, r.Setup(r.Report.begun()))
	if err != nil {
		return nil, err
	}
	st, cerr := c.Crawl(ctx, crawler.Run{ID: runID, Start: start, Only: only})
	res := &crawlResult{run: store.Run{ID: runID, StartedAt: start, StartOffset: offset, Status: "completed"}, start: start, c: c}
	switch {
	case errors.Is(cerr, crawler.ErrStopped):
		res.run.Status = "interrupted"
	case cerr != nil:
		res.run.Status = "failed"
	}
	done := Crawled{Run: runID, Stats: st}
	if st != nil {
		st.Fill(&res.run)
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		counts, err := r.DB.RunOutcomes(rctx, runID)
		if err != nil {
			r.Log.Warn("the run's outcomes cannot be counted from its fetches; the crawl's own tallies stand in", "error", err)
			counts = outcome.Counts{Fetched: st.Fetched, New: st.New, Changed: st.Changed, Unchanged: st.Unchanged,
				NotModified: st.NotModified, NotFound: st.NotFound, Errors: st.Errors}
		}
		res.run.SetOutcomes(counts)
		fetched, left, err := r.DB.Reach(rctx, runID, only)
		cancel()
		if err != nil {
			r.Log.Warn("the run's summary cannot count the URLs it reached", "error", err)
			fetched, left = -1, -1
		}
		done.Outcomes, done.Fetched, done.Left = counts, fetched, left
	}
	r.Report.crawled(done)
	return res, cerr
}

// finish seals the run's archive directory (orphans removed, manifest written), then records the
// run's end — even when the stage was interrupted, rather than under the cancelled context — and
// prunes the archive after a completed run. Sealing comes first, so that no run is marked ended,
// let alone completed, without its manifest: a kill before the end is recorded leaves a run that
// the next session marks interrupted and seals. A run whose seal failed (a full disk refusing its
// manifest) is marked failed and sealed by the next session.
func (r *Runner) finish(ctx context.Context, res *crawlResult, cerr error) error {
	defer res.c.Close()
	crashpoint.Hit("crawled")
	removed, err := Seal(context.WithoutCancel(ctx), r.DB, r.Arch, res.run.ID, res.start)
	if removed > 0 {
		r.Log.Warn("removed versions that were written but could not be recorded", "run", res.run.ID, "versions", removed)
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
	if err := r.DB.FinishRun(fctx, res.run); err != nil && cerr == nil {
		cerr = err
	}
	crashpoint.Hit("finished")
	if keep, pruner := r.Config.Archive.Keep, r.pruner(); keep > 0 && cerr == nil && pruner != nil {
		n, err := Prune(ctx, pruner, r.Arch, keep)
		if err != nil {
			return err
		}
		if n > 0 {
			r.Log.Info("pruned versions older than archive.keep", "versions", n, "keep", FormatKeep(keep))
		}
	}
	if errors.Is(cerr, crawler.ErrStopped) && ctx.Err() == nil {
		return nil // the configured time window closed: a normal end under cron
	}
	return cerr
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

func (r Report) starting() {
	if r.Starting != nil {
		r.Starting()
	}
}

func (r Report) begun() func(crawler.Stats) {
	if r.Begun == nil {
		return nil
	}
	return r.Begun()
}

func (r Report) crawled(c Crawled) {
	if r.Crawled != nil {
		r.Crawled(c)
	}
}

func (r Report) after(rs *crawler.RecalcStats, ls *crawler.LinkStats) {
	if r.After != nil {
		r.After(rs, ls)
	}
}

func (r Report) finished(run int64, worker string, fetched int) {
	if r.Finished != nil {
		r.Finished(run, worker, fetched)
	}
}

// pruner is what prunes the archive after a run: the SQLite store, or PostgreSQL's.
func (r *Runner) pruner() Pruner {
	if r.SQLite != nil {
		return r.SQLite
	}
	p, _ := r.DB.(Pruner)
	return p
}

// summaries is what the hooks' summary reads: the SQLite store, or PostgreSQL's.
func (r *Runner) summaries() summaryStore {
	if r.SQLite != nil {
		return r.SQLite
	}
	sums, _ := r.DB.(summaryStore)
	return sums
}

// index is the database's text index: SQLite's, or PostgreSQL's (pgstore implements
// textindex.Store); nil for a store without one.
func (r *Runner) index() textindex.Store {
	if r.SQLite != nil {
		return r.SQLite
	}
	idx, _ := r.DB.(textindex.Store)
	return idx
}
