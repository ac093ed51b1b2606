package runcycle

import (
	"context"
	"errors"
	"time"

	"github.com/strata-crawler/strata/crawler"
	"github.com/strata-crawler/strata/internal/outcome"
	"github.com/strata-crawler/strata/internal/pgstore"
	"github.com/strata-crawler/strata/internal/store"
	"github.com/strata-crawler/strata/internal/textindex"
)

// Fleet is one worker's membership of a fleet sharing a PostgreSQL frontier (pgstore.Worker): its
// leases, which the crawl stage takes and gives back, and its part in the run the fleet crawls.
type Fleet interface {
	crawler.Fleet
	Name() string
	// Abandoned returns the runs in which a worker on archive root root stopped without finishing
	// and without being heard from within a lease; Settle marks them done once their directories are
	// sealed.
	Abandoned(ctx context.Context, root string) ([]store.Run, error)
	Settle(ctx context.Context, run int64, root string) error
	// Keep renews the worker's leases until stop is called, logging failed renewals.
	Keep(ctx context.Context, log func(error)) (stop func())
	// JoinRun joins the run in progress or begins one at start; unlock lets other workers join
	// once the frontier is counted down, and may be called more than once.
	JoinRun(ctx context.Context, start time.Time, offset time.Duration, root string) (pgstore.Joined, func(), error)
	// Done records that this worker's crawl stage of run has ended; Working counts the workers of
	// run still crawling.
	Done(ctx context.Context, run int64) error
	Working(ctx context.Context, run int64) (int, error)
	// After elects the one worker that runs recalc and links for run: ok for the winner, which
	// calls unlock when it has recorded the run's end.
	After(ctx context.Context, run int64) (unlock func(), ok bool, err error)
}

var _ Fleet = (*pgstore.Worker)(nil)

// Worker is strata run --worker: one of several processes, on one machine or many, crawling one
// PostgreSQL frontier. It joins the run in progress (or begins one and counts the frontier down
// before letting others join), crawls only the domains it holds the lease of, archives to its own
// archive.root, and when the crawl stage has ended fleet-wide the one worker that wins the run's
// advisory lock runs recalc and links and records the run's end. As for a single process, recalc
// and links follow only a crawl stage that ended normally or by its time limit.
func (r *Runner) Worker(ctx context.Context, w Fleet) error {
	if err := r.requireWork(ctx); err != nil {
		return err
	}
	r.Report.starting()
	root := r.Config.Archive.Root
	// What a worker killed on this archive root left: its run directories are sealed here, since
	// no other machine can (temporary files removed, manifest written).
	abandoned, err := w.Abandoned(ctx, root)
	if err != nil {
		return err
	}
	for _, run := range abandoned {
		if _, err := Seal(ctx, r.DB, r.Arch, run.ID, run.StartedAt); err != nil {
			return err
		}
		if err := w.Settle(ctx, run.ID, root); err != nil {
			return err
		}
		r.Log.Warn("sealed the archive of a worker that stopped without finishing", "run", run.ID, "archive", root)
	}
	stopKeep := w.Keep(ctx, func(err error) { r.Log.Warn("fleet: lease renewal failed; retrying", "err", err) })
	defer stopKeep()
	start, err := distinctRunStart(ctx, r.DB)
	if err != nil {
		return err
	}
	j, unlock, err := w.JoinRun(ctx, start, 0, root)
	if err != nil {
		return err
	}
	defer unlock()
	for _, run := range j.Crashed {
		r.Log.Warn("an earlier run had no live worker left; marked interrupted, its unreached URLs are due", "run", run.ID)
	}
	r.Log.Info("fleet worker started", "worker", w.Name(), "run", j.Run, "joined", j.Joined, "archive", root)
	setup := r.setup(r.Report.begun(), len(j.Crashed) > 0)
	setup.Crawl.Fleet = w
	c, err := crawler.Open(ctx, r.DB, r.Arch, setup)
	if err != nil {
		return err
	}
	defer c.Close()
	st, cerr := c.Crawl(ctx, crawler.Run{ID: j.Run, Start: j.Start, Join: j.Joined, Counted: unlock})
	unlock()
	r.Report.crawled(Crawled{Run: j.Run, Stats: st, Fetched: -1, Left: -1, Worker: w.Name()})
	fctx := context.WithoutCancel(ctx)
	// This worker's archive directory of the run: temporary files removed, WARC sealed, manifest
	// written from the run's fetches (every worker's, with the root each lives in).
	if _, err := Seal(fctx, r.DB, r.Arch, j.Run, j.Start); err != nil && cerr == nil {
		cerr = err
	}
	if err := w.Done(fctx, j.Run); err != nil {
		return err
	}
	if cerr != nil && !errors.Is(cerr, crawler.ErrStopped) {
		return cerr
	}
	if ctx.Err() != nil {
		return cerr
	}
	// Only this worker can read its archive root, so it indexes the versions it archived itself,
	// with its own mark, while the others may still crawl; the run's page events wait for its end.
	if idx := r.index(); idx != nil {
		indexStep(ctx, r.Log, func(ctx context.Context) (textindex.Stats, error) { return textindex.Index(ctx, idx, r.Arch) })
	}
	return r.workerAfter(ctx, w, c, j, st, cerr)
}

