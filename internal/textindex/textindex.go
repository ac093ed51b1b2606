// Package textindex brings the index that strata serve reads up to date after a run: the full
// text and title of every stored version not yet indexed, read back from the archive, and the new,
// gone and unlinked pages of every finished run.
//
// It runs after the crawl stage, never inside it, so the crawl does not get slower per page. It is
// resumable and idempotent: each batch is committed with the mark of how far it went, so a step
// that is interrupted (Ctrl-C, kill -9) leaves a consistent index and the next one goes on from the
// mark, and a step with nothing new to read does nothing. The same function backfills a database
// crawled before the index existed (strata index).
package textindex

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/strata-crawler/strata/archive"
	"github.com/strata-crawler/strata/internal/crashpoint"
	"github.com/strata-crawler/strata/internal/store"
)

// Store is what the step reads and writes; *store.DB and *pgstore.DB implement it. Calls are made
// one at a time.
type Store interface {
	TextIndexState(ctx context.Context) (store.IndexState, error)
	// PendingVersions returns the stored versions after fetch id after, and the fetch id the
	// examined stretch reaches.
	PendingVersions(ctx context.Context, after int64, limit int) ([]store.PendingVersion, int64, error)
	// IndexTexts adds docs and moves the mark to upto atomically.
	IndexTexts(ctx context.Context, docs []store.IndexedText, upto int64) error
	RunsToSummarize(ctx context.Context) ([]int64, error)
	// SummarizeRun records a run's page events and moves the run mark atomically.
	SummarizeRun(ctx context.Context, run int64) error
}

var _ Store = (*store.DB)(nil)

// Archive reads the files of stored versions; *archive.Dir implements it.
type Archive interface {
	ReadMeta(rel string) (*archive.Meta, error)
	ReadText(rel string) (string, error)
}

var _ Archive = (*archive.Dir)(nil)

// Batch is how many versions one transaction indexes: large enough that commits cost little per
// version, small enough that an interrupted step loses little.
const Batch = 256

// MaxText is how much of a version's text is indexed; past it a text is cut at a rune boundary.
// Page text is capped by the crawl's body limit anyway; this bounds one row.
const MaxText = 1 << 20

// Stats says what one step did.
type Stats struct {
	Versions int   // versions indexed
	Missing  int   // versions whose files were gone from the archive, skipped
	Bytes    int64 // text indexed
	Runs     int   // finished runs whose page events were recorded
	Elapsed  time.Duration
}

// Update records the page events of every finished run above the run mark, then indexes every
// stored version above the version mark. The events come first: they cost a few queries per run,
// while a first backfill of a large archive may take long, and a caller that bounds the step with
// a deadline still gets the events of its run. It stops between batches when ctx is done,
// returning ctx's error; what it committed stays.
func Update(ctx context.Context, db Store, arch Archive) (st Stats, err error) {
	start := time.Now()
	defer func() { st.Elapsed = time.Since(start) }()
	if st.Runs, err = summarize(ctx, db); err != nil {
		return st, err
	}
	err = index(ctx, db, arch, &st)
	return st, err
}

// Summarize records the page events of every finished run above the run mark, and nothing else:
// a fleet's worker that wins a run's election calls it once the run's end is recorded, while each
// worker indexes its own versions (Index).
func Summarize(ctx context.Context, db Store) (st Stats, err error) {
	start := time.Now()
	defer func() { st.Elapsed = time.Since(start) }()
	st.Runs, err = summarize(ctx, db)
	return st, err
}

// Index indexes every stored version above the version mark, and nothing else (see Summarize).
func Index(ctx context.Context, db Store, arch Archive) (st Stats, err error) {
	start := time.Now()
	defer func() { st.Elapsed = time.Since(start) }()
	err = index(ctx, db, arch, &st)
	return st, err
}

func summarize(ctx context.Context, db Store) (int, error) {
	runs, err := db.RunsToSummarize(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, r := range runs {
		if err := ctx.Err(); err != nil {
			return n, err
		}
		if err := db.SummarizeRun(ctx, r); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

func index(ctx context.Context, db Store, arch Archive, st *Stats) error {
	state, err := db.TextIndexState(ctx)
	if err != nil {
		return err
	}
	after := state.FetchUpto
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		pending, upto, err := db.PendingVersions(ctx, after, Batch)
		if err != nil {
			return err
		}
		if upto <= after {
			break
		}
		docs := make([]store.IndexedText, 0, len(pending))
		for _, v := range pending {
			d, err := read(arch, v)
			if errors.Is(err, fs.ErrNotExist) {
				st.Missing++ // removed by hand: nothing to index, and nothing to show either
				continue
			}
			if err != nil {
				return err
			}
			docs = append(docs, d)
			st.Bytes += int64(len(d.Text))
		}
		crashpoint.Hit("indexing") // a batch read from the archive, not committed
		if err := db.IndexTexts(ctx, docs, upto); err != nil {
			return err
		}
		st.Versions += len(docs)
		after = upto
	}
	return nil
}

func read(arch Archive, v store.PendingVersion) (store.IndexedText, error) {
	d := store.IndexedText{FetchID: v.FetchID, URLID: v.URLID}
	meta, err := arch.ReadMeta(v.Path)
	if err != nil {
		return d, fmt.Errorf("index version %s: %w", v.Path, err)
	}
	d.Title = meta.Title
	if d.Text, err = arch.ReadText(v.Path); err != nil {
		return d, fmt.Errorf("index version %s: %w", v.Path, err)
	}
	if len(d.Text) > MaxText {
		cut := MaxText
		for cut > 0 && d.Text[cut]&0xc0 == 0x80 {
			cut--
		}
		d.Text = d.Text[:cut]
	}
	return d, nil
}
