package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/strata-crawler/strata/archive"
	"github.com/strata-crawler/strata/crawler"
	"github.com/strata-crawler/strata/internal/outcome"
	"github.com/strata-crawler/strata/internal/pgstore"
	"github.com/strata-crawler/strata/internal/store"
)

// workerCycle is strata run --worker: one of several processes, on one machine or many, crawling
// one PostgreSQL frontier. It joins the run in progress (or begins one and counts the frontier
// down before letting others join), crawls only the domains it holds the lease of, archives to its
// own archive.root, and when the crawl stage has ended fleet-wide the one worker that wins the
// run's advisory lock runs recalc and links and records the run's end.
func (a *app) workerCycle(ctx context.Context, lease time.Duration) error {
	if err := a.setup(); err != nil {
		return err
	}
	if !a.postgres() {
		return usagef("--worker needs database.url: workers share a PostgreSQL frontier, and a SQLite database.path has one process")
	}
	if lease < pgstore.MinLease {
		return usagef("--lease %v: a worker's lease must be at least %v", lease, pgstore.MinLease)
	}
	limitMemory()
	db, err := a.openPostgres(ctx)
	if err != nil {
		return err
	}
	defer db.Close()
	host, _ := os.Hostname()
	w, err := db.Worker(fmt.Sprintf("%s/%d", host, os.Getpid()), lease)
	if err != nil {
		return usageError{err}
	}
	arch, err := archive.Open(a.cfg.Archive.Root)
	if err != nil {
		return err
	}
	seeds, urls, err := db.Active(ctx)
	if err != nil {
		return err
	}
	if seeds == 0 && urls == 0 {
		return usagef("nothing to crawl: %s has no seeds (add one with strata seed add URL)", a.databaseName())
	}
	a.warnPlaceholder()
	// What a worker killed on this archive root left: its run directories are sealed here, since
	// no other machine can (temporary files removed, manifest written).
	abandoned, err := w.Abandoned(ctx, a.cfg.Archive.Root)
	if err != nil {
		return err
	}
	for _, r := range abandoned {
		if _, err := seal(ctx, db, arch, r.ID, r.StartedAt); err != nil {
			return err
		}
		if err := w.Settle(ctx, r.ID, a.cfg.Archive.Root); err != nil {
			return err
		}
		a.log.Warn("sealed the archive of a worker that stopped without finishing", "run", r.ID, "archive", a.cfg.Archive.Root)
	}
	stopKeep := w.Keep(ctx, func(err error) { a.log.Warn("fleet: lease renewal failed; retrying", "err", err) })
	defer stopKeep()
	start, err := distinctRunStart(ctx, db)
	if err != nil {
		return err
	}
	j, unlock, err := w.JoinRun(ctx, start, 0, a.cfg.Archive.Root)
	if err != nil {
		return err
	}
	defer unlock()
	for _, r := range j.Crashed {
		a.log.Warn("an earlier run had no live worker left; marked interrupted, its unreached URLs are due", "run", r.ID)
	}
	a.log.Info("fleet worker started", "worker", w.Name(), "run", j.Run, "joined", j.Joined, "archive", a.cfg.Archive.Root)
	setup := a.cycleSetup(newProgress(a).update, len(j.Crashed) > 0)
	setup.Crawl.Fleet = w
	c, err := crawler.Open(ctx, db, arch, setup)
	if err != nil {
		return err
	}
	defer c.Close()
	st, cerr := c.Crawl(ctx, crawler.Run{ID: j.Run, Start: j.Start, Join: j.Joined, Counted: unlock})
	unlock()
	if st != nil {
		fmt.Fprintf(a.stdout, "worker %s, run %d: %d fetched, %d new, %d changed, %d errors in %v.\n", w.Name(), j.Run,
			st.Fetched, st.New, st.Changed, st.Errors, st.Elapsed.Round(time.Millisecond))
	}
	fctx := context.WithoutCancel(ctx)
	// This worker's archive directory of the run: temporary files removed, WARC sealed, manifest
	// written from the run's fetches (every worker's, with the root each lives in).
	if _, err := seal(fctx, db, arch, j.Run, j.Start); err != nil && cerr == nil {
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
	return a.workerAfter(ctx, w, db, c, j, st, cerr)
}

// workerAfter waits until no worker of the run is crawling (or heard from within a lease), then
// runs recalc and links and records the run's end, if this worker wins the election.
func (a *app) workerAfter(ctx context.Context, w *pgstore.Worker, db *pgstore.DB, c *crawler.Cycle, j pgstore.Joined,
	st *crawler.Stats, cerr error) error {
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
	fmt.Fprintln(a.stdout, summarizeLater(rs, ls))
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	counts, err := db.RunOutcomes(fctx, j.Run)
	if err != nil {
		counts = outcome.Counts{}
	}
	run.SetOutcomes(counts)
	run.EndedAt = time.Now()
	if err := db.FinishRun(fctx, run); err != nil {
		return err
	}
	fmt.Fprintf(a.stdout, "run %d finished by worker %s: %d fetched by the fleet.\n", j.Run, w.Name(), counts.Fetched)
	return nil
}