// workerAfter waits until no worker of the run is crawling (or heard from within a lease), then
// runs recalc and links and records the run's end, if this worker wins the election.
func (r *Runner) workerAfter(ctx context.Context, w Fleet, c *crawler.Cycle, j pgstore.Joined, st *crawler.Stats, cerr error) error {
	for {
		n, err := w.Working(ctx, j.Run)
		if err != nil {
			return err
		}
		if n == 0 {
			break
		}
		select {
		case <-ctx.Done():
			return cerr
		case <-time.After(250 * time.Millisecond):
		}
	}
	unlock, ok, err := w.After(ctx, j.Run)
	if err != nil || !ok {
		return err
	}
	defer unlock()
	run := store.Run{ID: j.Run, StartedAt: j.Start, Status: "completed"}
	if st != nil {
		st.Fill(&run)
	}
	// The budget's figures are the fleet's, not this worker's: every worker has given back what it
	// did not use by now (a killed one's unused block stays counted).
	if acct, err := w.OpenBudget(ctx, j.Run, run.Budget, 0); err == nil && acct.Total > 0 {
		run.Budget, run.NewFetched, run.KnownFetched = acct.Total, acct.NewTaken, acct.KnownTaken
	}
	if errors.Is(cerr, crawler.ErrStopped) {
		run.Status = "interrupted"
	}
	rs, ls, err := c.After(ctx, j.Run)
	if err != nil {
		return err
	}
	run.RecalcTime, run.LinksTime = rs.Elapsed, ls.Elapsed
	r.Report.after(rs, ls)
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	counts, err := r.DB.RunOutcomes(fctx, j.Run)
	if err != nil {
		counts = outcome.Counts{}
	}
	run.SetOutcomes(counts)
	run.EndedAt = time.Now()
	if err := r.DB.FinishRun(fctx, run); err != nil {
		return err
	}
	r.Report.finished(j.Run, w.Name(), counts.Fetched)
	// The run's page events, once, on the worker that recorded its end (and any earlier run's that
	// a killed winner left).
	if idx := r.index(); idx != nil && ctx.Err() == nil {
		indexStep(ctx, r.Log, func(ctx context.Context) (textindex.Stats, error) { return textindex.Summarize(ctx, idx) })
	}
	// The hooks hear of the run once, from the same worker, after its page events are recorded.
	if sums := r.summaries(); sums != nil && ctx.Err() == nil {
		notifyRun(ctx, sums, r.Log, Hooks(r.Config), j.Run)
	}
	return nil
}
