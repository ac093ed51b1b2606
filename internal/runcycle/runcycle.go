// Package runcycle runs whole runs of strata, for one process or for one worker of a fleet: the
// crawl stage, then recalc and links, then the run's record and its sealed archive directory, then
// the work that follows a run (the text index, the notification hooks); and before any of it, the
// repair of what a killed run left behind. The command line parses, opens the database and prints;
// the order of the stages and what a failure, a signal or a time limit leaves out is decided here.
package runcycle

import (
	"context"
	"time"

	"github.com/strata-crawler/strata/crawler"
	"github.com/strata-crawler/strata/internal/outcome"
	"github.com/strata-crawler/strata/internal/store"
)

// Store is the database a run writes through: the run cycle's roles, and the runs' records, seals
// and prune journal. The SQLite store (database.path) and the PostgreSQL one (database.url) are both.
type Store interface {
	crawler.CycleStore
	BeginRun(ctx context.Context, started time.Time, offset time.Duration) (int64, error)
	FinishRun(ctx context.Context, r store.Run) error
	CloseStaleRuns(ctx context.Context) ([]store.Run, error)
	Active(ctx context.Context) (seeds, urls int, err error)
	RunOutcomes(ctx context.Context, run int64) (outcome.Counts, error)
	Reach(ctx context.Context, run int64, only []int64) (fetched, left int, err error)
	Immediate(ctx context.Context, urls []store.NewURL) ([]int64, error)
	SetStageTimes(ctx context.Context, run int64, recalc, links time.Duration) error
	UnsealedRuns(ctx context.Context) ([]store.Run, error)
	SealRun(ctx context.Context, run int64, at time.Time) error
	RunFiles(ctx context.Context, run int64, fn func(version, unchangedURL string)) error
	RunManifest(ctx context.Context, runID int64, fn func(store.ManifestEntry) error) error
	PendingPrunes(ctx context.Context) ([]string, error)
	Pruned(ctx context.Context, paths []string) error
}

var _ Store = (*store.DB)(nil)
