package runcycle

import (
	"context"
	"fmt"
	"time"

	"github.com/strata-crawler/strata/archive"
	"github.com/strata-crawler/strata/internal/crashpoint"
	"github.com/strata-crawler/strata/internal/pgstore"
	"github.com/strata-crawler/strata/internal/store"
)

// Pruner is what Prune needs of the database: SQLite's or PostgreSQL's store.
type Pruner interface {
	Prunable(ctx context.Context, cutoff time.Time) ([]store.Version, error)
	MarkPruned(ctx context.Context, vs []store.Version, at time.Time) error
	Pruned(ctx context.Context, paths []string) error
}

var (
	_ Pruner = (*store.DB)(nil)
	_ Pruner = (*pgstore.DB)(nil)
)

// pruneBatch is how many versions prune marks, and journals, per transaction.
const pruneBatch = 500

// Prune removes the versions older than keep. It is crash-safe: a batch of versions is marked
// pruned and entered in the prune journal in one transaction before any of their files is removed,
// and the journal entries are closed once the files are gone. A kill in between leaves versions
// marked pruned whose files may remain, which the next session removes (FinishPrunes) — never a
// record that says a version is stored while its files are gone.
func Prune(ctx context.Context, db Pruner, arch *archive.Dir, keep time.Duration) (int, error) {
	now := time.Now()
	vs, err := db.Prunable(ctx, now.Add(-keep))
	if err != nil {
		return 0, err
	}
	n := 0
	for len(vs) > 0 {
		batch := vs[:min(pruneBatch, len(vs))]
		vs = vs[len(batch):]
		if err := db.MarkPruned(ctx, batch, now); err != nil {
			return n, err
		}
		paths := make([]string, len(batch))
		for i, v := range batch {
			if err := arch.Remove(v.Path); err != nil {
				return n, err // the journal keeps the batch: the next session tries again
			}
			paths[i] = v.Path
			crashpoint.Hit("pruning")
		}
		if err := db.Pruned(ctx, paths); err != nil {
			return n, err
		}
		n += len(batch)
	}
	return n, nil
}

// FormatKeep writes archive.keep in days when it is whole days.
func FormatKeep(d time.Duration) string {
	if d%(24*time.Hour) == 0 {
		return fmt.Sprintf("%d days", d/(24*time.Hour))
	}
	return d.String()
}
