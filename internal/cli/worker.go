package cli

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/strata-crawler/strata/archive"
	"github.com/strata-crawler/strata/crawler"
	"github.com/strata-crawler/strata/internal/pgstore"
	"github.com/strata-crawler/strata/internal/runcycle"
)

// workerCycle is strata run --worker: one of several processes, on one machine or many, crawling
// one PostgreSQL frontier (runcycle.Runner.Worker). It checks the flags, opens the database and the
// archive, and prints what the worker did.
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
	if a.cfg.Archive.Keep > 0 {
		return usagef("--worker: archive.keep prunes one archive root, and a fleet keeps its versions under each worker's own; set archive.keep = \"0s\" for the workers")
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
	r := &runcycle.Runner{DB: db, Arch: arch, Config: a.cfg, Log: a.log, Software: "strata/" + Version,
		Report: runcycle.Report{
			Starting: a.warnPlaceholder,
			Begun:    func() func(crawler.Stats) { return newProgress(a).update },
			Crawled: func(c runcycle.Crawled) {
				if st := c.Stats; st != nil {
					fmt.Fprintf(a.stdout, "worker %s, run %d: %d fetched, %d new, %d changed, %d errors in %v.\n", c.Worker, c.Run,
						st.Fetched, st.New, st.Changed, st.Errors, st.Elapsed.Round(time.Millisecond))
				}
			},
			After: func(rs *crawler.RecalcStats, ls *crawler.LinkStats) { fmt.Fprintln(a.stdout, summarizeLater(rs, ls)) },
			Finished: func(run int64, worker string, fetched int) {
				fmt.Fprintf(a.stdout, "run %d finished by worker %s: %d fetched by the fleet.\n", run, worker, fetched)
			},
		}}
	return a.runError(r.Worker(ctx, w))
}
